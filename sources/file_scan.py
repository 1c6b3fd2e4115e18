"""Walking a tree and reading one file into what the files source reports about it.

Blocking I/O only, no events: :mod:`sources.files` runs these in threads and
turns an :class:`Observation` into ``FileChanged`` or ``FileSkipped``.

Reading policy, in order: a file larger than ``max_bytes`` (by ``fstat``, never read
whole: hashed in 1 MiB blocks) is ``too large``; NUL bytes or mostly control bytes
in the first 8 KiB make it ``binary``; bytes that are not UTF-8 are ``invalid
utf-8`` (no encoding is guessed: a wrong guess would index mojibake). Symlinks are
never followed into directories, so loops cannot happen; a symlink to a file inside
the tree is read like that file.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from sources.file_ignore import IgnoreRules

log = logging.getLogger(__name__)

SNIFF_BYTES = 8192
_BLOCK = 1 << 20
# Bytes that occur in text: printable ASCII, common whitespace and escapes, anything >= 0x80.
_TEXT_BYTES = bytes({7, 8, 9, 10, 12, 13, 27} | set(range(0x20, 0x100)) - {0x7F})

TOO_LARGE = "too large"
BINARY = "binary"
INVALID_UTF8 = "invalid utf-8"
UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class Entry:
    """A file (or symlink) found in the tree; ``path`` is relative and ``'/'``-separated."""

    path: str
    abspath: str
    link: bool = False


@dataclass(frozen=True, slots=True)
class Observation:
    """What one read found: text (``content`` set) or a reason to skip the file."""

    path: str
    token: str
    """What the checkpoint remembers: the sha256 of a text file, ``reason:sha256`` else."""
    sha256: str | None = None
    size: int | None = None
    content: str | None = None
    reason: str | None = None


def _skipped(
    path: str, reason: str, sha: str | None = None, size: int | None = None
) -> Observation:
    return Observation(path, f"{reason}:{sha or size or ''}", sha, size, reason=reason)


def looks_binary(head: bytes) -> bool:
    """NUL bytes, or more than 30% bytes that never occur in text (``file``'s heuristic)."""
    if b"\0" in head:
        return True
    return len(head.translate(None, _TEXT_BYTES)) > len(head) * 0.3


class FileTree:
    """One directory tree: walking it under ignore rules and reading its files."""

    def __init__(self, root: Path, max_bytes: int, ignore: IgnoreRules) -> None:
        self.root = os.path.realpath(root)
        self.max_bytes = max_bytes
        self.ignore = ignore
        self.unlisted: set[str] = set()
        """Directories the last walk could not list; their files are not presumed gone."""

    def relative(self, abspath: str) -> str | None:
        """``abspath`` relative to the root, or ``None`` when outside it."""
        rel = os.path.relpath(abspath, self.root)
        if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
            return None
        return rel.replace(os.sep, "/")

    def walk(self, under: str = "") -> Iterator[Entry]:
        """Every non-ignored file and symlink below ``under`` (checked by the caller)."""
        stack = [under]
        while stack:
            directory = stack.pop()
            base = os.path.join(self.root, directory) if directory else self.root
            try:
                with os.scandir(base) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except FileNotFoundError:
                continue
            except OSError as exc:
                log.warning("cannot list %s: %s", base, exc)
                self.unlisted.add(directory)
                continue
            subdirs: list[str] = []
            for entry in entries:
                rel = f"{directory}/{entry.name}" if directory else entry.name
                if not _encodable(rel):
                    continue
                if entry.is_symlink():
                    if not self.ignore.ignored(rel, False):
                        yield Entry(rel, entry.path, link=True)
                elif entry.is_dir(follow_symlinks=False):
                    if not self.ignore.ignored(rel, True):
                        subdirs.append(rel)
                elif entry.is_file(follow_symlinks=False) and not self.ignore.ignored(rel, False):
                    yield Entry(rel, entry.path)
            stack.extend(reversed(subdirs))  # depth first, in name order

    def observe(self, entry: Entry) -> Observation | None:
        """Read ``entry``; ``None`` when it vanished or is not a regular file. Never raises
        for a file's own problems: those become a skip reason."""
        try:
            if entry.link:
                problem = self._symlink_problem(entry)
                if problem is not None:
                    return _skipped(entry.path, problem)
            return self._read(entry)
        except FileNotFoundError:
            return None
        except PermissionError:
            return _skipped(entry.path, UNREADABLE)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return _skipped(entry.path, "symlink loop")
            return _skipped(entry.path, f"{UNREADABLE}: {exc.strerror or exc}")

    def _symlink_problem(self, entry: Entry) -> str | None:
        try:
            target = os.path.realpath(entry.abspath, strict=True)
        except FileNotFoundError:
            return "broken symlink"
        if target != self.root and not target.startswith(self.root + os.sep):
            return "symlink outside tree"
        if os.path.isdir(target):
            here = os.path.realpath(os.path.dirname(entry.abspath))
            if here == target or here.startswith(target + os.sep):
                return "symlink loop"
            return "symlinked directory"
        return None

    def _read(self, entry: Entry) -> Observation | None:
        # O_NONBLOCK: a FIFO swapped in since the walk must not hang the scan.
        fd = os.open(entry.abspath, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb", closefd=True) as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_size > self.max_bytes:
                return self._too_large(entry, f, b"")
            data = f.read(self.max_bytes + 1)
            if len(data) > self.max_bytes:  # grew since fstat
                return self._too_large(entry, f, data)
        sha = hashlib.sha256(data).hexdigest()
        if looks_binary(data[:SNIFF_BYTES]):
            return _skipped(entry.path, BINARY, sha, len(data))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return _skipped(entry.path, INVALID_UTF8, sha, len(data))
        return Observation(entry.path, sha, sha, len(data), content=text)

    def _too_large(self, entry: Entry, f: BinaryIO, head: bytes) -> Observation:
        digest = hashlib.sha256(head)
        size = len(head)
        while block := f.read(_BLOCK):
            digest.update(block)
            size += len(block)
        return _skipped(entry.path, TOO_LARGE, digest.hexdigest(), size)


def _encodable(rel: str) -> bool:
    # Names that are not UTF-8 decode to lone surrogates, which no event can carry.
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        log.warning("skipping %r: its name is not valid UTF-8", rel)
        return False
    return True
