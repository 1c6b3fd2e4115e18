"""A repository or directory into `tribal.files.changes`: scan, watch, skip, rename."""

from __future__ import annotations

import asyncio
import hashlib
import os
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from devstack import Broker
from events.base import Event
from events.files import FileChanged, FileDeleted, FileSkipped
from sources.base import build_source
from sources.checkpoint import MemoryCheckpoint
from sources.config import ConfigError, SourceConfig
from sources.file_languages import language_for
from sources.files import FilesSource
from sources.sink import KafkaSink, MemorySink
from tests.pipelines import fresh_pipeline


def source(root: Path, **options: Any) -> FilesSource:
    return FilesSource(name="test", root=root, repo="demo", **options)


async def scan(
    root: Path, checkpoint: MemoryCheckpoint | None = None, **options: Any
) -> list[Event]:
    """One sync of a fresh source (as after a restart) against ``checkpoint``."""
    sink = MemorySink()
    await source(root, **options).sync_once(sink, checkpoint or MemoryCheckpoint())
    return sink.events()


def by_path(events: list[Event]) -> dict[str, Event]:
    return {e.path: e for e in events if isinstance(e, FileChanged | FileDeleted | FileSkipped)}


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content)
    else:
        path.write_bytes(content)
    return path


def touch(root: Path, *rels: str) -> None:
    """Files whose content does not matter to the test: each holds its own path."""
    for rel in rels:
        write(root, rel, f"{rel}\n")


async def test_a_new_tree_emits_one_file_changed_per_text_file_keyed_repo_path(
    tmp_path: Path,
) -> None:
    write(tmp_path, "src/app.py", "print('hi')\n")
    write(tmp_path, "README.md", "# Demo\n")
    sink = MemorySink()
    await source(tmp_path).sync_once(sink, MemoryCheckpoint())
    assert [(e.topic, e.key) for e in sink.emitted] == [
        ("files.changes", "demo:README.md"),
        ("files.changes", "demo:src/app.py"),
    ]
    app = by_path(sink.events())["src/app.py"]
    assert isinstance(app, FileChanged)
    assert app.content == "print('hi')\n"
    assert app.sha256 == hashlib.sha256(b"print('hi')\n").hexdigest()
    assert (app.language, app.size_bytes, app.renamed_from) == ("python", 12, None)


