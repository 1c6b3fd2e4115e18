"""One input per surface, and the generators that make hostile (and valid) ones.

Surfaces: ``http:turns``, ``http:import``, ``http:messages``, ``http:events``,
``http:forget``, ``http:retrieve``, ``http:search`` (the GET read endpoints),
``mcp:<tool>``, ``registry`` (the schema registry mounted at ``/schema-registry``) and
``raw:<topic>`` (a record produced straight to a source topic, bypassing every edge). An
input is plain data; :mod:`.stack` sends it, :mod:`.strategies` (hypothesis) and
:mod:`.mixes` (named and seeded-random) make them.

Raw records are *recipes* (:class:`Bytes` or :class:`Wire`), encoded against the
pipeline's own schema registry when sent: a wire recipe is a real event class, its
fields set without the model's checks (as a foreign or buggy producer writes them), in
Confluent wire format; ``garble`` swaps a marker in it for bytes that are not UTF-8.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import quote

from api.mcp_server import TOOLS
from events.base import Event
from events.files import FileChanged
from events.kb import KbArticleUpserted
from events.limits import BODY_MAX_BYTES
from events.memory import SystemEventRecorded, TurnRecorded
from events.schema import Column, TableObserved
from events.serde import EventSerde

SOURCE_TOPICS = ("memory.turns", "kb.articles", "files.changes", "schema.changes")
_SURROGATE = re.compile("[\ud800-\udfff]")
GARBLE_MARKER = "Zq9GARBLEq9Z"
"""Twelve ASCII bytes a garbled wire recipe replaces by twelve bytes that are not UTF-8."""
NOT_UTF8 = b"\xff\xfe\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c"
MALFORMED_BODIES: tuple[bytes, ...] = (
    b"",
    b"{",
    b"[]",
    b"null",
    b'"text"',
    b"\xff\xfe\x00",
    b"[" * 20_000,
    b'{"a":' * 5_000,
    b'{"group_id":"acme:s1","user_message":"a\\u0000b"}',  # the NUL turn from the issue
    b'{"group_id":"acme:s1","user_message":"hi","user_message":"\\u0000"}',
    b'{"group_id":"acme:s1","user_message":"' + b"x" * BODY_MAX_BYTES + b'"}',
    b'{"group_id":"acme:s1","user_message":"\\ud800"}',
    b"\x00\x00\x00\x05\x02",
)


# -- inputs --------------------------------------------------------------------------------


def _brief(value: Any, limit: int = 80) -> str:
    """``repr`` cut to ``limit`` characters (a failing example may hold a megabyte)."""
    shown = repr(value)
    return shown if len(shown) <= limit else f"{shown[:limit]}…[{len(shown)} chars]"


class _Brief:
    """Dataclasses whose repr shows every field, each cut short."""

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={_brief(v)}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


@dataclass(frozen=True)
class ForgetTarget:
    """A forget the driver prepares: a *doomed* turn in ``group_id`` that must be gone
    after it (and, for a group, a *survivor* turn after it that must be there)."""

    scope: Literal["group", "tenant"]
    tenant: str
    group_id: str


@dataclass(frozen=True, repr=False)
class HttpCall(_Brief):
    surface: str
    method: str
    path: str
    body: bytes | None = None
    forget: ForgetTarget | None = None


@dataclass(frozen=True, repr=False)
class McpCall(_Brief):
    surface: str
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True, repr=False)
class RegistryCall(_Brief):
    method: str
    path: str
    """Below ``/schema-registry``; ``{prefix}`` is replaced by the pipeline's topic prefix."""
    body: bytes | None = None
    surface: str = "registry"


@dataclass(frozen=True, repr=False)
class Bytes(_Brief):
    data: bytes


@dataclass(frozen=True, repr=False)
class Wire(_Brief):
    event: str
    """The event class's name (``TurnRecorded``, ``KbArticleUpserted``, ...)."""
    fields: dict[str, Any]
    garble: bool = False
    schema_version: int | None = None
    """Set to claim a schema version the code does not know yet."""


@dataclass(frozen=True, repr=False)
class Raw(_Brief):
    topic: str
    """Short topic name, e.g. ``memory.turns``."""
    key: bytes | None
    recipe: Bytes | Wire
    surface: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "surface", f"raw:{self.topic}")


Input = HttpCall | McpCall | RegistryCall | Raw

