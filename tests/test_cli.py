"""The `tribal` command line, as a user types it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import app
from streams.embedded.tansu import TansuBroker
from tests.harness import Broker
from tests.harness.pipeline import Pipeline, isolated_settings, kb_article

runner = CliRunner()


def said(output: str) -> str:
    """Output with rich's line wrapping undone."""
    return " ".join(output.split())


def test_help_lists_the_commands_a_user_needs() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("up", "worker", "api", "archive", "restore", "source", "status"):
        assert command in result.output


def test_commands_without_a_broker_say_how_to_get_one(tmp_path: Path) -> None:
    result = runner.invoke(app, ["topics"], env={"TRIBAL_DATA_DIR": str(tmp_path)})
    assert result.exit_code == 2
    assert "tribal up" in said(result.output)


def test_source_run_with_a_missing_config_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["source", "run", "--config", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert "does not exist" in said(result.output)


@pytest.mark.slow
def test_archive_then_restore_moves_a_pipeline_to_a_new_broker(
    broker: Broker, tmp_path: Path
) -> None:
    settings = isolated_settings(broker.bootstrap, tmp_path / "data")
    source = Pipeline(settings)
    asyncio.run(source.create_topics())
    asyncio.run(source.produce("kb.articles", [(f"kb-{n}", kb_article(n)) for n in range(7)]))
    env = {"TRIBAL_TOPIC_PREFIX": settings.topic_prefix, "TRIBAL_DATA_DIR": str(tmp_path)}
    archive = tmp_path / "backup"
    result = runner.invoke(app, ["archive", str(archive), "--bootstrap", broker.bootstrap], env=env)
    assert result.exit_code == 0, result.output
    assert "archived 7 new records" in said(result.output)

    with TansuBroker() as fresh:
        result = runner.invoke(app, ["restore", str(archive), "--bootstrap", fresh.bootstrap])
        assert result.exit_code == 0, result.output
        assert "restored 7 records" in said(result.output)
        moved = Pipeline(settings.model_copy(update={"kafka_bootstrap": fresh.bootstrap}))
        events = asyncio.run(moved.decoded("kb.articles"))
    assert sorted(e.article_id for e in events) == sorted(f"kb-{n}" for n in range(7))  # type: ignore[attr-defined]
