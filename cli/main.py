"""The ``tribal`` command line: every command, registered here by name."""

from __future__ import annotations

import typer

from cli import log, memory, ops, search, source, stack

COMMANDS = (
    stack.up,
    stack.demo,
    stack.worker,
    stack.project,
    stack.api,
    stack.mcp,
    log.export_docs,
    ops.status,
    log.rebuild,
    log.topics,
    log.archive,
    log.restore,
    search.search,
)
"""Commands named after their functions (``export_docs`` is ``export-docs``)."""

PASSED_ON = (stack.services,)
"""Commands that hand their arguments, ``--help`` included, to another parser."""

GROUPS = {
    "source": source.source_app,
    "deadletter": ops.deadletter_app,
    "memory": memory.memory_app,
}


def build_app() -> typer.Typer:
    """The ``tribal`` app with every command and command group."""
    app = typer.Typer(
        name="tribal",
        help="Tribal: one live, replayable memory of your schemas, code, help desk and chats.",
        no_args_is_help=True,
        add_completion=False,
    )
    for name, group in GROUPS.items():
        app.add_typer(group, name=name)
    for command in COMMANDS:
        app.command()(command)
    for passed_on in PASSED_ON:
        app.command(
            context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
            add_help_option=False,
        )(passed_on)
    return app


app = build_app()


def main() -> None:
    from runtime.observability.logs import configure_logging
    from runtime.settings import TribalSettings

    settings = TribalSettings()
    configure_logging(settings.log_level, settings.log_format)
    app()
