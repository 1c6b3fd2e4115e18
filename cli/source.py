"""``tribal source …``: run one source from flags, or every source in ``tribal.yaml``."""

from __future__ import annotations

import asyncio
import inspect
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import console, resolve_bootstrap
from runtime.settings import TribalSettings
from sources.config import ConfigError, SourceConfig, load_config, redact

source_app = typer.Typer(help="Turn outside systems into events on the source topics.")

Once = Annotated[bool, typer.Option("--once", help="One pass (scan/poll), then exit.")]
Name = Annotated[str | None, typer.Option(help="Name of this source (checkpoint key).")]


async def _run(configs: list[SourceConfig], once: bool) -> int:
    from events.registry import registry_from_settings
    from events.serde import EventSerde
    from sources.base import build_source, run_sources
    from sources.checkpoint import FileCheckpoint
    from sources.sink import KafkaSink

    settings = TribalSettings()
    bootstrap = resolve_bootstrap(settings)
    serde = EventSerde(registry_from_settings(settings))
    pairs = [
        (build_source(c), FileCheckpoint(settings.data_dir / "checkpoints", f"{c.kind}-{c.name}"))
        for c in configs
        if c.enabled
    ]
    for source, _ in pairs:
        console.print(f"[dim]source {source.name}[/]")
    async with KafkaSink(bootstrap, serde, settings.topic_prefix) as sink:
        if once:
            total = 0
            for source, checkpoint in pairs:
                total += await source.sync_once(sink, checkpoint)
            return total
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_sources(pairs, sink, stop)
    return 0


def _go(configs: list[SourceConfig], once: bool) -> None:
    for c in configs:
        console.print(f"[dim]{c.kind} {c.name}: {redact(c.options())}[/]")
    try:
        n = asyncio.run(_run(configs, once))
    except ConfigError as exc:
        console.print(f"[red]{exc}")
        raise typer.Exit(2) from exc
    if once:
        console.print(f"emitted {n} events")


def _source_command(declare: Callable[..., None]) -> Callable[..., None]:
    """``tribal source KIND``, from a function named KIND that only declares KIND's flags:
    the flags given become the source's options; ``--name`` and ``--once`` are added."""
    kind = declare.__name__

    def run(name: Name = None, once: Once = False, **flags: Any) -> None:
        given = {k: str(v) if isinstance(v, Path) else v for k, v in flags.items()}
        options = {k: v for k, v in given.items() if v is not None}
        _go([SourceConfig(kind=kind, name=name or kind, **options)], once)

    own = inspect.signature(declare, eval_str=True).parameters.values()
    common = list(inspect.signature(run, eval_str=True).parameters.values())[:2]
    run.__signature__ = inspect.Signature([*own, *common])  # type: ignore[attr-defined]
    run.__name__, run.__doc__ = kind, declare.__doc__
    source_app.command(kind)(run)
    return declare


@source_app.command("run")
def run_config(
    config: Annotated[Path, typer.Option("--config", "-c")] = Path("tribal.yaml"),
    only: Annotated[list[str] | None, typer.Option("--only", help="Run these names only.")] = None,
    once: Once = False,
) -> None:
    """Run every source listed in tribal.yaml (secrets from ${ENV})."""
    try:
        cfg = load_config(config)
    except ConfigError as exc:
        console.print(f"[red]{exc}")
        raise typer.Exit(2) from exc
    chosen = [s for s in cfg.sources if not only or s.name in only]
    if not chosen:
        console.print("[yellow]no sources to run")
        raise typer.Exit(1)
    _go(chosen, once)


@_source_command
def postgres(
    dsn: Annotated[str, typer.Option(help="postgresql://… (use ${ENV} for secrets in yaml)")],
    install_trigger: Annotated[
        bool, typer.Option("--install-trigger", help="Install the DDL event trigger.")
    ] = False,
    interval: Annotated[float, typer.Option(help="Polling interval, seconds.")] = 30.0,
    schemas: Annotated[list[str] | None, typer.Option("--schema")] = None,
    include_samples: Annotated[bool, typer.Option("--include-samples")] = False,
) -> None:
    """Watch a PostgreSQL database's schema (DDL trigger + LISTEN, or polling)."""


@_source_command
def snowflake(
    account: Annotated[str, typer.Option()],
    user: Annotated[str, typer.Option()],
    database: Annotated[str, typer.Option()],
    password: Annotated[str | None, typer.Option(envvar="SNOWFLAKE_PASSWORD")] = None,
    warehouse: Annotated[str | None, typer.Option()] = None,
    interval: Annotated[float, typer.Option(help="Polling interval, seconds.")] = 300.0,
) -> None:
    """Poll a Snowflake database's INFORMATION_SCHEMA on LAST_ALTERED."""


@_source_command
def files(
    path: Annotated[Path, typer.Argument(help="Repository or directory to watch.")],
    repo: Annotated[str | None, typer.Option(help="Repo name in keys (default: dir name).")] = None,
    max_bytes: Annotated[int | None, typer.Option(help="Larger files are skipped.")] = None,
) -> None:
    """Scan a directory, then watch it (respects .gitignore)."""


@_source_command
def kb(
    url: Annotated[str, typer.Option(help="Base URL of the host serving /api/kb/articles.")],
    interval: Annotated[float, typer.Option(help="Incremental sync interval, seconds.")] = 60.0,
    full_sync_every: Annotated[
        float, typer.Option(help="Seconds between full snapshots (deletion detection).")
    ] = 3600.0,
) -> None:
    """Sync a help-desk knowledge base (seed 002, Contract 1)."""
