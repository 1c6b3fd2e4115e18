"""Code corpora for the leave-one-corpus-out eval: codebases read at run time, each with
questions written from its source before any system's answer was seen.

A corpus is ``tests/eval/corpora/code/<name>.json``. Its ``source`` says where the code
is: ``{"package": "<import name>"}`` (an installed distribution's package directory, read
from the environment, never copied here), ``{"go_module": "<path>", "version": "v1.2.3"}``
(a Go module at a pinned version, from the Go module cache, fetched with ``go mod
download`` from the Go proxy when missing; its ``.go`` files without tests and examples)
or ``{"repo_dirs": [...]}`` (directories of this repository). Its files are chunked as
``search_code`` sees them, under the repo name ``<name>``; a question's answer is
``(path, symbol)``, ``path`` relative to the package or module directory or the
repository root.

Symbols follow the tree-sitter chunker (``streams/chunker/treesitter``): a function,
class or method chunk's ``symbol`` is its bare name (``method``, not ``Class.method``),
with the class as ``parent_symbol``. So a method's question names ``symbol`` bare and
its class in ``parent`` (dotted for nested classes); :func:`validate` checks it there.
Only module-level definitions and class members are chunks: a function nested in a
function, or defined under ``if``/``try`` at module level, is part of other text. In Go,
a method's ``parent`` is its receiver type.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from events.files import FileChanged

ROOT = Path(__file__).resolve().parents[2]
CODE_CORPORA = ROOT / "tests" / "eval" / "corpora" / "code"
KINDS = ("literal", "paraphrase")
MIN_QUESTIONS = 40
MIN_PARAPHRASE = 0.7
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_FILLERS = frozenset({"and", "for", "from", "into", "not", "the", "with"})
"""Name parts a paraphrase may use when the name has others (``prompt_for_value``)."""


class CorpusError(ValueError):
    """A corpus whose labels do not hold; ``problems`` lists every bad entry."""

    def __init__(self, name: str, problems: list[str]) -> None:
        super().__init__(f"{name}: {len(problems)} problem(s)\n  " + "\n  ".join(problems))
        self.problems = problems


def code_corpora() -> list[dict[str, Any]]:
    """Every code corpus file, by name."""
    out = []
    for path in sorted(CODE_CORPORA.glob("*.json")):
        spec: dict[str, Any] = json.loads(path.read_text())
        spec.setdefault("name", path.stem)
        out.append(spec)
    return out


def corpus_root(corpus: dict[str, Any]) -> tuple[Path, list[Path]]:
    """``(base, dirs)``: paths are relative to ``base``; source files under ``dirs``."""
    source = corpus["source"]
    if "package" in source:
        spec = importlib.util.find_spec(source["package"])
        if spec is None or spec.origin is None:
            raise CorpusError(corpus["name"], [f"package {source['package']!r} not installed"])
        base = Path(spec.origin).parent
        return base, [base]
    if "go_module" in source:
        base = go_module_dir(corpus["name"], source["go_module"], source["version"])
        return base, [base]
    return ROOT, [ROOT / d for d in source["repo_dirs"]]


def go_module_dir(name: str, module: str, version: str) -> Path:
    """The directory of ``module@version`` in the Go module cache (``go mod download``
    fetches it from the Go proxy when it is not there yet)."""
    go = shutil.which("go")
    if go is None:
        raise CorpusError(name, [f"Go module {module}@{version} needs the go tool: not installed"])
    done = subprocess.run(
        [go, "mod", "download", "-json", f"{module}@{version}"],
        capture_output=True, text=True, timeout=300, check=False, cwd="/",
    )  # fmt: skip
    info: dict[str, Any] = json.loads(done.stdout or "{}")
    if done.returncode != 0 or not info.get("Dir"):
        why = info.get("Error") or done.stderr.strip() or f"exit {done.returncode}"
        raise CorpusError(name, [f"go mod download {module}@{version} failed: {why}"])
    return Path(info["Dir"])


def language(corpus: dict[str, Any]) -> str:
    """The language of a corpus's files: ``go`` for a Go module, else ``python``."""
    return "go" if "go_module" in corpus["source"] else "python"


_SKIP_GO = frozenset({"examples", "example", "testdata", "vendor", "_examples"})


