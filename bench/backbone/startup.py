"""``tribal up`` start-up: ``EmbeddedStack.start()`` until ``/healthz`` answers 200."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.run import scratch
from runtime.embedded.process import free_port
from runtime.embedded.supervisor import EmbeddedStack
from runtime.settings import TribalSettings

TARGET_WARM_S = 10.0


async def start_once() -> dict[str, Any]:
    """Seconds to a healthy stack on a fresh data directory, and the stack's own timings."""
    with scratch("up") as data_dir:
        return await _start(data_dir)


async def _start(data_dir: Path) -> dict[str, Any]:
    settings = TribalSettings().model_copy(
        update={
            "data_dir": data_dir,
            "kafka_bootstrap": "",
            "postgres_dsn": "",
            "schema_registry_url": "",
            "api_port": free_port(),
        }
    )
    stack = EmbeddedStack(settings, say=lambda _msg: None)
    t0 = time.perf_counter()
    try:
        info = await stack.start()
        seconds = time.perf_counter() - t0
    finally:
        await stack.stop()
    return {
        "seconds": round(seconds, 3),
        "phases": {k: round(v, 3) for k, v in info.timings.items()},
    }


async def startup_runs(runs: int = 2) -> dict[str, Any]:
    """Start and stop the stack ``runs`` times; the last run is the warm one."""
    results = [await start_once() for _ in range(runs)]
    warm = results[-1]["seconds"]
    return {
        "runs": results,
        "cold_s": results[0]["seconds"],
        "warm_s": warm,
        "target_warm_s": TARGET_WARM_S,
        "target_met": warm < TARGET_WARM_S,
    }
