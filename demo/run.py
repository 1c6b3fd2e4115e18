"""``tribal demo`` / ``make demo``: the embedded stack fed with real-looking data.

A demo PostgreSQL schema (watched by the PostgreSQL source, with a live ``ALTER
TABLE``), this repository's own code (files source), ~20 help-desk articles (a local
Contract 1 host and the KB source) and a scripted support conversation (``POST
/v1/memory/turns``); then example questions through HTTP, MCP and ``tribal search``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from demo import DATA
from runtime.embedded.process import ChildProcess, free_port, port_open, wait_until
from runtime.embedded.supervisor import EmbeddedStack, StackInfo
from runtime.settings import TribalSettings

REPO = Path(__file__).resolve().parent.parent
DEMO_DATABASE = "demo"
READY_WITHIN_S = 240.0
"""How long the demo waits for every source to be answerable before it asks anyway."""
HELP_DESK_FIRST_S = 90.0
"""How long the code source waits for the help desk to be answerable."""


@dataclass
class DemoRun:
    """What the demo started and what it saw."""

    info: StackInfo | None = None
    demo_dsn: str = ""
    kb_url: str = ""
    first_answer_s: float | None = None
    answers: dict[str, Any] = field(default_factory=dict)
    not_ready: dict[str, str] = field(default_factory=dict)
    """The goals not reached before the questions were asked: ``reached/target``."""


async def load_demo_schema(postgres_dsn: str) -> str:
    """Create the ``demo`` database from ``demo/data/schema.sql``; returns its DSN."""
    import asyncpg

    from runtime.databases import create_database

    dsn = await create_database(postgres_dsn, DEMO_DATABASE, if_missing=True)
    conn = await asyncpg.connect(dsn)
    try:
        loaded = await conn.fetchval("SELECT to_regclass('public.customers') IS NOT NULL")
        if not loaded:
            await conn.execute((DATA / "schema.sql").read_text())
    finally:
        await conn.close()
    return dsn


def write_sources_config(path: Path, kb_url: str) -> None:
    """The demo's tribal.yaml: secrets and endpoints come from the environment."""
    path.write_text(
        "sources:\n"
        "  - kind: postgres\n"
        f"    name: {DEMO_DATABASE}\n"
        "    dsn: ${TRIBAL_DEMO_DSN}\n"
        "    install_trigger: true\n"
        "    interval: 10\n"
        "  - kind: kb\n"
        "    name: helpdesk\n"
        f"    url: {kb_url}\n"
        "    interval: 5\n"
        "    full_sync_every: 60\n"
    )


def write_code_config(path: Path) -> None:
    """This repository's code, a source of its own started after the others."""
    path.write_text(
        f"sources:\n  - kind: files\n    name: tribal\n    path: {REPO}\n    repo: tribal\n"
    )


async def send_conversation(api_url: str) -> int:
    """The scripted support conversation, turn by turn, through the HTTP API."""
    script = json.loads((DATA / "conversation.json").read_text())
    async with httpx.AsyncClient(base_url=api_url, timeout=10) as client:
        for turn in script["turns"]:
            r = await client.post("/v1/memory/turns", json={"group_id": script["group_id"], **turn})
            r.raise_for_status()
    return len(script["turns"])


Check = Callable[[], Awaitable[int]]


