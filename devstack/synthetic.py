"""Made-up inputs for tests and benchmarks: tables joined by foreign keys, and code files
chunked into functions with an embedding for every chunk."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from events.chunks import Chunk, ChunksEmbedded, ChunkVector, DocumentChunked
from events.schema import Column, ForeignKey, TableObserved


def referencing_table(
    database: str,
    name: str,
    refs: Sequence[str],
    *columns: Column,
    metadata_hash: str,
    row_count_approx: int,
    comment: str | None = None,
) -> TableObserved:
    """A PostgreSQL table ``database.public.name`` keyed by ``id``, with a ``<ref>_id``
    foreign key to the ``id`` of each table in ``refs``, then ``columns``."""
    keys = [Column(name="id", type="bigint", nullable=False)]
    keys += [Column(name=f"{r}_id", type="bigint", nullable=False) for r in refs]
    foreign_keys = tuple(
        ForeignKey(
            name=f"{name}_{r}_fk",
            columns=(f"{r}_id",),
            references_table=f"{database}.public.{r}",
            references_columns=("id",),
        )
        for r in refs
    )
    return TableObserved(
        database=database,
        schema_name="public",
        table_name=name,
        database_type="postgres",
        columns=(*keys, *columns),
        primary_key=("id",),
        foreign_keys=foreign_keys,
        comment=comment,
        row_count_approx=row_count_approx,
        metadata_hash=metadata_hash,
    )


def code_file(
    repo: str, path: str, version: str, functions: Sequence[tuple[str, str]], chunked_by: str
) -> DocumentChunked:
    """The Python file ``path`` of ``repo`` as one chunk a function, from (symbol, text)."""
    document_id = f"file:{repo}:{path}"
    chunks = tuple(
        Chunk(
            chunk_id=f"{document_id}@{version[:12]}#{i}",
            index=i,
            text=text,
            kind="function",
            symbol=symbol,
            language="python",
        )
        for i, (symbol, text) in enumerate(functions)
    )
    return DocumentChunked(
        document_id=document_id,
        document_version=version,
        source_type="file",
        path=path,
        language="python",
        chunked_by=chunked_by,
        chunks=chunks,
        metadata={"repo": repo},
    )


def embeddings(
    document: DocumentChunked, model: str, dims: int, vector: Callable[[Chunk], list[float]]
) -> ChunksEmbedded:
    """Every chunk of ``document`` embedded as ``vector(chunk)``, in chunk order."""
    return ChunksEmbedded(
        document_id=document.document_id,
        document_version=document.document_version,
        model=model,
        dims=dims,
        vectors=tuple(ChunkVector(chunk_id=c.chunk_id, vector=vector(c)) for c in document.chunks),
    )
