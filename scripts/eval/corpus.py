"""The eval corpora, ingested the way sources feed Tribal: source events on their topics,
the stream processors (documenter, file chunker, KB chunker, embedder) applied to them,
their outputs on the derived topics, and the projections folding those topics.

Third-party material is read from the installed environment at run time: the ``h11``
package's source files and the long descriptions of installed distributions.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

from events.base import Event
from events.chunks import DocumentChunked
from events.documents import DomainDocumented, TableDocumented
from events.files import FileChanged
from events.kb import KbArticleUpserted
from events.sources.pg_catalog import introspect
from streams.chunker.defaults import default_registry
from streams.chunker.files import FileChunker
from streams.chunker.kb import chunk_kb_article
from streams.documenter.documenter import Documenter, make_provider
from streams.documenter.lane import DocumenterLane
from streams.embedder.model import Embedder
from tests.api.demo import SCHEMA_SQL, Demo, embeddings, fresh_database
from tests.harness.pipeline import Pipeline, isolated_settings

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "tests" / "eval"
LEGACY_SQL = ROOT / "scripts" / "demo" / "legacy_billing.sql"
SCHEMAS = (("shop", SCHEMA_SQL), ("billing", LEGACY_SQL))
CODE_DIRS = ("api", "events", "projections")
THIRD_PARTY = "h11"
UPDATED = datetime(2026, 1, 1, tzinfo=UTC)


def load_set(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SETS / f"{name}.json").read_text())
    return data


async def _observe(admin_dsn: str) -> tuple[str, list[Event]]:
    """Both schemas in one fresh PostgreSQL database each; the catalog DSN is the first."""
    observed: list[Event] = []
    first = ""
    for database, sql in SCHEMAS:
        dsn = await fresh_database(admin_dsn, prefix=f"eval_{database}")
        first = first or dsn
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(sql.read_text())
            observed.extend(await introspect(conn, database))
        finally:
            await conn.close()
    return first, observed


def code_files() -> list[FileChanged]:
    """``api/``, ``events/`` and ``projections/`` of this repository, and the installed h11."""
    spec = importlib.util.find_spec(THIRD_PARTY)
    assert spec is not None
    assert spec.origin is not None
    roots = [("tribal", ROOT, [ROOT / d for d in CODE_DIRS])]
    pkg = Path(spec.origin).parent
    roots.append((THIRD_PARTY, pkg, [pkg]))
    out = []
    for repo, base, dirs in roots:
        for d in dirs:
            for path in sorted(d.rglob("*.py")):
                text = path.read_text()
                out.append(FileChanged(
                    repo=repo, path=path.relative_to(base).as_posix(), content=text,
                    sha256=hashlib.sha256(text.encode()).hexdigest(), language="python",
                    size_bytes=len(text.encode()),
                ))  # fmt: skip
    return out


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


async def build(
    bootstrap: str, admin_dsn: str, data_dir: Path, embedder: Embedder, code: bool = True,
    **extra: object,
) -> Demo:  # fmt: skip
    """Produce every source event, run the processors, project; return the deployment.

    ``code=False`` leaves the code corpus out (the quick eval of the test suite)."""
    dsn, observed = await _observe(admin_dsn)
    settings = isolated_settings(bootstrap, data_dir, postgres_dsn=dsn, **extra)
    pipe = Pipeline(settings)
    await pipe.create_topics()
    await pipe.produce("schema.changes", [(e.fully_qualified_name, e) for e in observed])  # type: ignore[attr-defined]
    documented = [
        e.event for e in await DocumenterLane(Documenter(make_provider(env={}))).process(observed)
    ]
    tables = [e for e in documented if isinstance(e, TableDocumented)]
    domains = [e for e in documented if isinstance(e, DomainDocumented)]
    await pipe.produce("tables.documented", [(t.fully_qualified_name, t) for t in tables]
                       + [(d.domain, d) for d in domains])  # fmt: skip
    files = code_files() if code else []
    articles = kb_articles(load_set("kb")["articles"])
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
    return demo