WIRE_EVENTS: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (TurnRecorded, SystemEventRecorded, KbArticleUpserted, FileChanged, TableObserved)
}


def encode_recipe(recipe: Bytes | Wire, serde: EventSerde, topic: str) -> bytes:
    """The record value of ``recipe`` for the full topic name ``topic``."""
    if isinstance(recipe, Bytes):
        return recipe.data
    cls = WIRE_EVENTS[recipe.event]
    values = dict(recipe.fields)
    if recipe.schema_version is not None:
        values["schema_version"] = recipe.schema_version
    if "columns" in values:
        values["columns"] = tuple(Column.model_construct(**c) for c in values["columns"])
    event = cls.model_construct(**values)
    value = serde.encode(event, topic)
    if recipe.garble:
        value = value.replace(GARBLE_MARKER.encode(), NOT_UTF8, 1)
    return value


# -- builders shared by the strategies and the random mixes --------------------------------


def as_json(value: Any) -> bytes:
    """JSON as a client sends it: ASCII-escaped, so a lone surrogate travels as ``\\ud800``."""
    return json.dumps(value, ensure_ascii=True).encode()


def _post(surface: str, path: str, body: Any) -> HttpCall:
    raw = body if isinstance(body, bytes) else as_json(body)
    return HttpCall(surface, "POST", path, raw)


def turn(body: Any) -> HttpCall:
    return _post("http:turns", "/v1/memory/turns", body)


def imported(body: Any) -> HttpCall:
    return _post("http:import", "/v1/memory/import", body)


def messages(body: Any) -> HttpCall:
    return _post("http:messages", "/v1/memory/messages", body)


def event(body: Any) -> HttpCall:
    return _post("http:events", "/v1/memory/events", body)


def retrieve(body: Any) -> HttpCall:
    return _post("http:retrieve", "/v1/retrieve", body)


def forget(body: dict[str, Any], target: ForgetTarget | None) -> HttpCall:
    return HttpCall("http:forget", "POST", "/v1/memory/forget", as_json(body), target)


def forget_of(
    scope: Literal["group", "tenant"], tag: str, reason: Any, hostile_target: str | None
) -> HttpCall:
    """A forget of a prepared target (its own tenant ``fzf{tag}``), or of a hostile one
    that is never a valid id (so it can never erase anyone's memory)."""
    tenant = f"fzf{tag}"
    target = ForgetTarget(
        scope, tenant, f"{tenant}:_tenant" if scope == "tenant" else f"{tenant}:s"
    )
    body: dict[str, Any] = (
        {"tenant": tenant} if scope == "tenant" else {"group_id": target.group_id}
    )
    if hostile_target is not None:
        body = {"tenant" if scope == "tenant" else "group_id": hostile_target}
    if reason is not None:
        body["reason"] = reason
    return forget(body, None if hostile_target is not None else target)


def search(path: str, params: dict[str, str]) -> HttpCall:
    """A GET with the query string encoded by hand: lone surrogates travel as the bytes
    a broken client sends (``%ED%A0%80``)."""
    query = "&".join(
        f"{quote(k)}={quote(v.encode('utf-8', 'surrogatepass'), safe='')}"
        for k, v in params.items()
    )
    return HttpCall("http:search", "GET", f"{path}?{query}" if query else path)


def sendable(value: Any) -> Any:
    """``value`` without lone surrogates (JSON-RPC clients cannot serialize them)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [sendable(v) for v in value]
    if isinstance(value, dict):
        return {sendable(k): sendable(v) for k, v in value.items()}
    return value


def mcp(tool: str, arguments: dict[str, Any]) -> McpCall:
    return McpCall(f"mcp:{tool}", tool, sendable(arguments))


def register(subject: str, body: Any) -> RegistryCall:
    """``POST /subjects/{subject}/versions``; ``{prefix}`` in ``subject`` is the pipeline's."""
    raw = body if isinstance(body, bytes) else as_json(body)
    quoted = quote(subject.encode("utf-8", "surrogatepass"), safe="")
    return RegistryCall(
        "POST", f"/subjects/{quoted.replace('%7Bprefix%7D', '{prefix}')}/versions", raw
    )


def record_schema(name: str, fields: list[tuple[str, Any]]) -> dict[str, Any]:
    return {
        "type": "record",
        "name": name,
        "namespace": "fuzz",
        "fields": [{"name": n, "type": t} for n, t in fields],
    }


