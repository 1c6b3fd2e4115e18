"""``tribal search``: ask a running Tribal from the shell."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from cli.common import console
from runtime.settings import TribalSettings


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

    from runtime.embedded.supervisor import read_stack_info

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
