"""``make bench`` in its tiny mode produces results of the documented shape.

No timings are asserted: this machine's speed is not the code's behaviour.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ROW_FIELDS = {
    "broker": str,
    "broker_version": str,
    "path": str,
    "size": int,
    "messages": int,
    "seconds": float,
    "msgs_per_s": float,
    "mb_per_s": float,
    "p50_ms": float,
    "p99_ms": float,
}


@pytest.mark.slow
@pytest.mark.kafka
def test_quick_bench_writes_a_row_per_path_and_size(tmp_path: Path) -> None:
    out = tmp_path / "backbone.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.backbone",
            "--quick",
            "--brokers",
            "tansu",
            "--startup-runs",
            "1",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        check=True,
        timeout=280,
        stdout=subprocess.DEVNULL,
    )
    doc = json.loads(out.read_text())

    assert {"cpu_count", "python", "faust_streaming", "aiokafka"} <= set(doc["machine"])
    rows = doc["results"]
    assert {(r["path"], r["size"]) for r in rows} == {
        (path, size)
        for path in ("aiokafka", "relay", "faust", "faust-batch")
        for size in (1024, 100 * 1024)
    }
    for row in rows:
        for name, kind in ROW_FIELDS.items():
            assert isinstance(row[name], kind), (name, row[name])
        assert row["broker"] == "tansu"
    one_kb = [o for o in doc["faust_overhead"] if o["size"] == 1024]
    assert one_kb
    assert all(isinstance(o["target_met"], bool) for o in one_kb)
    assert {"throughput_pct", "p50_pct"} <= set(one_kb[0]["vs_aiokafka"])
    assert len(doc["startup"]["runs"]) == 1
    assert isinstance(doc["startup"]["target_met"], bool)


FUZZ_SURFACES = {
    "http:turns", "http:events", "http:forget", "http:retrieve", "http:search", "registry",
    "raw:memory.turns", "raw:kb.articles", "raw:files.changes", "raw:schema.changes",
}  # fmt: skip
FUZZ_COUNTS = ("sent", "accepted", "rejected_4xx", "dead_lettered", "landed", "lost")


@pytest.mark.slow
@pytest.mark.kafka
@pytest.mark.postgres
def test_quick_fuzz_bench_accounts_for_every_input_on_every_surface(tmp_path: Path) -> None:
    out = tmp_path / "fuzz.json"
    subprocess.run(
        [sys.executable, "-m", "bench.fuzz", "--quick", "--out", str(out)],
        cwd=ROOT,
        check=True,
        timeout=280,
        stdout=subprocess.DEVNULL,
    )
    doc = json.loads(out.read_text())

    surfaces = doc["surfaces"]
    assert set(surfaces) >= FUZZ_SURFACES
    assert any(name.startswith("mcp:") for name in surfaces)
    for name, row in surfaces.items():
        for count in FUZZ_COUNTS:
            assert isinstance(row[count], int), (name, count)
        outcomes = ("accepted", "rejected_4xx", "answered", "unsendable")
        assert sum(row[o] for o in outcomes) == row["sent"], name  # one outcome each
    assert sum(row["sent"] for row in surfaces.values()) == doc["n"] == 300
    assert doc["totals"]["landed"] > 0, "the valid share must land"
    assert {"elapsed_s", "stuck_stages", "lost", "dead_letters", "targets"} <= set(doc)
    # behaviour, not speed: nothing lost, nothing stuck
    assert doc["lost"] == 0, doc["lost_examples"]
    assert doc["stuck_stages"] == []
