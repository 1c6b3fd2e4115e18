"""``tribal status`` and ``tribal deadletter …``: what the pipeline is doing."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from cli.common import DataDir, console, with_running_stack
from runtime.settings import TribalSettings

deadletter_app = typer.Typer(help="Inspect dead letters and re-drive them after a fix.")
stdout = Console()
"""The deadletter commands print to stdout, so a listing can be piped; ``status`` prints
to stderr as the other commands do."""


def resolved_settings() -> TribalSettings:
    """Settings, with the running embedded stack's endpoints filled in."""
    settings = with_running_stack(TribalSettings())
    if not settings.kafka_bootstrap:
        stdout.print("[red]No broker: set TRIBAL_KAFKA_BOOTSTRAP or start `tribal up`.")
        raise typer.Exit(2)
    return settings


def _serde(settings: TribalSettings) -> Any:
    from events.registry import registry_from_settings
    from events.serde import EventSerde

    return EventSerde(registry_from_settings(settings))


@deadletter_app.command("list")
def list_letters(
    code: Annotated[str | None, typer.Option(help="Only this error code.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Every dead letter with its reason."""
    from streams.deadletter_ops import read_dead_letters

    settings = resolved_settings()
    letters = asyncio.run(read_dead_letters(settings, _serde(settings)))
    letters = [d for d in letters if code is None or d.event.error_code == code]
    if as_json:
        print(json.dumps([_row(d) for d in letters], default=str))
        return
    table = Table(title=f"{len(letters)} dead letter(s)")
    for col in ("id", "origin", "code", "reason", "when"):
        table.add_column(col)
    for d in letters:
        e = d.event
        table.add_row(
            f"{d.partition}@{d.offset}",
            f"{e.origin_topic}[{e.origin_partition}]@{e.origin_offset}",
            e.error_code,
            e.error_message[:80],
            e.occurred_at.isoformat(timespec="seconds"),
        )
    stdout.print(table)


@deadletter_app.command("show")
def show(letter: Annotated[str, typer.Argument(help="partition@offset, from `list`.")]) -> None:
    """One dead letter in full, with a preview of the original bytes."""
    from streams.deadletter_ops import read_dead_letters

    settings = resolved_settings()
    letters = {
        f"{d.partition}@{d.offset}": d
        for d in asyncio.run(read_dead_letters(settings, _serde(settings)))
    }
    found = letters.get(letter)
    if found is None:
        stdout.print(f"[red]no dead letter {letter}")
        raise typer.Exit(1)
    row = _row(found)
    row["payload_preview"] = found.event.payload[:256].hex(" ")
    stdout.print_json(json.dumps(row, default=str))


@deadletter_app.command("replay")
def replay_cmd(
    letter: Annotated[list[str] | None, typer.Argument(help="partition@offset ids.")] = None,
    code: Annotated[str | None, typer.Option(help="Every dead letter with this code.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
) -> None:
    """Produce the original records again to their origin topics (after a fix)."""
    from streams.deadletter_ops import read_dead_letters, replay

    if not letter and code is None:
        stdout.print("[red]name dead letters, or --code CODE")
        raise typer.Exit(2)
    settings = resolved_settings()
    letters = asyncio.run(read_dead_letters(settings, _serde(settings)))
    chosen = [
        d
        for d in letters
        if (letter and f"{d.partition}@{d.offset}" in letter)
        or (code and d.event.error_code == code)
    ]
    if not chosen:
        stdout.print("nothing to replay")
        raise typer.Exit(1)
    if not yes and not typer.confirm(f"replay {len(chosen)} record(s)?"):
        raise typer.Exit(1)
    n = asyncio.run(replay(settings, chosen))
    stdout.print(f"replayed {n} record(s) to their origin topics")


def _row(d: Any) -> dict[str, Any]:
    e = d.event
    return {
        "id": f"{d.partition}@{d.offset}",
        "origin_topic": e.origin_topic,
        "origin_partition": e.origin_partition,
        "origin_offset": e.origin_offset,
        "origin_key": e.origin_key,
        "error_code": e.error_code,
        "error_message": e.error_message,
        "payload_bytes": len(e.payload),
        "occurred_at": e.occurred_at,
    }


async def gather_status(settings: TribalSettings) -> dict[str, Any]:
    """Topics, projection lag, dead letters, index sizes: one snapshot."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    from projections.health import HealthBoard, stuck_stages
    from projections.lag import projection_lags
    from projections.registry import projections_for
    from runtime.observability.progress import log_ends
    from runtime.topics import TOPICS, topic

    out: dict[str, Any] = {"kafka": settings.kafka_bootstrap}
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap)
    await consumer.start()
    try:
        topics = []
        for spec in TOPICS:
            name = spec.full_name(settings)
            tps = [TopicPartition(name, p) for p in range(spec.partition_count(settings))]
            try:
                ends = await log_ends(consumer, tps)
                records: int | None = sum(ends.values())
            except Exception:
                records = None
            topics.append({"topic": name, "partitions": len(tps), "records": records})
        out["topics"] = topics
    finally:
        await consumer.stop()
    from runtime.observability.progress import AGENT_SOURCES, group_progress

    try:
        progress = await group_progress(settings, list(AGENT_SOURCES))
        out["agents"] = {
            short: {
                "lag_messages": sum(
                    p.behind for (t, _), p in progress.items() if t == topic(short, settings)
                )
            }
            for short in AGENT_SOURCES
        }
    except Exception as exc:  # status still shows what it can
        out["agents_error"] = str(exc)
    if settings.postgres_dsn:
        projections = projections_for(settings)
        try:
            for p in projections:
                await p.setup()
            lags = await projection_lags(settings, projections)
            out["projections"] = {lag.name: {"lag_messages": lag.messages} for lag in lags}
            board = HealthBoard(settings.postgres_dsn)
            try:
                out["stuck"] = stuck_stages(await board.read(), settings.stuck_after_s)
            finally:
                await board.close()
            for p in projections:
                if p.name == "deadletters":
                    out["deadletters"] = await p.summary(last=5)  # type: ignore[attr-defined]
                if p.name == "index":
                    from projections.index import Kind

                    index = p.index  # type: ignore[attr-defined]
                    out["index"] = {
                        k.value: await index.count(k, tenant=None)
                        for k in Kind
                        if k.value not in ("Episode", "Summary")
                    }
        finally:
            for p in projections:
                await p.close()
    return out


def status(
    data_dir: DataDir = None, as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """Topics, projection lag, dead letters (count and latest reasons), index sizes."""
    if data_dir is not None:
        import os as _os

        _os.environ["TRIBAL_DATA_DIR"] = str(data_dir)
    snapshot = asyncio.run(gather_status(resolved_settings()))
    if as_json:
        print(json.dumps(snapshot, default=str))
        return
    topics = Table(title=f"Topics on {snapshot['kafka']}")
    for col in ("topic", "partitions", "records"):
        topics.add_column(col)
    for t in snapshot["topics"]:
        topics.add_row(t["topic"], str(t["partitions"]), str(t["records"]))
    console.print(topics)
    for short, lag in snapshot.get("agents", {}).items():
        if lag["lag_messages"]:
            console.print(f"agents on [bold]{short}[/]: {lag['lag_messages']} behind")
    stuck = {s["stage"]: s for s in snapshot.get("stuck", [])}
    for name, lag in snapshot.get("projections", {}).items():
        console.print(f"projection [bold]{name}[/]: {lag['lag_messages']} behind")
    for name, s in stuck.items():
        console.print(
            f"[bold red]STUCK[/] {name}: {s.get('topic')}[{s.get('partition')}] at offset "
            f"{s.get('offset')}, no progress for {s.get('stalled_s', 0)} s; last error: "
            f"{s.get('last_error') or 'none (still running)'}"
        )
    dead = snapshot.get("deadletters")
    if dead is not None:
        console.print(f"dead letters: {dead['total']} {dead['by_code']}")
        for d in dead["latest"]:
            console.print(f"  {d['error_code']}: {d['error_message'][:100]}")
    for kind, n in snapshot.get("index", {}).items():
        console.print(f"index {kind}: {n}")
