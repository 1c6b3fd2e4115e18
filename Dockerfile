# The Tribal image used by docker-compose.kafka.yml (worker and API share it).
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY runtime runtime
COPY events events
COPY sources sources
COPY streams streams
COPY projections projections
COPY api api
COPY cli cli
COPY demo demo
COPY devstack devstack
COPY avro avro
RUN pip install .
EXPOSE 8765
CMD ["tribal", "api", "--host", "0.0.0.0", "--port", "8765"]