async def wait_with_progress(
    console: Console, goals: dict[str, tuple[Check, int]], timeout: float
) -> dict[str, int]:
    """A progress bar per goal until each count reaches its target (or time runs out)."""
    reached: dict[str, int] = {}
    with Progress(
        TextColumn("{task.description:<28}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        tasks = {name: bar.add_task(name, total=target) for name, (_, target) in goals.items()}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = True
            for name, (check, target) in goals.items():
                try:
                    value = await check()
                except Exception:
                    value = 0
                reached[name] = value
                bar.update(tasks[name], completed=min(value, target))
                done = done and value >= target
            if done:
                break
            await asyncio.sleep(0.5)
    return reached


async def start_demo(settings: TribalSettings, console: Console) -> tuple[EmbeddedStack, DemoRun]:
    """Start the stack and every demo source; return once data is flowing."""
    run = DemoRun()
    stack = EmbeddedStack(settings, lambda m: console.print(f"[dim]{m}[/]"))
    run.info = await stack.start()
    run.demo_dsn = await load_demo_schema(run.info.postgres_dsn)
    console.print(f"[dim]demo schema loaded into {DEMO_DATABASE} (24 tables)[/]")
    kb_port = free_port()
    run.kb_url = f"http://127.0.0.1:{kb_port}"
    env = stack._child_env(run.info.kafka_bootstrap, run.info.postgres_dsn)
    env["TRIBAL_DEMO_DSN"] = run.demo_dsn
    kb_host = ChildProcess(
        "kb-host",
        [
            sys.executable,
            "-m",
            "demo.kb_host",
            "--articles",
            str(DATA / "helpdesk.json"),
            "--port",
            str(kb_port),
        ],
        env=env,
        log_path=stack.logs / "kb-host.log",
    )
    kb_host.start()
    stack.children.append(kb_host)
    await asyncio.to_thread(
        wait_until, lambda: port_open("127.0.0.1", kb_port), 20, "the help-desk host"
    )
    config = settings.data_dir.absolute() / "demo-sources.yaml"
    write_sources_config(config, run.kb_url)
    code = settings.data_dir.absolute() / "demo-code.yaml"
    write_code_config(code)
    api = run.info.api_url
    turns = await send_conversation(api)
    console.print(f"[dim]sent a {turns}-turn support conversation through POST /v1/memory/turns[/]")
    stack.children.append(_sources("sources", config, env, stack.logs))
    # Thousands of code chunks start a bulk load that records behind them in the same
    # partitions queue after (README, "Live before bulk"): the help desk's few articles
    # go first, then this repository's code indexes in the background.
    for _ in range(int(HELP_DESK_FIRST_S / 0.5)):
        if await _answers(_kb_ready(api)):
            break
        await asyncio.sleep(0.5)
    stack.children.append(_sources("code", code, env, stack.logs))
    console.print("[dim]indexing this repository's code (in the background)[/]")
    return stack, run


def _sources(name: str, config: Path, env: dict[str, str], logs: Path) -> ChildProcess:
    """``tribal source run`` of ``config``, started."""
    child = ChildProcess(
        name,
        [sys.executable, "-m", "cli", "source", "run", "--config", str(config)],
        env=env,
        log_path=logs / f"{name}.log",
    )
    child.start()
    return child


async def _answers(check: Awaitable[int]) -> bool:
    """Whether ``check`` counts anything yet (an API still starting counts nothing)."""
    try:
        return await check > 0
    except Exception:
        return False


async def run_demo(settings: TribalSettings, console: Console, headless: bool) -> DemoRun:
    """The whole demo; ``headless`` stops after the answers instead of staying up."""
    from demo.questions import ask_cli, ask_http, ask_mcp

    t0 = time.monotonic()
    stack, run = await start_demo(settings, console)
    try:
        assert run.info is not None
        api = run.info.api_url
        goals = _goals(api)
        reached = await wait_with_progress(console, goals, timeout=READY_WITHIN_S)
        run.not_ready = {
            name: f"{reached.get(name, 0)}/{target}"
            for name, (_, target) in goals.items()
            if reached.get(name, 0) < target
        }
        if run.not_ready:
            late = ", ".join(f"{name} ({n})" for name, n in run.not_ready.items())
            console.print(
                f"[yellow]not ready after {READY_WITHIN_S:.0f} s: {late}; asking anyway "
                "(see `tribal status` and the logs under the data directory)[/]"
            )
        await _alter_live(run, api, console)
        run.answers = await ask_http(api, console)
        run.first_answer_s = time.monotonic() - t0
        run.answers["mcp_tools"] = await ask_mcp(api, console)
        env = stack._child_env(run.info.kafka_bootstrap, run.info.postgres_dsn)
        env["TRIBAL_API_URL"] = api
        run.answers["cli"] = await asyncio.to_thread(ask_cli, console, env)
        console.print(
            f"\n[green]First answer {run.first_answer_s:.0f}s after start.[/] Tribal is running:"
        )
        console.print(f"  API      {api}   (OpenAPI at {api}/openapi.json)")
        console.print(f"  MCP      {api}/mcp   (or `tribal mcp` over stdio)")
        console.print(f"  metrics  {api}/metrics")
        console.print('  try      tribal search "payment refunds" --kind tables')
        if not headless:
            console.print("Press Ctrl-C to stop.")
            await _until_interrupted()
    finally:
        console.print("[dim]stopping…[/]")
        await stack.stop()
    return run


def _goals(api: str) -> dict[str, tuple[Check, int]]:
    async def count(path: str, params: dict[str, Any], key: str) -> int:
        async with httpx.AsyncClient(base_url=api, timeout=10) as client:
            body = (await client.get(path, params=params)).json()
        return len(body.get(key) or [])

    async def lag_zero() -> int:
        """1 once every projection has read all there is (the agents may still embed this
        repository's code on the bulk lane: that goes on in the background)."""
        async with httpx.AsyncClient(base_url=api, timeout=10) as client:
            projections = (await client.get("/healthz")).json().get("projections", {})
        return int(bool(projections) and all(p["lag_messages"] == 0 for p in projections.values()))

    async def documented() -> int:
        async with httpx.AsyncClient(base_url=api, timeout=10) as client:
            body = (await client.get("/v1/domains", params={"database": DEMO_DATABASE})).json()
        return sum(int(d.get("table_count", 0)) for d in body.get("domains", []))

    async def remembered() -> int:
        async with httpx.AsyncClient(base_url=api, timeout=10) as client:
            body = (
                await client.get(
                    "/v1/memory/search",
                    params={"group_id": "acme:demo-support-1", "query": "Dana Edinburgh"},
                )
            ).json()
        facts = body.get("facts") or []
        # the conversation ends with a move: wait until the new address replaced the old
        moved = any("Castle" in (f.get("target_name") or "") for f in facts)
        return len(facts) if moved else min(len(facts), 1)

    return {
        "demo tables documented": (documented, 24),
        "conversation facts": (remembered, 2),
        "help-desk articles indexed": (lambda: _kb_ready(api), 1),
        "code indexed": (
            lambda: count("/v1/code/search", {"query": "def", "limit": 5}, "results"),
            5,
        ),
        "projections caught up": (lag_zero, 1),
    }


async def _kb_ready(api: str) -> int:
    async with httpx.AsyncClient(base_url=api, timeout=10) as client:
        body = (
            await client.post(
                "/v1/retrieve",
                json={"intent": "troubleshooting", "message": "Apollo not hashing", "metadata": {}},
            )
        ).json()
    return len(body.get("sources_consulted") or [])


async def _alter_live(run: DemoRun, api: str, console: Console) -> None:
    """An ALTER TABLE on the watched database, then the new column shows up in search."""
    import asyncpg

    conn = await asyncpg.connect(run.demo_dsn)
    try:
        await conn.execute(
            "ALTER TABLE customers ADD COLUMN IF NOT EXISTS loyalty_tier text; "
            "COMMENT ON COLUMN customers.loyalty_tier IS "
            "'Customer loyalty program tier: bronze, silver or gold'"
        )
    finally:
        await conn.close()
    console.print("[bold]ALTER TABLE customers ADD COLUMN loyalty_tier[/] (live)…")
    t0 = time.monotonic()
    seen_schema = False
    async with httpx.AsyncClient(base_url=api, timeout=10) as client:
        while time.monotonic() < t0 + 60:
            if not seen_schema:
                body = (await client.get("/v1/tables/demo.public.customers")).json()
                columns = [c["name"] for c in (body.get("schema") or {}).get("columns", [])]
                if "loyalty_tier" in columns:
                    seen_schema = True
                    took = time.monotonic() - t0
                    console.print(f"  … get_table_schema shows loyalty_tier after {took:.1f}s")
            else:
                found = (
                    await client.get(
                        "/v1/tables/search", params={"query": "loyalty tier", "limit": 1}
                    )
                ).json()
                top = [t["name"] for t in found.get("tables", [])]
                if top == ["demo.public.customers"]:
                    console.print(
                        f"  … and search for 'loyalty tier' finds customers after "
                        f"{time.monotonic() - t0:.1f}s"
                    )
                    return
            await asyncio.sleep(0.3)
    console.print("[yellow]  the new column did not show up in search within 60 s[/]")


async def _until_interrupted() -> None:
    import signal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
