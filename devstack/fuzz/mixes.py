"""Mixes of inputs across every surface that are not drawn by hypothesis: the worst
inputs by name (:func:`named_mix`) and a seeded-random mix of any size with a controlled
valid share (:class:`RandomMix`, the benchmark's)."""

from __future__ import annotations

import json
import random
from typing import Any
from urllib.parse import quote

from devstack.fuzz.hostile import ODD, WORDS, Draw, huge
from devstack.fuzz.inputs import (
    MALFORMED_BODIES,
    MCP_OTHER,
    MCP_REQUIRED,
    MCP_TEXT,
    SEARCHES,
    SOURCE_TOPICS,
    Bytes,
    Input,
    Raw,
    RegistryCall,
    Wire,
    event,
    forget_of,
    marked,
    mcp,
    record_schema,
    register,
    retrieve,
    search,
    turn,
    wire_article,
    wire_file,
    wire_header,
    wire_table,
    wire_turn,
)
from events.limits import RETRIEVE_MESSAGE_MAX
from events.memory import TurnRecorded
from events.schemas import default_contracts


def named_mix(tag: str) -> list[Input]:
    """The worst inputs by name, every surface, in one mix (an explicit example, so that
    every run throws them whatever hypothesis draws)."""
    tenants = [f"fz{tag}n{n}" for n in range(4)]
    g = f"{tenants[0]}:s"
    nul = "a\x00b"
    turn_contract = default_contracts()[TurnRecorded.avro_name].schema
    evolved = {
        **turn_contract,
        "fields": [
            *turn_contract["fields"],
            {"name": "fuzz", "type": ["null", "string"], "default": None},
        ],
    }
    changed = {
        **turn_contract,
        "fields": [
            {**f, "type": "long"} if f["name"] == "user_message" else f
            for f in turn_contract["fields"]
        ],
    }
    items: list[Input] = [
        # the NUL turn, and its cousins, on every memory write
        *(turn(body) for body in MALFORMED_BODIES),
        *(event(body) for body in MALFORMED_BODIES[:6]),
        turn({"group_id": g, "user_message": nul}),
        turn({"group_id": g, "user_message": "hi", "agent_response": "\x1b[2J"}),
        turn({"group_id": g, "user_message": "x" * 100_000}),  # at the limit: valid
        turn({"group_id": g, "user_message": "x" * 100_001}),
        turn({"group_id": g, "user_message": "hi", "metadata": {"k": nul}}),
        turn({"group_id": f"{tenants[1]}:{'s' * 129}", "user_message": "hi"}),
        turn({"group_id": "a b:c", "user_message": "hi"}),
        event({"group_id": g, "event_type": "tool_run", "content": nul}),
        event({"group_id": g, "event_type": nul, "content": "c"}),
        forget_of("group", f"{tag}g1", nul, None),
        forget_of("group", f"{tag}g2", "cleanup", None),
        forget_of("tenant", f"{tag}t1", None, None),
        forget_of("tenant", f"{tag}t2", None, "x\x00"),
        retrieve({"intent": nul, "message": "m"}),
        retrieve({"intent": "i", "message": "m" * (RETRIEVE_MESSAGE_MAX + 1)}),
        search("/v1/memory/search", {"group_id": g, "query": nul}),
        search("/v1/tables/search", {"query": "\ud800"}),
        search("/v1/code/search", {"query": "x", "path": "*" * 600}),
        search("/v1/tables/a%0Ab", {}),
        mcp("add_memory", {"group_id": g, "user_message": nul}),
        mcp("add_memory", {"group_id": g, "user_message": "from mcp 🚀"}),
        mcp("search_memory", {"group_id": "acme:" + "s" * 300}),
        mcp("retrieve_knowledge", {"intent": "x", "message": nul}),
        mcp("get_entity", {"group_id": g, "entity_id": "nope"}),
        # the registry: bad subjects, bad schemas, and Tribal's own subjects
        register("", {"schema": json.dumps(record_schema("R", []))}),
        register("a\x00b", {"schema": json.dumps(record_schema("R", []))}),
        register("s" * 513, {"schema": json.dumps(record_schema("R", []))}),
        register(f"fuzz-{tag}", {"schema": "{not json"}),
        register(f"fuzz-{tag}", b"\xff"),
        register(f"fuzz-{tag}ok", {"schema": json.dumps(record_schema(f"R{tag}", [("a", "int")]))}),
        register(
            "{prefix}memory.turns-tribal.memory.TurnRecorded", {"schema": json.dumps(evolved)}
        ),
        register(
            "{prefix}memory.turns-tribal.memory.TurnRecorded", {"schema": json.dumps(changed)}
        ),
        RegistryCall("GET", "/schemas/ids/-1"),
        RegistryCall("GET", "/schemas/ids/99999999999"),
    ]
    for topic in SOURCE_TOPICS:
        t = tenants[2]
        uid = f"{tag}{topic.replace('.', '')}"
        if topic == "memory.turns":
            wires = [
                wire_turn(f"{t}:r{uid}", nul),
                wire_turn(f"{t}:r{uid}2", huge(300_000)),
                wire_turn(f"bad tenant:r{uid}", "hi"),
                wire_turn(f"{t}:r{uid}3", "ok 中文 🚀"),
            ]
        elif topic == "kb.articles":
            wires = [
                wire_article(t, f"kb-{uid}1", "Title", f"Body {nul} text"),
                wire_article(t, f"kb-{uid}2", "Huge", huge(300_000)),
                wire_article("bad tenant", f"kb-{uid}3", "T", "c"),
                wire_article(t, f"kb-{uid}4 with spaces/and/slashes", "Odd id", "fine"),
            ]
        elif topic == "files.changes":
            wires = [
                wire_file(t, "repo", f"docs/{uid}1.md", f"# T\n\n{nul}"),
                wire_file(t, "repo", f"docs/{uid}2.md", huge(300_000)),
                wire_file(t, "repo", f"../../{uid}3.md", "# escape"),
            ]
        else:
            wires = [
                wire_table(t, "db", "public", f"t{uid}1", nul),
                wire_table(t, "db", "we\x00ird", f"t{uid}2", "c"),
                wire_table(t, "db", "public", f"t{uid}3" + "x" * 400, "long name"),
            ]
        recipes: list[Bytes | Wire] = [
            Bytes(b""),
            Bytes(b"\x00\x00\x00\x00\x01"),
            Bytes(b"not avro"),
            Bytes(wire_header(987_654, b"\x02\x04")),
            *wires,
            Wire(wires[-1].event, marked(wires[-1].fields), garble=True),
            Wire(wires[-1].event, wires[-1].fields, schema_version=99),
        ]
        items += [Raw(topic, f"{uid}-{n}".encode(), r) for n, r in enumerate(recipes)]
    items += [
        turn({"group_id": f"{t}:v{n}", "user_message": f"valid turn {n} 🚀"})
        for n, t in enumerate(tenants * 3)
    ]
    return items


