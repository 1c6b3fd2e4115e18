"""The embedded PostgreSQL keeps its address across restarts of one data directory,
and starts as root from a virtualenv its unprivileged account cannot enter."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime.embedded import postgres_binaries
from runtime.embedded.postgres import EmbeddedPostgres
from runtime.embedded.postgres_binaries import postgres_bin_dir, runnable_bin_dir


def test_a_restarted_embedded_postgres_answers_on_the_port_it_had(tmp_path: Path) -> None:
    first = EmbeddedPostgres(tmp_path / "pg", log_path=tmp_path / "pg.log", durable=False)
    first.start()
    dsn = first.dsn
    first.stop()
    again = EmbeddedPostgres(tmp_path / "pg", log_path=tmp_path / "pg.log", durable=False)
    again.start()
    try:
        assert again.dsn == dsn
    finally:
        again.stop()


def test_a_server_run_as_ourselves_uses_the_installed_binaries() -> None:
    assert runnable_bin_dir(None) == postgres_bin_dir()


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A root-owned directory every account can enter, outside pytest's 0700 tmp."""
    path = Path(tempfile.mkdtemp(prefix="tribal-test-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the server to another account")
def test_root_starts_postgres_from_a_venv_under_a_private_directory(
    tmp_path: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The wheel's layout (package beside its .libs) under a 0700 directory, as in a
    # checkout made in `mktemp -d`: `nobody` cannot traverse into it to exec initdb.
    installed = postgres_binaries.postgres_package_dir()
    private = tmp_path / "checkout"
    site = private / ".venv" / "site-packages"
    site.mkdir(parents=True)
    private.chmod(0o700)
    (site / "embedded_postgres").symlink_to(installed)
    (site / "embedded_postgres.libs").symlink_to(installed.parent / "embedded_postgres.libs")
    monkeypatch.setattr(
        postgres_binaries, "postgres_package_dir", lambda: site / "embedded_postgres"
    )
    monkeypatch.setenv(postgres_binaries.BINARIES_DIR_ENV, str(shared_dir / "binaries"))
    monkeypatch.setenv("TRIBAL_POSTGRES_RELOCATE_DIR", str(shared_dir / "data"))
    monkeypatch.setenv("TRIBAL_POSTGRES_OS_USER", "nobody")

    pg = EmbeddedPostgres(private / "pg", log_path=tmp_path / "pg.log", durable=False)
    with pg:
        assert pg.bin_dir.is_relative_to(shared_dir / "binaries")
        # pgvector too: the copy keeps lib/ and share/ where the server looks for them.
        assert pg.psql("CREATE EXTENSION vector; SELECT 1").strip() == "1"
