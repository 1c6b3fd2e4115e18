"""The projection runner: positions live in the store, replays change nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from devstack import Broker
from events.deadletter import DeadLettered
from projections.base import Applied
from projections.deadletters import DeadLetterProjection
from projections.runner import ProjectionRunner
from runtime import databases
from tests.pipelines import fresh_pipeline
from tests.projections.feed import opened


async def fresh_database(postgres_dsn: str) -> str:
    return await databases.fresh_database(postgres_dsn, "proj")


def dead(n: int) -> DeadLettered:
    return DeadLettered(
        origin_topic="tribal.kb.articles",
        origin_partition=0,
        origin_offset=n,
        origin_key=f"k{n}",
        error_code="NOT_WIRE_FORMAT" if n % 2 else "UNKNOWN_SCHEMA_ID",
        error_message=f"bad record {n}",
        payload=b"\x00junk",
    )


async def test_a_batch_applied_twice_changes_nothing_the_second_time(postgres_dsn: str) -> None:
    batch = [Applied("tribal.deadletter", 0, n, f"k{n}", dead(n)) for n in range(5)]
    async with opened(DeadLetterProjection(await fresh_database(postgres_dsn))) as projection:
        assert await projection.apply(batch) == 5
        assert await projection.apply(batch) == 0
        assert (
            await projection.apply([*batch[3:], Applied("tribal.deadletter", 0, 5, "k5", dead(5))])
            == 1
        )
        summary = await projection.summary()
        assert summary["total"] == 6
        assert summary["by_code"] == {"NOT_WIRE_FORMAT": 3, "UNKNOWN_SCHEMA_ID": 3}


async def test_a_dead_letter_with_a_nul_or_a_lone_surrogate_is_stored_escaped(
    postgres_dsn: str,
) -> None:
    hostile = dead(0).model_copy(
        update={"origin_key": "k\x00\ud800", "error_message": "quoting \x00 the payload"}
    )
    async with opened(DeadLetterProjection(await fresh_database(postgres_dsn))) as projection:
        assert await projection.apply([Applied("tribal.deadletter", 0, 0, "k", hostile)]) == 1
        latest = (await projection.summary())["latest"]
        assert latest[0]["error_message"] == "quoting \\x00 the payload"


@pytest.mark.slow
async def test_a_restarted_runner_resumes_from_the_store_without_duplicates(
    broker: Broker, postgres_dsn: str, tmp_path: Path
) -> None:
    pipeline = await fresh_pipeline(broker, tmp_path)
    await pipeline.produce("deadletter", [(f"k{n}", dead(n)) for n in range(20)])
    dsn = await fresh_database(postgres_dsn)

    first = ProjectionRunner(DeadLetterProjection(dsn), pipeline.settings, pipeline.serde)
    await first.start()
    await first.catch_up()
    await first.stop()
    assert first.applied == 20

    await pipeline.produce("deadletter", [(f"k{n}", dead(n)) for n in range(20, 25)])
    second = ProjectionRunner(DeadLetterProjection(dsn), pipeline.settings, pipeline.serde)
    await second.start()
    await second.catch_up()
    lag = await second.measure_lag()
    summary = await second.projection.summary()  # type: ignore[attr-defined]
    await second.stop()
    assert second.applied == 5
    assert summary["total"] == 25
    assert lag.messages == 0
