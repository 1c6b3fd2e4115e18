"""One eval run: every corpus in, each asked as its own tenant through HTTP (the
product) and both baselines, the calibration measured leaving each corpus out."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from bench.eval import calibrate, corpus, loco
from bench.eval.corpora import Corpus, all_corpora
from bench.eval.metrics import by_kind, knowledge_by_kind, misses, wrong_sources
from bench.eval.runs import Runner, join_hops, rank_code, rank_tables, sourced
from devstack.deployment import AUTH, KEYS
from devstack.served import ThreadedServer
from projections.index import index_from_settings, ranking
from projections.index.port import Kind, SearchMode
from streams.embedder.model import Embedder

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


async def _product(run: Runner, c: Corpus) -> dict[str, Any]:
    """One corpus through the HTTP API and both baselines."""
    baselines = (SearchMode.BM25, SearchMode.VECTOR)
    if c.kind == "kb":
        answers = await sourced(c.queries, run.retrieve_http)
        row = {"hybrid": knowledge_by_kind(answers), "misses": wrong_sources(answers)}
        for mode in baselines:
            baseline = partial(run.retrieve_baseline, mode=mode)
            row[mode.value] = knowledge_by_kind(await sourced(c.queries, baseline))
        return row
    rank, http, kind = (
        (rank_tables, run.tables_http, Kind.TABLE_DOC)
        if c.kind == "tables"
        else (rank_code, run.code_http, Kind.CODE_CHUNK)
    )
    found = await rank(c.queries, http)
    row = {"hybrid": by_kind(found), "misses": misses(found)}
    for mode in baselines:
        row[mode.value] = by_kind(await rank(c.queries, run.baseline(kind, mode)))
    if c.kind == "tables":
        row["joins"] = await join_hops(run.client, c.joins)
    return row


async def evaluate(
    bootstrap: str, admin_dsn: str, data_dir: Path, embedder: Embedder, console: Console,
    corpora: Sequence[Corpus] | None = None, fit: bool = False,
    store: Mapping[str, object] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Build the corpora (all of them by default), serve the API, measure.

    ``fit``: write the calibration fitted on every corpus (what the product ships);
    the headline numbers are leave-one-corpus-out either way. ``store``: settings of
    the search index (``weaviate_url`` … for Weaviate; pgvector when empty)."""
    corpora = list(corpora or all_corpora())
    keys = {**KEYS, **{f"key-{c.tenant}": c.tenant for c in corpora}}
    t0 = time.perf_counter()
    demo, urls = await corpus.build(
        bootstrap, admin_dsn, data_dir, embedder, corpora, api_keys=keys, **(store or {})
    )
    console.print(f"{len(corpora)} corpora ingested in {time.perf_counter() - t0:.0f} s")
    index = index_from_settings(demo.settings)
    await index.setup()
    out: dict[str, Any] = {
        "index": type(index).__name__,
        "corpora": {
            kind: {
                c.name: {"n": len(c.queries), "unanswerable": c.unanswerable,
                         "paraphrase": sum(q["kind"] == "paraphrase" for q in c.queries)}
                for c in corpora if c.kind == kind
            }
            for kind in ("tables", "code", "kb")
        },
    }  # fmt: skip
    try:
        with ThreadedServer(demo.settings) as server:
            _wait_semantic(server.url)
            async with httpx.AsyncClient(base_url=server.url, headers=AUTH, timeout=60) as client:
                base = Runner(client, index, embedder)
                held, fits = await loco.leave_one_corpus_out(base, corpora, urls)
                out["calibration_fit"] = fits
                if fit and all("error" not in f for f in fits.values()):
                    calibrate.write(fits, type(index).__name__)
                    ranking.calibration.cache_clear()  # the server thread ranks with it now
                    console.print(f"calibration written to {ranking.CALIBRATION_FILE}")
                for c in corpora:
                    run = base.for_corpus(c.tenant, urls.get(c.name))
                    try:
                        row = out["corpora"][c.kind][c.name]
                        row.update(held.get(c.kind, {}).get(c.name, {}))
                        row.update(await _product(run, c))
                    finally:
                        await run.client.aclose()
                    console.print(f"  {c.kind} {c.name}: done")
    finally:
        await index.close()
    return out