def _paths(corpus: dict[str, Any]) -> Iterator[tuple[str, Path]]:
    base, dirs = corpus_root(corpus)
    go = language(corpus) == "go"
    for d in dirs:
        for path in sorted(d.rglob("*.go" if go else "*.py")):
            rel = path.relative_to(base)
            if go and (path.name.endswith("_test.go") or _SKIP_GO & set(rel.parts[:-1])):
                continue
            yield rel.as_posix(), path


def corpus_files(corpus: dict[str, Any]) -> list[FileChanged]:
    """The corpus's source files as source events (repo = the corpus name)."""
    out = []
    for rel, path in _paths(corpus):
        text = path.read_text()
        out.append(FileChanged(
            repo=corpus["name"], path=rel, content=text,
            sha256=hashlib.sha256(text.encode()).hexdigest(), language=language(corpus),
            size_bytes=len(text.encode()),
        ))  # fmt: skip
    return out


def definitions_in(path: str, source: str, lang: str) -> dict[str, set[str]]:
    """:func:`definitions` for Python; for other languages, as the tree-sitter chunker
    names them (symbol -> its ``parent_symbol`` values, ``""`` at the top)."""
    if lang == "python":
        return definitions(source)
    from streams.chunker.pieces import SourceDocument
    from streams.chunker.treesitter.ingester import treesitter_ingesters

    ingester = next(i for i in treesitter_ingesters() if i.language == lang)
    found: dict[str, set[str]] = {}
    for piece in ingester.ingest(SourceDocument(path, source, lang)):
        if piece.symbol:
            found.setdefault(piece.symbol, set()).add(piece.parent_symbol or "")
    return found


def definitions(source: str) -> dict[str, set[str]]:
    """Chunked definitions of a module: name -> the classes it is a member of (dotted
    for nested classes; ``""`` for module level)."""
    found: dict[str, set[str]] = {}

    def walk(body: Iterable[ast.stmt], parent: str) -> None:
        for node in body:
            if isinstance(node, _DEFS):
                found.setdefault(node.name, set()).add(parent)
                if isinstance(node, ast.ClassDef):
                    walk(node.body, f"{parent}.{node.name}" if parent else node.name)

    walk(ast.parse(source).body, "")
    return found


def name_parts(name: str) -> set[str]:
    """The words of an identifier (snake and camel case), lower-cased, 3+ letters; filler
    words only when the name has nothing else (``and_``)."""
    parts = {p.lower() for p in _PARTS.findall(name) if len(p) >= 3}
    return parts - _FILLERS or parts


def _words(text: str) -> set[str]:
    camel = {w.lower() for w in _PARTS.findall(text)}
    plain = {w for w in re.split(r"[^a-z0-9]+", text.lower()) if w}
    return {w for w in camel | plain if len(w) >= 3}


def shared_parts(question: str, symbol: str) -> set[str]:
    """Words of ``question`` that repeat a part of ``symbol`` (or a prefix/extension)."""
    hits = set()
    for word in _words(question):
        for part in name_parts(symbol):
            if word == part or word.startswith(part) or (len(word) >= 4 and part.startswith(word)):
                hits.add(word)
    return hits


def _check_answer(
    label: str, answer: dict[str, Any], files: dict[str, Path], cache: dict[str, Any],
    lang: str = "python",
) -> list[str]:  # fmt: skip
    path, symbol, parent = answer.get("path"), answer.get("symbol"), answer.get("parent", "")
    if not isinstance(path, str) or not isinstance(symbol, str) or not symbol:
        return [f"{label}: path and symbol are required"]
    if "." in symbol:
        return [f"{label}: symbol {symbol!r} is dotted; the chunker names a method bare "
                "(symbol='method', parent='Class')"]  # fmt: skip
    if path not in files:
        return [f"{label}: no file {path!r}"]
    if path not in cache:
        cache[path] = definitions_in(path, files[path].read_text(), lang)
    parents: set[str] = cache[path].get(symbol, set())
    if not parents:
        return [f"{label}: {symbol!r} is not a chunked definition in {path}"]
    where = ", ".join(sorted(p or "<module>" for p in parents))
    if parent not in parents:
        return [f"{label}: {symbol!r} is not in {parent or '<module>'} of {path} ({where})"]
    if len(parents) > 1:
        return [f"{label}: {symbol!r} is defined in several scopes of {path} ({where}): "
                "a hit on the wrong one would count"]  # fmt: skip
    return []


