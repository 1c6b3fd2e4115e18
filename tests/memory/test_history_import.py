"""History import: a file of past turns becomes the same events live turns are, each
group's turns in the order they were said, and importing it again records nothing new."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from typer.testing import CliRunner

from cli.main import app
from devstack.pipeline import Pipeline, isolated_settings, settings_env
from events.memory import TurnRecorded
from sources.history import (
    HistoryTurn,
    RecordProblem,
    in_world_order,
    read_history,
)
from sources.sink import MemorySink
from sources.turns import MemoryIngestor

runner = CliRunner()
RECORDS: list[dict[str, Any]] = [
    {"group": "acme:book-club", "speaker": "Melanie", "text": "I live in York.",
     "time": "2023-05-08T14:10:00+01:00"},
    {"group": "acme:book-club", "speaker": "Caroline", "text": "I moved to Bristol.",
     "time": "2023-05-08T13:56:00+01:00", "metadata": {"session": 1, "images": ["a.jpg"]}},
    {"group_id": "acme:support", "user_message": "My order #A-1001 is late.",
     "agent_response": "Sorry, checking.", "occurred_at": "2023-05-09T09:00:00Z"},
]  # fmt: skip


def jsonl(tmp_path: Path, records: list[Any], name: str = "history.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


def said(output: str) -> str:
    return " ".join(output.split())


def test_a_history_file_reads_as_turns_of_their_groups_speakers_and_times(
    tmp_path: Path,
) -> None:
    read = list(read_history(jsonl(tmp_path, RECORDS)))
    assert all(isinstance(r, HistoryTurn) for r in read)
    turns = [r for r in read if isinstance(r, HistoryTurn)]
    assert [(t.session.group_id, t.turn.speaker) for t in turns] == [
        ("acme:book-club", "Melanie"), ("acme:book-club", "Caroline"), ("acme:support", None),
    ]  # fmt: skip
    assert turns[1].turn.occurred_at == datetime(2023, 5, 8, 12, 56, tzinfo=UTC)
    assert turns[1].turn.metadata == {"session": "1", "images": '["a.jpg"]'}
    assert turns[2].turn.agent_response == "Sorry, checking."
    assert [t.where for t in turns] == ["line 1", "line 2", "line 3"]


def test_a_json_file_holds_a_list_of_records_or_an_object_of_turns(tmp_path: Path) -> None:
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(RECORDS))
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"turns": RECORDS}))
    for path in (listed, wrapped):
        read = list(read_history(path))
        assert [r.where for r in read] == ["record 1", "record 2", "record 3"]
        assert all(isinstance(r, HistoryTurn) for r in read)


def test_records_without_a_group_or_a_timezone_take_the_ones_given(tmp_path: Path) -> None:
    records = [{"speaker": "Jon", "text": "hi", "time": "2023-05-08T13:56:00"}]
    [turn] = read_history(jsonl(tmp_path, records), "acme:default", ZoneInfo("Europe/London"))
    assert isinstance(turn, HistoryTurn)
    assert turn.session.group_id == "acme:default"
    assert turn.turn.occurred_at == datetime(2023, 5, 8, 12, 56, tzinfo=UTC)


def test_every_bad_record_is_named_by_its_line_with_a_code(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path,
        [
            RECORDS[0],
            "{not json",
            {"group": "acme:x", "speaker": "Jon"},
            {"group": "acme:x", "text": "hi", "time": "2023-05-08T13:56:00"},
            {"group": "acme", "text": "hi"},
            {"group": "acme:x", "text": "hi", "time": "2999-01-01T00:00:00Z"},
            {"group": "acme:x", "text": "a\x00b"},
            ["a", "list"],
        ],
    )
    problems = [r for r in read_history(path) if isinstance(r, RecordProblem)]
    assert [(p.where, p.code) for p in problems] == [
        ("line 2", "INVALID_JSON"),
        ("line 3", "INVALID_REQUEST"),
        ("line 4", "INVALID_REQUEST"),
        ("line 5", "INVALID_GROUP_ID"),
        ("line 6", "INVALID_REQUEST"),
        ("line 7", "INVALID_TEXT"),
        ("line 8", "INVALID_REQUEST"),
    ]
    assert "timezone" in problems[2].message
    assert "future" in problems[4].message


def test_turns_are_put_in_the_order_they_were_said_with_ids_that_survive_a_reimport(
    tmp_path: Path,
) -> None:
    turns = [r for r in read_history(jsonl(tmp_path, [*RECORDS, RECORDS[0]]))]
    ordered = in_world_order([t for t in turns if isinstance(t, HistoryTurn)])
    assert [t.where for t in ordered] == ["line 2", "line 1", "line 4", "line 3"]
    again = in_world_order([t for t in turns if isinstance(t, HistoryTurn)])
    assert [t.turn.turn_id for t in ordered] == [t.turn.turn_id for t in again]
    assert len({t.turn.turn_id for t in ordered}) == 4  # the repeated record is a second turn


async def test_imported_turns_are_the_events_the_live_ingestor_records(tmp_path: Path) -> None:
    turns = in_world_order([r for r in read_history(jsonl(tmp_path, RECORDS))
                            if isinstance(r, HistoryTurn)])  # fmt: skip
    imported, live = MemorySink(), MemorySink()
    await MemoryIngestor(imported).ingest_turns([(t.turn, t.session) for t in turns])
    for t in turns:
        await MemoryIngestor(live).ingest_turn(t.turn, t.session)

    def shape(sink: MemorySink) -> list[tuple[Any, ...]]:
        return [
            (e.key, e.event.turn_id, e.event.speaker, e.event.occurred_at, e.event.user_message,
             e.event.agent_response, e.event.metadata)
            for e in sink.emitted
            if isinstance(e.event, TurnRecorded)
        ]  # fmt: skip

    assert shape(imported) == shape(live)


def test_an_invalid_file_imports_nothing_and_names_its_lines(tmp_path: Path) -> None:
    path = jsonl(tmp_path, [RECORDS[0], {"group": "acme", "text": "hi"}])
    result = runner.invoke(app, ["memory", "import", str(path), "--bootstrap", "127.0.0.1:1"])
    assert result.exit_code == 1
    out = said(result.output)
    assert "line 2: INVALID_GROUP_ID" in out
    assert "nothing was imported" in out


def test_a_dry_run_checks_the_file_and_counts_turns_and_groups(tmp_path: Path) -> None:
    result = runner.invoke(app, ["memory", "import", str(jsonl(tmp_path, RECORDS)), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "3 turns in 2 group(s)" in said(result.output)


def test_tribal_memory_import_sends_the_turns_once_however_often_it_runs(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    settings = isolated_settings(kafka_bootstrap, tmp_path)
    pipeline = Pipeline(settings)
    asyncio.run(pipeline.create_topics())
    path = jsonl(tmp_path, RECORDS)
    env = settings_env(settings)
    for _ in range(2):
        result = runner.invoke(app, ["memory", "import", str(path), "--batch", "2"], env=env)
        assert result.exit_code == 0, result.output
        assert "imported 3 turns" in said(result.output)
    decoded = asyncio.run(pipeline.decoded("memory.turns"))
    events = [e for e in decoded if isinstance(e, TurnRecorded)]
    assert len(events) == 6
    assert len({e.event_id for e in events}) == 3  # the second run: the very same events
    club = [e for e in events if e.group_id == "acme:book-club"][:2]
    assert [(e.speaker, e.user_message) for e in club] == [
        ("Caroline", "I moved to Bristol."), ("Melanie", "I live in York."),
    ]  # fmt: skip
