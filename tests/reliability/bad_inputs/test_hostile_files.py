"""Hostile files through the files source and the chunker: a reason, never a crash.

Each case writes one hostile entry next to a normal file, scans the tree with
:class:`sources.files.FilesSource` (as ``tribal source files`` does), then feeds
every event to the worker's :class:`streams.chunker.files.FileChunker`. The hostile
entry must end as a specific ``FileSkipped`` reason (and a retraction downstream) or
as bounded chunks, and the normal file must come through untouched.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from events.base import Event
from events.chunks import DocumentChunked, DocumentRetracted
from events.files import FileChanged, FileSkipped
from sources.checkpoint import MemoryCheckpoint
from sources.files import FilesSource
from sources.sink import MemorySink
from streams.chunker.defaults import default_registry
from streams.chunker.files import MAX_DOCUMENT_BYTES, FileChunker
from streams.chunker.pieces import CODE_BUDGET, MAX_PIECES

BOUND = CODE_BUDGET + 400  # a chunk's code plus its path/signature header
NORMAL = "def normal():\n    return 1\n"
MB = 1024 * 1024


async def scan(root: Path, max_bytes: int = MB) -> list[Event]:
    sink = MemorySink()
    source = FilesSource(name="hostile", root=root, repo="demo", max_bytes=max_bytes)
    await asyncio_timeout(source.sync_once(sink, MemoryCheckpoint()), 60)
    return sink.events()


async def asyncio_timeout(coro: object, seconds: float) -> object:
    import asyncio

    return await asyncio.wait_for(coro, seconds)  # type: ignore[arg-type]


async def chunk_all(events: list[Event]) -> dict[str, Event]:
    chunker = FileChunker(default_registry(Path("/nonexistent"), {"TRIBAL_LLM_PROVIDER": "local"}))
    out: dict[str, Event] = {}
    for event in events:
        for emit in await chunker(event):
            out[emit.key] = emit.event
    return out


def _paths(events: list[Event]) -> dict[str, Event]:
    return {e.path: e for e in events if isinstance(e, FileChanged | FileSkipped)}


Setup = Callable[[Path], None]


def _invalid_utf8(root: Path) -> None:
    (root / "latin1.py").write_bytes(b"# caf\xe9 cr\xe8me\nname = 'Andr\xe9'\n" * 20)


def _nul_filled(root: Path) -> None:
    (root / "zeros.txt").write_bytes(b"\0" * 100_000)


def _sparse_50mb(root: Path) -> None:
    with open(root / "huge.log", "wb") as f:
        f.truncate(50 * MB)  # sparse: 50 MB of NULs without writing them


def _text_50mb(root: Path) -> None:
    (root / "huge.sql").write_bytes(b"INSERT INTO t VALUES (1);\n" * (50 * MB // 26))


def _minified_10mb_over_cap(root: Path) -> None:
    (root / "app.min.js").write_text("var a=function(b){return b+1};" * 350_000)


def _symlink_loop_dir(root: Path) -> None:
    (root / "sub").mkdir()
    os.symlink("..", root / "sub" / "up")


def _self_symlink(root: Path) -> None:
    os.symlink("me", root / "me")


def _symlink_pair_loop(root: Path) -> None:
    os.symlink("b", root / "a")
    os.symlink("a", root / "b")


def _symlink_outside(root: Path) -> None:
    os.symlink("/etc/hostname", root / "hostname")


def _broken_symlink(root: Path) -> None:
    os.symlink("does-not-exist.py", root / "dangling.py")


def _binary_elf(root: Path) -> None:
    (root / "tool").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 40)


SKIPS: list[tuple[str, Setup, str, str]] = [
    ("invalid_utf8", _invalid_utf8, "latin1.py", "invalid utf-8"),
    ("nul_filled", _nul_filled, "zeros.txt", "binary"),
    ("sparse_50mb", _sparse_50mb, "huge.log", "too large"),
    ("text_50mb", _text_50mb, "huge.sql", "too large"),
    ("minified_10mb_over_cap", _minified_10mb_over_cap, "app.min.js", "too large"),
    ("symlink_loop_dir", _symlink_loop_dir, "sub/up", "symlink loop"),
    ("self_symlink", _self_symlink, "me", "symlink loop"),
    ("symlink_pair_loop", _symlink_pair_loop, "a", "symlink loop"),
    ("symlink_outside_tree", _symlink_outside, "hostname", "symlink outside tree"),
    ("broken_symlink", _broken_symlink, "dangling.py", "broken symlink"),
    ("binary_executable", _binary_elf, "tool", "binary"),
]


@pytest.mark.parametrize(
    ("setup", "path", "reason"), [c[1:] for c in SKIPS], ids=[c[0] for c in SKIPS]
)
async def test_a_hostile_file_is_skipped_with_its_reason_and_retracted_downstream(
    tmp_path: Path, setup: Setup, path: str, reason: str
) -> None:
    (tmp_path / "normal.py").write_text(NORMAL)
    setup(tmp_path)
    started = time.perf_counter()
    events = await scan(tmp_path)
    assert time.perf_counter() - started < 30
    seen = _paths(events)
    skipped = seen[path]
    assert isinstance(skipped, FileSkipped), skipped
    assert skipped.reason == reason
    normal = seen["normal.py"]
    assert isinstance(normal, FileChanged)
    assert normal.content == NORMAL
    chunked = await chunk_all(events)
    retracted = chunked.get(f"file:demo:{path}", None)
    assert isinstance(retracted, DocumentRetracted), chunked.keys()
    assert reason in (retracted.reason or "")
    assert isinstance(chunked["file:demo:normal.py"], DocumentChunked)


async def test_a_fifo_in_the_tree_neither_hangs_the_scan_nor_is_emitted(tmp_path: Path) -> None:
    (tmp_path / "normal.py").write_text(NORMAL)
    os.mkfifo(tmp_path / "pipe")
    events = await scan(tmp_path)
    assert sorted(_paths(events)) == ["normal.py"]


def _write_undecodable_name(root: Path) -> None:
    Path(os.fsdecode(os.path.join(os.fsencode(root), b"bad-\xff-name.py"))).write_bytes(b"x = 1\n")


async def test_a_file_name_that_is_not_utf8_is_left_out_without_stopping_the_scan(
    tmp_path: Path,
) -> None:
    (tmp_path / "normal.py").write_text(NORMAL)
    _write_undecodable_name(tmp_path)
    events = await scan(tmp_path)
    assert sorted(_paths(events)) == ["normal.py"]


async def test_a_ten_megabyte_single_line_under_a_raised_cap_is_chunked_bounded(
    tmp_path: Path,
) -> None:
    _minified_10mb_over_cap(tmp_path)
    events = await scan(tmp_path, max_bytes=16 * MB)
    [changed] = [e for e in events if isinstance(e, FileChanged)]
    started = time.perf_counter()
    chunked = (await chunk_all(events))["file:demo:app.min.js"]
    assert time.perf_counter() - started < 30
    assert isinstance(chunked, DocumentChunked)
    assert changed.size_bytes > 10 * 1_000_000
    assert len(chunked.chunks) <= MAX_PIECES
    assert all(len(c.text) <= BOUND for c in chunked.chunks)
    assert sum(len(c.text) for c in chunked.chunks) <= MAX_DOCUMENT_BYTES
    assert chunked.metadata["truncated"] == "true"


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("deep_parens.py", "x = " + "(" * 5_000 + "1" + ")" * 5_000 + "\n"),
        ("deep_arrays.js", "const a = " + "[" * 20_000 + "]" * 20_000 + ";\n"),
        ("deep_blocks.c", "int f() { " + "{" * 5_000 + "}" * 5_000 + " }\n"),
        ("deep_json.json", '{"a":' * 10_000 + "1" + "}" * 10_000 + "\n"),
        ("deep_lists.md", "".join("  " * n + "- item\n" for n in range(700))),
    ],
)
async def test_deeply_nested_code_is_chunked_without_recursion_errors(
    tmp_path: Path, name: str, source: str
) -> None:
    (tmp_path / name).write_text(source)
    events = await scan(tmp_path)
    [changed] = [e for e in events if isinstance(e, FileChanged)]
    started = time.perf_counter()
    chunked = (await chunk_all(events))[f"file:demo:{name}"]
    assert time.perf_counter() - started < 20
    assert changed.path == name
    assert isinstance(chunked, DocumentChunked)
    assert chunked.chunks
    assert all(len(c.text) <= BOUND for c in chunked.chunks)
