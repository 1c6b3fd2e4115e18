"""Where a source remembers how far it got: the port and a file adapter."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Protocol


class CheckpointStore(Protocol):
    """Durable key → JSON state for one source."""

    def load(self) -> dict[str, Any]:
        """The last saved state, or ``{}`` for a first run."""
        ...

    def save(self, state: dict[str, Any]) -> None:
        """Replace the state atomically; call only after the events it covers are acked."""
        ...


class FileCheckpoint:
    """One JSON file per source under ``<data_dir>/checkpoints/``, replaced atomically."""

    def __init__(self, directory: Path, name: str) -> None:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        self.path = Path(directory) / f"{safe}.json"

    def load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        return data if isinstance(data, dict) else {}

    def save(self, state: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        with open(tmp, "w") as f:
            json.dump(state, f, sort_keys=True, default=str)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


class MemoryCheckpoint:
    """In-memory state, for tests."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}

    def load(self) -> dict[str, Any]:
        return dict(self.state)

    def save(self, state: dict[str, Any]) -> None:
        self.state = dict(state)
