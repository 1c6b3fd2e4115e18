"""A repository or directory → ``tribal.files.changes`` (key ``repo:path``).

A full scan first, then a watch (``watchfiles``) until stopped. Both end in the same
reconciliation: what the tree holds now against the checkpoint ``{path: token}``
(the sha256 of a text file, ``reason:sha256`` of a skipped one), so an unchanged file
emits nothing however often it is touched or the source restarted, and whatever
changed or vanished while the source was down is found by the next scan.

Renames: the filesystem gives no reliable rename event (editors write-and-rename,
``git mv`` is delete + create, a move in from outside is a create), so a rename is
inferred from content. A new path whose sha256 equals that of a path deleted in the
same observation, or by the watcher within ``rename_window_s``, is reported as
``FileDeleted(old)`` followed by ``FileChanged(new, renamed_from=old)``. Consumers can
treat every event on its own (delete, then create); ``renamed_from`` only lets them
carry history over.

Skipped files (binary, too large, invalid UTF-8, unreadable, symlinks leading
outside the tree or in a loop) are reported once as ``FileSkipped`` with the
reason; ignored files (``.gitignore``, ``.git/``) are not reported at all. One bad
file never stops the source.

Control characters (:mod:`events.text`) in a text file's content (a NUL past the first
8 KiB, an ESC from a captured terminal) or in its name are removed from the event, and
``notes`` says what was removed; ``sha256`` and ``size_bytes`` stay those of the bytes
on disk.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from events.files import FileChanged, FileDeleted, FileSkipped
from events.text import normalize_model
from sources.checkpoint import CheckpointStore
from sources.config import ConfigError, SourceConfig
from sources.file_ignore import GITIGNORE, IgnoreRules
from sources.file_languages import language_for
from sources.file_scan import Entry, FileTree, Observation
from sources.file_watch import watch_batches
from sources.sink import EventSink

log = logging.getLogger(__name__)

TOPIC = "files.changes"
DEFAULT_MAX_BYTES = 1024 * 1024
_FULL_RESCAN_AT = 1000  # changed paths in one watch batch (a checkout, a big merge)


def _is_sha(token: str) -> bool:
    return len(token) == 64 and ":" not in token


@dataclass
class FilesSource:
    """Scans, then watches, one directory tree as the repository ``repo``."""

    name: str
    root: Path
    repo: str
    max_bytes: int = DEFAULT_MAX_BYTES
    tenant: str = "default"
    ignore_patterns: tuple[str, ...] = ()
    debounce_ms: int = 400
    rename_window_s: float = 2.0
    batch_size: int = 256
    threads: int = 4
    checkpoint_every: int = 5000
    _tree: FileTree = field(init=False, repr=False)
    _state: dict[str, str] | None = field(default=None, init=False, repr=False)
    _recent: dict[str, tuple[str, float]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self._tree = FileTree(
            self.root, self.max_bytes, IgnoreRules(self.root, self.ignore_patterns)
        )

    # -- the Source protocol -------------------------------------------------------------

    async def sync_once(self, sink: EventSink, checkpoint: CheckpointStore) -> int:
        """Scan the whole tree, emit every difference from the checkpoint, flush, save."""
        if not self.root.is_dir():
            raise ConfigError(f"files source {self.name!r}: {self.root} is not a directory")
        started = time.perf_counter()
        self._tree.unlisted.clear()
        found = await asyncio.to_thread(lambda: list(self._tree.walk()))
        state = self._load(checkpoint)
        present = {e.path for e in found}
        gone = [p for p in state if p not in present and not self._under_unlisted(p)]
        n = await self._reconcile(sink, checkpoint, state, found, gone)
        log.info(
            "files %s: scanned %d files, emitted %d events in %.2fs",
            self.name, len(found), n, time.perf_counter() - started,
        )  # fmt: skip
        return n

    async def run(self, sink: EventSink, checkpoint: CheckpointStore, stop: asyncio.Event) -> None:
        """Scan, then apply watched changes until ``stop`` is set."""
        queue: asyncio.Queue[set[str] | None] = asyncio.Queue()
        watcher = asyncio.create_task(
            watch_batches(Path(self._tree.root), queue, stop, self.debounce_ms)
        )
        # The watcher registers before its first await: changes made during the scan are
        # queued and re-checked afterwards (no-ops when the scan already saw them).
        await asyncio.sleep(0)
        try:
            await self.sync_once(sink, checkpoint)
            while (paths := await queue.get()) is not None:
                await self._apply(sink, checkpoint, paths)
        finally:
            if not watcher.done():
                watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        watcher.result()  # a watcher failure reaches run_sources, which restarts us

    # -- watched changes -----------------------------------------------------------------

    async def _apply(self, sink: EventSink, checkpoint: CheckpointStore, abspaths: set[str]) -> int:
        rels = {r for r in map(self._tree.relative, abspaths) if r is not None}
        if not rels:
            return 0
        if len(rels) >= _FULL_RESCAN_AT or any(_changes_ignores(r) for r in rels):
            self._tree.ignore.invalidate()
            return await self.sync_once(sink, checkpoint)
        found, scopes = await asyncio.to_thread(self._scope, rels)
        state = self._load(checkpoint)
        present = {e.path for e in found}
        gone = [p for p in state if p not in present and _within(p, scopes)]
        return await self._reconcile(sink, checkpoint, state, found, gone)

    def _scope(self, rels: Iterable[str]) -> tuple[list[Entry], set[str]]:
        """Entries now present at or below each changed path, and the paths themselves."""
        found: list[Entry] = []
        scopes: set[str] = set()
        for rel in sorted(rels):
            abspath = os.path.join(self._tree.root, rel)
            is_dir = os.path.isdir(abspath) and not os.path.islink(abspath)
            if self._tree.ignore.ignored_anywhere(rel, is_dir):
                continue
            scopes.add(rel)
            if is_dir:  # moved in whole: the watcher reports only the directory
                found.extend(self._tree.walk(rel))
            elif os.path.islink(abspath):
                found.append(Entry(rel, abspath, link=True))
            elif os.path.isfile(abspath):
                found.append(Entry(rel, abspath))
        return found, scopes

    # -- reconciliation ------------------------------------------------------------------

    async def _reconcile(
        self,
        sink: EventSink,
        checkpoint: CheckpointStore,
        state: dict[str, str],
        found: list[Entry],
        gone: list[str],
    ) -> int:
        try:
            emitted = unsaved = await self._emit_gone(sink, state, gone)
            with ThreadPoolExecutor(self.threads, thread_name_prefix=f"files-{self.name}") as pool:
                for start in range(0, len(found), self.batch_size):
                    batch = found[start : start + self.batch_size]
                    observed = await asyncio.to_thread(_observe, pool, self._tree, batch)
                    for entry, obs in zip(batch, observed, strict=True):
                        if await self._emit_one(sink, state, entry.path, obs):
                            emitted += 1
                            unsaved += 1
                    if unsaved >= self.checkpoint_every:
                        await self._save(sink, checkpoint, state)
                        unsaved = 0
            if unsaved:
                await self._save(sink, checkpoint, state)
            return emitted
        except BaseException:
            # The in-memory state may be ahead of what the broker acknowledged.
            self._state = None
            raise

    async def _emit_gone(self, sink: EventSink, state: dict[str, str], gone: list[str]) -> int:
        """``FileDeleted`` for every path of ``gone``. What a deleted file held is kept a
        while, so that a file found with it elsewhere is told to be a rename."""
        now = time.monotonic()
        self._recent = {s: v for s, v in self._recent.items() if now - v[1] < self.rename_window_s}
        for path in sorted(gone):
            token = state.pop(path)
            await _emit(sink, FileDeleted(**self._ids(path)))
            if _is_sha(token):
                self._recent[token] = (path, now)
        return len(gone)

    async def _emit_one(
        self, sink: EventSink, state: dict[str, str], path: str, obs: Observation | None
    ) -> bool:
        if obs is None:  # vanished between the walk and the read
            if state.pop(path, None) is None:
                return False
            await _emit(sink, FileDeleted(**self._ids(path)))
            return True
        before = state.get(path)
        if before == obs.token:
            return False
        state[path] = obs.token
        event: FileChanged | FileSkipped
        if obs.content is not None and obs.sha256 is not None:
            renamed_from = None
            if before is None and obs.sha256 in self._recent:
                renamed_from = self._recent.pop(obs.sha256)[0]
            event = FileChanged(
                **self._ids(path),
                content=obs.content,
                sha256=obs.sha256,
                language=language_for(path),
                size_bytes=obs.size or 0,
                renamed_from=renamed_from,
            )
        else:
            reason = obs.reason or "unknown"
            event = FileSkipped(
                **self._ids(path), reason=reason, size_bytes=obs.size, sha256=obs.sha256
            )
        await _emit(sink, event)
        return True

    # -- checkpoint ----------------------------------------------------------------------

    def _load(self, checkpoint: CheckpointStore) -> dict[str, str]:
        if self._state is None:
            files = checkpoint.load().get("files", {})
            self._state = (
                {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}
            )
        return self._state

    async def _save(
        self, sink: EventSink, checkpoint: CheckpointStore, state: dict[str, str]
    ) -> None:
        await sink.flush()  # the checkpoint may only cover acknowledged events
        checkpoint.save({"files": dict(state)})

    # -- helpers -------------------------------------------------------------------------

    def _ids(self, path: str) -> dict[str, str]:
        return {"tenant": self.tenant, "repo": self.repo, "path": path}

    def _under_unlisted(self, path: str) -> bool:
        return bool(self._tree.unlisted) and _within(path, self._tree.unlisted)


async def _emit(sink: EventSink, event: FileChanged | FileDeleted | FileSkipped) -> None:
    """Emit ``event`` without control characters (noted), keyed by its cleaned path."""
    clean = normalize_model(event)
    await sink.emit(TOPIC, clean.key, clean)


def _observe(
    pool: ThreadPoolExecutor, tree: FileTree, batch: list[Entry]
) -> list[Observation | None]:
    # Reads release the GIL, and so does hashing anything over 2 KiB.
    return list(pool.map(tree.observe, batch))


def _changes_ignores(rel: str) -> bool:
    # .git/info/exclude is read by every full scan; the watcher never reports .git.
    return os.path.basename(rel) == GITIGNORE


def _within(path: str, scopes: set[str]) -> bool:
    """``path`` is one of ``scopes`` or below one of them ("" is the whole tree)."""
    if "" in scopes or path in scopes:
        return True
    directory = os.path.dirname(path)
    while directory:
        if directory in scopes:
            return True
        directory = os.path.dirname(directory)
    return False


def from_config(config: SourceConfig) -> FilesSource:
    """``kind: files`` with ``path`` (required), ``repo``, ``max_bytes``, ``tenant``,
    ``ignore`` (extra gitignore patterns), ``debounce_ms``."""
    opts = config.options()
    if not opts.get("path"):
        raise ConfigError(f"source {config.name!r} (files): 'path' is required")
    root = Path(str(opts["path"])).expanduser().resolve()
    try:
        return FilesSource(
            name=config.name,
            root=root,
            repo=str(opts.get("repo") or root.name or config.name),
            max_bytes=int(opts.get("max_bytes") or DEFAULT_MAX_BYTES),
            tenant=str(opts.get("tenant") or "default"),
            ignore_patterns=tuple(str(p) for p in opts.get("ignore") or ()),
            debounce_ms=int(opts.get("debounce_ms") or 400),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"source {config.name!r} (files): {exc}") from exc
