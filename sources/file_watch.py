"""Filesystem notifications for the files source, batched and debounced by ``watchfiles``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from watchfiles import Change, awatch

_GIT = f"{os.sep}.git"


def _not_in_git(change: Change, path: str) -> bool:
    # .git changes on every commit and fetch and is never indexed; drop it early.
    return f"{_GIT}{os.sep}" not in path and not path.endswith(_GIT)


async def watch_batches(
    root: Path, queue: asyncio.Queue[set[str] | None], stop: asyncio.Event, debounce_ms: int
) -> None:
    """Put each batch of changed absolute paths on ``queue`` until ``stop``; then ``None``.

    ``watchfiles`` yields once no change arrived for 50 ms, or after ``debounce_ms`` of
    continuous changes, so an editor's write-and-rename or a ``git checkout`` arrives as
    one batch and a single save is seen well within a second.
    """
    try:
        async for changes in awatch(
            root,
            watch_filter=_not_in_git,
            debounce=debounce_ms,
            step=50,
            stop_event=stop,
            ignore_permission_denied=True,
            recursive=True,
        ):
            queue.put_nowait({path for _, path in changes})
    finally:
        queue.put_nowait(None)