def wire_text(text: str) -> str:
    """Text an Avro writer can encode (fastavro writes str as UTF-8)."""
    return _SURROGATE.sub("\ufffd", text)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def wire_turn(group_id: str, user_message: str, agent_response: str = "", **extra: Any) -> Wire:
    fields = {
        "group_id": wire_text(group_id),
        "user_message": wire_text(user_message),
        "agent_response": wire_text(agent_response),
        "metadata": {},
        **extra,
    }
    return Wire("TurnRecorded", fields)


def wire_article(tenant: str, article_id: str, title: str, content: str, **extra: Any) -> Wire:
    fields = {
        "tenant": wire_text(tenant),
        "article_id": wire_text(article_id),
        "title": wire_text(title),
        "url": f"https://help.example/{quote(wire_text(article_id))}",
        "content": wire_text(content),
        "intent": ("troubleshooting",),
        "device": ("apollo",),
        "last_updated": datetime(2026, 1, 1, tzinfo=UTC),
        **extra,
    }
    return Wire("KbArticleUpserted", fields)


def wire_file(tenant: str, repo: str, path: str, content: str, **extra: Any) -> Wire:
    text = wire_text(content)
    fields = {
        "tenant": wire_text(tenant),
        "repo": wire_text(repo),
        "path": wire_text(path),
        "content": text,
        "sha256": sha256(text),
        "language": "markdown",
        "size_bytes": len(text.encode()),
        **extra,
    }
    return Wire("FileChanged", fields)


def wire_table(tenant: str, database: str, schema: str, table: str, comment: str) -> Wire:
    columns = [
        {"name": "id", "type": "int", "nullable": False},
        {"name": wire_text(comment)[:60] or "c", "type": "text", "comment": wire_text(comment)},
    ]
    fields = {
        "tenant": wire_text(tenant),
        "database": wire_text(database),
        "schema_name": wire_text(schema),
        "table_name": wire_text(table),
        "database_type": "postgres",
        "columns": columns,
        "primary_key": ("id",),
        "comment": wire_text(comment),
        "metadata_hash": sha256(f"{database}.{schema}.{table}.{comment}"),
    }
    return Wire("TableObserved", fields)


def wire_header(schema_id: int, body: bytes) -> bytes:
    return struct.pack(">bI", 0, schema_id) + body


def marked(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with the garble marker in its first long text field."""
    out = dict(fields)
    for name in ("user_message", "content", "title", "table_name"):
        if isinstance(out.get(name), str):
            out[name] = f"{out[name]}{GARBLE_MARKER}"
            break
    return out


SEARCHES: dict[str, tuple[str, ...]] = {
    "/v1/memory/search": ("group_id", "query", "limit", "as_of", "known_at", "max_tokens"),
    "/v1/tables/search": ("query", "limit", "database", "domain", "offset"),
    "/v1/code/search": ("query", "repo", "path", "language", "symbol_kind", "limit"),
    "/v1/join-path": ("source_table", "target_table", "max_hops"),
    "/v1/domains": ("database",),
}


MCP_REQUIRED: dict[str, tuple[str, ...]] = {
    name: tuple(n for n, f in model.model_fields.items() if f.is_required())
    for name, model, *_ in TOOLS
}
"""Arguments each tool's input schema requires: the SDK refuses a call without them before
the tool runs, so every generated call has them (with hostile values)."""
MCP_TEXT: dict[str, tuple[str, ...]] = {
    "add_memory": ("group_id", "user_message", "agent_response"),
    "search_memory": ("group_id", "query"),
    "retrieve_knowledge": ("intent", "message"),
    "search_tables": ("query", "database", "domain"),
    "search_code": ("query", "repo", "path", "language"),
    "get_table_schema": ("table",),
    "get_entity": ("group_id", "entity_id"),
    "get_join_path": ("source_table", "target_table"),
    "get_domain_overview": ("domain",),
    "list_domains": ("database",),
}
MCP_OTHER: dict[str, tuple[str, ...]] = {
    "add_memory": ("metadata",),
    "search_memory": ("limit", "as_of"),
    "retrieve_knowledge": ("metadata",),
    "search_tables": ("limit", "offset", "max_tokens"),
    "search_code": ("limit",),
    "get_table_schema": ("max_tokens",),
    "get_entity": ("max_tokens",),
    "get_join_path": ("max_hops",),
    "get_domain_overview": ("max_tokens",),
    "list_domains": ("limit",),
}
