"""``.gitignore`` semantics over a directory tree, nested files included.

As in git, patterns are relative to the directory of the ``.gitignore`` holding them,
a deeper file overrides a shallower one, ``.git/info/exclude`` ranks below the root
``.gitignore``, and a file inside an ignored directory cannot be re-included (the
walk never enters the directory). ``.git`` itself is always ignored.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Iterable
from pathlib import Path

from pathspec import GitIgnoreSpec

log = logging.getLogger(__name__)

GITIGNORE = ".gitignore"
ALWAYS_IGNORED = frozenset({".git"})


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []
    except OSError as exc:
        log.warning("cannot read %s (%s); treating it as empty", path, exc)
        return []


def _ancestors(rel: str) -> list[str]:
    """The directories holding ``rel``, deepest first, ending with the root ``""``."""
    out: list[str] = []
    directory = posixpath.dirname(rel)
    while directory:
        out.append(directory)
        directory = posixpath.dirname(directory)
    out.append("")
    return out


class IgnoreRules:
    """Answers "is this path ignored?" for paths relative to ``root`` (``'/'``-separated)."""

    def __init__(self, root: Path, extra_patterns: Iterable[str] = ()) -> None:
        self.root = root
        self.extra_patterns = tuple(extra_patterns)
        self._specs: dict[str, GitIgnoreSpec | None] = {}

    def invalidate(self) -> None:
        """Forget every loaded ``.gitignore`` (one changed)."""
        self._specs.clear()

    def _spec(self, directory: str) -> GitIgnoreSpec | None:
        if directory in self._specs:
            return self._specs[directory]
        base = self.root / directory if directory else self.root
        lines = _read_lines(base / GITIGNORE)
        if not directory:
            # Lowest precedence first: configured patterns, then .git/info/exclude.
            lines = [*self.extra_patterns, *_read_lines(base / ".git" / "info" / "exclude"), *lines]
        lines = [line for line in lines if line.strip() and not line.startswith("#")]
        spec = GitIgnoreSpec.from_lines(lines) if lines else None
        self._specs[directory] = spec
        return spec

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` itself matches; callers walking a tree have checked its parents."""
        if posixpath.basename(rel) in ALWAYS_IGNORED:
            return True
        for directory in _ancestors(rel):
            spec = self._spec(directory)
            if spec is None:
                continue
            sub = rel[len(directory) + 1 :] if directory else rel
            verdict = spec.check_file(sub + "/" if is_dir else sub).include
            if verdict is not None:
                return verdict
        return False

    def ignored_anywhere(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` or any directory above it is ignored (for single watched paths)."""
        parents = _ancestors(rel)[:-1]
        return any(self.ignored(d, True) for d in reversed(parents)) or self.ignored(rel, is_dir)
