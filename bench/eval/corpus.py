"""The eval corpora, ingested the way sources feed Tribal: source events on their topics,
the stream processors (documenter, file chunker, KB chunker, embedder) applied to them,
their outputs on the derived topics, and the projections folding those topics.

Third-party material is read at run time, never copied into the repository: installed
packages' sources (:mod:`bench.eval.corpora_code`), Debian documentation packages
(:mod:`bench.eval.corpora_kb`), a sample database from a package registry
(:mod:`bench.eval.corpora_tables`) and the long descriptions of installed
distributions. Each corpus is its own tenant (:mod:`bench.eval.corpora`).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

from bench.eval.corpora import Corpus, loader
from demo import DATA
from devstack.deployment import SCHEMA_SQL, Demo, embeddings
from devstack.pipeline import Pipeline, isolated_settings
from events.base import Event
from events.chunks import DocumentChunked
from events.documents import DomainDocumented, TableDocumented
from events.files import FileChanged
from events.kb import KbArticleUpserted
from runtime.databases import fresh_database
from sources.pg_catalog import introspect
from streams.chunker.defaults import default_registry
from streams.chunker.files import FileChunker
from streams.chunker.kb import chunk_kb_article
from streams.documenter.documenter import Documenter, make_provider
from streams.documenter.lane import DocumenterLane
from streams.embedder.model import Embedder

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "tests" / "eval"
LEGACY_SQL = DATA / "legacy_billing.sql"
SCHEMAS = (("shop", SCHEMA_SQL), ("billing", LEGACY_SQL))
UPDATED = datetime(2026, 1, 1, tzinfo=UTC)


def load_set(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SETS / f"{name}.json").read_text())
    return data


async def _observe(admin_dsn: str) -> tuple[str, list[Event]]:
    """Both schemas in one fresh PostgreSQL database each; the catalog DSN is the first."""
    observed: list[Event] = []
    first = ""
    for database, sql in SCHEMAS:
        dsn = await fresh_database(admin_dsn, f"eval_{database}")
        first = first or dsn
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(sql.read_text())
            observed.extend(await introspect(conn, database))
        finally:
            await conn.close()
    return first, observed


def kb_articles(names: Sequence[str]) -> list[KbArticleUpserted]:
    """One article per installed distribution: its summary and long description."""
    out = []
    for name in names:
        meta = importlib.metadata.metadata(name)
        body = meta.get_payload() or meta.get("Description") or ""  # type: ignore[attr-defined]
        out.append(KbArticleUpserted(
            article_id=name, title=f"{meta['Name']}: {meta['Summary']}",
            url=f"https://pypi.org/project/{name}/", content=str(body),
            intent=("docs",), device=(name,), last_updated=UPDATED,
        ))  # fmt: skip
    return out


async def _tables(corpus: Corpus, admin_dsn: str) -> tuple[str, list[Event]]:
    """A schema corpus in a fresh database: its DSN and its ``TableObserved`` events."""
    if "legacy_schema" in corpus.source:
        database = corpus.source["legacy_schema"]
        dsn = await fresh_database(
            admin_dsn, f"eval_{database}", dict(SCHEMAS)[database].read_text()
        )
    else:
        database = corpus.queries[0]["expect"][0].split(".")[0]
        dsn = await loader("bench.eval.corpora_tables", "load")(admin_dsn, corpus.spec)
    conn = await asyncpg.connect(dsn)
    try:
        observed = await introspect(conn, database)
    finally:
        await conn.close()
    return dsn, [e.model_copy(update={"tenant": corpus.tenant}) for e in observed]


def _code(corpus: Corpus) -> list[FileChanged]:
    files = loader("bench.eval.corpora_code", "corpus_files")(corpus.spec)
    return [f.model_copy(update={"tenant": corpus.tenant}) for f in files]


def _contract_1(article: KbArticleUpserted) -> dict[str, Any]:
    """An article as a help desk's Contract 1 listing ships it."""
    return {
        "id": article.article_id, "title": article.title, "url": article.url,
        "content": article.content,
        "metadata": {"intent": list(article.intent), "device": list(article.device),
                     "last_updated": article.last_updated.isoformat()},
    }  # fmt: skip


