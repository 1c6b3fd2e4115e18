"""What the model reads for a code chunk (streams.embedder.views), through the real
tree-sitter chunker: the chunker's header is not read as documentation, in any language."""

from __future__ import annotations

from events.chunks import Chunk
from streams.chunker.files import to_chunks
from streams.chunker.pieces import SourceDocument
from streams.chunker.treesitter.ingester import TreeSitterIngester, treesitter_ingesters
from streams.embedder.views import embedding_texts

GO = """package flags

// Arg represents a positional argument on the command line.
type Arg struct {
	Name string
}

func (a *Arg) isRemaining() bool {
	return a.Name == ""
}
"""


def _chunks(path: str, source: str, language: str, budget: int | None = None) -> list[Chunk]:
    ingester = next(i for i in treesitter_ingesters() if i.language == language)
    if budget is not None:
        ingester = TreeSitterIngester(ingester.spec, budget)
    pieces = ingester.ingest(SourceDocument(path, source, language))
    return list(to_chunks("doc", "v1", pieces, language)[0])


def _view(chunks: list[Chunk], path: str, symbol: str) -> str:
    views = embedding_texts(chunks, path)
    return next(v for c, v in zip(chunks, views, strict=True) if c.symbol == symbol)


def test_a_go_doc_comment_is_the_documentation_and_the_path_header_is_not() -> None:
    chunks = _chunks("flags/arg.go", GO, "go")
    arg = _view(chunks, "flags/arg.go", "Arg").splitlines()
    assert arg[0] == "struct arg in flags arg."
    assert arg[1] == "Arg represents a positional argument on the command line."
    assert all("flags/arg.go" not in line for line in arg)
    method = _view(chunks, "flags/arg.go", "isRemaining").splitlines()
    assert method[1] == "func (a *Arg) isRemaining() bool {"


def test_every_chunk_of_a_long_python_function_reads_its_docstring() -> None:
    body = "\n".join(f"    total += {i}" for i in range(120))
    source = (
        "def accumulate(values):\n"
        '    """Add up every value, one at a time."""\n'
        "    total = 0\n"
        f"{body}\n"
        "    return total\n"
    )
    chunks = [c for c in _chunks("pkg/acc.py", source, "python", budget=600) if c.symbol]
    assert len(chunks) > 2
    views = embedding_texts(chunks, "pkg/acc.py")
    assert all(v.splitlines()[1] == "Add up every value, one at a time." for v in views)