def validate(corpus: dict[str, Any]) -> None:
    """Raise :class:`CorpusError` listing every bad entry: a missing path, a symbol not
    defined there (a method: not in its ``parent`` class), a name defined in several
    scopes of its file, a paraphrase repeating its symbol's name parts, duplicates,
    and too few questions or paraphrases."""
    name = corpus.get("name", "?")
    problems: list[str] = []
    for key in ("name", "kind", "source", "description", "written", "queries"):
        if key not in corpus:
            problems.append(f"missing {key!r}")
    if problems:
        raise CorpusError(name, problems)
    if corpus["kind"] != "code":
        problems.append(f"kind {corpus['kind']!r} is not 'code'")
    files = dict(_paths(corpus))
    if not files:
        problems.append(f"no {language(corpus)} files")
    cache: dict[str, Any] = {}
    seen: set[str] = set()
    queries = corpus["queries"]
    for i, item in enumerate(queries):
        q = item.get("q", "")
        label = f"#{i} {q!r}"
        if not q:
            problems.append(f"{label}: empty question")
        if q.lower() in seen:
            problems.append(f"{label}: duplicate question")
        seen.add(q.lower())
        if item.get("kind") not in KINDS:
            problems.append(f"{label}: kind {item.get('kind')!r} not in {KINDS}")
        answers = [item, *item.get("also", [])]
        for answer in answers:
            problems += _check_answer(label, answer, files, cache, language(corpus))
        if item.get("kind") == "paraphrase":
            for answer in answers:
                shared = shared_parts(q, str(answer.get("symbol", "")))
                if shared:
                    problems.append(f"{label}: paraphrase repeats {sorted(shared)} of "
                                    f"{answer.get('symbol')!r}")  # fmt: skip
    paraphrases = sum(1 for q in queries if q.get("kind") == "paraphrase")
    if len(queries) < MIN_QUESTIONS:
        problems.append(f"{len(queries)} questions, fewer than {MIN_QUESTIONS}")
    if queries and paraphrases / len(queries) < MIN_PARAPHRASE:
        problems.append(f"{paraphrases}/{len(queries)} paraphrases, under {MIN_PARAPHRASE:.0%}")
    if problems:
        raise CorpusError(name, problems)


def summary(corpus: dict[str, Any]) -> dict[str, Any]:
    """Files, lines and question counts of a corpus (for reports)."""
    files = corpus_files(corpus)
    queries = corpus["queries"]
    paraphrase = sum(1 for q in queries if q["kind"] == "paraphrase")
    return {
        "name": corpus["name"], "source": corpus["source"], "files": len(files),
        "lines": sum(f.content.count("\n") for f in files), "questions": len(queries),
        "paraphrase": paraphrase, "literal": len(queries) - paraphrase,
    }  # fmt: skip


async def check_chunked(corpus: dict[str, Any]) -> None:
    """Raise :class:`CorpusError` unless the chunker itself yields a chunk for every
    answer, with its ``symbol`` and its class as ``parent_symbol`` (the cross-check of
    :func:`validate`'s reading of the syntax tree)."""
    from events.chunks import DocumentChunked
    from streams.chunker.defaults import default_registry
    from streams.chunker.files import FileChunker

    chunker = FileChunker(default_registry(env={}))
    files = {f.path: f for f in corpus_files(corpus)}
    chunked: dict[str, set[tuple[str | None, str | None]]] = {}
    problems = []
    for i, item in enumerate(corpus["queries"]):
        for answer in [item, *item.get("also", [])]:
            path = answer["path"]
            if path not in chunked:
                emits = await chunker(files[path]) if path in files else []
                chunked[path] = {
                    (c.symbol, c.parent_symbol)
                    for e in emits
                    if isinstance(e.event, DocumentChunked)
                    for c in e.event.chunks
                }
            parent = answer.get("parent", "").rsplit(".", 1)[-1] or None
            if (answer["symbol"], parent) not in chunked[path]:
                problems.append(f"#{i} {item['q']!r}: no chunk {answer['symbol']!r} "
                                f"(parent {parent!r}) in {path}")  # fmt: skip
    if problems:
        raise CorpusError(corpus["name"], problems)


if __name__ == "__main__":
    import asyncio

    for c in code_corpora():
        validate(c)
        asyncio.run(check_chunked(c))
        print(summary(c))
