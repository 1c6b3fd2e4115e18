"""Commands over the log itself: topics, archive/restore, projection rebuilds and the
documentation export."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from cli.common import console, resolve_bootstrap, settings_from, with_running_stack
from runtime.settings import TribalSettings


def rebuild(
    projection: Annotated[str, typer.Argument(help="deadletters, catalog, graph or index.")],
    start: Annotated[
        str, typer.Option("--from", help="'earliest' or an ISO timestamp (partial rebuild).")
    ] = "earliest",
) -> None:
    """Replay the topics into a shadow store and swap it in once caught up."""
    from datetime import datetime

    from rich.progress import TimeRemainingColumn

    from projections.rebuild import rebuild as run_rebuild

    settings = with_running_stack(TribalSettings())
    settings = settings.model_copy(update={"kafka_bootstrap": resolve_bootstrap(settings)})
    since: int | None = None
    if start != "earliest":
        try:
            since = int(datetime.fromisoformat(start).timestamp() * 1000)
        except ValueError as exc:
            console.print(f"[red]--from takes 'earliest' or an ISO timestamp, not {start!r}")
            raise typer.Exit(2) from exc
    with Progress(
        TextColumn(f"rebuilding {projection}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} records"),
        TimeRemainingColumn(),
        console=console,
    ) as bar:
        task = bar.add_task(projection, total=None)

        def on_progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            report = asyncio.run(run_rebuild(settings, projection, since, on_progress))
        except (KeyError, TypeError, RuntimeError) as exc:
            console.print(f"[red]{exc}")
            raise typer.Exit(2) from exc
    console.print(
        f"rebuilt {report.projection}: {report.applied} events in {report.seconds:.1f}s, swapped in"
    )


def topics(bootstrap: Annotated[str | None, typer.Option()] = None) -> None:
    """Create every Tribal topic that is missing (idempotent)."""
    from runtime.topics import ensure_topics

    settings = settings_from()
    settings = settings.model_copy(
        update={"kafka_bootstrap": resolve_bootstrap(settings, bootstrap)}
    )
    created = asyncio.run(ensure_topics(settings))
    console.print(f"created: {', '.join(created) or 'nothing (all exist)'}")


def archive(
    directory: Annotated[Path, typer.Argument(help="Archive directory.")],
    bootstrap: Annotated[str | None, typer.Option()] = None,
    follow: Annotated[bool, typer.Option(help="Keep archiving until Ctrl-C.")] = False,
) -> None:
    """Copy every Tribal topic and the committed offsets into an Avro archive."""
    from runtime.archive import ArchiveWriter

    settings = settings_from()
    broker = resolve_bootstrap(settings, bootstrap)

    async def run() -> int:
        writer = ArchiveWriter(broker, directory, lambda t: t.startswith(settings.topic_prefix))
        await writer.start()
        try:
            await writer.catch_up()
            if follow:
                stop = asyncio.Event()
                loop = asyncio.get_running_loop()
                import signal

                for sig in (signal.SIGINT, signal.SIGTERM):
                    loop.add_signal_handler(sig, stop.set)
                await writer.run(stop)
                await writer.catch_up()
            return writer.archived
        finally:
            await writer.stop()

    n = asyncio.run(run())
    console.print(f"archived {n} new records into {directory}")


def restore(
    directory: Annotated[Path, typer.Argument(help="Archive directory.")],
    bootstrap: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Replay an archive into a broker: same records, same order, same group offsets."""
    from runtime.archive import restore_archive

    settings = settings_from()
    broker = resolve_bootstrap(settings, bootstrap)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        console=console,
    ) as progress:
        tasks: dict[str, TaskID] = {}

        def on_progress(topic: str, done: int, total: int) -> None:
            if topic not in tasks:
                tasks[topic] = progress.add_task(topic, total=total)
            progress.update(tasks[topic], completed=done, total=total)

        report = asyncio.run(restore_archive(broker, directory, on_progress))
    console.print(
        f"restored {report.records} records into {report.topics} topics "
        f"({report.skipped_partitions} partitions already present); "
        f"offsets of {len(report.groups)} group(s)"
    )


def export_docs(
    directory: Annotated[Path, typer.Argument(help="Output directory (e.g. ./docs).")],
    bootstrap: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Write {database}/{domain}/{table}.md, overviews and documentation-manifest.json."""
    from streams.documenter.export import export_from_topic

    settings = settings_from()
    settings = settings.model_copy(
        update={"kafka_bootstrap": resolve_bootstrap(settings, bootstrap)}
    )
    manifest = asyncio.run(export_from_topic(settings, directory))
    tables = sum(d["tables_documented"] for d in manifest["databases"])
    console.print(
        f"wrote {manifest['total_files']} files ({tables} tables) and "
        f"{directory / 'documentation-manifest.json'}"
    )
