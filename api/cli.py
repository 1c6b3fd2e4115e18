"""The ``tribal`` command line."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from streams.settings import TribalSettings

app = typer.Typer(
    name="tribal",
    help="Tribal: one live, replayable memory of your schemas, code, help desk and chats.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console(stderr=True)


def _add_sources() -> None:
    from api.cli_ops import deadletter_app
    from api.cli_sources import source_app

    app.add_typer(source_app, name="source")
    app.add_typer(deadletter_app, name="deadletter")


_add_sources()

DataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="Where embedded state lives (default ./.tribal).")
]


def _settings(data_dir: Path | None = None, **updates: object) -> TribalSettings:
    settings = TribalSettings()
    if data_dir is not None:
        updates["data_dir"] = data_dir
    clean = {k: v for k, v in updates.items() if v is not None}
    return settings.model_copy(update=clean) if clean else settings


def _bootstrap(settings: TribalSettings, bootstrap: str | None) -> str:
    if bootstrap:
        return bootstrap
    if settings.kafka_bootstrap:
        return settings.kafka_bootstrap
    from streams.embedded.supervisor import read_stack_info

    info = read_stack_info(settings.data_dir)
    if info is None:
        console.print(
            "[red]No broker: set TRIBAL_KAFKA_BOOTSTRAP, pass --bootstrap, or run `tribal up`."
        )
        raise typer.Exit(2)
    return info.kafka_bootstrap


@app.command()
def up(
    data_dir: DataDir = None,
    api_port: Annotated[int | None, typer.Option(help="API port (default 8765).")] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Sources to run (default ./tribal.yaml).")
    ] = None,
) -> None:
    """Start the embedded stack (Tansu, PostgreSQL, a Faust worker, the API) until Ctrl-C."""
    from streams.embedded.supervisor import StackInfo, run_stack

    settings = _settings(data_dir, api_port=api_port)
    if config is None and Path("tribal.yaml").exists():
        config = Path("tribal.yaml")
    if config is not None and not config.exists():
        console.print(f"[red]{config} does not exist")
        raise typer.Exit(2)
    t0 = time.monotonic()

    def ready(info: StackInfo) -> None:
        console.print(f"[green]Tribal is up[/] in {time.monotonic() - t0:.1f}s")
        console.print(f"  API       {info.api_url}")
        console.print(f"  health    {info.api_url}/healthz")
        console.print(f"  metrics   {info.api_url}/metrics")
        console.print(
            f"  Kafka API {info.kafka_bootstrap} (Tansu, archived to {settings.archive_path})"
        )
        console.print(f"  Postgres  {info.postgres_dsn}")
        console.print("Press Ctrl-C to stop.")

    asyncio.run(run_stack(settings, lambda m: console.print(f"[dim]{m}[/]"), ready, config))


@app.command()
def demo(
    data_dir: DataDir = None,
    headless: Annotated[
        bool, typer.Option("--headless", help="Stop after printing the answers.")
    ] = False,
    api_port: Annotated[int | None, typer.Option(help="API port (default 8765).")] = None,
) -> None:
    """Start Tribal with demo data (schema, this repo's code, help desk, a conversation)."""
    from api.demo import run_demo

    settings = _settings(data_dir, api_port=api_port)
    run = asyncio.run(run_demo(settings, console, headless))
    if headless:
        print(
            json.dumps({"first_answer_s": run.first_answer_s, "answers": run.answers}, default=str)
        )


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What you are looking for, in your words.")],
    kind: Annotated[str, typer.Option(help="tables, code, kb or memory.")] = "tables",
    group_id: Annotated[str | None, typer.Option(help="For --kind memory.")] = None,
    limit: int = 5,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Search Tribal from the shell: rich tables for people, JSON for scripts."""
    import os as _os

    import httpx
    from rich.table import Table

    from streams.embedded.supervisor import read_stack_info

    api_url = _os.environ.get("TRIBAL_API_URL")
    if not api_url:
        info = read_stack_info(TribalSettings().data_dir)
        if info is None:
            console.print("[red]No API: start `tribal up` or set TRIBAL_API_URL.")
            raise typer.Exit(2)
        api_url = info.api_url
    requests: dict[str, tuple[str, str, dict[str, Any]]] = {
        "tables": ("GET", "/v1/tables/search", {"query": query, "limit": limit}),
        "code": ("GET", "/v1/code/search", {"query": query, "limit": limit}),
        "kb": ("POST", "/v1/retrieve", {"intent": "general", "message": query, "metadata": {}}),
        "memory": (
            "GET",
            "/v1/memory/search",
            {"query": query, "group_id": group_id or "", "limit": limit},
        ),
    }
    if kind not in requests:
        console.print(f"[red]--kind must be one of {', '.join(requests)}")
        raise typer.Exit(2)
    method, path, params = requests[kind]
    with httpx.Client(base_url=api_url, timeout=30) as client:
        r = client.get(path, params=params) if method == "GET" else client.post(path, json=params)
    body = r.json()
    if as_json or r.status_code >= 400:
        print(json.dumps(body, indent=None if as_json else 2))
        raise typer.Exit(0 if r.status_code < 400 else 1)
    rows = {
        "tables": [
            (t["name"], t.get("description", ""), t["relevance_score"])
            for t in body.get("tables", [])
        ],
        "code": [
            (
                f"{h.get('path')}:{h.get('start_line')}",
                h.get("fully_qualified_name") or "",
                h["relevance_score"],
            )
            for h in body.get("results", [])
        ],
        "kb": [
            (s["title"], s.get("excerpt", ""), s["relevance_score"])
            for s in body.get("sources_consulted", [])
        ],
        "memory": [
            (
                f"{f.get('source_name')} {f['relation_type']} {f.get('target_name')}",
                f["valid_from"],
                1.0,
            )
            for f in body.get("facts", [])
        ],
    }[kind]
    table = Table(title=f"{kind}: {query}")
    for col in ("what", "detail", "score"):
        table.add_column(col)
    for what, detail, score in rows:
        table.add_row(str(what), str(detail)[:80], f"{float(score):.2f}")
    console.print(table)


@app.command()
def worker(loglevel: Annotated[str | None, typer.Option()] = None) -> None:
    """Run one Faust worker against TRIBAL_KAFKA_BOOTSTRAP."""
    from streams.app import run_worker

    run_worker(loglevel=loglevel or TribalSettings().log_level.lower())


@app.command()
def project(
    only: Annotated[list[str] | None, typer.Option("--only", help="Run these projections.")] = None,
) -> None:
    """Run the projections (read stores folded from the topics) until stopped."""
    from projections.service import run_projections

    settings = TribalSettings()
    if not settings.kafka_bootstrap:
        settings = settings.model_copy(update={"kafka_bootstrap": _bootstrap(settings, None)})
    try:
        asyncio.run(run_projections(settings, only))
    except (RuntimeError, KeyError) as exc:
        console.print(f"[red]{exc}")
        raise typer.Exit(2) from exc


@app.command()
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

    settings = TribalSettings()
    if not settings.kafka_bootstrap:
        settings = settings.model_copy(update={"kafka_bootstrap": _bootstrap(settings, None)})
    if not settings.postgres_dsn:
        from streams.embedded.supervisor import read_stack_info

        info = read_stack_info(settings.data_dir)
        if info is not None:
            settings = settings.model_copy(update={"postgres_dsn": info.postgres_dsn})
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


@app.command()
def api(
    host: str = "127.0.0.1",
    port: int = 8765,
    insecure: Annotated[
        bool, typer.Option(help="Allow a non-loopback host without TRIBAL_API_KEYS.")
    ] = False,
) -> None:
    """Serve the HTTP API and MCP (streamable HTTP at /mcp)."""
    import logging

    import uvicorn

    from api.app import create_app
    from api.auth import InsecureBindError, check_bind

    settings = TribalSettings().model_copy(update={"api_host": host, "api_port": port})
    try:
        line = check_bind(host, settings.api_keys, insecure)
    except InsecureBindError as exc:
        console.print(f"[red]{exc}")
        raise typer.Exit(2) from exc
    logging.getLogger("api").warning("%s", line)  # the start-up line, in the logs too
    console.print(line)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")


@app.command()
def mcp(
    tenant: Annotated[
        str, typer.Option(help="Tenant whose data the tools read (default: all, as the owner).")
    ] = "*",
) -> None:
    """Serve the MCP tools over stdio (Claude Desktop and other MCP clients)."""
    from api.mcp_server import serve_stdio

    asyncio.run(serve_stdio(TribalSettings(), tenant))


@app.command()
def topics(bootstrap: Annotated[str | None, typer.Option()] = None) -> None:
    """Create every Tribal topic that is missing (idempotent)."""
    from streams.topics import ensure_topics

    settings = _settings()
    settings = settings.model_copy(update={"kafka_bootstrap": _bootstrap(settings, bootstrap)})
    created = asyncio.run(ensure_topics(settings))
    console.print(f"created: {', '.join(created) or 'nothing (all exist)'}")


@app.command()
def archive(
    directory: Annotated[Path, typer.Argument(help="Archive directory.")],
    bootstrap: Annotated[str | None, typer.Option()] = None,
    follow: Annotated[bool, typer.Option(help="Keep archiving until Ctrl-C.")] = False,
) -> None:
    """Copy every Tribal topic and the committed offsets into an Avro archive."""
    from streams.archive import ArchiveWriter

    settings = _settings()
    broker = _bootstrap(settings, bootstrap)

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


@app.command()
def restore(
    directory: Annotated[Path, typer.Argument(help="Archive directory.")],
    bootstrap: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Replay an archive into a broker: same records, same order, same group offsets."""
    from streams.archive import restore_archive

    settings = _settings()
    broker = _bootstrap(settings, bootstrap)
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


@app.command("export-docs")
def export_docs(
    directory: Annotated[Path, typer.Argument(help="Output directory (e.g. ./docs).")],
    bootstrap: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Write {database}/{domain}/{table}.md, overviews and documentation-manifest.json."""
    from streams.documenter.export import export_from_topic

    settings = _settings()
    settings = settings.model_copy(update={"kafka_bootstrap": _bootstrap(settings, bootstrap)})
    manifest = asyncio.run(export_from_topic(settings, directory))
    tables = sum(d["tables_documented"] for d in manifest["databases"])
    console.print(
        f"wrote {manifest['total_files']} files ({tables} tables) and "
        f"{directory / 'documentation-manifest.json'}"
    )


@app.command()
def status(
    data_dir: DataDir = None, as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """Topics, projection lag, dead letters (count and latest reasons), index sizes."""
    from rich.table import Table

    from api.cli_ops import gather_status, resolved_settings

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
    for name, lag in snapshot.get("projections", {}).items():
        console.print(f"projection [bold]{name}[/]: {lag['lag_messages']} behind")
    dead = snapshot.get("deadletters")
    if dead is not None:
        console.print(f"dead letters: {dead['total']} {dead['by_code']}")
        for d in dead["latest"]:
            console.print(f"  {d['error_code']}: {d['error_message'][:100]}")
    for kind, n in snapshot.get("index", {}).items():
        console.print(f"index {kind}: {n}")


def main() -> None:
    from streams.observability.logs import configure_logging

    settings = TribalSettings()
    configure_logging(settings.log_level, settings.log_format)
    app()


if __name__ == "__main__":
    main()
