"""Child processes that die with their parent and stop cleanly."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def die_with_parent(signum: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn`` that has the kernel send ``signum`` to the child when we die.

    It runs in the child between fork and exec (after any uid switch: Popen applies
    ``user=`` first), so a SIGKILLed supervisor or pytest leaves no orphans behind.
    """

    def hook() -> None:
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signum)

    return hook


def pid_alive(pid: int) -> bool:
    """Is ``pid`` a live process (ours or not)? A zombie counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        if Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"):
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_open(host: str, port: int, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_until(
    check: Callable[[], bool], timeout: float, what: str, interval: float = 0.05
) -> None:
    """Poll ``check`` until it is true or raise ``TimeoutError`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise TimeoutError(f"{what} was not ready after {timeout:.0f}s")


class ChildProcess:
    """A supervised child: started in its own process group, tied to our lifetime."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        log_path: Path | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = dict(os.environ if env is None else env)
        self.log_path = log_path
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        out: int | object = subprocess.DEVNULL
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            out = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child for its lifetime
        self.proc = subprocess.Popen(
            self.argv,
            env=self.env,
            cwd=self.cwd,
            stdout=out,  # type: ignore[arg-type]
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=die_with_parent(),
            start_new_session=True,
        )

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM the child's process group, then SIGKILL it after ``timeout``."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        return self.proc.returncode
