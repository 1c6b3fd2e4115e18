"""Agent files: dropping ``lisp-ingester.md`` into the agents dir teaches the chunker LISP."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from streams.chunker.agent_files import load_agents, parse_agent_file
from streams.chunker.defaults import default_registry
from streams.chunker.llm_ingester import INGEST_TASK, IngestedChunks, LlmIngester
from streams.chunker.pieces import SourceDocument
from streams.llm.base import StructuredRequest, StructuredResult, T

REPO = Path(__file__).resolve().parents[2]
LOCAL = {"TRIBAL_LLM_PROVIDER": "local"}
LISP = """\
;;;; geometry.lisp

(in-package :geo)

;; Area of a circle.
(defun area (r)
  (* pi r r))

(defmacro with-unit ((var) &body body)
  `(let ((,var 1)) ,@body))

(defclass circle ()
  ((radius :initarg :radius)))

(defvar *origin* '(0 0))
"""


async def test_dropping_the_lisp_agent_file_adds_lisp_support(tmp_path: Path) -> None:
    doc = SourceDocument("src/geometry.lisp", LISP)
    before = await default_registry(tmp_path, LOCAL).ingest(doc)
    assert before.agent_id == "text-ingester"

    shutil.copy(REPO / "agents" / "lisp-ingester.md", tmp_path)
    after = await default_registry(tmp_path, LOCAL).ingest(doc)

    assert after.agent_id == "lisp-ingester"
    got = [(p.kind, p.symbol, p.start_line, p.end_line) for p in after.pieces]
    assert got == [
        ("text", None, 1, 3),
        ("function", "area", 5, 7),  # with the comment line above it
        ("function", "with-unit", 9, 10),
        ("class", "circle", 12, 13),
        ("field", "*origin*", 15, 15),
    ]
    assert after.pieces[1].text.startswith("; src/geometry.lisp\n;; Area of a circle.")
    assert after.pieces[1].metadata["generated_by"] == "template"


def test_the_shipped_agent_files_load() -> None:
    ids = {a.agent_id: a for a in load_agents(REPO / "agents")}
    assert {"lisp-ingester", "generic-code-ingester"} <= set(ids)
    assert "ingest:lisp" in ids["lisp-ingester"].capabilities
    assert ids["lisp-ingester"].priority == 80
    assert "LISP code analyzer" in ids["lisp-ingester"].system_prompt


def test_a_seed_style_file_without_front_matter_is_read() -> None:
    text = (
        "# Generic Code Ingester\n\n## Metadata\n\n- **Priority**: 50\n- **Provider**: ollama\n"
        "- **Model**: qwen2.5-coder:7b\n\n## Capabilities\n\n- ingest:*\n\n"
        "## System Prompt\n\nYou are a code parser.\n"
    )
    agent = parse_agent_file(text, "generic-code-ingester")
    assert (agent.agent_id, agent.priority, agent.provider) == (
        "generic-code-ingester",
        50,
        "ollama",
    )
    assert agent.capabilities == ("ingest:*",)
    assert agent.system_prompt == "You are a code parser."


def test_a_broken_agent_file_is_skipped_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_text("---\ncapabilities: [ingest:x\n---\nbody")
    (tmp_path / "regex.md").write_text("---\nchunking: {boundaries: ['(']}\n---\n")
    shutil.copy(REPO / "agents" / "lisp-ingester.md", tmp_path)
    assert [a.agent_id for a in load_agents(tmp_path)] == ["lisp-ingester"]


class ScriptedModel:
    """Stands in for an LLM: answers with fixed drafts, some of them out of range."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self) -> None:
        self.requests: list[StructuredRequest[IngestedChunks]] = []

    async def structured(self, request: StructuredRequest[T]) -> StructuredResult[T]:
        assert request.task == INGEST_TASK
        payload = {
            "chunks": [
                {"chunkType": "function", "symbolName": "area", "startLine": 6, "endLine": 7},
                {"chunkType": "class", "symbolName": "circle", "startLine": 12, "endLine": 999},
            ]
        }
        value = request.output_type.model_validate(payload)
        return StructuredResult(value, self.name, self.model, "llm", "h")


async def test_model_line_ranges_are_clamped_and_text_comes_from_the_file() -> None:
    [agent] = [a for a in load_agents(REPO / "agents") if a.agent_id == "lisp-ingester"]
    ingester = LlmIngester(agent, ScriptedModel())
    pieces = await ingester.ingest(SourceDocument("g.lisp", LISP))
    assert [(p.symbol, p.start_line, p.end_line) for p in pieces] == [
        ("area", 6, 7),
        ("circle", 12, 16),
    ]
    assert "(* pi r r))" in pieces[0].text
    assert pieces[0].metadata == {"generated_by": "llm", "model": "scripted-1"}


def test_the_request_fences_the_file_as_data() -> None:
    [agent] = [a for a in load_agents(REPO / "agents") if a.agent_id == "lisp-ingester"]
    request = LlmIngester(agent, ScriptedModel()).request(SourceDocument("g.lisp", "(x)"))
    assert "<<<USER_DATA>>> file" in request.prompt
    assert "    1| (x)" in request.prompt
    assert request.output_type is IngestedChunks


@pytest.mark.parametrize("size", [70_000])
async def test_files_over_the_agent_cap_go_down_the_chain(tmp_path: Path, size: int) -> None:
    shutil.copy(REPO / "agents" / "lisp-ingester.md", tmp_path)
    big = LISP * (size // len(LISP) + 1)
    result = await default_registry(tmp_path, LOCAL).ingest(SourceDocument("g.lisp", big))
    assert result.agent_id == "text-ingester"
    assert result.attempts[0][0] == "lisp-ingester"
