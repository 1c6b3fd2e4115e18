"""Is a node a definition, and what is it called? The per-grammar special cases live here."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from streams.chunker.treesitter.languages import LanguageSpec

_DECLARATOR_LEAVES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "operator_cast",
    }
)
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_GENERICS = re.compile(r"<.*>", re.DOTALL)
_MAX_UNWRAP = 4
_NOT_A_DEFINITION = ("", "", ())


@dataclass(frozen=True, slots=True)
class Definition:
    """A declaration to chunk: ``outer`` spans wrappers (decorators, ``export``)."""

    outer: Node
    node: Node
    kind: str
    name: str
    container: bool
    body: Node | None
    qualifier: tuple[str, ...] = ()
    """Names the declaration itself adds before ``name``: ``A::B::f``, a Go receiver."""


def text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def unwrap(spec: LanguageSpec, node: Node) -> Node | None:
    """The declaration inside decorators, ``export`` and the like (``node`` itself if none)."""
    for _ in range(_MAX_UNWRAP):
        if node.type not in spec.wrappers:
            return node
        inner = node.child_by_field_name("definition") or node.child_by_field_name("declaration")
        if inner is None:
            named = node.named_children
            inner = named[-1] if named else None
        if inner is None:
            return None
        node = inner
    return node


def _declarator_name(node: Node) -> str:
    current: Node | None = node.child_by_field_name("declarator")
    for _ in range(16):
        if current is None:
            return ""
        if current.type in _DECLARATOR_LEAVES:
            return _GENERICS.sub("", text(current))
        nxt = current.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in current.named_children if c.type in _DECLARATOR_LEAVES), None)
        current = nxt
    return ""


def _split_qualified(name: str) -> tuple[str, tuple[str, ...]]:
    parts = [p for p in name.split("::") if p]
    if len(parts) < 2:
        return name, ()
    return parts[-1], tuple(parts[:-1])


def _go_receiver(node: Node) -> tuple[str, ...]:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ()
    for sub in receiver.named_children:
        kind = sub.child_by_field_name("type")
        while kind is not None and kind.type in {"pointer_type", "generic_type"}:
            kind = kind.named_children[0] if kind.named_children else None
        if kind is not None:
            return (text(kind),)
    return ()


def _special(spec: LanguageSpec, node: Node, kind: str) -> tuple[str, str, tuple[str, ...]] | None:
    """``(kind, name, qualifier)`` for grammars whose names are not a ``name`` field."""
    t = node.type
    if t == "function_definition" and spec.name in {"c", "cpp"}:
        name, qualifier = _split_qualified(_declarator_name(node))
        return ("method" if qualifier else kind), name, qualifier
    if t in {"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"}:
        if node.child_by_field_name("body") is None:
            return _NOT_A_DEFINITION  # a forward declaration or a use
        return kind, text(node.child_by_field_name("name")) or "(anonymous)", ()
    if t == "type_definition":
        inner = node.child_by_field_name("type")
        if inner is None or inner.child_by_field_name("body") is None:
            return _NOT_A_DEFINITION  # a one-line typedef reads better with its neighbours
        inner_kind = "enum" if inner.type == "enum_specifier" else "struct"
        return inner_kind, text(node.child_by_field_name("declarator")), ()
    if t == "type_declaration":  # Go
        spec_node = next((c for c in node.named_children if c.type.startswith("type_")), None)
        if spec_node is None:
            return _NOT_A_DEFINITION
        value = spec_node.child_by_field_name("type")
        value_type = value.type if value is not None else ""
        go_kind = {"struct_type": "struct", "interface_type": "interface"}.get(value_type, "type")
        return go_kind, text(spec_node.child_by_field_name("name")), ()
    if t == "method_declaration" and spec.name == "go":
        return kind, text(node.child_by_field_name("name")), _go_receiver(node)
    if t == "impl_item":
        return kind, _GENERICS.sub("", text(node.child_by_field_name("type"))), ()
    return None


def classify(spec: LanguageSpec, node: Node, in_container: bool) -> Definition | None:
    """The definition ``node`` is (after unwrapping), or ``None`` for other code."""
    inner = unwrap(spec, node)
    if inner is None:
        return None
    t = inner.type
    if t in spec.variables:
        return _variable(spec, node, inner)
    container = t in spec.containers
    kind = spec.containers.get(t) or spec.leaves.get(t)
    if kind is None:
        return None
    qualifier: tuple[str, ...] = ()
    special = _special(spec, inner, kind)
    if special is not None:
        kind, name, qualifier = special
    else:
        name = text(inner.child_by_field_name("name"))
    if not name:
        return None
    if kind == "function" and in_container:
        kind = "method"
    return Definition(
        node, inner, kind, name, container, inner.child_by_field_name("body"), qualifier
    )


def _variable(spec: LanguageSpec, outer: Node, node: Node) -> Definition | None:
    declarator = next((c for c in node.named_children if c.type == "variable_declarator"), None)
    if declarator is None:
        return None
    value = declarator.child_by_field_name("value")
    name = text(declarator.child_by_field_name("name"))
    if value is None or not name:
        return None
    if value.type in _FUNCTION_VALUES:
        return Definition(outer, node, "function", name, False, value.child_by_field_name("body"))
    if value.type == "class":
        return Definition(outer, node, "class", name, True, value.child_by_field_name("body"))
    return None


def namespace_name(node: Node) -> str:
    """The name a namespace or package node adds to qualified names (may be empty)."""
    named = node.child_by_field_name("name")
    if named is None:
        named = next(
            (c for c in node.named_children if "identifier" in c.type or c.type == "name"), None
        )
    return text(named)