async def through_contract_1(
    articles: list[dict[str, Any]], tenant: str
) -> list[KbArticleUpserted]:
    """Serve ``articles`` from a Contract 1 host (``GET /api/kb/articles``) and read them
    with the help-desk source, as a user's help desk is read: paging, metadata, notes."""
    import threading

    import uvicorn

    from demo.kb_host import KbStore, create_kb_host
    from runtime.embedded.process import free_port
    from sources.checkpoint import MemoryCheckpoint
    from sources.kb import KbOptions, KbSource
    from sources.sink import MemorySink

    port = free_port()
    config = uvicorn.Config(
        create_kb_host(KbStore(articles)), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:  # noqa: ASYNC110 - uvicorn exposes a flag, not an event
            await asyncio.sleep(0.05)
        sink = MemorySink()
        source = KbSource("eval", KbOptions(url=f"http://127.0.0.1:{port}", tenant=tenant))
        await source.sync_once(sink, MemoryCheckpoint())
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 10)
    return [e for e in sink.events() if isinstance(e, KbArticleUpserted)]


async def _articles(corpus: Corpus) -> list[KbArticleUpserted]:
    if "pypi_descriptions" in corpus.source:
        rows = [_contract_1(a) for a in kb_articles(corpus.source["pypi_descriptions"])]
    else:
        rows = loader("bench.eval.corpora_kb", "articles")(corpus.spec)
    return await through_contract_1(rows, corpus.tenant)


async def build(
    bootstrap: str, admin_dsn: str, data_dir: Path, embedder: Embedder,
    corpora: Sequence[Corpus], **extra: object,
) -> tuple[Demo, dict[str, dict[str, str]]]:  # fmt: skip
    """Produce every corpus's source events (each under its tenant), run the processors,
    project; return the deployment and, per KB corpus, its articles' url -> id."""
    observed: list[Event] = []
    first = ""
    for c in corpora:
        if c.kind == "tables":
            dsn, events = await _tables(c, admin_dsn)
            first = first or dsn
            observed += events
    dsn = first or await fresh_database(admin_dsn, "eval_catalog")
    settings = isolated_settings(bootstrap, data_dir, postgres_dsn=dsn, **extra)
    pipe = Pipeline(settings)
    await pipe.create_topics()
    await pipe.produce("schema.changes", [(e.fully_qualified_name, e) for e in observed])  # type: ignore[attr-defined]
    documented: list[Event] = []
    for tenant in sorted({e.tenant for e in observed}):  # type: ignore[attr-defined]
        mine = [e for e in observed if e.tenant == tenant]  # type: ignore[attr-defined]
        lane = DocumenterLane(Documenter(make_provider(env={})))
        documented += [e.event for e in await lane.process(mine)]
    tables = [e for e in documented if isinstance(e, TableDocumented)]
    domains = [e for e in documented if isinstance(e, DomainDocumented)]
    await pipe.produce("tables.documented", [(t.fully_qualified_name, t) for t in tables]
                       + [(d.domain, d) for d in domains])  # fmt: skip
    files = [f for c in corpora if c.kind == "code" for f in _code(c)]
    urls: dict[str, dict[str, str]] = {}
    articles: list[KbArticleUpserted] = []
    for c in corpora:
        if c.kind == "kb":
            kb = await _articles(c)
            urls[c.name] = {a.url: a.article_id for a in kb}
            articles += kb
    await pipe.produce("files.changes", [(f.key, f) for f in files])
    await pipe.produce("kb.articles", [(a.article_id, a) for a in articles])
    chunker = FileChunker(default_registry(env={}))
    emits = [e for f in files for e in await chunker(f)]
    emits += [e for a in articles for e in chunk_kb_article(a)]
    chunked = [e.event for e in emits if isinstance(e.event, DocumentChunked)]
    await pipe.produce("chunks", [(d.document_id, d) for d in chunked])
    vectors = await embeddings([*chunked, *tables], embedder)
    await pipe.produce("embeddings", [(v.document_id, v) for v in vectors])
    demo = Demo(settings, pipe, dsn)
    await demo.project(("catalog", "index"))
    return demo, urls
