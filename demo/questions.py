"""The demo's example questions, asked the way an agent or a person would."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

GROUP = "acme:demo-support-1"
QUESTIONS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("tables", "GET", "/v1/tables/search", {"query": "customer loyalty program", "limit": 3}),
    (
        "join path",
        "GET",
        "/v1/join-path",
        {"source_table": "demo.public.returns", "target_table": "demo.public.products"},
    ),
    (
        "code",
        "GET",
        "/v1/code/search",
        {"query": "dead letter with its reason", "language": "python", "limit": 3},
    ),
    (
        "help desk",
        "POST",
        "/v1/retrieve",
        {
            "intent": "troubleshooting",
            "message": "My Apollo II shows 0 H/s after restarting",
            "metadata": {"device": "Apollo II"},
        },
    ),
    ("memory", "GET", "/v1/memory/search", {"group_id": GROUP, "query": "Dana address"}),
]


async def ask_http(api_url: str, console: Console) -> dict[str, Any]:
    """Every example question over HTTP, printed readably; returns the raw answers."""
    answers: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as client:
        for name, method, path, params in QUESTIONS:
            if method == "GET":
                r = await client.get(path, params=params)
            else:
                r = await client.post(path, json=params)
            body = r.json()
            answers[name] = body
            console.print(_render(name, path, body))
        facts = answers.get("memory", {}).get("facts") or []
        if facts:  # the subject's history: what was replaced, and when
            entity = facts[0]["source_entity_id"]
            r = await client.get(f"/v1/memory/entities/{entity}", params={"group_id": GROUP})
            answers["memory history"] = r.json()
            console.print(_render("memory history", "/v1/memory/entities/{id}", r.json()))
    return answers


def _render(name: str, path: str, body: dict[str, Any]) -> Table:
    table = Table(title=f"{name}: {path}", title_justify="left", expand=False)
    if name == "tables":
        for col in ("table", "description", "score"):
            table.add_column(col)
        for t in body.get("tables", []):
            table.add_row(t["name"], t.get("description", "")[:70], f"{t['relevance_score']:.2f}")
    elif name == "join path":
        table.add_column("hop")
        table.add_column("join")
        for step in body.get("path") or []:
            table.add_row(
                str(step["step"]), f"{step['join_type']} {step['to_table']} ON {step['on_clause']}"
            )
        table.add_row("SQL", (body.get("sql_snippet") or "")[:300])
    elif name == "code":
        table.add_column("where")
        table.add_column("symbol")
        table.add_column("score")
        for h in body.get("results", []):
            where = f"{h.get('path')}:{h.get('start_line')}-{h.get('end_line')}"
            table.add_row(
                where,
                h.get("fully_qualified_name") or h.get("symbol") or "",
                f"{h['relevance_score']:.2f}",
            )
    elif name == "help desk":
        table.add_column("source")
        table.add_column("score")
        for s in body.get("sources_consulted", []):
            table.add_row(f"{s['title']} ({s['url']})", f"{s['relevance_score']:.2f}")
        table.add_row(f"coverage: {body.get('coverage')}", "")
        for gap in body.get("gaps", []):
            table.add_row(f"gap: {gap}", "")
    elif name == "memory history":
        table.add_column("fact")
        table.add_column("valid")
        table.add_column("why it ended")
        for f in body.get("relationships", []):
            if f.get("valid_to"):
                valid = f"{f['valid_from'][:16]} → {f['valid_to'][:16]}"
                what = f"{f.get('source_name')} {f['relation_type']} {f.get('target_name')}"
                table.add_row(what, valid, f.get("reason") or "")
    elif name == "memory":
        table.add_column("fact")
        table.add_column("valid")
        for f in body.get("facts", []):
            valid = f"{f['valid_from'][:10]} → {(f.get('valid_to') or 'now')[:10]}"
            table.add_row(
                f"{f.get('source_name')} {f['relation_type']} {f.get('target_name')}", valid
            )
        for e in body.get("episodes", [])[:3]:
            table.add_row(f"episode: {e['content'][:70]}", f"{e['relevance_score']:.2f}")
    return table


async def ask_mcp(api_url: str, console: Console) -> list[str]:
    """List the MCP tools over streamable HTTP and call one, as an MCP client would."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(f"{api_url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = [t.name for t in (await session.list_tools()).tools]
        result = await session.call_tool("search_tables", {"query": "who bought what", "limit": 2})
        text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    console.print(f"[bold]MCP[/] {api_url}/mcp tools: {', '.join(tools)}")
    console.print(f"  search_tables → {text[:200]}")
    return tools


def ask_cli(console: Console, env: dict[str, str]) -> str:
    """``tribal search`` as a person types it."""
    out = subprocess.run(
        [sys.executable, "-m", "cli", "search", "refund a returned order", "--kind", "tables"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    console.print('[bold]$ tribal search "refund a returned order" --kind tables[/]')
    shown = out.stdout.rstrip() or out.stderr.rstrip()  # rich tables go to stderr
    console.print(shown)
    return shown


def as_json(answers: dict[str, Any]) -> str:
    return json.dumps(answers, default=str)
