"""Which language a file is written in, from its name (seed 004's ``ingest:{ext}``).

The chunker picks an ingester by extension; ``language`` is the human name that
travels with the content (``"python"``, ``"csharp"``), ``None`` when unknown, so the
text fallback applies.
"""

from __future__ import annotations

import posixpath

# One line per family reads better than one line per extension.
# fmt: off
_BY_EXTENSION: dict[str, str] = {
    # code
    "py": "python", "pyi": "python", "pyx": "cython",
    "go": "go",
    "rs": "rust",
    "ts": "typescript", "tsx": "typescript", "mts": "typescript", "cts": "typescript",
    "js": "javascript", "jsx": "javascript", "mjs": "javascript", "cjs": "javascript",
    "java": "java", "kt": "kotlin", "kts": "kotlin", "scala": "scala", "groovy": "groovy",
    "c": "c", "h": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hh": "cpp", "hpp": "cpp", "hxx": "cpp",
    "cs": "csharp", "csx": "csharp", "fs": "fsharp", "vb": "vbnet",
    "rb": "ruby", "php": "php", "pl": "perl", "pm": "perl", "lua": "lua", "r": "r",
    "swift": "swift", "m": "objective-c", "mm": "objective-cpp", "dart": "dart",
    "ex": "elixir", "exs": "elixir", "erl": "erlang", "hs": "haskell", "ml": "ocaml",
    "clj": "clojure", "lisp": "lisp", "lsp": "lisp", "cl": "lisp", "scm": "scheme",
    "zig": "zig", "nim": "nim", "jl": "julia", "sol": "solidity",
    "sql": "sql",
    "sh": "shell", "bash": "shell", "zsh": "shell", "fish": "fish", "ps1": "powershell",
    "bat": "batch", "cmd": "batch",
    # web and templates
    "html": "html", "htm": "html", "css": "css", "scss": "scss", "less": "less",
    "vue": "vue", "svelte": "svelte", "jinja": "jinja", "j2": "jinja",
    # docs
    "md": "markdown", "markdown": "markdown", "mdx": "markdown",
    "rst": "restructuredtext", "adoc": "asciidoc", "tex": "latex",
    "txt": "text", "text": "text",
    # data and config
    "json": "json", "jsonl": "json", "yaml": "yaml", "yml": "yaml", "toml": "toml",
    "ini": "ini", "cfg": "ini", "conf": "ini", "xml": "xml", "csv": "csv", "tsv": "csv",
    "proto": "protobuf", "graphql": "graphql", "gql": "graphql", "tf": "terraform",
    "hcl": "hcl", "avsc": "json", "ipynb": "json",
}
# fmt: on

_BY_NAME: dict[str, str] = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "make",
    "gnumakefile": "make",
    "justfile": "just",
    "cmakelists.txt": "cmake",
    "gemfile": "ruby",
    "rakefile": "ruby",
    "jenkinsfile": "groovy",
    "license": "text",
    "readme": "text",
}


def language_for(path: str) -> str | None:
    """The language of ``path`` (``'/'``-separated), or ``None`` when the name says nothing."""
    name = posixpath.basename(path).lower()
    known = _BY_NAME.get(name)
    if known is not None:
        return known
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:  # no extension, or a dotfile such as ".bashrc"
        return None
    return _BY_EXTENSION.get(ext)
