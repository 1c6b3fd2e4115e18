"""The load's inputs and how they are sent: streams of timed calls, open loops, and the
file changes, turns and questions they carry."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bench.stats import percentile
from demo import DATA
from events.files import FileChanged
from events.kb import KbArticleUpserted


@dataclass
class Stream:
    """What one load stream did: latencies of the calls that succeeded, and failures."""

    name: str
    target_per_s: float | None
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    skipped: int = 0
    """Calls not started because too many were already in flight (open loop only)."""
    degraded: int = 0
    last_error: str = ""

    @property
    def done(self) -> int:
        return len(self.latencies_ms)

    def summary(self, seconds: float) -> dict[str, Any]:
        return {
            "target_per_s": self.target_per_s,
            "calls": self.done,
            "achieved_per_s": round(self.done / seconds, 1),
            "p50_ms": round(percentile(self.latencies_ms, 50), 2),
            "p95_ms": round(percentile(self.latencies_ms, 95), 2),
            "p99_ms": round(percentile(self.latencies_ms, 99), 2),
            "errors": self.errors,
            "skipped_in_flight_cap": self.skipped,
            "degraded": self.degraded,
            "last_error": self.last_error,
        }


async def timed(stream: Stream, call: Callable[[], Awaitable[None]]) -> None:
    t0 = time.perf_counter()
    try:
        await call()
    except Exception as exc:  # a failed call is a result, not a crash of the bench
        stream.errors += 1
        stream.last_error = f"{type(exc).__name__}: {exc}"[:200]
        return
    stream.latencies_ms.append((time.perf_counter() - t0) * 1000)


async def open_loop(
    stream: Stream, rate: float, stop: asyncio.Event, call: Callable[[int], Awaitable[None]]
) -> None:
    """Start ``call(n)`` ``rate`` times a second whatever the answers take (capped)."""
    cap = int(rate * 10)  # 10 s worth in flight; beyond that the system is not keeping up
    tasks: set[asyncio.Task[None]] = set()
    start, n = time.perf_counter(), 0
    while not stop.is_set():
        delay = start + n / rate - time.perf_counter()
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            continue
        if len(tasks) >= cap:
            stream.skipped += 1
        else:
            task = asyncio.create_task(timed(stream, lambda n=n: call(n)))  # type: ignore[misc]
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        n += 1
    if tasks:
        await asyncio.wait(tasks, timeout=30)
    for task in tasks:
        task.cancel()


def file_change(n: int, paths: int = 500) -> FileChanged:
    """A small Python file; every call changes one of ``paths`` files."""
    k, version = n % paths, n // paths
    content = (
        f'"""Refund rules, module {k} (revision {version})."""\n\n\n'
        f"def refund_limit_{k}(order_total: float) -> float:\n"
        f'    """Largest refund for an order, revision {version}."""\n'
        f"    return min(order_total, {100 + version})\n\n\n"
        f"class Parcel{k}:\n"
        f'    """A parcel that may get lost."""\n\n'
        f"    def lost(self, days: int) -> bool:\n"
        f"        return days > {7 + version % 5}\n"
    )
    return FileChanged(
        repo="load",
        path=f"src/refunds/mod_{k}.py",
        content=content,
        sha256=hashlib.sha256(content.encode()).hexdigest(),
        language="python",
        size_bytes=len(content.encode()),
    )


def helpdesk() -> list[dict[str, Any]]:
    articles: list[dict[str, Any]] = json.loads((DATA / "helpdesk.json").read_text())
    return articles


def kb_events() -> list[KbArticleUpserted]:
    return [
        KbArticleUpserted(
            article_id=a["id"], title=a["title"], url=a["url"], content=a["content"],
            intent=tuple(a["metadata"]["intent"]), device=tuple(a["metadata"]["device"]),
            last_updated=datetime.fromisoformat(a["metadata"]["last_updated"]),
        )
        for a in helpdesk()
    ]  # fmt: skip


def retrieve_bodies() -> list[dict[str, Any]]:
    return [
        {"intent": a["metadata"]["intent"][0],
         "message": f"{a['title']}: my {a['metadata']['device'][0]} needs help",
         "metadata": {"product": a["metadata"]["device"][0]}}
        for a in helpdesk()
    ]  # fmt: skip


def turn_body(n: int, groups: int) -> dict[str, str]:
    return {
        "group_id": f"default:load-{n % groups}",
        "user_message": f"My order #{n} never arrived and Parcel{n % 97} shows lost.",
        "agent_response": f"I opened refund case R-{n} for order #{n}.",
    }


async def wait_for(check: Callable[[], Awaitable[bool]], timeout: float, what: str) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        with contextlib.suppress(Exception):
            if await check():
                return time.monotonic() - t0
        await asyncio.sleep(1.0)
    raise TimeoutError(f"{what} not reached within {timeout:.0f}s")
