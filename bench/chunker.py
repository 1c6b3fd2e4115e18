"""Chunker throughput on real source files: this repository plus installed site-packages.

    python -m bench.chunker                  # 2,000 files
    python -m bench.chunker --files 500 --out /tmp/chunker.json

The corpus is read at run time (never copied into the repository): every source file of
this repository, then a deterministic, evenly spread sample of the Python, C/C++ and
other files under site-packages, each at most 1 MB (the files source's default cap).
Rows: the tree-sitter ingesters alone (code files; once in this process and once over
``--workers`` processes, as a worker per partition would run them), the text ingester
alone (all files), the whole registry chain, and the file agent
(``FileChanged`` → ``DocumentChunked``, pydantic models included). Files are in memory
before timing starts: this measures chunking, not the disk. Results go to
``bench-results/chunker.json``.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sysconfig
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench.report import machine, print_table, save
from bench.run import Arguments
from events.files import FileChanged
from sources.file_languages import language_for
from streams.chunker.defaults import default_registry
from streams.chunker.files import FileChunker
from streams.chunker.pieces import IngestError, Piece, SourceDocument
from streams.chunker.plain import TextIngester
from streams.chunker.treesitter import TreeSitterIngester, treesitter_ingesters

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 1024 * 1024
TARGETS = {"tree-sitter": 500.0, "text": 5_000.0}
_SKIP_DIRS = {".git", ".venv", ".tribal", "node_modules", "__pycache__", "bench-results", "build"}
# Share of the site-packages sample per extension family.
_QUOTAS = {("py",): 0.55, ("pyi",): 0.10, ("h", "hpp", "c", "cc", "cpp", "cuh"): 0.30}


def _walk(root: Path, skip_dirs: set[str]) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in skip_dirs)
        found.extend(Path(dirpath) / f for f in sorted(filenames))
    return found


def _spread(paths: list[Path], count: int) -> list[Path]:
    if count >= len(paths):
        return paths
    step = len(paths) / count
    return [paths[int(i * step)] for i in range(count)]


def corpus(files: int) -> list[SourceDocument]:
    """``files`` documents: the repository's own sources first, then site-packages."""
    wanted = {ext for family in _QUOTAS for ext in family} | {"md", "js", "rs", "go", "ts"}
    repo = [p for p in _walk(ROOT, _SKIP_DIRS) if p.suffix.lstrip(".") in wanted]
    chosen = [(ROOT, p) for p in repo][:files]
    site = Path(sysconfig.get_paths()["purelib"])
    pool = [p for p in _walk(site, {"__pycache__"}) if p.suffix.lstrip(".") in wanted]
    rest = files - len(chosen)
    picked: list[Path] = []
    for family, share in _QUOTAS.items():
        members = [p for p in pool if p.suffix.lstrip(".") in family]
        picked += _spread(members, int(rest * share))
    others = [p for p in pool if p not in set(picked)]
    picked += _spread(others, rest - len(picked))
    chosen += [(site, p) for p in picked]
    docs = []
    for base, path in chosen:
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            content = path.read_bytes().decode("utf-8", errors="surrogateescape")
        except OSError:
            continue
        rel = path.relative_to(base).as_posix()
        docs.append(SourceDocument(rel, content, language_for(rel)))
    return docs[:files]


def _timed(
    name: str, docs: Sequence[SourceDocument], run: Callable[[SourceDocument], int]
) -> dict[str, Any]:
    chunks = declined = 0
    started = time.perf_counter()
    for doc in docs:
        try:
            chunks += run(doc)
        except IngestError:
            declined += 1
    seconds = time.perf_counter() - started
    target = TARGETS.get(name)
    rate = len(docs) / seconds if seconds else 0.0
    return {
        "run": name,
        "files": len(docs),
        "bytes": sum(len(d.content) for d in docs),
        "chunks": chunks,
        "declined": declined,
        "seconds": round(seconds, 3),
        "files_per_s": round(rate, 1),
        "target_files_per_s": target,
        "target_met": None if target is None else rate >= target,
    }


def _count(pieces: Sequence[Piece]) -> int:
    return len(pieces)


_WORKER_INGESTERS: dict[str, TreeSitterIngester] = {}


