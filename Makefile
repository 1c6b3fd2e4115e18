# Targets are named for what people do. Every target installs what it needs first;
# the virtualenv is rebuilt only when pyproject.toml changes (torch is several GB).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-16)
BENCH_STAMP := $(VENV)/.bench-$(shell sha256sum pyproject.toml | cut -c1-16)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install demo up test test-fast test-reliability lint fmt bench bench-deps bench-load eval eval-deps services services-down clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip wheel
	$(BIN)/python -m pip install --progress-bar off -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

demo: install
	$(BIN)/tribal demo

up: install
	$(BIN)/tribal up

test: install
	$(BIN)/python -m devstack.run_tests

test-fast: install
	$(BIN)/python -m pytest -q -m "not slow"

test-reliability: install
	$(BIN)/python -m pytest -q tests/reliability

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

fmt: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The bench extra: LlamaIndex, the peer bench/ingest_peer.py measures against.
bench-deps: $(BENCH_STAMP)

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --progress-bar off -e '.[dev,bench]'
	@rm -f $(VENV)/.bench-* && touch $@

# Every benchmark in turn (python -m bench --help); BENCH_ARGS="--quick" for a smoke run,
# BENCH_ARGS="live fuzz" for some of them.
bench: install bench-deps
	$(BIN)/python -m bench $(BENCH_ARGS)

# Minutes, not seconds: 5 min of load on the embedded stack, then 1 vs 2 workers.
bench-load: install
	$(BIN)/python -m bench.load $(BENCH_LOAD_ARGS)

# The help-desk corpora are Debian documentation packages, installed with apt-get when
# their pages are missing (root or sudo); quiet when they are already there.
eval-deps: install
	@$(BIN)/python -m bench.eval.corpora_kb --install

eval: install eval-deps
	$(BIN)/python -m bench.eval $(EVAL_ARGS)
	$(BIN)/python -m bench.eval --index weaviate --out eval-results/eval-weaviate.json $(filter-out --fit,$(EVAL_ARGS))
	$(BIN)/python -m bench.eval.memory
	$(BIN)/python -m bench.eval.longmem

services: install
	$(BIN)/python -m devstack up

services-down:
	$(BIN)/python -m devstack down

clean:
	rm -rf .tribal .pytest_cache .mypy_cache .ruff_cache bench-results
