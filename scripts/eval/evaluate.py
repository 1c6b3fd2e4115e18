"""One eval run: corpora in, every labelled set through HTTP and both baselines, a report out."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from projections.index import index_from_settings, scoring
from projections.index.port import Kind, SearchMode
from scripts.eval import calibrate, corpus
from scripts.eval.metrics import by_kind, knowledge_by_kind, misses, wrong_sources
from scripts.eval.runs import Runner, join_hops, rank_code, rank_tables, sourced
from streams.embedder.model import Embedder
from tests.api.conftest import AUTH, KEYS, ThreadedServer

WARM_UP_S = 120


def _wait_semantic(url: str) -> None:
    """The API loads its query embedder in the background: wait until it answers."""
    deadline = time.monotonic() + WARM_UP_S
    body = {"intent": "docs", "message": "HTTP client", "metadata": {}}
    while time.monotonic() < deadline:
        r = httpx.post(f"{url}/v1/retrieve", json=body, headers=AUTH, timeout=30)
        if (
            r.json()["gaps"] != ["Knowledge retrieval unavailable"]
            and r.json()["retrieval_time_ms"]
        ):
            probe = httpx.get(f"{url}/v1/code/search", params={"query": "x"}, headers=AUTH)
            if probe.status_code == 200:
                return
        time.sleep(0.5)


async def evaluate(
    bootstrap: str, admin_dsn: str, data_dir: Path, embedder: Embedder, console: Console,
    sets: dict[str, dict[str, Any]] | None = None, fit: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Build the corpora, serve the API, run the sets (all of ``tests/eval`` by default).

    ``fit``: refit the calibration on the dev split first and write it (the run then
    measures the new fit)."""
    sets = sets or {n: corpus.load_set(n) for n in ("tables", "code", "kb", "joins")}
    t0 = time.perf_counter()
    code = bool(sets["code"]["queries"])
    demo = await corpus.build(bootstrap, admin_dsn, data_dir, embedder, code, api_keys=KEYS)
    console.print(f"corpora ingested in {time.perf_counter() - t0:.0f} s")
    index = index_from_settings(demo.settings)
    await index.setup()
    out: dict[str, Any] = {"tables": {}, "code": {}, "knowledge": {}}
    try:
        with ThreadedServer(demo.settings) as server:
            _wait_semantic(server.url)
            async with httpx.AsyncClient(base_url=server.url, headers=AUTH, timeout=60) as client:
                run = Runner(client, index, embedder)
                tq, cq, kq = (
                    sets["tables"]["queries"],
                    sets["code"]["queries"],
                    sets["kb"]["queries"],
                )
                fits = {
                    k.value: await calibrate.fit(run, k, qs)
                    for k, qs in ((Kind.TABLE_DOC, tq), (Kind.CODE_CHUNK, cq), (Kind.KB_CHUNK, kq))
                    if qs
                }
                out["calibration_fit"] = fits
                if fit and all("error" not in f for f in fits.values()):
                    # the server (a thread of this process) ranks with the new fit from here
                    calibrate.write(fits, type(index).__name__)
                    scoring.calibration.cache_clear()
                    console.print(f"calibration written to {scoring.CALIBRATION_FILE}")
                tables = await rank_tables(tq, run.tables_http)
                code_rows = await rank_code(cq, run.code_http)
                knowledge = await sourced(kq, run.retrieve_http)
                out["tables"]["hybrid"] = by_kind(tables)
                out["code"]["hybrid"] = by_kind(code_rows)
                out["knowledge"]["hybrid"] = knowledge_by_kind(knowledge)
                out["misses"] = {
                    "tables": misses(tables), "code": misses(code_rows),
                    "knowledge": wrong_sources(knowledge),
                }  # fmt: skip
                for mode in (SearchMode.BM25, SearchMode.VECTOR):
                    name = mode.value
                    out["tables"][name] = by_kind(
                        await rank_tables(tq, run.baseline(Kind.TABLE_DOC, mode))
                    )
                    out["code"][name] = by_kind(
                        await rank_code(cq, run.baseline(Kind.CODE_CHUNK, mode))
                    )
                    out["knowledge"][name] = knowledge_by_kind(
                        await sourced(kq, partial(run.retrieve_baseline, mode=mode))
                    )
                out["joins"] = await join_hops(client, sets["joins"]["pairs"])
    finally:
        await index.close()
    return out
