"""search_code answers each symbol once: its best-scored chunk."""

from __future__ import annotations

from api.services.code import one_per_symbol
from projections.index.port import Hit, IndexedObject, Kind


def chunk(n: int, symbol: str | None, path: str = "pkg/client.py") -> Hit:
    obj = IndexedObject(
        chunk_id=f"c{n}", kind=Kind.CODE_CHUNK, document_id=path, text="...", repo="r",
        path=path, symbol=symbol, fully_qualified_name=f"pkg.client.{symbol}" if symbol else None,
    )  # fmt: skip
    return Hit(obj, 0.5)


def test_a_long_function_split_in_chunks_and_its_overload_stubs_answer_once() -> None:
    scored = [
        (chunk(1, "Client.send"), 0.9),
        (chunk(2, "Client.send"), 0.8),  # the second half of a long method
        (chunk(3, "Client.close"), 0.7),
        (chunk(4, "Client.send"), 0.6),  # an @overload stub
        (chunk(5, "Client.send", path="pkg/other.py"), 0.5),  # same name, other file
        (chunk(6, None), 0.4),  # module-level text without a symbol
        (chunk(7, None), 0.3),
    ]
    kept = one_per_symbol(scored)
    assert [(h.object.chunk_id, s) for h, s in kept] == [
        ("c1", 0.9), ("c3", 0.7), ("c5", 0.5), ("c6", 0.4), ("c7", 0.3)
    ]  # fmt: skip
