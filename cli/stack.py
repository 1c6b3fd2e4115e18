"""Commands that start Tribal's processes: the stack, the demo, a worker, the projections,
the API and MCP over stdio."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import DataDir, console, resolve_bootstrap, settings_from, with_running_stack
from runtime.settings import TribalSettings

if TYPE_CHECKING:
    from runtime.embedded.supervisor import StackInfo


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


def up(
    data_dir: DataDir = None,
    api_port: Annotated[int | None, typer.Option(help="API port (default 8765).")] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Sources to run (default ./tribal.yaml).")
    ] = None,
) -> None:
    """Start the embedded stack (Tansu, PostgreSQL, a Faust worker, the API) until Ctrl-C."""
    from runtime.embedded.supervisor import run_stack

    settings = settings_from(data_dir, api_port=api_port)
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


def demo(
    data_dir: DataDir = None,
    headless: Annotated[
        bool, typer.Option("--headless", help="Stop after printing the answers.")
    ] = False,
    api_port: Annotated[int | None, typer.Option(help="API port (default 8765).")] = None,
) -> None:
    """Start Tribal with demo data (schema, this repo's code, help desk, a conversation)."""
    from demo.run import run_demo

    settings = settings_from(data_dir, api_port=api_port)
    run = asyncio.run(run_demo(settings, console, headless))
    if headless:
        print(
            json.dumps(
                {
                    "first_answer_s": run.first_answer_s,
                    "not_ready": run.not_ready,
                    "answers": run.answers,
                },
                default=str,
            )
        )


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


def project(
    only: Annotated[list[str] | None, typer.Option("--only", help="Run these projections.")] = None,
) -> None:
    """Run the projections (read stores folded from the topics) until stopped."""
    from projections.service import run_projections

    settings = TribalSettings()
    if not settings.kafka_bootstrap:
        settings = settings.model_copy(update={"kafka_bootstrap": resolve_bootstrap(settings)})
    try:
        asyncio.run(run_projections(settings, only))
    except (RuntimeError, KeyError) as exc:
        console.print(f"[red]{exc}")
        raise typer.Exit(2) from exc


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


def mcp(
    tenant: Annotated[
        str, typer.Option(help="Tenant whose data the tools read (default: all, as the owner).")
    ] = "*",
) -> None:
    """Serve the MCP tools over stdio (Claude Desktop and other MCP clients)."""
    from api.mcp_server import serve_stdio

    asyncio.run(serve_stdio(with_running_stack(TribalSettings()), tenant))


def services(ctx: typer.Context) -> None:
    """Background Kafka, Weaviate and PostgreSQL for development and tests: up, down, env
    or status, of all three or of those named (kafka, weaviate, postgres)."""
    from devstack.services import main

    raise typer.Exit(main(ctx.args, prog="tribal services"))