def _worker_batch(docs: list[SourceDocument]) -> tuple[int, int]:
    """In a pool process: (chunks, declined) for a batch through the tree-sitter ingesters."""
    if not _WORKER_INGESTERS:
        for ingester in treesitter_ingesters():
            for capability in ingester.capabilities:
                _WORKER_INGESTERS.setdefault(capability.removeprefix("ingest:"), ingester)
    chunks = declined = 0
    for doc in docs:
        try:
            chunks += len(_WORKER_INGESTERS[doc.extension].ingest(doc))
        except IngestError:
            declined += 1
    return chunks, declined


def _parallel(code: list[SourceDocument], workers: int) -> dict[str, Any]:
    """The tree-sitter row again, over ``workers`` processes (as N workers would run)."""
    batches = [code[i : i + 50] for i in range(0, len(code), 50)]
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_worker_batch, [code[:5]] * workers))  # start and warm every process
        started = time.perf_counter()
        results = list(pool.map(_worker_batch, batches))
        seconds = time.perf_counter() - started
    rate = len(code) / seconds
    return {
        "run": f"tree-sitter, {workers} processes",
        "files": len(code),
        "bytes": sum(len(d.content) for d in code),
        "chunks": sum(c for c, _ in results),
        "declined": sum(d for _, d in results),
        "seconds": round(seconds, 3),
        "files_per_s": round(rate, 1),
        "target_files_per_s": TARGETS["tree-sitter"],
        "target_met": rate >= TARGETS["tree-sitter"],
    }


def run(files: int, workers: int = 0) -> dict[str, Any]:
    docs = corpus(files)
    by_ext: dict[str, TreeSitterIngester] = {}
    for ingester in treesitter_ingesters():
        for capability in ingester.capabilities:
            by_ext.setdefault(capability.removeprefix("ingest:"), ingester)
    code = [d for d in docs if d.extension in by_ext]
    for ingester in {id(i): i for i in by_ext.values()}.values():
        ingester.spec.grammar()  # load grammars before timing
    text = TextIngester()
    registry = default_registry(env={"TRIBAL_LLM_PROVIDER": "local"})
    chunker = FileChunker(registry)
    loop = asyncio.new_event_loop()
    events = [
        FileChanged(
            repo="bench",
            path=d.path,
            content=d.content,
            sha256=hashlib.sha256(d.content.encode("utf-8", "surrogateescape")).hexdigest(),
            language=d.language,
            size_bytes=len(d.content),
        )
        for d in docs
    ]
    by_path = {e.path: e for e in events}
    rows = [
        _timed("tree-sitter", code, lambda d: _count(by_ext[d.extension].ingest(d))),
        _timed("text", docs, lambda d: _count(text.ingest(d))),
        _timed(
            "registry chain",
            docs,
            lambda d: len(loop.run_until_complete(registry.ingest(d)).pieces),
        ),
        _timed(
            "file agent → DocumentChunked",
            docs,
            lambda d: len(loop.run_until_complete(chunker(by_path[d.path]))),
        ),
    ]
    loop.close()
    if workers > 1:
        rows.insert(1, _parallel(code, workers))
    return {
        "benchmark": "chunker",
        "corpus": {
            "files": len(docs),
            "bytes": sum(len(d.content) for d in docs),
            "by_extension": dict(Counter(d.extension for d in docs).most_common()),
        },
        "machine": machine(),
        "results": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = Arguments("chunker", __doc__)
    parser.add_argument("--files", type=int, default=2_000)
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="also run the tree-sitter row over this many processes (1 to skip)",
    )
    args = parser.parse(argv)
    doc = run(args.files, args.workers)
    save(doc, args.out)
    files = doc["corpus"]
    print_table(
        f"Chunker: {files['files']:,} real files, {files['bytes'] / 1e6:.1f} MB",
        ("run", "files", "chunks", "declined", "seconds", "files/s", "target"),
        [
            [
                r["run"],
                f"{r['files']:,}",
                f"{r['chunks']:,}",
                f"{r['declined']:,}",
                f"{r['seconds']:.2f}",
                f"{r['files_per_s']:,.0f}",
                _target(r["target_files_per_s"], r["target_met"]),
            ]
            for r in doc["results"]
        ],
    )
    return 0


def _target(files_per_s: float | None, met: bool) -> str:
    if not files_per_s:
        return ""
    return f"≥ {files_per_s:,.0f} " + ("[green]yes[/]" if met else "[red]no[/]")


if __name__ == "__main__":
    raise SystemExit(main())
