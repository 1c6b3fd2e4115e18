"""A few code chunks with symbols and line ranges, as the file chunker would emit them."""

from __future__ import annotations

from uuid import NAMESPACE_URL, uuid5

from events.chunks import Chunk, DocumentChunked

SAMPLES = [
    ("tribal", "api/services/knowledge.py", "python", "retrieve_knowledge", "function",
     "api.services.knowledge.retrieve_knowledge", 120, 140,
     "async def retrieve_knowledge(ctx, req, tenant): help-desk articles for a support "
     "message within a 100 ms budget; never raises"),
    ("tribal", "projections/catalog/joins.py", "python", "shortest_path", "function",
     "projections.catalog.joins.shortest_path", 40, 80,
     "def shortest_path(edges, source, target, max_hops): breadth-first search over "
     "foreign keys in both directions"),
    ("tribal", "streams/embedder/model.py", "python", "SentenceTransformerEmbedder", "class",
     "streams.embedder.model.SentenceTransformerEmbedder", 37, 80,
     "class SentenceTransformerEmbedder: a sentence-transformers model on the CPU that "
     "turns texts into embedding vectors"),
    ("webshop", "src/cart.ts", "typescript", "addToCart", "function", "cart.addToCart", 10, 30,
     "export function addToCart(cart, product, quantity) { /* add a product to the "
     "shopping cart and recompute totals */ }"),
]  # fmt: skip


def code_docs() -> list[DocumentChunked]:
    out = []
    for repo, path, language, symbol, kind, fqn, start, end, text in SAMPLES:
        doc = f"file:{repo}:{path}"
        version = uuid5(NAMESPACE_URL, text).hex
        chunk = Chunk(
            chunk_id=f"{doc}@{version[:12]}#0", index=0, text=text, kind=kind, symbol=symbol,
            fully_qualified_name=fqn, start_line=start, end_line=end, language=language,
        )  # fmt: skip
        out.append(
            DocumentChunked(
                document_id=doc,
                document_version=version,
                source_type="file",
                title=path,
                path=path,
                language=language,
                chunked_by="tree-sitter",
                chunks=(chunk,),
                metadata={"repo": repo},
            )
        )
    return out
