"""The `tribal` command line, as a user types it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from devstack import Broker
from devstack.pipeline import Pipeline, isolated_settings, kb_article
from runtime.embedded.tansu import TansuBroker

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


@pytest.fixture
def pipeline(broker: Broker, tmp_path: Path) -> Pipeline:
    """A pipeline with topics no other test shares on the broker, its data in ``tmp_path/data``."""
    pipeline = Pipeline(isolated_settings(broker.bootstrap, tmp_path / "data"))
    asyncio.run(pipeline.create_topics())
    return pipeline


@pytest.mark.slow
def test_archive_then_restore_moves_a_pipeline_to_a_new_broker(
    broker: Broker, pipeline: Pipeline, tmp_path: Path
) -> None:
    settings = pipeline.settings
    asyncio.run(pipeline.produce("kb.articles", [(f"kb-{n}", kb_article(n)) for n in range(7)]))
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


@pytest.mark.slow
def test_a_dead_letter_can_be_listed_shown_and_replayed_to_its_origin(
    broker: Broker, pipeline: Pipeline, tmp_path: Path
) -> None:
    from events.deadletter import DeadLettered

    origin = pipeline.topic("kb.articles")
    good = pipeline.serde.encode(kb_article(9), origin)
    letter = DeadLettered(
        origin_topic=origin,
        origin_partition=0,
        origin_offset=41,
        origin_key="kb-9",
        error_code="PROCESSING_FAILED",
        error_message="[kb_chunker] bug fixed since",
        payload=good,
    )
    asyncio.run(pipeline.produce("deadletter", [("kb-9", letter)]))
    env = {
        "TRIBAL_KAFKA_BOOTSTRAP": broker.bootstrap,
        "TRIBAL_TOPIC_PREFIX": pipeline.settings.topic_prefix,
        "TRIBAL_DATA_DIR": str(tmp_path / "data"),
    }
    listed = runner.invoke(app, ["deadletter", "list", "--json"], env=env)
    assert listed.exit_code == 0, listed.output
    [row] = json.loads(listed.output)
    assert (row["error_code"], row["origin_offset"]) == ("PROCESSING_FAILED", 41)
    shown = runner.invoke(app, ["deadletter", "show", row["id"]], env=env)
    assert "bug fixed since" in said(shown.output)
    replayed = runner.invoke(app, ["deadletter", "replay", row["id"], "--yes"], env=env)
    assert replayed.exit_code == 0, replayed.output
    records = asyncio.run(pipeline.read_all("kb.articles"))
    assert [r.value for r in records] == [good]
    assert [r.key for r in records] == [b"kb-9"]


def test_tribal_services_hands_its_arguments_to_the_dev_stack() -> None:
    runner = CliRunner()
    helped = runner.invoke(app, ["services", "--help"])
    assert helped.exit_code == 0
    assert "tribal services" in helped.output
    assert "{up,down,env,status}" in helped.output
    refused = runner.invoke(app, ["services", "up", "mysql"])
    assert refused.exit_code != 0
