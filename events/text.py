"""The one rule for control characters in text, and the two ways to apply it.

*Control characters* are the C0 controls except tab, line feed and carriage return
(U+0000-U+0008, U+000B, U+000C, U+000E-U+001F), DEL (U+007F), the C1 controls
(U+0080-U+009F), lone surrogates (U+D800-U+DFFF) and the noncharacters U+FFFE and
U+FFFF. PostgreSQL refuses NUL in text, a lone surrogate cannot be encoded as UTF-8 at
all, and the rest are invisible bytes that mean nothing in knowledge text but rewrite
terminals and logs (ESC sequences).

- Where the input has a caller who can fix it (HTTP, MCP, ``MemoryIngestor``, the
  memory event models) it is *refused*: :data:`CleanText` as a pydantic type, or
  :func:`check_text`, name the character and where it is.
- Where nobody can be asked (help-desk articles, files, database catalogs) it is
  *normalized*: :func:`normalize_text` removes the characters and says what it did, and
  the event keeps that note.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel
from pydantic_core import PydanticCustomError

INVALID_TEXT = "invalid_text"
"""The pydantic error type of :data:`CleanText` (the API answers it as ``INVALID_TEXT``)."""

CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
"""Matches one control character, as defined above."""

_C0 = [
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR",
    "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB",
    "ESC", "FS", "GS", "RS", "US",
]  # fmt: skip
_LISTED = 8  # distinct characters a note names before it says "…"


def describe(char: str) -> str:
    """``'U+0000 (NUL)'``: a character's code point and what it is."""
    cp = ord(char)
    if cp < 0x20:
        kind = _C0[cp]
    elif cp == 0x7F:
        kind = "DEL"
    elif 0xD800 <= cp <= 0xDFFF:
        kind = "lone surrogate"
    elif cp in (0xFFFE, 0xFFFF):
        kind = "noncharacter"
    else:
        kind = "C1 control"
    return f"U+{cp:04X} ({kind})"


def find_control(text: str) -> tuple[int, str] | None:
    """``(index, character)`` of the first control character in ``text``, if any."""
    match = CONTROL_CHARACTERS.search(text)
    return None if match is None else (match.start(), match.group())


class ControlCharacterError(ValueError):
    """Text holds a control character; ``field``, ``char`` and ``index`` say which and where."""

    def __init__(self, char: str, index: int, field: str | None = None) -> None:
        self.char = char
        self.index = index
        self.field = field
        where = f"{field}: " if field else ""
        super().__init__(
            f"{where}control character {describe(char)} at index {index}; "
            "remove it (tab, line feed and carriage return are allowed)"
        )


def check_text(text: str, field: str | None = None) -> str:
    """``text`` unchanged, or :class:`ControlCharacterError` naming the first control character."""
    found = find_control(text)
    if found is not None:
        raise ControlCharacterError(found[1], found[0], field)
    return text


def _refuse_control(text: str) -> str:
    found = find_control(text)
    if found is not None:
        raise PydanticCustomError(
            INVALID_TEXT,
            "control character {character} at index {index}; remove it "
            "(tab, line feed and carriage return are allowed)",
            {"character": describe(found[1]), "index": found[0]},
        )
    return text


CleanText = Annotated[str, AfterValidator(_refuse_control)]
"""A string without control characters; combine with ``Field(max_length=…)`` as usual."""


def normalize_text(text: str) -> tuple[str, str | None]:
    """``(text without control characters, note)``; the note is None when nothing changed.

    >>> normalize_text("a\\x00b\\x00c\\x1b")
    ('abc', 'removed 3 control characters (U+0000 x2, U+001B)')
    """
    found = CONTROL_CHARACTERS.findall(text)
    if not found:
        return text, None
    counts = sorted(Counter(found).items(), key=lambda kv: ord(kv[0]))
    parts = [f"U+{ord(c):04X}" + (f" x{n}" if n > 1 else "") for c, n in counts[:_LISTED]]
    if len(counts) > _LISTED:
        parts.append("…")
    plural = "s" if len(found) != 1 else ""
    note = f"removed {len(found)} control character{plural} ({', '.join(parts)})"
    return CONTROL_CHARACTERS.sub("", text), note


def normalize_values(value: Any, path: str = "") -> tuple[Any, list[str]]:
    """Every string inside dicts, lists and tuples normalized; notes say ``path: note``."""
    if isinstance(value, str):
        cleaned, note = normalize_text(value)
        return cleaned, [] if note is None else [f"{path or 'value'}: {note}"]
    notes: list[str] = []
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_key, key_note = normalize_text(key) if isinstance(key, str) else (key, None)
            where = f"{path}.{new_key}" if path else str(new_key)
            if key_note is not None:
                notes.append(f"{where} (key): {key_note}")
            out[new_key], item_notes = normalize_values(item, where)
            notes += item_notes
        return out, notes
    if isinstance(value, list | tuple):
        items = []
        for n, item in enumerate(value):
            cleaned, item_notes = normalize_values(item, f"{path}[{n}]")
            items.append(cleaned)
            notes += item_notes
        return type(value)(items), notes
    return value, notes


M = TypeVar("M", bound=BaseModel)


def normalize_model(model: M, notes_field: str = "notes") -> M:
    """``model`` with control characters removed from every string, each removal noted in
    ``notes_field`` (a tuple of strings) when the model has one; ``model`` itself when
    there was nothing to do."""
    noted = notes_field in type(model).model_fields
    data = model.model_dump(exclude={notes_field} if noted else None)
    cleaned, notes = normalize_values(data)
    if not notes:
        return model
    if noted:
        cleaned[notes_field] = (*getattr(model, notes_field), *notes)
    return type(model).model_validate(cleaned)
