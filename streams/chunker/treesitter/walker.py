"""From a syntax tree to pieces: one per definition, oversized ones split by cAST.

Every class-like definition yields a *skeleton* chunk (its own lines with member
bodies elided to ``...``) spanning its full line range, and each member its own chunk,
so retrieval finds a method by its name and a class by its shape. Code between
definitions (imports, constants) is merged into ``text`` chunks up to the budget.

A definition larger than the budget is split the cAST way: descend into children until
each unit fits, then merge adjacent units back up to the budget. Both the scope walk and
the descent use explicit stacks with depth caps, so deeply nested input cannot exhaust
Python's recursion limit.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate

from tree_sitter import Node

from streams.chunker.pieces import MAX_PIECES, Piece, contextualize, line_windows
from streams.chunker.treesitter.languages import LanguageSpec
from streams.chunker.treesitter.names import Definition, classify, namespace_name, unwrap

MAX_SCOPE_DEPTH = 32
"""Containers nested deeper than this are chunked as one (split) leaf."""
MAX_SPLIT_DEPTH = 64
"""cAST descends at most this far before it splits by lines instead."""
_SIGNATURE_CHARS = 200
_CONTEXT_LINES = 6


@dataclass(frozen=True, slots=True)
class _Scope:
    node: Node
    fqn: tuple[str, ...]
    parent: str | None
    context: tuple[str, ...]
    in_container: bool
    depth: int


def module_prefix(spec: LanguageSpec, path: str) -> tuple[str, ...]:
    """``streams/wiring.py`` → ``("streams.wiring",)`` for Python; ``()`` where the
    language names its own namespace (``package``, ``namespace``)."""
    if spec.name not in {"python", "rust"}:
        return ()
    parts = posixpath.splitext(path)[0].split("/")
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] in {"__init__", "lib", "main", "mod"}:
        parts = parts[:-1]
    return (spec.sep.join(p for p in parts if p),) if parts else ()


def _rows(node: Node) -> tuple[int, int]:
    """1-based inclusive line range of ``node``."""
    (start, _), (end, column) = node.start_point, node.end_point
    if column == 0 and end > start:
        end -= 1
    return start + 1, end + 1


class Walker:
    """Chunks one parsed file."""

    def __init__(self, spec: LanguageSpec, path: str, src: bytes, budget: int) -> None:
        self.spec, self.path, self.src, self.budget = spec, path, src, budget
        self.lines = src.decode("utf-8", errors="replace").split("\n")
        self._cum = [0, *accumulate(len(line) + 1 for line in self.lines)]
        self._byte_lines: list[bytes] | None = None
        self.pieces: list[Piece] = []

    def size(self, first: int, last: int) -> int:
        return self._cum[last] - self._cum[first - 1]

    def run(self, root: Node) -> list[Piece]:
        stack = [_Scope(root, module_prefix(self.spec, self.path), None, (), False, 0)]
        while stack and len(self.pieces) < MAX_PIECES:
            stack.extend(reversed(self._scope(stack.pop())))
        self.pieces.sort(key=lambda p: (p.start_line, -p.end_line))
        return self.pieces[:MAX_PIECES]

    # -- scopes ------------------------------------------------------------------------

    def _members(self, node: Node) -> Iterator[Node]:
        for child in node.named_children:
            if child.type in self.spec.groups:
                yield from child.named_children
            else:
                yield child

    def _scope(self, scope: _Scope) -> list[_Scope]:
        spec, inner = self.spec, []
        glue: list[Node] = []
        comments: list[Node] = []
        prefix = scope.fqn
        for child in self._members(scope.node):
            kind = child.type
            if kind in spec.comments:
                comments.append(child)
                continue
            if kind in spec.prefixes:
                name = namespace_name(child)
                prefix = (*scope.fqn, name) if name else prefix
            target = unwrap(spec, child) if spec.namespaces else child
            space = target is not None and target.type in spec.namespaces
            body = None
            if space and target is not None and scope.depth < MAX_SCOPE_DEPTH:
                body = target.child_by_field_name("body")
            found = None if space else classify(spec, child, scope.in_container)
            if body is None and found is None:
                glue += [*comments, child]
                comments = []
                continue
            attached = self._adjacent(comments, child)
            glue += comments[: len(comments) - len(attached)]
            comments = []
            self._glue(glue, scope, prefix)
            glue = []
            if found is not None:
                inner += self._definition(found, attached, scope, prefix)
            elif body is not None and target is not None:
                name = namespace_name(target)
                sig = self._signature(target, body)
                fqn = (*prefix, name) if name else prefix
                parent = name or scope.parent
                context = (*scope.context, sig)[-_CONTEXT_LINES:]
                inner.append(_Scope(body, fqn, parent, context, False, scope.depth + 1))
        self._glue([*glue, *comments], scope, prefix)
        return inner

    @staticmethod
    def _adjacent(comments: list[Node], node: Node) -> list[Node]:
        """The comments that sit directly above ``node`` with no blank line between."""
        row = node.start_point[0]
        kept = 0
        for comment in reversed(comments):
            if comment.end_point[0] < row - 1:
                break
            row = comment.start_point[0]
            kept += 1
        return comments[len(comments) - kept :]

    def _glue(self, nodes: list[Node], scope: _Scope, prefix: tuple[str, ...]) -> None:
        if not nodes or scope.in_container:
            return  # inside a class, glue is part of the skeleton
        first, last = _rows(nodes[0])[0], _rows(nodes[-1])[1]
        fqn = self.spec.sep.join(prefix) or None
        for start, end, body in self._split(nodes, first, last):
            if body.strip():
                self._add(body, "text", start, end, None, scope.parent, fqn, scope.context, {})

    # -- definitions -------------------------------------------------------------------

    def _signature(self, node: Node, body: Node | None) -> str:
        end = body.start_byte if body is not None else node.end_byte
        head = self.src[node.start_byte : end].decode("utf-8", errors="replace")
        return " ".join(head.split())[:_SIGNATURE_CHARS]

    def _definition(
        self, d: Definition, attached: list[Node], scope: _Scope, prefix: tuple[str, ...]
    ) -> list[_Scope]:
        first = _rows(attached[0] if attached else d.outer)[0]
        last = _rows(d.outer)[1]
        fqn_parts = (*prefix, *d.qualifier, d.name)
        fqn = self.spec.sep.join(fqn_parts)
        parent = d.qualifier[-1] if d.qualifier else scope.parent
        sig = self._signature(d.node, d.body)
        meta = {"node_type": d.node.type}
        if d.container and d.body is not None and scope.depth < MAX_SCOPE_DEPTH:
            elided = [
                m.body
                for m in (classify(self.spec, c, True) for c in self._members(d.body))
                if m is not None and m.body is not None
            ]
            entries = self._skeleton(first, last, elided)
            parts = list(_pack(entries, self.budget))
            for n, (start, end, body) in enumerate(parts):
                extra = {"part": f"{n + 1}/{len(parts)}"} if len(parts) > 1 else {}
                context = scope.context if n == 0 else (*scope.context, sig)
                self._add(body, d.kind, start, end, d.name, parent, fqn, context, meta | extra)
            context = (*scope.context, sig)[-_CONTEXT_LINES:]
            return [_Scope(d.body, fqn_parts, d.name, context, True, scope.depth + 1)]
        parts = list(self._split([*attached, d.outer], first, last))
        for n, (start, end, body) in enumerate(parts):
            extra = {"part": f"{n + 1}/{len(parts)}"} if len(parts) > 1 else {}
            context = scope.context if n == 0 else (*scope.context, sig)
            self._add(body, d.kind, start, end, d.name, parent, fqn, context, meta | extra)
        return []

    def _add(
        self,
        body: str,
        kind: str,
        start: int,
        end: int,
        symbol: str | None,
        parent: str | None,
        fqn: str | None,
        context: tuple[str, ...],
        metadata: dict[str, str],
    ) -> None:
        if len(self.pieces) >= MAX_PIECES:
            return
        self.pieces.append(
            Piece(
                text=contextualize(self.spec.marker, self.path, context, body),
                kind=kind,
                start_line=start,
                end_line=end,
                symbol=symbol,
                parent_symbol=parent,
                fully_qualified_name=fqn,
                metadata=metadata,
            )
        )

    def _skeleton(self, first: int, last: int, bodies: list[Node]) -> list[tuple[int, int, str]]:
        """``(first line, last line, text)`` per skeleton line: member bodies become ``...``."""
        if self._byte_lines is None:
            self._byte_lines = self.src.split(b"\n")
        lines = self._byte_lines
        by_row = {b.start_point[0]: b for b in bodies}
        out: list[tuple[int, int, str]] = []
        row = first - 1
        while row < last:
            body = by_row.get(row)
            if body is None:
                out.append((row + 1, row + 1, lines[row].decode("utf-8", errors="replace")))
                row += 1
                continue
            (_, col), (end_row, end_col) = body.start_point, body.end_point
            stub = b"{ ... }" if lines[row][col : col + 1] == b"{" else b"..."
            joined = lines[row][:col] + stub + lines[min(end_row, last - 1)][end_col:]
            out.append((row + 1, end_row + 1, joined.decode("utf-8", errors="replace")))
            row = max(end_row, row) + 1
        return out

    # -- cAST --------------------------------------------------------------------------

    def _split(self, nodes: list[Node], first: int, last: int) -> Iterator[tuple[int, int, str]]:
        """Lines ``first..last`` as texts within budget, cut between syntax nodes."""
        if self.size(first, last) <= self.budget:
            yield first, last, "\n".join(self.lines[first - 1 : last])
            return
        start, end = first, first - 1
        for unit_first, unit_last in self._units(nodes):
            unit_last = min(unit_last, last)
            if unit_last <= end:
                continue
            if end >= start and self.size(start, max(unit_last, unit_first)) > self.budget:
                yield from line_windows(self.lines, start, end, self.budget)
                start = end + 1
            end = unit_last
        if end < last:
            end = last
        if end >= start:
            yield from line_windows(self.lines, start, end, self.budget)

    def _units(self, nodes: Iterable[Node]) -> Iterator[tuple[int, int]]:
        """Line ranges of nodes small enough to fit, in order (descending at most
        ``MAX_SPLIT_DEPTH`` levels; what is still too big is cut by lines later)."""
        stack = [(n, 0) for n in reversed(list(nodes))]
        while stack:
            node, depth = stack.pop()
            first, last = _rows(node)
            small = self.size(first, last) <= self.budget
            if small or depth >= MAX_SPLIT_DEPTH or node.child_count == 0:
                yield first, last
            else:
                stack.extend((c, depth + 1) for c in reversed(node.children))


def _pack(entries: list[tuple[int, int, str]], budget: int) -> Iterator[tuple[int, int, str]]:
    """Consecutive entries joined up to ``budget`` characters; longer ones cut."""
    start, end, buf, size = 0, 0, list[str](), 0
    for first, last, line in entries:
        if buf and size + len(line) + 1 > budget:
            yield start, end, "\n".join(buf)
            buf, size = [], 0
        if len(line) > budget:
            for offset in range(0, len(line), budget):
                yield first, last, line[offset : offset + budget]
            continue
        if not buf:
            start = first
        buf.append(line)
        size += len(line) + 1
        end = last
    if buf:
        yield start, end, "\n".join(buf)
