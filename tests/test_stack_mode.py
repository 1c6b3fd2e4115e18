"""`tribal up` with external services says so: its mode, banner and children's mode."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cli.stack import banner
from runtime.embedded.process import ChildProcess
from runtime.embedded.supervisor import EmbeddedStack, StackInfo
from runtime.settings import TribalSettings

KAFKA = "127.0.0.1:9092"
DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
WEAVIATE = "http://127.0.0.1:8080"


def external(data_dir: Path) -> TribalSettings:
    return TribalSettings(
        data_dir=data_dir, kafka_bootstrap=KAFKA, postgres_dsn=DSN, weaviate_url=WEAVIATE
    )


def test_a_stack_on_external_services_runs_its_children_in_distributed_mode(
    tmp_path: Path,
) -> None:
    stack = EmbeddedStack(external(tmp_path))
    assert stack.mode == "distributed"
    env = stack._child_env(KAFKA, DSN)
    assert env["TRIBAL_MODE"] == "distributed"


def test_the_banner_names_the_broker_and_index_the_stack_uses(tmp_path: Path) -> None:
    info = StackInfo(
        KAFKA, DSN, "http://127.0.0.1:8765", 1, 0.0,
        mode="distributed", broker="external", index="weaviate",
    )  # fmt: skip
    text = "\n".join(banner(info, external(tmp_path)))
    assert "Tansu" not in text
    assert "external Kafka" in text
    assert "Weaviate at http://127.0.0.1:8080" in text
    embedded = StackInfo("127.0.0.1:1", "postgresql://x@127.0.0.1:2/p", "http://a", 1, 0.0)
    assert "Tansu, archived to" in "\n".join(banner(embedded, TribalSettings(data_dir=tmp_path)))


async def test_a_stack_waits_for_a_health_answer_that_takes_seconds(tmp_path: Path) -> None:
    # /healthz on Apache Kafka took 1.8 s (its lag probes); a 1 s read timeout never saw
    # an answer, so `tribal up` on external services gave up after 60 s.
    async def slow_health(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await asyncio.sleep(1.5)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
        await writer.drain()
        writer.close()

    class Running(ChildProcess):
        def alive(self) -> bool:
            return True

    server = await asyncio.start_server(slow_health, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    stack = EmbeddedStack(external(tmp_path))
    try:
        api = Running("api", ["api"])
        await asyncio.wait_for(stack._wait_healthy(f"http://127.0.0.1:{port}", api, 8), 10)
    finally:
        server.close()
        await server.wait_closed()
