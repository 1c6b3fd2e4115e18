"""The ``tribal`` command line."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from runtime.settings import TribalSettings

if TYPE_CHECKING:
    from runtime.embedded.supervisor import StackInfo

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
    from runtime.embedded.supervisor import read_stack_info

    info = read_stack_info(settings.data_dir)
    if info is None:
        console.print(
            "[red]No broker: set TRIBAL_KAFKA_BOOTSTRAP, pass --bootstrap, or run `tribal up`."
        )
        raise typer.Exit(2)
    return info.kafka_bootstrap


def banner(info: StackInfo, settings: TribalSettings) -> list[str]:
    """What a started stack serves, and on what: the broker and index it really uses."""
    broker = (
        f"Tansu, archived to {settings.archive_path}"
        if info.broker == "tansu"
        else "external Kafka"
    )
    index = (
        f"Weaviate at {settings.weaviate_url}"
        if info.index == "weaviate"
        else "pgvector in PostgreSQL"
    )
    return [
        f"  API       {info.api_url}",
        f"  health    {info.api_url}/healthz",
        f"  metrics   {info.api_url}/metrics",
        f"  Kafka API {info.kafka_bootstrap} ({broker})",
        f"  Postgres  {info.postgres_dsn}",
        f"  search    {index}",
    ]


@app.command()
def up(
    data_dir: DataDir = None,
    api_port: Annotated[int | None, typer.Option(help="API port (default 8765).")] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Sources to run (default ./tribal.yaml).")
    ] = None,
) -> None:
    """Start the embedded stack (Tansu, PostgreSQL, a Faust worker, the API) until Ctrl-C."""
    from runtime.embedded.supervisor import run_stack

    settings = _settings(data_dir, api_port=api_port)
    if config is None and Path("tribal.yaml").exists():
        config = Path("tribal.yaml")
    if config is not None and not config.exists():
        console.print(f"[red]{config} does not exist")
        raise typer.Exit(2)
    t0 = time.monotonic()

    def ready(info: StackInfo) -> None:
        console.print(f"[green]Tribal is up[/] ({info.mode}) in {time.monotonic() - t0:.1f}s")
        for line in banner(info, settings):
            console.print(line)
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
def worker(
    loglevel: Annotated[str | None, typer.Option()] = None,
    role: Annotated[
        str,
        typer.Option(
            help="Stages to run: all, chunk, embed, document or memory (each role its own "
            "consumer group, so stages scale on separate machines)."
        ),
    ] = "all",
) -> None:
    """Run one Faust worker against TRIBAL_KAFKA_BOOTSTRAP."""
    from runtime.observability.progress import ROLES
    from streams.app import run_worker

    if role != "all" and role not in ROLES:
        console.print(f"[red]no worker role {role!r}: one of all, {', '.join(ROLES)}")
        raise typer.Exit(2)
    run_worker(loglevel=loglevel or TribalSettings().log_level.lower(), role=role)


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
    from runtime.observability.tracing import configure_tracing

    configure_tracing("tribal-api")
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


def main() -> None:
    from runtime.observability.logs import configure_logging

    settings = TribalSettings()
    configure_logging(settings.log_level, settings.log_format)
    # Run the ``api.cli`` module's app even under ``python -m api.cli`` (where this
    # module is ``__main__``): that is the app the sibling modules registered on.
    import api.cli as cli

    cli.app()


# Commands in sibling modules register themselves on ``app`` when imported.
from api import cli_log, cli_memory, cli_search  # noqa: E402, F401

if __name__ == "__main__":
    main()
