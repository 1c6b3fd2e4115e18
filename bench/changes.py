"""The changes benchmarks send: source files as ``FileChanged`` events, from installed
packages or written for one round of edits."""

from __future__ import annotations

import hashlib
import sysconfig
from collections.abc import Collection
from pathlib import Path

from events.files import FileChanged


def python_file(repo: str, path: str, content: str) -> FileChanged:
    """``content`` as the files source emits it for ``repo:path``."""
    return FileChanged(
        repo=repo,
        path=path,
        content=content,
        sha256=hashlib.sha256(content.encode()).hexdigest(),
        language="python",
        size_bytes=len(content.encode()),
    )


def edited_file(n: int, repo: str = "bench") -> FileChanged:
    """A small module that round ``n`` of edits writes: one documented function."""
    content = (
        f'"""Refunds, round {n}."""\n\n\ndef refund_parcel_{n}(order_id: int) -> bool:\n'
        f'    """Refund order {n} when the parcel never arrived."""\n    return order_id > {n}\n'
    )
    return python_file(repo, f"src/refunds_{n}.py", content)


def installed_files(limit: int, skip: Collection[str] = ()) -> list[FileChanged]:
    """Python files (200 B to 40 KB) of the installed packages, package by package in
    name order, at most ``limit``; ``skip`` names packages to leave out."""
    site = Path(sysconfig.get_paths()["purelib"])
    out: list[FileChanged] = []
    for package in sorted(p for p in site.iterdir() if p.is_dir()):
        if package.name in skip or package.name.endswith((".dist-info", ".libs")):
            continue
        for path in sorted(package.rglob("*.py")):
            try:
                content = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if 200 <= len(content) <= 40_000:
                out.append(python_file("backfill", str(path.relative_to(site)), content))
                if len(out) == limit:
                    return out
    return out
