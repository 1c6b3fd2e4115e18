"""Run the labelled sets: through the HTTP API (the product) and through the index in
BM25-only and vector-only modes (the baselines), on the same data in the same run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx

from projections.index.port import Kind, SearchIndex, SearchMode
from scripts.eval.metrics import Ranked, Sourced, first_rank
from streams.embedder.model import Embedder

DEPTH = 10
MIN_RELEVANCE = 0.7
TENANT = "default"
Answers = Callable[[str], Awaitable[list[Any]]]


class Runner:
    """Query functions for every set, per system (``hybrid`` = the HTTP API)."""

    def __init__(self, client: httpx.AsyncClient, index: SearchIndex, embedder: Embedder) -> None:
        self.client = client
        self.index = index
        self.embedder = embedder

    async def _vector(self, text: str) -> list[float]:
        return list(self.embedder.encode([text])[0])

    async def tables_http(self, q: str) -> list[str]:
        r = await self.client.get("/v1/tables/search", params={"query": q, "limit": DEPTH})
        r.raise_for_status()
        return [t["name"] for t in r.json()["tables"]]

    async def code_http(self, q: str) -> list[dict[str, Any]]:
        r = await self.client.get("/v1/code/search", params={"query": q, "limit": DEPTH})
        r.raise_for_status()
        results: list[dict[str, Any]] = r.json()["results"]
        return results

    async def retrieve_http(self, q: str) -> tuple[list[str], str]:
        body = {"intent": "docs", "message": q, "metadata": {}}
        r = await self.client.post("/v1/retrieve", json=body)
        r.raise_for_status()
        out = r.json()
        return [s["url"] for s in out["sources_consulted"]], out["coverage"]

    async def index_hits(self, q: str, kind: Kind, mode: SearchMode, depth: int = DEPTH) -> Any:
        vector = await self._vector(q) if mode != SearchMode.BM25 else None
        text = q if mode != SearchMode.VECTOR else None
        return await self.index.search(text, vector, kind, None, depth, TENANT, mode)

    def baseline(self, kind: Kind, mode: SearchMode) -> Answers:
        async def answers(q: str) -> list[Any]:
            hits = await self.index_hits(q, kind, mode)
            if kind == Kind.TABLE_DOC:
                return [h.object.fully_qualified_name for h in hits]
            return [
                {"repo": h.object.repo, "path": h.object.path, "symbol": h.object.symbol,
                 "fully_qualified_name": h.object.fully_qualified_name}
                for h in hits
            ]  # fmt: skip

        return answers

    async def retrieve_baseline(self, q: str, mode: SearchMode) -> tuple[list[str], str]:
        best: dict[str, float] = {}
        for h in await self.index_hits(q, Kind.KB_CHUNK, mode):
            url = h.object.url or ""
            best[url] = max(best.get(url, 0.0), h.score)
        ranked = sorted(best.items(), key=lambda kv: -kv[1])
        sources = [u for u, s in ranked if s >= MIN_RELEVANCE][:3]
        top = ranked[0][1] if ranked else 0.0
        return sources, ("medium" if sources else "low" if top >= 0.5 else "none")


def code_hit(expected: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
    sym = expected["symbol"]

    def correct(r: dict[str, Any]) -> bool:
        names = {r.get("symbol") or "", (r.get("fully_qualified_name") or "").rsplit(".", 1)[-1]}
        return (
            r.get("repo") == expected["repo"]
            and r.get("path") == expected["path"]
            and (sym in names)
        )

    return correct


async def rank_tables(queries: Sequence[dict[str, Any]], answers: Answers) -> list[Ranked]:
    out = []
    for item in queries:
        got = await answers(item["q"])
        rank = first_rank(got, lambda n: n in item["expect"])  # noqa: B023
        out.append(Ranked(item["kind"], rank, item["q"], tuple(got[:3])))
    return out


async def rank_code(queries: Sequence[dict[str, Any]], answers: Answers) -> list[Ranked]:
    out = []
    for item in queries:
        got = await answers(item["q"])
        top = tuple(f"{r.get('repo')}:{r.get('path')}:{r.get('symbol')}" for r in got[:3])
        out.append(Ranked(item["kind"], first_rank(got, code_hit(item)), item["q"], top))
    return out


async def sourced(
    queries: Sequence[dict[str, Any]],
    answers: Callable[[str], Awaitable[tuple[list[str], str]]],
) -> list[Sourced]:
    """Sources are compared by article url (``https://pypi.org/project/<name>/``)."""
    out = []
    for item in queries:
        urls, coverage = await answers(item["q"])
        names = tuple(u.rstrip("/").rsplit("/", 1)[-1] for u in urls)
        out.append(Sourced(item["kind"], tuple(item["expect"]), names, coverage, item["q"]))
    return out


async def join_hops(client: httpx.AsyncClient, pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    wrong = []
    for p in pairs:
        params = {"source_table": p["source"], "target_table": p["target"], "max_hops": 4}
        r = await client.get("/v1/join-path", params=params)
        r.raise_for_status()
        got = r.json().get("hop_count")
        if got != p["hops"]:
            wrong.append(
                {"source": p["source"], "target": p["target"], "want": p["hops"], "got": got}
            )
    n = len(pairs)
    return {"n": n, "exact": round((n - len(wrong)) / n, 3) if n else 0.0, "wrong": wrong}
