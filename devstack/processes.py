"""Server processes for the dev stack: started in a session of their own, stopped by group."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from runtime.embedded.process import die_with_parent, free_port, pid_alive, wait_until

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parents[1]
"""The checkout: ``.tribal/services/`` below it holds the background services' state."""
STATE_DIR = ROOT / ".tribal" / "services"


def cache_dir() -> Path:
    """Where downloaded and built servers are kept across checkouts (``~/.cache/tribal``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tribal"


def spawn(
    argv: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    tie_to_parent: bool = True,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in its own session, output appended to ``log_path``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            list(argv),
            env=dict(os.environ if env is None else env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent() if tie_to_parent else None,
        )


def terminate_group(pid: int, timeout: float = 30.0, sig: int = signal.SIGTERM) -> None:
    """Signal the process group led by ``pid``; SIGKILL it if still alive after ``timeout``."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)
    if pid_alive(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def wait_alive(
    proc: subprocess.Popen[bytes], check: Callable[[], bool], timeout: float, what: str, log: Path
) -> None:
    """Wait for ``check``; fail at once, with the log's tail, if the process exits."""

    def ready() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log_tail(log)}")
        return check()

    try:
        wait_until(ready, timeout, what, interval=0.1)
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}; last log lines:\n{log_tail(log)}") from exc


class Server:
    """A server process of the dev stack: started by a subclass, stopped by its group."""

    proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def launch(
        self,
        argv: Sequence[str],
        log_path: Path,
        ready: Callable[[], bool],
        what: str,
        timeout: float,
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        tie_to_parent: bool = True,
    ) -> None:
        """Spawn ``argv`` and wait until ``ready``; stop it again if it never is."""
        self.proc = spawn(argv, log_path, env=env, cwd=cwd, tie_to_parent=tie_to_parent)
        try:
            wait_alive(self.proc, ready, timeout, what, log_path)
        except BaseException:
            self.stop()
            raise

    def stop(self, timeout: float = 30.0) -> None:
        """Controlled shutdown (SIGTERM), SIGKILL after ``timeout``."""
        if self.proc is not None:
            terminate_group(self.proc.pid, timeout)
            self.proc.wait()
            self.proc = None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock: two pytest sessions (or ``up`` and pytest) must not run mvn or
    go into one directory at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def pick_port(preferred: int | None = None) -> int:
    """``preferred`` when it is free (keeps a restarted server at its address), else any."""
    if preferred:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            # Servers bind with SO_REUSEADDR, so TIME_WAIT left by their last run is fine.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((HOST, preferred))
                return preferred
            except OSError:
                pass
    return free_port(HOST)
