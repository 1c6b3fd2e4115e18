"""``tribal memory import FILE``: a past conversation history into memory, as live turns."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from cli.common import console, resolve_bootstrap, settings_from

if TYPE_CHECKING:
    from sources.history import HistoryTurn

memory_app = typer.Typer(help="Conversation memory: import a history.", no_args_is_help=True)

BATCH = 500
"""Turns sent per batch (each batch is acknowledged by Kafka before the next)."""


def _zone(name: str | None) -> ZoneInfo | None:
    if name is None:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        console.print(f"[red]--timezone {name!r} is not a time zone (e.g. UTC, Europe/London)")
        raise typer.Exit(2) from exc


async def send_history(
    bootstrap: str,
    turns: Sequence[HistoryTurn],
    batch: int = BATCH,
    on_progress: Callable[[int], None] = lambda _done: None,
) -> int:
    """Send ``turns`` (already in world order) to ``memory.turns`` through the ingestor
    that records live turns; ``on_progress(done)`` after each acknowledged batch."""
    from events.registry import registry_from_settings
    from events.serde import EventSerde
    from sources.sink import KafkaSink
    from sources.turns import MemoryIngestor

    settings = settings_from()
    serde = EventSerde(registry_from_settings(settings))
    done = 0
    async with KafkaSink(bootstrap, serde, settings.topic_prefix) as sink:
        ingestor = MemoryIngestor(sink)
        for start in range(0, len(turns), batch):
            chunk = turns[start : start + batch]
            await ingestor.ingest_turns([(t.turn, t.session) for t in chunk])
            done += len(chunk)
            on_progress(done)
    return done


@memory_app.command("import")
def import_history(
    file: Annotated[Path, typer.Argument(help="JSON (.json) or JSONL records to import.")],
    group: Annotated[
        str | None, typer.Option(help="group_id ('tenant:session') of records without one.")
    ] = None,
    timezone: Annotated[
        str | None, typer.Option(help="Zone of times written without one (e.g. UTC).")
    ] = None,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Import the valid records, list the rest.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check the file; send nothing.")
    ] = False,
    bootstrap: Annotated[str | None, typer.Option()] = None,
    batch: Annotated[int, typer.Option(min=1, max=1000, help="Turns per batch.")] = BATCH,
) -> None:
    """Import past turns (group, speaker, text, time, metadata per record) into memory.

    Every record is checked before anything is sent; each group's turns are sent in
    the order they were said; importing the same file again records nothing new.
    """
    from sources.history import HistoryTurn, RecordProblem, in_world_order, read_history

    if not file.is_file():
        console.print(f"[red]{file} is not a file")
        raise typer.Exit(2)
    try:
        read = list(read_history(file, group, _zone(timezone)))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        console.print(f"[red]cannot read {file}: {exc}")
        raise typer.Exit(2) from exc
    problems = [r for r in read if isinstance(r, RecordProblem)]
    turns = in_world_order([r for r in read if isinstance(r, HistoryTurn)])
    if problems:
        console.print(f"[yellow]invalid records in {escape(str(file))}:", soft_wrap=True)
    for p in problems[:20]:
        console.print(f"[yellow]  {p.where}: {p.code}: {escape(p.message)}")
    if len(problems) > 20:
        console.print(f"[yellow]… and {len(problems) - 20} more")
    if problems and not skip_invalid:
        console.print(
            f"[red]{len(problems)} of {len(read)} records are invalid; nothing was imported "
            "(fix them, or pass --skip-invalid)"
        )
        raise typer.Exit(1)
    groups = Counter(t.session.group_id for t in turns)
    console.print(
        f"{len(turns)} turns in {len(groups)} group(s)"
        + (f", {len(problems)} invalid records skipped" if problems else "")
    )
    if dry_run or not turns:
        return
    settings = settings_from()
    broker = resolve_bootstrap(settings, bootstrap)
    with Progress(
        TextColumn("importing"), BarColumn(), MofNCompleteColumn(), TextColumn("turns"),
        TimeElapsedColumn(), TimeRemainingColumn(), console=console,
    ) as bar:  # fmt: skip
        task = bar.add_task("import", total=len(turns))
        sent = asyncio.run(
            send_history(broker, turns, batch, lambda done: bar.update(task, completed=done))
        )
    console.print(f"[green]imported {sent} turns[/] into {len(groups)} group(s)")
