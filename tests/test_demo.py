"""`make demo`'s scenario, headless: every source kind answers through HTTP, MCP and CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from devstack.pipeline import REPO
from runtime.embedded.process import free_port

pytestmark = pytest.mark.slow


def test_the_demo_answers_from_every_source_through_http_mcp_and_the_cli() -> None:
    root = Path(tempfile.mkdtemp(prefix="tribal-demo-"))
    root.chmod(0o755)  # embedded PostgreSQL runs unprivileged when tests run as root
    try:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "cli",
                "demo",
                "--headless",
                "--data-dir",
                str(root / "data"),
                "--api-port",
                str(free_port()),
            ],
            cwd=REPO,
            env=dict(os.environ, HF_HUB_OFFLINE="1", COLUMNS="120"),
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    # every source answerable before the questions (else the answers below say little)
    assert not report["not_ready"], report["not_ready"]
    answers = report["answers"]
    # schema: table search, and a 3-hop join path with SQL
    assert answers["tables"]["tables"], answers["tables"]
    assert answers["join path"]["hop_count"] == 3
    assert "JOIN" in answers["join path"]["sql_snippet"]
    # this repository's own code, with file and line range
    hit = answers["code"]["results"][0]
    assert hit["path"].endswith(".py")
    assert hit["start_line"] >= 1
    # help desk, seed 002
    assert answers["help desk"]["sources_consulted"]
    assert answers["help desk"]["coverage"] in {"high", "medium", "low"}
    # the conversation, with the address that replaced the old one
    facts = answers["memory"]["facts"]
    assert any(f["relation_type"] == "lives_at" and "Castle" in f["target_name"] for f in facts)
    # and the replaced address, with the interval it held
    history = answers["memory history"]["relationships"]
    assert any(f["valid_to"] and f["relation_type"] == "lives_at" for f in history), history
    # MCP and the CLI
    assert {"search_tables", "get_join_path", "retrieve_knowledge"} <= set(answers["mcp_tools"])
    assert "demo.public." in answers["cli"]
    assert report["first_answer_s"] > 0