# -- seeded random mixes (the benchmark) ---------------------------------------------------

SHARES: dict[str, float] = {
    "http:turns": 0.40,
    "http:events": 0.08,
    "http:forget": 0.03,
    "http:retrieve": 0.06,
    "http:search": 0.04,
    "mcp": 0.05,
    "registry": 0.05,
    "raw:memory.turns": 0.12,
    "raw:kb.articles": 0.08,
    "raw:files.changes": 0.05,
    "raw:schema.changes": 0.04,
}
"""Share of each surface in a benchmark mix."""


class RandomMix:
    """``n`` inputs drawn from a seeded generator: ``valid`` of the turns valid (across
    ``tenants`` tenants), the rest and every other surface hostile as above."""

    def __init__(self, seed: int, tenants: int = 50, valid: float = 0.7) -> None:
        self.rnd = random.Random(seed)
        self.draw = Draw(self.rnd)
        self.tag = f"{self.rnd.getrandbits(40):010x}"
        self.tenants = [f"fz{self.tag}{n}" for n in range(tenants)]
        self.valid = valid
        self.count = 0

    def uid(self) -> str:
        self.count += 1
        return f"{self.tag}x{self.count}"

    def inputs(self, n: int) -> list[Input]:
        names = list(SHARES)
        weights = [SHARES[s] for s in names]
        return [self.one(self.rnd.choices(names, weights)[0]) for _ in range(n)]

    def group(self) -> str:
        return f"{self.rnd.choice(self.tenants)}:s{self.rnd.randrange(400)}"

    def one(self, surface: str) -> Input:
        rnd, d = self.rnd, self.draw
        valid = rnd.random() < self.valid
        if surface == "http:turns":
            if valid:
                body: Any = {
                    "group_id": self.group(),
                    "user_message": d.clean_text(rnd.randint(3, 30)),
                    "agent_response": d.clean_text(rnd.randint(0, 20)),
                    "metadata": {"channel": rnd.choice(["web", "app", "🚀"])},
                }
                return turn(body)
            return turn(
                self._hostile_body(
                    {
                        "group_id": d.hostile_group_id(),
                        "user_message": d.hostile_text(),
                        "agent_response": d.hostile_text(),
                        "metadata": d.hostile_metadata(),
                    }
                )
            )
        if surface == "http:events":
            if valid:
                return event(
                    {
                        "group_id": self.group(),
                        "event_type": rnd.choice(["tool_run", "error"]),
                        "content": d.clean_text(rnd.randint(3, 20)),
                    }
                )
            return event(
                self._hostile_body(
                    {
                        "group_id": d.hostile_group_id(),
                        "event_type": d.hostile_text()[:200],
                        "content": d.hostile_text(),
                        "metadata": d.hostile_metadata(),
                    }
                )
            )
        if surface == "http:forget":
            hostile = None if valid else rnd.choice(["", "a b", "x\x00", "🚀", "a:b:c", "../t"])
            reason: Any = d.clean_text(3) if valid else d.hostile_text()[:1500]
            return forget_of(rnd.choice(["group", "tenant"]), self.uid(), reason, hostile)
        if surface == "http:retrieve":
            if valid:
                return retrieve(
                    {
                        "intent": rnd.choice(["not_hashing", "billing", "login"]),
                        "message": f"my {rnd.choice(WORDS)} does not work",
                        "metadata": {"product": "Apollo II"},
                    }
                )
            return retrieve(
                self._hostile_body(
                    {
                        "intent": d.hostile_text()[:200],
                        "message": d.hostile_text()[:9000],
                        "metadata": d.hostile_metadata(),
                    }
                )
            )
        if surface == "http:search":
            path = rnd.choice(sorted(SEARCHES))
            names = rnd.sample(SEARCHES[path], k=rnd.randint(0, len(SEARCHES[path])))
            params = {n: (d.clean_text(2) if valid else d.hostile_text()[:1100]) for n in names}
            if path == "/v1/memory/search":
                params["group_id"] = self.group() if valid else d.hostile_group_id()
            return search(path, params)
        if surface == "mcp":
            tool = rnd.choice(sorted(MCP_TEXT))
            if valid and tool == "add_memory":
                return mcp(tool, {"group_id": self.group(), "user_message": d.clean_text(10)})
            args = {
                n: d.hostile_text()[:2000]
                for n in MCP_TEXT[tool]
                if n in MCP_REQUIRED[tool] or rnd.random() < 0.7
            }
            args |= {n: d.hostile_metadata() for n in MCP_OTHER[tool] if rnd.random() < 0.3}
            return mcp(tool, args)
        if surface == "registry":
            return self._registry(valid)
        topic = surface.removeprefix("raw:")
        return Raw(topic, self.uid().encode(), self._recipe(topic, valid))

    def _hostile_body(self, fields: dict[str, Any]) -> Any:
        rnd = self.rnd
        roll = rnd.random()
        if roll < 0.08:
            return rnd.choice(MALFORMED_BODIES)
        if roll < 0.12:
            return rnd.choice([[], None, "text", 7, {"nested": [fields]}])
        kept = {k: v for k, v in fields.items() if rnd.random() < 0.85}
        if rnd.random() < 0.05:
            kept["unexpected"] = True
        return kept

    def _registry(self, valid: bool) -> RegistryCall:
        rnd, d = self.rnd, self.draw
        uid = self.uid()
        if valid:
            schema = record_schema(f"R{uid}", [("a", "string"), ("b", rnd.choice(["int", "long"]))])
            return register(f"fuzz-{uid}", {"schema": json.dumps(schema)})
        roll = rnd.random()
        if roll < 0.3:
            return register(d.hostile_text()[:600], {"schema": json.dumps(record_schema("R", []))})
        if roll < 0.6:
            bad = rnd.choice(
                [
                    {"schema": d.hostile_text()},
                    {"schema": "[]"},
                    {"nope": 1},
                    {"schema": json.dumps({"type": "record"})},
                    {"schema": json.dumps(record_schema("R", [("a", "nope")]))},
                    {"schema": json.dumps(record_schema("R", [])), "schemaType": "JSON"},
                    rnd.choice(MALFORMED_BODIES),
                ]
            )
            return register(f"fuzz-{uid}", bad)
        if roll < 0.8:
            return RegistryCall(
                "GET", f"/schemas/ids/{rnd.choice([-1, 0, 10**12, rnd.randrange(50)])}"
            )
        subject = quote(d.hostile_text()[:80].encode("utf-8", "surrogatepass"), safe="")
        return RegistryCall("GET", f"/subjects/{subject}/versions/latest")

    def _recipe(self, topic: str, valid: bool) -> Bytes | Wire:
        rnd, d = self.rnd, self.draw
        tenant = rnd.choice(self.tenants)
        uid = self.uid()
        text = d.clean_text(rnd.randint(5, 60)) if valid else d.hostile_text()
        if not valid:
            roll = rnd.random()
            if roll < 0.25:
                return Bytes(rnd.randbytes(rnd.randint(0, 200)))
            if roll < 0.35:
                return Bytes(wire_header(rnd.randrange(2**32), rnd.randbytes(rnd.randint(0, 40))))
            if roll < 0.45:
                other = rnd.choice([t for t in SOURCE_TOPICS if t != topic])
                return self._wire(other, tenant, uid, "foreign event")
            if roll < 0.55:
                tenant = d.hostile_id()
        wire = self._wire(topic, tenant, uid, text, hostile_names=not valid)
        if not valid and rnd.random() < 0.15:
            return Wire(wire.event, marked(wire.fields), garble=True)
        if not valid and rnd.random() < 0.05:
            return Wire(wire.event, wire.fields, schema_version=99)
        return wire

    def _wire(
        self, topic: str, tenant: str, uid: str, text: str, hostile_names: bool = False
    ) -> Wire:
        rnd = self.rnd
        if topic == "memory.turns":
            return wire_turn(f"{tenant}:r{uid}", text or "hi")
        if topic == "kb.articles":
            title = f"{rnd.choice(WORDS).title()} {rnd.choice(ODD)} guide"
            return wire_article(tenant, f"kb-{uid}", title, f"{rnd.choice(WORDS)}\n\n{text}")
        if topic == "files.changes":
            return wire_file(tenant, "fuzzrepo", f"docs/{uid}.md", f"# {uid}\n\n{text}")
        if hostile_names and rnd.random() < 0.3:  # names are data: quotes, NUL, unicode
            return wire_table(tenant, self.draw.hostile_id(), self.draw.hostile_id(),
                              f"t_{uid}{self.draw.hostile_id()}", text[:500])  # fmt: skip
        return wire_table(tenant, "fuzzdb", "public", f"t_{uid}", text[:500])
