"""Run the labelled sets: through the HTTP API (the product) and through the index in
BM25-only and vector-only modes (the baselines), on the same data in the same run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx

from bench.eval.metrics import Ranked, Sourced, first_rank
from projections.index.port import Kind, SearchIndex, SearchMode
from streams.embedder.model import Embedder

DEPTH = 10
MIN_RELEVANCE = 0.7
TENANT = "default"
Answers = Callable[[str], Awaitable[list[Any]]]


class Runner:
    """Query functions for every set, per system (``hybrid`` = the HTTP API)."""

    def __init__(
        self, client: httpx.AsyncClient, index: SearchIndex, embedder: Embedder,
        tenant: str = TENANT, urls: dict[str, str] | None = None,
    ) -> None:  # fmt: skip
        self.client = client
        self.index = index
        self.embedder = embedder
        self.tenant = tenant
        self.urls = urls or {}
        """A KB corpus's article url -> id (sources are compared by article id)."""

    def for_corpus(self, tenant: str, urls: dict[str, str] | None = None) -> Runner:
        """The same runner asking as ``tenant`` (its API key is ``key-<tenant>``)."""
        client = httpx.AsyncClient(
            base_url=self.client.base_url, timeout=60,
            headers={"Authorization": f"Bearer key-{tenant}"},
        )  # fmt: skip
        return Runner(client, self.index, self.embedder, tenant, urls)

    def article(self, url: str) -> str:
        return self.urls.get(url) or url.rstrip("/").rsplit("/", 1)[-1]

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
        return [self.article(s["url"]) for s in out["sources_consulted"]], out["coverage"]

    async def index_hits(self, q: str, kind: Kind, mode: SearchMode, depth: int = DEPTH) -> Any:
        vector = await self._vector(q) if mode != SearchMode.BM25 else None
        text = q if mode != SearchMode.VECTOR else None
        return await self.index.search(text, vector, kind, None, depth, self.tenant, mode)

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
        sources = [self.article(u) for u, s in ranked if s >= MIN_RELEVANCE][:3]
        top = ranked[0][1] if ranked else 0.0
        return sources, ("medium" if sources else "low" if top >= 0.5 else "none")


def code_hit(expected: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
    """A result is right if it is the expected symbol, or one of the ``also`` listed."""
    answers = [(expected["path"], expected["symbol"])]
    answers += [(a["path"], a["symbol"]) for a in expected.get("also", [])]

    def correct(r: dict[str, Any]) -> bool:
        names = {r.get("symbol") or "", (r.get("fully_qualified_name") or "").rsplit(".", 1)[-1]}
        return r.get("repo") == expected["repo"] and any(
            r.get("path") == path and symbol in names for path, symbol in answers
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
    """Sources are compared by article id (the answers map urls to ids)."""
    out = []
    for item in queries:
        names, coverage = await answers(item["q"])
        out.append(Sourced(item["kind"], tuple(item["expect"]), tuple(names), coverage, item["q"]))
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