async def test_an_edited_file_is_emitted_again_with_its_new_content(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", "x = 1\n")
    checkpoint = MemoryCheckpoint()
    await scan(tmp_path, checkpoint)
    path.write_text("x = 2\n")
    [event] = await scan(tmp_path, checkpoint)
    assert isinstance(event, FileChanged)
    assert event.content == "x = 2\n"


async def test_touching_a_file_or_restarting_emits_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", "x = 1\n")
    write(tmp_path, "logo.bin", b"\x00\x01\x02")
    checkpoint = MemoryCheckpoint()
    assert len(await scan(tmp_path, checkpoint)) == 2
    os.utime(path, (1, 1))
    path.write_text("x = 1\n")  # rewritten, same bytes
    assert await scan(tmp_path, checkpoint) == []
    assert await scan(tmp_path, checkpoint) == []


async def test_a_renamed_file_is_a_delete_then_a_change_carrying_renamed_from(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "old/name.py", "def f():\n    return 1\n")
    checkpoint = MemoryCheckpoint()
    await scan(tmp_path, checkpoint)
    (tmp_path / "new").mkdir()
    path.rename(tmp_path / "new" / "name.py")
    deleted, changed = await scan(tmp_path, checkpoint)
    assert isinstance(deleted, FileDeleted)
    assert deleted.path == "old/name.py"
    assert isinstance(changed, FileChanged)
    assert (changed.path, changed.renamed_from) == ("new/name.py", "old/name.py")
    assert changed.content == "def f():\n    return 1\n"


async def test_changes_and_deletions_made_while_down_are_found_by_the_next_scan(
    tmp_path: Path,
) -> None:
    write(tmp_path, "keep.py", "k = 1\n")
    gone = write(tmp_path, "gone.py", "g = 1\n")
    edited = write(tmp_path, "edited.py", "e = 1\n")
    checkpoint = MemoryCheckpoint()
    await scan(tmp_path, checkpoint)
    gone.unlink()
    edited.write_text("e = 2\n")
    write(tmp_path, "added.md", "new\n")
    events = by_path(await scan(tmp_path, checkpoint))
    assert set(events) == {"gone.py", "edited.py", "added.md"}
    assert isinstance(events["gone.py"], FileDeleted)
    assert isinstance(events["edited.py"], FileChanged)
    assert isinstance(events["added.md"], FileChanged)
    assert events["added.md"].renamed_from is None


async def test_a_binary_file_is_skipped_once_with_its_hash(tmp_path: Path) -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    write(tmp_path, "logo.png", data)
    checkpoint = MemoryCheckpoint()
    [event] = await scan(tmp_path, checkpoint)
    assert isinstance(event, FileSkipped)
    assert (event.reason, event.size_bytes) == ("binary", len(data))
    assert event.sha256 == hashlib.sha256(data).hexdigest()
    assert await scan(tmp_path, checkpoint) == []


async def test_a_50_mb_file_is_skipped_without_being_read_into_memory(tmp_path: Path) -> None:
    size = 50 * 1024 * 1024
    (tmp_path / "dump.sql").touch()
    os.truncate(tmp_path / "dump.sql", size)  # sparse: no disk used
    write(tmp_path, "small.sql", "select 1;\n")
    tracemalloc.start()
    try:
        events = by_path(await scan(tmp_path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    big = events["dump.sql"]
    assert isinstance(big, FileSkipped)
    assert (big.reason, big.size_bytes) == ("too large", size)
    assert big.sha256 == hashlib.sha256(bytes(size)).hexdigest()
    assert isinstance(events["small.sql"], FileChanged)
    assert peak < 8 * 1024 * 1024


async def test_max_bytes_is_configurable(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "x" * 101)
    [event] = await scan(tmp_path, max_bytes=100)
    assert isinstance(event, FileSkipped)
    assert event.reason == "too large"


async def test_invalid_utf8_is_skipped_with_that_reason(tmp_path: Path) -> None:
    write(tmp_path, "latin1.txt", "café crème".encode("latin-1"))
    [event] = await scan(tmp_path)
    assert isinstance(event, FileSkipped)
    assert event.reason == "invalid utf-8"


async def test_gitignored_files_and_the_git_directory_produce_no_event(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\nbuild/\n/secret.txt\n")
    write(tmp_path, ".git/info/exclude", "local.md\n")
    touch(tmp_path, ".git/HEAD", "app.log", "build/out.py", "local.md", "secret.txt")
    touch(tmp_path, "docs/secret.txt")  # /secret.txt is anchored to the root, so this one stays
    assert sorted(by_path(await scan(tmp_path))) == [".gitignore", "docs/secret.txt"]


async def test_a_file_that_becomes_gitignored_leaves_as_deleted(tmp_path: Path) -> None:
    write(tmp_path, "notes.txt", "n\n")
    checkpoint = MemoryCheckpoint()
    await scan(tmp_path, checkpoint)
    write(tmp_path, ".gitignore", "notes.txt\n")
    events = by_path(await scan(tmp_path, checkpoint))
    assert isinstance(events["notes.txt"], FileDeleted)
    assert isinstance(events[".gitignore"], FileChanged)


async def test_a_nested_gitignore_applies_below_its_directory_and_wins(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.gen.py\n")
    write(tmp_path, "pkg/.gitignore", "fixtures/\n!keep.gen.py\n")
    touch(tmp_path, "pkg/fixtures/data.json", "pkg/keep.gen.py", "pkg/drop.gen.py", "top.gen.py")
    touch(tmp_path, "fixtures/data.json")  # the nested rule does not apply up here
    assert sorted(by_path(await scan(tmp_path))) == [
        ".gitignore",
        "fixtures/data.json",
        "pkg/.gitignore",
        "pkg/keep.gen.py",
    ]


async def test_symlink_loops_and_links_out_of_the_tree_are_skipped_not_followed(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    write(root, "src/a.py", "a = 1\n")
    (root / "src" / "up").symlink_to("..")  # a directory loop
    (root / "l1").symlink_to("l2")
    (root / "l2").symlink_to("l1")  # a link loop
    (root / "etc").symlink_to("/etc")
    write(tmp_path, "outside.txt", "not in the repo")
    (root / "out.txt").symlink_to(tmp_path / "outside.txt")
    (root / "dangling").symlink_to("missing")
    (root / "alias.py").symlink_to("src/a.py")
    events = by_path(await scan(root))
    reasons = {p: e.reason for p, e in events.items() if isinstance(e, FileSkipped)}
    assert reasons == {
        "src/up": "symlink loop",
        "l1": "symlink loop",
        "l2": "symlink loop",
        "etc": "symlink outside tree",
        "out.txt": "symlink outside tree",
        "dangling": "broken symlink",
    }
    alias = events["alias.py"]
    assert isinstance(alias, FileChanged)
    assert alias.content == "a = 1\n"


async def test_an_unreadable_file_is_skipped_and_the_scan_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "locked.py", "secret = 1\n")
    write(tmp_path, "open.py", "x = 1\n")
    real_open: Callable[..., int] = os.open

    def guarded_open(path: str, flags: int, *args: Any) -> int:
        if str(path).endswith("locked.py"):  # chmod 000 does not stop root
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", guarded_open)
    events = by_path(await scan(tmp_path))
    locked = events["locked.py"]
    assert isinstance(locked, FileSkipped)
    assert locked.reason == "unreadable"
    assert isinstance(events["open.py"], FileChanged)


async def test_the_checkpoint_is_saved_only_after_the_sink_flushed(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "a = 1\n")
    sink = MemorySink()
    flushes_at_save: list[int] = []

    class Watching(MemoryCheckpoint):
        def save(self, state: dict[str, Any]) -> None:
            flushes_at_save.append(sink.flushes)
            super().save(state)

    checkpoint = Watching()
    await source(tmp_path).sync_once(sink, checkpoint)
    assert flushes_at_save == [1]
    assert checkpoint.state == {"files": {"a.py": hashlib.sha256(b"a = 1\n").hexdigest()}}


@dataclass
class SignallingSink(MemorySink):
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def emit(self, topic: str, key: str, event: Event) -> None:
        await super().emit(topic, key, event)
        self.arrived.set()


async def test_the_watch_loop_reports_edits_renames_deletes_and_moved_in_directories(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    write(root, ".gitignore", "*.tmp\n")
    write(root, "a.py", "a = 1\n")
    sink = SignallingSink()
    stop = asyncio.Event()

    async def next_events(n: int, timeout: float = 2.0) -> list[Event]:
        start = len(sink.emitted)
        async with asyncio.timeout(timeout):
            while len(sink.emitted) < start + n:
                sink.arrived.clear()
                await sink.arrived.wait()
        await asyncio.sleep(0.3)  # nothing more is coming
        return [e.event for e in sink.emitted[start:]]

    task = asyncio.create_task(source(root, debounce_ms=200).run(sink, MemoryCheckpoint(), stop))
    try:
        assert len(await next_events(2)) == 2  # the initial scan
        (root / "a.py").write_text("a = 2\n")
        [edit] = await next_events(1)
        assert isinstance(edit, FileChanged)
        assert edit.content == "a = 2\n"
        write(root, "scratch.tmp", "ignored")
        (root / "a.py").rename(root / "b.py")
        deleted, renamed = await next_events(2)
        assert isinstance(deleted, FileDeleted)
        assert isinstance(renamed, FileChanged)
        assert (renamed.path, renamed.renamed_from) == ("b.py", "a.py")
        write(tmp_path, "elsewhere/pkg/c.py", "c = 1\n")
        (tmp_path / "elsewhere" / "pkg").rename(root / "pkg")
        [moved_in] = await next_events(1)
        assert isinstance(moved_in, FileChanged)
        assert moved_in.path == "pkg/c.py"
        (root / "b.py").unlink()
        [gone] = await next_events(1)
        assert isinstance(gone, FileDeleted)
        assert gone.path == "b.py"
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


def test_the_files_kind_builds_from_config_with_the_directory_name_as_repo(
    tmp_path: Path,
) -> None:
    built = build_source(SourceConfig(kind="files", name="code", path=str(tmp_path)))
    assert isinstance(built, FilesSource)
    assert (built.repo, built.max_bytes) == (tmp_path.name, 1024 * 1024)
    custom = build_source(
        SourceConfig(kind="files", name="code", path=str(tmp_path), repo="r", max_bytes=10)
    )
    assert isinstance(custom, FilesSource)
    assert (custom.repo, custom.max_bytes) == ("r", 10)
    with pytest.raises(ConfigError, match="path"):
        build_source(SourceConfig(kind="files", name="code"))


def test_language_is_named_from_the_extension() -> None:
    languages = {
        "a/b.py": "python",
        "x.tsx": "typescript",
        "lib.rs": "rust",
        "Program.cs": "csharp",
        "docs/README.md": "markdown",
        "conf.yml": "yaml",
        "Dockerfile": "dockerfile",
        ".bashrc": None,
        "data.unknown": None,
    }
    assert {path: language_for(path) for path in languages} == languages


async def test_file_events_reach_kafka_keyed_by_repo_and_path(
    broker: Broker, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    write(root, "src/app.py", "print('hi')\n")
    write(root, "logo.png", b"\x00PNG")
    pipeline = await fresh_pipeline(broker, tmp_path)
    async with KafkaSink(broker.bootstrap, pipeline.serde, pipeline.settings.topic_prefix) as sink:
        assert await source(root).sync_once(sink, MemoryCheckpoint()) == 2
    decoded = dict(await pipeline.keyed("files.changes"))
    assert sorted(decoded) == ["demo:logo.png", "demo:src/app.py"]
    assert isinstance(decoded["demo:src/app.py"], FileChanged)
    skipped = decoded["demo:logo.png"]
    assert isinstance(skipped, FileSkipped)
    assert skipped.reason == "binary"
