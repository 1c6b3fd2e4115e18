"""The embedded PostgreSQL keeps its address across restarts of one data directory."""

from __future__ import annotations

from pathlib import Path

from streams.embedded.postgres import EmbeddedPostgres


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
