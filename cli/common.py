"""What every command module shares: the console, settings from flags, the broker."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from runtime.settings import TribalSettings

console = Console(stderr=True)

DataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="Where embedded state lives (default ./.tribal).")
]


def settings_from(data_dir: Path | None = None, **updates: object) -> TribalSettings:
    """Settings from the environment, with the flags that were given (None: not given)."""
    settings = TribalSettings()
    if data_dir is not None:
        updates["data_dir"] = data_dir
    clean = {k: v for k, v in updates.items() if v is not None}
    return settings.model_copy(update=clean) if clean else settings


def with_running_stack(settings: TribalSettings) -> TribalSettings:
    """``settings`` with the broker and database of a running ``tribal up`` where they
    name none."""
    if settings.kafka_bootstrap and settings.postgres_dsn:
        return settings
    from runtime.embedded.supervisor import read_stack_info

    info = read_stack_info(settings.data_dir)
    if info is None:
        return settings
    return settings.model_copy(
        update={
            "kafka_bootstrap": settings.kafka_bootstrap or info.kafka_bootstrap,
            "postgres_dsn": settings.postgres_dsn or info.postgres_dsn,
        }
    )


def resolve_bootstrap(settings: TribalSettings, given: str | None = None) -> str:
    """The broker: ``--bootstrap``, else TRIBAL_KAFKA_BOOTSTRAP, else the running stack's;
    none of them exits with a line saying how to get one."""
    if given:
        return given
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
