"""Files source throughput: scan + hash + events for a generated tree.

    python -m bench.sources_files                 # 10,000 files, memory + Tansu
    python -m bench.sources_files --files 2000 --no-kafka

Rows: a first scan into a ``MemorySink`` (read, hash, classify, build events), a
rescan with the checkpoint (a restart: everything read and hashed, nothing emitted),
and a first scan into a ``KafkaSink`` on an embedded Tansu broker (Avro encoding and
acks included). Files are freshly written, so they are in the page cache: this
measures the source, not the disk. Results go to ``bench-results/sources_files.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.report import machine, print_table, save
from bench.run import Arguments
from sources.checkpoint import MemoryCheckpoint
from sources.files import FilesSource
from sources.sink import EventSink, MemorySink

TARGET_FILES_PER_S = 2000.0
_EXTENSIONS = ("py", "md", "ts", "go", "json", "yaml", "txt", "rs", "java", "sql")


def generate_tree(root: Path, files: int, seed: int = 7) -> int:
    """``files`` files in 100-file directories two levels deep, 200 B to 8 KB each,
    1% binary, plus a .gitignore and some ignored build output. Returns total bytes."""
    rng = random.Random(seed)
    (root / ".gitignore").write_text("build/\n*.log\n")
    total = 0
    for n in range(files - 1):  # the .gitignore is the last file
        directory = root / f"pkg{n // 1000:02d}" / f"mod{n // 100 % 10:02d}"
        if n % 100 == 0:
            directory.mkdir(parents=True, exist_ok=True)
        if n % 100 == 99:
            data = bytes([0, 1, 2, 3]) + rng.randbytes(rng.randint(200, 8000))
            path = directory / f"blob{n}.bin"
        else:
            line = f"def function_{n}(value):  # {'lorem ipsum ' * rng.randint(1, 6)}\n"
            data = (line * rng.randint(3, 100)).encode()
            path = directory / f"file{n}.{_EXTENSIONS[n % len(_EXTENSIONS)]}"
        path.write_bytes(data)
        total += len(data)
    build = root / "build"
    build.mkdir()
    for n in range(100):
        (build / f"out{n}.js").write_text("ignored\n")
    return total


async def timed(
    name: str, root: Path, sink: EventSink, checkpoint: MemoryCheckpoint, files: int
) -> dict[str, Any]:
    source = FilesSource(name="bench", root=root, repo="bench")
    started = time.perf_counter()
    events = await source.sync_once(sink, checkpoint)
    seconds = time.perf_counter() - started
    rate = files / seconds
    return {"run": name, "files": files, "events": events, "seconds": round(seconds, 3),
            "files_per_s": round(rate, 1), "target_files_per_s": TARGET_FILES_PER_S,
            "target_met": rate >= TARGET_FILES_PER_S}  # fmt: skip


async def kafka_run(root: Path, files: int, work: Path) -> dict[str, Any]:
    from events.registry import registry_from_settings
    from events.serde import EventSerde
    from runtime.embedded.tansu import TansuBroker
    from runtime.settings import TribalSettings
    from runtime.topics import ensure_topics
    from sources.sink import KafkaSink

    with TansuBroker(log_path=work / "tansu.log") as broker:
        settings = TribalSettings(
            kafka_bootstrap=broker.bootstrap, data_dir=work / "data", default_partitions=3
        )
        await ensure_topics(settings)
        serde = EventSerde(registry_from_settings(settings))
        async with KafkaSink(broker.bootstrap, serde, settings.topic_prefix) as sink:
            row = await timed("scan → KafkaSink (Tansu)", root, sink, MemoryCheckpoint(), files)
    return row


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tribal-bench-files-") as tmp:
        work = Path(tmp)
        root = work / "tree"
        root.mkdir()
        total = generate_tree(root, args.files)
        rows = []
        checkpoint = MemoryCheckpoint()
        rows.append(await timed("scan → MemorySink", root, MemorySink(), checkpoint, args.files))
        rows.append(
            await timed("rescan, nothing changed", root, MemorySink(), checkpoint, args.files)
        )
        if not args.no_kafka:
            rows.append(await kafka_run(root, args.files, work))
    return {
        "benchmark": "sources_files",
        "tree": {"files": args.files, "bytes": total, "ignored_files": 100},
        "machine": machine(),
        "results": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = Arguments("sources_files", __doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--no-kafka", action="store_true", help="skip the Tansu run")
    args = parser.parse(argv)
    doc = asyncio.run(measure(args))
    save(doc, args.out)
    tree = doc["tree"]
    print_table(
        f"Files source: {tree['files']:,} files, {tree['bytes'] / 1e6:.1f} MB",
        ("run", "events", "seconds", "files/s", f"≥ {TARGET_FILES_PER_S:,.0f}"),
        [
            [
                r["run"],
                f"{r['events']:,}",
                f"{r['seconds']:.2f}",
                f"{r['files_per_s']:,.0f}",
                "[green]yes[/]" if r["target_met"] else "[red]no[/]",
            ]
            for r in doc["results"]
        ],
    )
    print(f"wrote {args.out}")
    return 0 if all(r["target_met"] for r in doc["results"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
