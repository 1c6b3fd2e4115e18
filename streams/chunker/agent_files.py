"""Agent definitions from markdown files: YAML front matter plus a system prompt (seed 004).

Dropping ``lisp-ingester.md`` into the agents directory (``TRIBAL_AGENTS_DIR``, default
``<repo>/agents``) is all it takes to teach the chunker a language. The front matter
names the agent, its ``ingest:{ext}`` capabilities and priority, the provider and model;
``chunking`` gives the hints the deterministic ``local`` provider uses when no LLM is
configured (boundary regexes, a symbol regex, the line-comment prefix).

Files written the seed's other way, with ``## Capabilities`` and ``## Metadata`` sections
instead of front matter, are read too.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[2]
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_SECTION = re.compile(r"^##[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_BULLET = re.compile(r"^[ \t]*[-*][ \t]+(.+?)[ \t]*$", re.MULTILINE)
_META = re.compile(r"\*\*(\w[\w ]*)\*\*:[ \t]*(.+)")


def _regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"bad regex {value!r}: {exc}") from exc
    return value


class BoundaryRule(BaseModel):
    """A line matching ``pattern`` starts a chunk of type ``kind``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pattern: str
    kind: str = "function"

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return _regex(value)


class ChunkingHints(BaseModel):
    """What the local provider needs to chunk without a model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    boundaries: tuple[BoundaryRule, ...] = ()
    symbol: str | None = Field(
        default=None, description="Regex on a boundary line; group 'name' (or 1) is the symbol."
    )
    comment: str | None = Field(default=None, description="Line-comment prefix, e.g. ';'.")
    max_chars: int = Field(default=64_000, gt=0, description="Larger files go down the chain.")

    @field_validator("symbol")
    @classmethod
    def _symbol_compiles(cls, value: str | None) -> str | None:
        return None if value is None else _regex(value)

    @field_validator("boundaries", mode="before")
    @classmethod
    def _plain_patterns(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return [{"pattern": v} if isinstance(v, str) else v for v in value]
        return value


class AgentDefinition(BaseModel):
    """One agent file."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")

    agent_id: str = Field(alias="agentId", min_length=1)
    name: str = ""
    description: str = ""
    capabilities: tuple[str, ...] = ()
    priority: int = 50
    provider: str = "anthropic"
    model: str | None = None
    tags: tuple[str, ...] = ()
    enabled: bool = True
    chunking: ChunkingHints = ChunkingHints()
    system_prompt: str = ""

    @field_validator("capabilities", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return [str(v).strip().lower() for v in value] if isinstance(value, list) else value


def _sections(body: str) -> dict[str, str]:
    marks = list(_SECTION.finditer(body))
    return {
        m.group(1).strip().lower(): body[
            m.end() : marks[n + 1].start() if n + 1 < len(marks) else None
        ]
        for n, m in enumerate(marks)
    }


def parse_agent_file(text: str, stem: str) -> AgentDefinition:
    """The definition in one agent file (``ValueError`` when it is not one)."""
    front: dict[str, Any] = {}
    body = text
    match = _FRONT_MATTER.match(text)
    if match:
        loaded = yaml.safe_load(match.group(1))
        if not isinstance(loaded, dict):
            raise ValueError("front matter is not a mapping")
        front, body = loaded, text[match.end() :]
    sections = _sections(body)
    if "capabilities" not in front and "capabilities" in sections:
        front["capabilities"] = _BULLET.findall(sections["capabilities"])
    for key, value in _META.findall(sections.get("metadata", "")):
        front.setdefault(key.strip().lower(), value.strip())
    front.setdefault("agentId", stem)
    prompt = sections.get("system prompt", body).strip()
    try:
        return AgentDefinition.model_validate({**front, "system_prompt": prompt})
    except ValidationError as exc:
        raise ValueError(str(exc)) from exc


def agents_dir(env: dict[str, str] | None = None) -> Path:
    """``TRIBAL_AGENTS_DIR``, or the repository's ``agents/``."""
    value = (os.environ if env is None else env).get("TRIBAL_AGENTS_DIR", "")
    return Path(value) if value else REPO_ROOT / "agents"


def load_agents(directory: Path) -> list[AgentDefinition]:
    """Every enabled agent in ``directory`` (sorted by file name); bad files are logged
    and skipped so one typo does not stop the worker."""
    found: list[AgentDefinition] = []
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.md")):
        try:
            definition = parse_agent_file(path.read_text(encoding="utf-8"), path.stem)
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
            log.warning("skipping agent file %s: %s", path, exc)
            continue
        if definition.enabled:
            found.append(definition)
    return found
