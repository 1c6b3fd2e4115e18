"""``tribal`` commands run as child processes of a test stack, each logging to a file of
its own; every one is stopped by its own pid, never by name."""

from __future__ import annotations

import asyncio
from pathlib import Path

from devstack.pipeline import REPO, TRIBAL
from runtime.embedded.process import ChildProcess


class Children:
    """The children started so far, their logs in ``logs/<name>.log``."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.running: list[ChildProcess] = []

    def start(self, name: str, args: list[str], env: dict[str, str]) -> ChildProcess:
        """Start ``tribal <args>`` as ``name``."""
        log = self.logs / f"{name}.log"
        child = ChildProcess(name, [*TRIBAL, *args], env=env, log_path=log, cwd=REPO)
        child.start()
        self.running.append(child)
        return child

    def check(self, *expected_dead: ChildProcess) -> None:
        """Raise, with the logs' tails, when a child other than ``expected_dead`` exited."""
        dead = [c.name for c in self.running if not c.alive() and c not in expected_dead]
        if dead:
            raise RuntimeError(f"{', '.join(dead)} exited\n{self.tails()}")

    def tails(self, chars: int = 3000) -> str:
        """The last ``chars`` characters of every child's log."""
        parts = []
        for child in self.running:
            if child.log_path is not None and child.log_path.exists():
                text = child.log_path.read_text(errors="replace")[-chars:]
                parts.append(f"--- {child.name} log (tail) ---\n{text}")
        return "\n".join(parts)

    async def stop(self) -> None:
        """Stop every child, the last started first."""
        for child in reversed(self.running):
            await asyncio.to_thread(child.stop, 30.0)
