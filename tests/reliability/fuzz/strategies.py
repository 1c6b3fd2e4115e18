"""Hypothesis strategies for every surface's inputs (:mod:`.inputs`), hostile and valid,
and :func:`mixes`: a shuffled mix of all of them for one end-to-end example."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from hypothesis import strategies as st

from devstack.fuzz import inputs
from devstack.fuzz.hostile import (
    ID_CHARS,
    clean_texts,
    hostile_group_ids,
    hostile_ids,
    hostile_metadata,
    hostile_texts,
    json_values,
    valid_ids,
)
from devstack.fuzz.inputs import (
    MALFORMED_BODIES,
    Bytes,
    HttpCall,
    Input,
    McpCall,
    Raw,
    RegistryCall,
    Wire,
)
from events.limits import QUERY_MAX, RETRIEVE_MESSAGE_MAX
from events.types import GROUP_ID_PATTERN, TENANT_PATTERN

_VALID_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_VALID_TARGET = {"tenant": re.compile(TENANT_PATTERN), "group": re.compile(GROUP_ID_PATTERN)}


def tags() -> st.SearchStrategy[str]:
    """A fresh id part, so inputs of different examples never share a key."""
    return st.uuids().map(lambda u: u.hex[:10])


def invalid_ids() -> st.SearchStrategy[str]:
    return hostile_ids().filter(lambda s: not _VALID_ID.fullmatch(s))


def past_times() -> st.SearchStrategy[str]:
    """Times a turn may say it happened at: aware, not in the future."""
    return st.datetimes(
        min_value=datetime(1990, 1, 1), max_value=datetime(2025, 1, 1), timezones=st.just(UTC)
    ).map(datetime.isoformat)


def valid_turn_bodies(tenants: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "group_id": st.tuples(st.sampled_from(tenants), valid_ids(12)).map(":".join),
            "user_message": clean_texts(min_size=1),
        },
        optional={
            "agent_response": clean_texts(),
            "metadata": st.dictionaries(valid_ids(8), clean_texts(max_pieces=2), max_size=3),
            "speaker": clean_texts(min_size=1, max_pieces=2),
            "occurred_at": past_times(),
        },
    )


def valid_turns(tenants: list[str]) -> st.SearchStrategy[HttpCall]:
    """Turns any caller may send: valid ids, clean (if unusual) text and metadata."""
    return valid_turn_bodies(tenants).map(inputs.turn)


def hostile_turn_bodies() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries(
            {"group_id": hostile_group_ids()},
            optional={
                "user_message": hostile_texts(),
                "agent_response": hostile_texts(),
                "turn_id": st.one_of(st.uuids().map(str), hostile_texts()),
                "metadata": hostile_metadata(),
                "speaker": st.one_of(hostile_texts(), json_values()),
                "occurred_at": st.one_of(hostile_texts(), json_values()),
                "unexpected": json_values(),
            },
        ),
        json_values(),
    )


def hostile_turns() -> st.SearchStrategy[HttpCall]:
    return st.one_of(hostile_turn_bodies(), st.sampled_from(MALFORMED_BODIES)).map(inputs.turn)


def imports(tenants: list[str]) -> st.SearchStrategy[HttpCall]:
    """History imports: valid turns, maybe hostile ones among them, or a hostile body."""
    turns = st.lists(
        st.one_of(valid_turn_bodies(tenants), hostile_turn_bodies()), min_size=0, max_size=4
    )
    body = st.fixed_dictionaries({"turns": turns}, optional={"unexpected": json_values()})
    return st.one_of(body, json_values(), st.sampled_from(MALFORMED_BODIES)).map(inputs.imported)


def conversations(tenants: list[str]) -> st.SearchStrategy[HttpCall]:
    """Conversations as messages: valid ones (speakers and roles), hostile messages among
    them, or a hostile body."""
    valid = st.fixed_dictionaries(
        {"content": clean_texts(min_size=1)},
        optional={
            "speaker": clean_texts(min_size=1, max_pieces=2),
            "role": st.sampled_from(["user", "assistant", "agent"]),
            "occurred_at": past_times(),
        },
    )
    hostile = st.fixed_dictionaries(
        {},
        optional={
            "content": hostile_texts(),
            "speaker": st.one_of(hostile_texts(), json_values()),
            "role": st.one_of(hostile_texts(), json_values()),
            "occurred_at": st.one_of(hostile_texts(), json_values()),
            "unexpected": json_values(),
        },
    )
    group = st.one_of(
        st.tuples(st.sampled_from(tenants), valid_ids(12)).map(":".join), hostile_group_ids()
    )
    body = st.fixed_dictionaries(
        {"group_id": group, "messages": st.lists(st.one_of(valid, hostile), max_size=4)},
        optional={"occurred_at": past_times(), "unexpected": json_values()},
    )
    return st.one_of(body, json_values(), st.sampled_from(MALFORMED_BODIES)).map(inputs.messages)


def hostile_events() -> st.SearchStrategy[HttpCall]:
    body = st.fixed_dictionaries(
        {"group_id": hostile_group_ids()},
        optional={
            "event_type": hostile_texts(),
            "content": hostile_texts(),
            "metadata": hostile_metadata(),
        },
    )
    return st.one_of(body, st.sampled_from(MALFORMED_BODIES)).map(inputs.event)


def hostile_forgets() -> st.SearchStrategy[HttpCall]:
    """Forgets of prepared targets, or of targets invalid for their scope ("-" is a valid
    tenant, so it is never a hostile one)."""

    def of_scope(scope: str) -> st.SearchStrategy[HttpCall]:
        valid = _VALID_TARGET[scope]
        return st.builds(
            inputs.forget_of,
            scope=st.just(scope),
            tag=tags(),
            reason=st.one_of(st.none(), hostile_texts(), json_values()),
            hostile_target=st.one_of(
                st.none(),
                st.one_of(invalid_ids(), hostile_group_ids()).filter(
                    lambda s: not valid.fullmatch(s)
                ),
            ),
        )

    return st.sampled_from(["group", "tenant"]).flatmap(of_scope)


def hostile_retrieves() -> st.SearchStrategy[HttpCall]:
    metadata = st.fixed_dictionaries(
        {},
        optional={
            "product": hostile_texts(),
            "device": hostile_texts(),
            "attachments": st.lists(hostile_texts(), max_size=3),
        },
    )
    body = st.fixed_dictionaries(
        {},
        optional={
            "intent": st.one_of(hostile_texts(), json_values()),
            "message": st.one_of(hostile_texts(), st.just("m" * (RETRIEVE_MESSAGE_MAX + 1))),
            "metadata": st.one_of(metadata, json_values()),
        },
    )
    return st.one_of(body, st.sampled_from(MALFORMED_BODIES)).map(inputs.retrieve)


def hostile_searches() -> st.SearchStrategy[HttpCall]:
    value = st.one_of(hostile_texts().map(lambda s: s[: QUERY_MAX + 50]), st.integers().map(str))
    by_query = st.sampled_from(sorted(inputs.SEARCHES)).flatmap(
        lambda path: st.dictionaries(st.sampled_from(inputs.SEARCHES[path]), value, max_size=4).map(
            lambda params: inputs.search(path, params)
        )
    )
    by_path = st.tuples(
        st.sampled_from(["/v1/tables/", "/v1/domains/", "/v1/memory/entities/"]),
        hostile_texts().map(lambda s: quote(s[:300].encode("utf-8", "surrogatepass"), safe="")),
    ).map(lambda p: inputs.search(p[0] + (p[1] or "x"), {}))
    return st.one_of(by_query, by_path)


def hostile_mcp_calls() -> st.SearchStrategy[McpCall]:
    """Tool calls with hostile text in every text parameter and any JSON in the others
    (a text parameter always gets a string: a non-string is the SDK's to refuse)."""

    def call(tool: str) -> st.SearchStrategy[McpCall]:
        args = st.fixed_dictionaries(
            {name: hostile_texts() for name in inputs.MCP_REQUIRED[tool]},
            optional={
                **{
                    name: hostile_texts()
                    for name in inputs.MCP_TEXT[tool]
                    if name not in inputs.MCP_REQUIRED[tool]
                },
                **{
                    name: st.one_of(json_values(), hostile_metadata())
                    for name in inputs.MCP_OTHER[tool]
                },
            },
        )
        return args.map(lambda a: inputs.mcp(tool, a))

    return st.sampled_from(sorted(inputs.MCP_TEXT)).flatmap(call)


def valid_mcp_memories(tenants: list[str]) -> st.SearchStrategy[McpCall]:
    args = st.fixed_dictionaries(
        {
            "group_id": st.tuples(st.sampled_from(tenants), valid_ids(12)).map(":".join),
            "user_message": clean_texts(min_size=1),
        },
        optional={"agent_response": clean_texts()},
    )
    return args.map(lambda a: inputs.mcp("add_memory", a))


def hostile_registrations() -> st.SearchStrategy[RegistryCall]:
    field_type = st.sampled_from(["string", "int", "long", "boolean", "bytes", "nope", 7])
    schema = st.builds(
        inputs.record_schema,
        name=st.one_of(
            st.text(
                alphabet=ID_CHARS.replace(".", "").replace("-", ""), min_size=1, max_size=12
            ).map(lambda s: f"R{s}"),
            hostile_texts(),
        ),
        fields=st.lists(
            st.tuples(st.text(alphabet="abcdefgh_", min_size=1, max_size=8), field_type),
            max_size=4,
            unique_by=lambda f: f[0],
        ),
    )
    body = st.one_of(
        schema.map(lambda s: {"schema": json.dumps(s)}),
        schema.map(lambda s: {"schema": json.dumps(s), "schemaType": "PROTOBUF"}),
        st.fixed_dictionaries({"schema": st.one_of(hostile_texts(), json_values())}),
        json_values(),
    )
    subject = st.one_of(
        tags().map(lambda t: f"fuzz-{t}"), hostile_texts().map(lambda s: s[:600]), st.just("")
    )
    writes = st.builds(inputs.register, subject, st.one_of(body, st.sampled_from(MALFORMED_BODIES)))
    reads = st.one_of(
        st.integers(-5, 2**40).map(lambda i: RegistryCall("GET", f"/schemas/ids/{i}")),
        hostile_texts().map(
            lambda s: RegistryCall(
                "GET",
                f"/subjects/{quote(s[:600].encode('utf-8', 'surrogatepass'), safe='')}"
                "/versions/latest",
            )
        ),
        st.just(RegistryCall("GET", "/subjects")),
    )
    return st.one_of(writes, writes, reads)


def valid_registrations() -> st.SearchStrategy[RegistryCall]:
    return tags().map(
        lambda t: inputs.register(
            f"fuzz-{t}", {"schema": json.dumps(inputs.record_schema(f"R{t}", [("a", "string")]))}
        )
    )


def raw_recipes(topic: str, tenants: list[str]) -> st.SearchStrategy[Raw]:
    """Records for one source topic: random bytes, a wire header with junk, and real event
    classes with hostile payloads (control characters, huge or unicode text, odd ids, text
    that is not UTF-8, a schema version from the future)."""
    tenant = st.one_of(st.sampled_from(tenants), hostile_ids())
    text = hostile_texts().map(inputs.wire_text)
    words = clean_texts(min_size=1).map(inputs.wire_text)
    junk = st.one_of(
        st.binary(max_size=200),
        st.sampled_from([b"", b"\x00", b"\x00\x00\x00\x00", b'{"json": true}']),
        st.tuples(st.integers(0, 2**32 - 1), st.binary(max_size=40)).map(
            lambda t: inputs.wire_header(*t)
        ),
    ).map(Bytes)
    wire: st.SearchStrategy[Wire]
    if topic == "memory.turns":
        group = st.one_of(
            st.tuples(st.sampled_from(tenants), tags()).map(":".join), hostile_group_ids()
        )
        wire = st.builds(
            inputs.wire_turn, group, st.one_of(words, text), st.one_of(st.just(""), text)
        )
    elif topic == "kb.articles":
        wire = st.builds(
            inputs.wire_article,
            tenant,
            st.tuples(hostile_ids(), tags()).map("-".join),
            words,
            st.tuples(words, text).map("\n\n".join),
        )
    elif topic == "files.changes":
        wire = st.builds(
            inputs.wire_file,
            tenant,
            st.one_of(valid_ids(), hostile_ids()),
            st.tuples(hostile_ids(), tags()).map(lambda p: f"docs/{p[0]}-{p[1]}.md"),
            st.tuples(words, text).map("\n\n".join),
        )
    else:
        wire = st.builds(
            inputs.wire_table,
            tenant,
            st.one_of(valid_ids(), hostile_ids()),
            st.just("public"),
            st.tuples(hostile_ids(), tags()).map("_".join),
            text,
        )
    tampered = st.one_of(
        wire,
        wire.map(lambda w: Wire(w.event, inputs.marked(w.fields), garble=True)),
        wire.map(lambda w: Wire(w.event, w.fields, schema_version=99)),
    )
    foreign = st.sampled_from([t for t in inputs.SOURCE_TOPICS if t != topic]).flatmap(
        lambda other: raw_recipes_plain(other, tenants)
    )  # another topic's event
    key = st.one_of(st.none(), st.binary(max_size=40), tags().map(str.encode))
    return st.builds(Raw, st.just(topic), key, st.one_of(junk, tampered, tampered, foreign))


def raw_recipes_plain(topic: str, tenants: list[str]) -> st.SearchStrategy[Wire]:
    """A valid-looking event of ``topic`` (used as a foreign event on another topic)."""
    t = st.sampled_from(tenants)
    if topic == "memory.turns":
        return st.builds(inputs.wire_turn, st.tuples(t, tags()).map(":".join), st.just("hello"))
    if topic == "kb.articles":
        return st.builds(inputs.wire_article, t, tags(), st.just("Title"), st.just("Body text."))
    if topic == "files.changes":
        return st.builds(
            inputs.wire_file,
            t,
            st.just("repo"),
            tags().map(lambda p: f"{p}.md"),
            st.just("# Title\n\ntext"),
        )
    return st.builds(inputs.wire_table, t, st.just("db"), st.just("public"), tags(), st.just("c"))


def mixes(valid_share: int = 3) -> st.SearchStrategy[list[Input]]:
    """A shuffled mix of every surface: hostile inputs of each kind, plus valid turns and
    memories across many tenants (``valid_share`` per hostile turn) so that landing is
    tested too. Every draw touches every surface."""

    def build(tag: str) -> st.SearchStrategy[list[Input]]:
        tenants = [f"fz{tag}{n}" for n in range(10)]
        parts: list[st.SearchStrategy[list[Any]]] = [
            st.lists(valid_turns(tenants), min_size=3 * valid_share, max_size=6 * valid_share),
            st.lists(valid_mcp_memories(tenants), min_size=1, max_size=3),
            st.lists(hostile_turns(), min_size=3, max_size=6),
            st.lists(hostile_events(), min_size=2, max_size=4),
            st.lists(hostile_forgets(), min_size=2, max_size=3),
            st.lists(hostile_retrieves(), min_size=2, max_size=4),
            st.lists(hostile_searches(), min_size=2, max_size=4),
            st.lists(hostile_mcp_calls(), min_size=3, max_size=6),
            st.lists(hostile_registrations(), min_size=2, max_size=4),
            st.lists(valid_registrations(), min_size=1, max_size=2),
            *(
                st.lists(raw_recipes(t, tenants), min_size=2, max_size=5)
                for t in inputs.SOURCE_TOPICS
            ),
        ]
        return st.tuples(*parts, st.randoms(use_true_random=False)).map(_shuffled)

    return tags().flatmap(build)


def _shuffled(parts: tuple[Any, ...]) -> list[Input]:
    *lists, rnd = parts
    items: list[Input] = [item for group in lists for item in group]
    rnd.shuffle(items)
    return items
