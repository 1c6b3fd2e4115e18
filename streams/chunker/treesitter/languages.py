"""Which tree-sitter node types are chunks, per language (seed 004's chunk-type table).

Grammars come from the per-language wheels and load on first use, never downloaded.
``containers`` are walked for members and chunked as a skeleton (member bodies elided);
``leaves`` are chunked whole (split by cAST when oversized); ``namespaces`` only add to
the qualified name; ``wrappers`` (decorators, ``export``, ``template<>``) are unwrapped
to the declaration inside but keep their lines; ``comments`` directly above a
definition travel with it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import tree_sitter


@dataclass(frozen=True)
class LanguageSpec:
    name: str
    module: str
    extensions: tuple[str, ...]
    marker: str = "//"
    sep: str = "."
    function: str = "language"
    containers: Mapping[str, str] = field(default_factory=dict)
    leaves: Mapping[str, str] = field(default_factory=dict)
    namespaces: frozenset[str] = frozenset()
    wrappers: frozenset[str] = frozenset()
    prefixes: frozenset[str] = frozenset()
    """Siblings that set the qualified-name prefix of what follows (``package x;``)."""
    groups: frozenset[str] = frozenset()
    """Member lists nested inside a container body, walked as if they were the body."""
    comments: frozenset[str] = frozenset()
    variables: frozenset[str] = frozenset()
    """``const f = () => {}``: declarations that are functions or classes by their value."""
    priority: int = 10

    @property
    def agent_id(self) -> str:
        return f"{self.name}-ingester"

    def grammar(self) -> tree_sitter.Language:
        return _grammar(self.module, self.function)


@cache
def _grammar(module: str, function: str) -> tree_sitter.Language:
    mod: Any = importlib.import_module(module)
    return tree_sitter.Language(getattr(mod, function)())


def _kinds(*node_types: str, **others: str) -> dict[str, str]:
    """Chunk kind by node type: the first word of each of ``node_types``
    (``function_item`` is a ``function``), and ``others`` as they say."""
    return {**{t: t.split("_")[0] for t in node_types}, **others}


_C_FAMILY = frozenset({"comment"})
_JS_LEAVES = _kinds(
    "function_declaration", "method_definition", generator_function_declaration="function"
)
_TS_COMMON: dict[str, Any] = {
    "containers": _kinds("class_declaration", abstract_class_declaration="class"),
    "leaves": {
        **_JS_LEAVES,
        **_kinds("interface_declaration", "type_alias_declaration", "enum_declaration"),
    },
    "namespaces": frozenset({"internal_module", "module"}),
    "wrappers": frozenset({"export_statement", "expression_statement", "ambient_declaration"}),
    "comments": _C_FAMILY,
    "variables": frozenset({"lexical_declaration", "variable_declaration"}),
}
_C_LEAVES = _kinds(
    "function_definition",
    "struct_specifier",
    "enum_specifier",
    "type_definition",
    union_specifier="struct",
)

SPECS: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        "python", "tree_sitter_python", ("py", "pyi"), marker="#",
        containers=_kinds("class_definition"),
        leaves=_kinds("function_definition"),
        wrappers=frozenset({"decorated_definition"}),
    ),
    LanguageSpec(
        "javascript", "tree_sitter_javascript", ("js", "jsx", "mjs", "cjs"),
        containers=_kinds("class_declaration"),
        leaves=_JS_LEAVES,
        wrappers=frozenset({"export_statement"}),
        comments=_C_FAMILY,
        variables=frozenset({"lexical_declaration", "variable_declaration"}),
    ),
    LanguageSpec(
        "typescript", "tree_sitter_typescript", ("ts", "mts", "cts"),
        function="language_typescript", **_TS_COMMON,
    ),
    LanguageSpec("tsx", "tree_sitter_typescript", ("tsx",), function="language_tsx", **_TS_COMMON),
    LanguageSpec(
        "go", "tree_sitter_go", ("go",),
        leaves=_kinds("function_declaration", "method_declaration", "type_declaration"),
        prefixes=frozenset({"package_clause"}),
        comments=_C_FAMILY,
    ),
    LanguageSpec(
        "rust", "tree_sitter_rust", ("rs",), sep="::",
        containers=_kinds(impl_item="class", trait_item="interface"),
        leaves=_kinds(
            "function_item", "struct_item", "enum_item", "type_item",
            union_item="struct", macro_definition="function",
        ),
        namespaces=frozenset({"mod_item"}),
        comments=frozenset({"line_comment", "block_comment", "attribute_item"}),
    ),
    LanguageSpec(
        "java", "tree_sitter_java", ("java",),
        containers=_kinds(
            "class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
            annotation_type_declaration="interface",
        ),
        leaves=_kinds(
            "method_declaration",
            constructor_declaration="method", compact_constructor_declaration="method",
        ),
        prefixes=frozenset({"package_declaration"}),
        groups=frozenset({"enum_body_declarations"}),
        comments=frozenset({"block_comment", "line_comment"}),
    ),
    LanguageSpec(
        "csharp", "tree_sitter_c_sharp", ("cs", "csx"),
        containers=_kinds(
            "class_declaration", "interface_declaration", "struct_declaration",
            "record_declaration", "enum_declaration", record_struct_declaration="record",
        ),
        leaves=_kinds(
            "method_declaration",
            constructor_declaration="method", destructor_declaration="method",
            operator_declaration="method", conversion_operator_declaration="method",
            delegate_declaration="type",
        ),
        namespaces=frozenset({"namespace_declaration"}),
        prefixes=frozenset({"file_scoped_namespace_declaration"}),
        comments=_C_FAMILY,
    ),
    LanguageSpec("c", "tree_sitter_c", ("c", "h"), leaves=_C_LEAVES, comments=_C_FAMILY),
    LanguageSpec(
        "cpp", "tree_sitter_cpp", ("cc", "cpp", "cxx", "hh", "hpp", "hxx", "h"), sep="::",
        containers=_kinds("class_specifier", "struct_specifier", union_specifier="struct"),
        leaves=_kinds(
            "function_definition", "enum_specifier", "type_definition", alias_declaration="type"
        ),
        namespaces=frozenset({"namespace_definition", "linkage_specification"}),
        wrappers=frozenset({"template_declaration"}),
        comments=_C_FAMILY,
        priority=15,  # for .h the C grammar goes first; C++ takes what C cannot parse
    ),
    LanguageSpec(
        "ruby", "tree_sitter_ruby", ("rb", "rake", "gemspec"), marker="#", sep="::",
        containers=_kinds("class", module="namespace", singleton_class="class"),
        leaves=_kinds(method="function", singleton_method="method"),
        comments=_C_FAMILY,
    ),
)  # fmt: skip
