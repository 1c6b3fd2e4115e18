"""The eval's corpora: several per kind, each a tenant of its own, each with its labels.

A corpus is material a user could bring (a schema, a codebase, a help desk) and the
questions written for it before any system's answer was seen. Every corpus is indexed
under its own tenant, so a question is asked of its corpus alone, as a user asks of
their own knowledge; and the calibration can be fitted on the other corpora of a kind
and measured on the one left out (:mod:`bench.eval.loco`).

Where the corpora come from:

* ``tests/eval/corpora/<kind>/<name>.json``: a corpus each, with a ``source`` that says
  how to read it at run time (an installed package, a Debian documentation package, a
  sample database from a package registry) and its ``queries``;
* the first labelled sets (``tests/eval/{tables,joins,kb}.json``), split by the corpus
  each question is about, for the corpora no file above replaces.

Third-party material is never copied into the repository: loaders read it from what
is installed or fetched.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "tests" / "eval"
CORPORA = SETS / "corpora"
Kind = Literal["tables", "code", "kb"]
KINDS: tuple[Kind, ...] = ("tables", "code", "kb")
RESERVED = ("requests", "sakila", "pagila", "cobra", "pi-hole", "pihole", "bitwarden")
"""Material kept for the independent check: never a corpus here, never an article."""


@dataclass
class Corpus:
    """One corpus of one kind and its labelled questions."""

    name: str
    kind: Kind
    queries: list[dict[str, Any]]
    source: dict[str, Any] = field(default_factory=dict)
    joins: list[dict[str, Any]] = field(default_factory=list)
    spec: dict[str, Any] = field(default_factory=dict)

    @property
    def tenant(self) -> str:
        """The tenant the corpus is indexed under (``[A-Za-z0-9_.-]``)."""
        return "c-" + re.sub(r"[^A-Za-z0-9_.-]", "-", self.name)[:60]

    @property
    def unanswerable(self) -> int:
        return sum(
            1 for q in self.queries if q.get("kind") == "unanswerable" or q.get("expect") == []
        )


def _legacy(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SETS / f"{name}.json").read_text())
    return data


def _legacy_corpora() -> list[Corpus]:
    """The first labelled sets, one corpus per schema and article collection."""
    out: list[Corpus] = []
    tables, joins = _legacy("tables"), _legacy("joins")
    for database, description in (
        ("shop", "the store demo"),
        ("billing", "legacy telecom billing"),
    ):
        out.append(
            Corpus(
                name=database,
                kind="tables",
                queries=[q for q in tables["queries"] if q["expect"][0].split(".")[0] == database],
                joins=[p for p in joins["pairs"] if p["source"].split(".")[0] == database],
                source={"legacy_schema": database},
                spec={"description": description},
            )
        )
    kb = _legacy("kb")
    articles = [a for a in kb["articles"] if a not in RESERVED]
    queries = [
        {**q, "expect": [e for e in q["expect"] if e not in RESERVED]}
        for q in kb["queries"]
        if not q["expect"] or any(e not in RESERVED for e in q["expect"])
    ]
    out.append(
        Corpus(
            name="pypi-descriptions",
            kind="kb",
            queries=queries,
            source={"pypi_descriptions": articles},
            spec={"description": kb["description"]},
        )
    )
    return out


def _file_corpora() -> list[Corpus]:
    out = []
    for path in sorted(CORPORA.glob("*/*.json")):
        spec: dict[str, Any] = json.loads(path.read_text())
        kind = spec.get("kind", path.parent.name)
        assert kind in KINDS, f"{path}: unknown kind {kind!r}"
        if kind == "code":  # a code answer is (repo, path, symbol); the repo is the corpus
            for q in spec["queries"]:
                q.setdefault("repo", spec.get("name", path.stem))
        out.append(
            Corpus(
                name=spec.get("name", path.stem),
                kind=kind,
                queries=spec["queries"],
                source=spec.get("source", {}),
                joins=spec.get("joins", []),
                spec=spec,
            )
        )
    return out


def all_corpora(kinds: tuple[Kind, ...] = KINDS) -> list[Corpus]:
    """Every corpus of ``kinds``; a file corpus replaces a first-set corpus of its name."""
    files = _file_corpora()
    named = {(c.kind, c.name) for c in files}
    legacy = [c for c in _legacy_corpora() if (c.kind, c.name) not in named]
    for c in [*legacy, *files]:
        # Its name and where it is read from: a Go module path, a package, a Debian package.
        lowered = f"{c.name} {json.dumps((c.spec or {}).get('source', ''))}".lower()
        assert not any(r in lowered for r in RESERVED), f"{c.name} is reserved"
    return [c for c in [*legacy, *files] if c.kind in kinds]


def loader(module: str, attr: str) -> Callable[..., Any]:
    """A corpus loader of another module, imported when a corpus needs it."""
    fn: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return fn
