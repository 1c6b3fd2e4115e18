"""What the model reads for a chunk: code gets a natural-language view first.

Sentence-embedding models are trained on prose; raw code embeds poorly against a
question asked in words. A code chunk (one with a symbol) is embedded as

    <kind> <symbol words> of <parent words> in <path words>. <docstring>
    <base class>: <its docstring>          (classes whose base is in the same file)
    <signature>
    <the code>

with identifiers split from snake_case and camelCase ("ReceiveBuffer" → "receive
buffer"). Everything else (help-desk sections, Markdown, tables) is embedded as is.
The chunk text itself, what search results show, is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from events.chunks import Chunk
from streams.vocabulary import words

_DOCSTRING = re.compile(r'^\s*(?:[rRuU]?)("""|\'\'\')(.*?)\1', re.S | re.M)
_LINE_COMMENT = re.compile(r"^\s*(?:#|//|--|;;)\s?(.*)$")
_SIGNATURE = re.compile(
    r"^\s*(?:async\s+def|def|class|func|fn|pub\s+fn|function|interface|struct|type)\b.*"
)
_BASES = re.compile(r"^\s*class\s+\w+\s*\(([^)]*)\)")
DOC_CHARS = 300
CONTEXT_LINES = 6
"""At most this many enclosing signatures sit under a chunk's path line
(``streams.chunker.treesitter.walker``)."""
CODE_KINDS = frozenset({"function", "method", "class", "interface", "struct", "type", "enum"})


def _body(chunk: Chunk) -> str:
    """The chunk's code without the header the chunker wrote above it (the file's path
    and the enclosing signatures, as line comments of the chunk's language:
    :func:`streams.chunker.pieces.contextualize`).

    The header is the lines the text has beyond the chunk's own line range; without a
    line range, leading ``# `` lines that name a path or a class are taken for it."""
    lines = chunk.text.splitlines()
    if chunk.start_line is not None and chunk.end_line is not None:
        extra = len(lines) - (chunk.end_line - chunk.start_line + 1)
        if 0 < extra <= 1 + CONTEXT_LINES:
            return "\n".join(lines[extra:])
    while lines and lines[0].lstrip().startswith("# ") and not _DOCSTRING.match(lines[0]):
        head = lines[0].strip()
        if not (head.startswith("# class ") or "/" in head or head.endswith((".py", ":"))):
            break
        lines.pop(0)
    return "\n".join(lines)


def docstring(code: str) -> str:
    """The first docstring (or the comment block above the definition), shortened."""
    m = _DOCSTRING.search(code)
    if m is not None:
        text = " ".join(m.group(2).split())
    else:
        comments = []
        for line in code.splitlines():
            c = _LINE_COMMENT.match(line)
            if c is None:
                break
            comments.append(c.group(1))
        text = " ".join(" ".join(comments).split())
    return text[:DOC_CHARS]


def _signature(code: str) -> str:
    for line in code.splitlines():
        if _SIGNATURE.match(line):
            return line.strip()
    return ""


def _where(path: str | None) -> str:
    stem = (path or "").rsplit(".", 1)[0]
    return " ".join(w for part in stem.split("/") for w in words(part))


def embedding_texts(chunks: Sequence[Chunk], path: str | None) -> list[str]:
    """The text to embed for each chunk of one document (see the module docstring)."""
    docs: dict[str, str] = {}
    for c in chunks:  # a long definition's docstring is in its first chunk
        if c.symbol and not docs.get(c.symbol):
            docs[c.symbol] = docstring(_body(c))
    where = _where(path)
    out = []
    for c in chunks:
        if not c.symbol or c.kind not in CODE_KINDS:
            out.append(c.text)
            continue
        body = _body(c)
        signature = _signature(body)
        head = f"{c.kind} {' '.join(words(c.symbol))}"
        if c.parent_symbol:
            head += f" of {' '.join(words(c.parent_symbol))}"
        if where:
            head += f" in {where}"
        lines = [head + ".", docs.get(c.symbol, "")]
        bases = _BASES.match(signature)
        for base in (b.strip() for b in (bases.group(1).split(",") if bases else [])):
            if docs.get(base):
                lines.append(f"{' '.join(words(base))}: {docs[base]}")
        if not body.lstrip().startswith(signature):
            lines.append(signature)
        lines.append(body)
        out.append("\n".join(line for line in lines if line))
    return out
