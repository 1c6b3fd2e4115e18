"""tree-sitter ingesters: Python, JavaScript, TypeScript/TSX, Go, Rust, Java, C#, C, C++, Ruby."""

from streams.chunker.treesitter.ingester import TreeSitterIngester, treesitter_ingesters
from streams.chunker.treesitter.languages import SPECS, LanguageSpec

__all__ = ["SPECS", "LanguageSpec", "TreeSitterIngester", "treesitter_ingesters"]
