"""`tribal up`: the embedded stack as a user runs it, stopped cleanly and killed."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from devstack.pipeline import REPO, Pipeline, eventually, kb_article
from events.chunks import DocumentChunked
from runtime.embedded.process import free_port
from runtime.settings import TribalSettings

pytestmark = pytest.mark.slow


class Stack:
    """One `tribal up` child process on a data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir.parent / f"{data_dir.name}-up.log"
        self.extra_args: list[str] = []
        self.extra_env: dict[str, str] = {}

    def start(self, timeout: float = 60) -> Stack:
        env = dict(os.environ, TRIBAL_API_PORT=str(self.port), HF_HUB_OFFLINE="1")
        env.update(self.extra_env)
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cli",
                "up",
                "--data-dir",
                str(self.data_dir),
                *self.extra_args,
            ],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log()
            try:
                if (
                    httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200
                    and (self.data_dir / "stack.json").exists()
                ):
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"tribal up was not healthy in {timeout}s:\n{self.log()}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def pipeline(self) -> Pipeline:
        info = json.loads((self.data_dir / "stack.json").read_text())
        return Pipeline(
            TribalSettings(kafka_bootstrap=info["kafka_bootstrap"], data_dir=self.data_dir)
        )

    def children(self) -> list[int]:
        """Pids of processes that mention our data directory (broker, postgres, workers)."""
        out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
        mine = str(self.data_dir)
        return [
            int(line.split(None, 1)[0])
            for line in out.splitlines()[1:]
            if mine in line and self.proc is not None and line.split()[0] != str(self.proc.pid)
        ]

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(60)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Not tmp_path: pytest makes it 0700, and embedded PostgreSQL runs as an
    # unprivileged account when the tests run as root.
    root = Path(tempfile.mkdtemp(prefix="tribal-embedded-"))
    root.chmod(0o755)
    yield root / "tribal"
    shutil.rmtree(root, ignore_errors=True)


async def _chunk_docs(pipeline: Pipeline) -> list[str]:
    events = await pipeline.decoded("chunks")
    return [d.document_id for d in events if isinstance(d, DocumentChunked)]


async def _wait_for_chunks(pipeline: Pipeline, n: int) -> None:
    async def enough() -> bool:
        return len(await pipeline.read_all("chunks")) >= n

    await eventually(enough, timeout=60)


async def _chunked_after_restart(again: Stack) -> list[str]:
    """The ten articles written before the restart are kept, and an eleventh is chunked
    (the worker has resumed): the document of every chunk event since the start."""
    pipeline = again.pipeline()
    assert len(await pipeline.read_all("kb.articles")) == 10
    await pipeline.produce("kb.articles", [("kb-10", kb_article(10))])
    await _wait_for_chunks(pipeline, 11)
    await asyncio.sleep(2)
    return await _chunk_docs(pipeline)


async def test_tribal_up_answers_healthz_and_restarts_without_losing_or_reprocessing(
    data_dir: Path,
) -> None:
    stack = Stack(data_dir).start()
    try:
        async with httpx.AsyncClient() as client:
            health = (await client.get(f"{stack.url}/healthz")).json()
        assert health["status"] == "ok"
        pipeline = stack.pipeline()
        await pipeline.produce("kb.articles", [(f"kb-{n}", kb_article(n)) for n in range(10)])
        await _wait_for_chunks(pipeline, 10)
        assert stack.stop() == 0, stack.log()
    finally:
        if stack.proc and stack.proc.poll() is None:
            stack.kill()
    await asyncio.sleep(0.5)
    assert stack.children() == [], "orphans after a clean stop"

    again = Stack(data_dir).start()
    try:
        # Had it re-processed the old ten, there would be more than eleven chunk events.
        docs = await _chunked_after_restart(again)
        assert sorted(docs) == sorted(f"kb:kb-{n}" for n in range(11))
        assert again.stop() == 0
    finally:
        if again.proc and again.proc.poll() is None:
            again.kill()


async def test_after_kill_9_nothing_is_lost_and_at_most_the_last_batch_is_redone(
    data_dir: Path,
) -> None:
    stack = Stack(data_dir).start()
    try:
        pipeline = stack.pipeline()
        await pipeline.produce("kb.articles", [(f"kb-{n}", kb_article(n)) for n in range(10)])
        await _wait_for_chunks(pipeline, 10)
    finally:
        stack.kill()

    async def orphans_gone() -> bool:
        return not stack.children()

    await eventually(orphans_gone, timeout=15, interval=0.2)
    assert stack.children() == [], "children outlived a SIGKILLed supervisor"

    again = Stack(data_dir).start()
    try:
        docs = await _chunked_after_restart(again)
        assert set(docs) == {f"kb:kb-{n}" for n in range(11)}
        # re-processing is bounded by the one batch that was not yet committed
        assert len(docs) <= 11 + 10
        assert again.stop() == 0
    finally:
        if again.proc and again.proc.poll() is None:
            again.kill()


async def test_tribal_up_runs_the_sources_listed_in_tribal_yaml(data_dir: Path) -> None:
    watched = data_dir.parent / "repo"
    watched.mkdir(parents=True)
    (watched / "hello.py").write_text("def hello():\n    return 'world'\n")
    config = data_dir.parent / "tribal.yaml"
    config.write_text(
        "sources:\n  - kind: files\n    name: demo\n    path: ${DEMO_REPO}\n    repo: demo\n"
    )
    stack = Stack(data_dir)
    stack.extra_args = ["--config", str(config)]
    stack.extra_env = {"DEMO_REPO": str(watched)}
    stack.start()
    try:
        pipeline = stack.pipeline()

        async def file_seen() -> bool:
            keys = [m.key for m in await pipeline.read_all("files.changes")]
            return b"demo:hello.py" in keys

        await eventually(file_seen, timeout=60)
        assert stack.stop() == 0
    finally:
        if stack.proc and stack.proc.poll() is None:
            stack.kill()
