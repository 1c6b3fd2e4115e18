"""The real pipeline on the test services, and the driver that sends inputs to it.

:class:`FuzzStack` runs what production runs, each in a process of its own: ``tribal
worker`` (every agent), ``tribal project`` (every projection) and ``tribal api`` (HTTP,
MCP at ``/mcp``, the schema registry at ``/schema-registry``), on a Kafka-API broker, a
fresh PostgreSQL database with pgvector and, optionally, Weaviate as the search index.
Topics and the consumer group carry a prefix no other run shares.

:class:`Driver` sends an :mod:`~devstack.fuzz.inputs` input to its surface and
returns the :class:`~devstack.fuzz.ledger.Entry` of what the edge answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from aiokafka import AIOKafkaProducer
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from devstack.children import Children
from devstack.endpoints import WeaviateEndpoint
from devstack.fuzz.answers import (
    Sent,
    classify_http,
    classify_mcp,
    classify_registry,
    raw_entry,
    receipt_entry,
)
from devstack.fuzz.inputs import (
    ForgetTarget,
    HttpCall,
    Input,
    McpCall,
    Raw,
    RegistryCall,
    encode_recipe,
    wire_article,
    wire_file,
    wire_table,
)
from devstack.fuzz.ledger import (
    Entry,
    InIndex,
    Ledger,
    Probe,
    at,
    index_probe,
)
from devstack.pipeline import Pipeline, isolated_settings, settings_env
from projections.index import index_from_settings
from projections.index.port import Kind, SearchIndex
from runtime.databases import drop_database, fresh_database
from runtime.embedded.process import free_port

ANSWER_WITHIN_S = 30.0
"""An edge that has not answered in this long is hung."""
JSON = {"content-type": "application/json"}
LIMITS = httpx.Limits(max_connections=64, keepalive_expiry=2.0)
"""Idle connections expire before uvicorn's keep-alive (5 s) closes them, so a dropped
connection is the server's doing, never a race with an idle one."""


@dataclass(eq=False)
class FuzzStack:
    """Worker, projections and API as child processes on one isolated set of topics."""

    bootstrap: str
    admin_dsn: str
    """The PostgreSQL server's, where the stack makes a database of its own."""
    data_dir: Path
    weaviate: WeaviateEndpoint | None = None
    stuck_after_s: float = 20.0
    partitions: int = 3
    children: Children = field(init=False)
    dsn: str = field(default="", init=False)
    url: str = field(default="", init=False)
    last_search: str = field(default="", init=False)

    def __post_init__(self) -> None:
        self.children = Children(self.data_dir / "logs")

    @property
    def adapter(self) -> str:
        return "weaviate" if self.weaviate is not None else "pgvector"

    async def start(self, timeout: float = 120.0) -> FuzzStack:
        try:
            return await self._start(timeout)
        except BaseException:
            await self.stop()
            raise

    async def _start(self, timeout: float) -> FuzzStack:
        self.dsn = await fresh_database(self.admin_dsn, "fuzz")
        extra: dict[str, Any] = {
            "postgres_dsn": self.dsn,
            "stuck_after_s": self.stuck_after_s,
            "default_partitions": self.partitions,
        }
        if self.weaviate is not None:
            extra |= {
                "weaviate_url": self.weaviate.url,
                "weaviate_grpc_port": self.weaviate.grpc_port,
            }
        self.settings = isolated_settings(self.bootstrap, self.data_dir, **extra)
        self.pipeline = Pipeline(self.settings)
        await self.pipeline.create_topics()
        env = settings_env(self.settings)
        env.update(
            {
                "TRIBAL_POSTGRES_DSN": self.dsn,
                "TRIBAL_STUCK_AFTER_S": str(self.stuck_after_s),
                "TRIBAL_WEAVIATE_URL": self.weaviate.url if self.weaviate else "",
                "TRIBAL_WEAVIATE_GRPC_PORT": str(
                    self.weaviate.grpc_port if self.weaviate else 50051
                ),
                "TRIBAL_LLM_PROVIDER": "local",  # never a paid LLM from a test
                "TRIBAL_LOG_LEVEL": "WARNING",
                "PYTHONUNBUFFERED": "1",
            }
        )
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.children.start("worker", ["worker"], env)
        self.children.start("projections", ["project"], env)
        self.children.start("api", ["api", "--port", str(port)], env)
        self.http = httpx.AsyncClient(base_url=self.url, timeout=ANSWER_WITHIN_S, limits=LIMITS)
        deadline = time.monotonic() + timeout
        while True:
            self.children.check()
            with contextlib.suppress(httpx.HTTPError):
                if (await self.http.get("/healthz")).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"the API was not healthy in {timeout:.0f}s\n{self.logs()}")
            await asyncio.sleep(0.2)
        self.index: SearchIndex = index_from_settings(self.settings)
        await self.index.setup()
        return self

    def logs(self) -> str:
        return self.children.tails()

    async def stop(self) -> None:
        await self.children.stop()
        with contextlib.suppress(Exception):
            await self.http.aclose()
        with contextlib.suppress(Exception):
            await self.index.close()
        if self.dsn:  # the database this stack created
            await drop_database(self.admin_dsn, self.dsn)

    async def __aenter__(self) -> FuzzStack:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- reading the outcome --------------------------------------------------------------

    def probe(self) -> Probe:
        async def registry_has(schema_id: int) -> bool:
            resp = await self.http.get(f"/schema-registry/schemas/ids/{schema_id}")
            return resp.status_code == 200

        return index_probe(self.index, registry_has)

    async def health(self) -> dict[str, Any]:
        """``/healthz`` as an operator reads it (the agents' stall is measured between two
        calls, so it is asked twice)."""
        await self.http.get("/healthz")
        await asyncio.sleep(1.0)
        body: dict[str, Any] = (await self.http.get("/healthz")).json()
        return body

    async def dead_letters_stored(self) -> int:
        """Dead letters in the dead-letter read store (``tribal status``, the operator's view)."""
        conn = await asyncpg.connect(self.dsn)
        try:
            return int(await conn.fetchval("SELECT count(*) FROM tribal_ops.deadletters"))
        finally:
            await conn.close()

    async def searchable(self, group_id: str, word: str) -> bool:
        resp = await self.http.get(
            "/v1/memory/search", params={"group_id": group_id, "query": word, "limit": 5}
        )
        self.last_search = f"{resp.status_code} {resp.text[:300]}"
        if resp.status_code != 200:
            return False
        return any(word in e["content"] for e in resp.json().get("episodes", []))

    async def wait_fresh(self, sentinels: Sentinels, timeout: float) -> float:
        """Seconds until every sentinel is in its read store (the turn found by search)."""
        probe = self.probe()
        t0 = time.monotonic()
        turn_found = False
        pending = list(sentinels.documents)
        while True:
            turn_found = turn_found or await self.searchable(sentinels.group, sentinels.word)
            pending = [p for p in pending if not await probe(p)]
            if turn_found and not pending:
                return round(time.monotonic() - t0, 2)
            self.children.check()
            if time.monotonic() - t0 > timeout:
                late = ([] if turn_found else ["turn"]) + [p.kind.value for p in pending]
                seen = "" if turn_found else f" (memory search answered {self.last_search})"
                raise TimeoutError(f"not in their read stores after {timeout:.0f}s: {late}{seen}")
            await asyncio.sleep(0.25)

    async def warm_up(self, timeout: float = 240.0) -> float:
        """A first record through every stage (models load, groups join) before measuring."""
        async with Driver(self, mcp=False) as driver:
            sentinels = await driver.sentinels("warmup")
        t0 = time.monotonic()
        try:
            await self.wait_fresh(sentinels, timeout)
            # every agent, not only those on the way to search (extraction follows it)
            while any(a["lag_messages"] for a in (await self.health())["agents"].values()):
                if time.monotonic() - t0 > timeout:
                    raise TimeoutError(f"the agents did not catch up in {timeout:.0f}s")
                self.children.check()
        except TimeoutError as exc:
            raise TimeoutError(f"warm-up: {exc}\n{self.logs()}") from exc
        return round(time.monotonic() - t0, 2)


@dataclass(frozen=True)
class Sentinels:
    """Valid records written after a mix: a turn over HTTP (found through memory search)
    and an article, a file and a table produced to their source topics."""

    group: str
    word: str
    documents: tuple[InIndex, ...]


class Driver:
    """Sends inputs to a running :class:`FuzzStack`: HTTP and the registry through one
    client, MCP through one streamable-HTTP session, raw records through one producer."""

    def __init__(self, stack: FuzzStack, mcp: bool = True) -> None:
        self.stack = stack
        self.settings = stack.settings
        self.serde = stack.pipeline.serde
        self.use_mcp = mcp
        self._exit = AsyncExitStack()
        self.session: ClientSession | None = None
        self.doomed: dict[ForgetTarget, str] = {}

    async def __aenter__(self) -> Driver:
        self.http = httpx.AsyncClient(
            base_url=self.stack.url, timeout=ANSWER_WITHIN_S + 5, limits=LIMITS
        )
        await self._exit.enter_async_context(self.http)
        self.producer = AIOKafkaProducer(
            bootstrap_servers=self.settings.kafka_bootstrap, acks="all", max_request_size=8 << 20
        )
        await self.producer.start()
        self._exit.push_async_callback(self.producer.stop)
        if self.use_mcp:
            http = await self._exit.enter_async_context(create_mcp_http_client())
            read, write, *_ = await self._exit.enter_async_context(
                streamable_http_client(f"{self.stack.url}/mcp", http_client=http)
            )
            self.session = await self._exit.enter_async_context(ClientSession(read, write))
            await self.session.initialize()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._exit.aclose()

    async def send(self, item: Input, ledger: Ledger | None = None) -> Entry:
        t0 = time.perf_counter()
        if isinstance(item, HttpCall):
            entry = await (self._forget(item) if item.forget else self._http(item))
        elif isinstance(item, McpCall):
            entry = await self._mcp(item)
        elif isinstance(item, RegistryCall):
            entry = await self._registry(item)
        else:
            entry = await self._raw(item)
        entry.detail = entry.detail or _short(item)
        entry.ms = (time.perf_counter() - t0) * 1000
        return ledger.add(entry) if ledger is not None else entry

    async def sentinel(self, label: str = "sentinel") -> tuple[str, str]:
        """A plain turn in a group of its own; returns its group and its unique word."""
        word = f"{label}{uuid.uuid4().hex[:12]}"
        group = f"fz{label}{uuid.uuid4().hex[:8]}:s"
        body = {"group_id": group, "user_message": f"{word} canary written last"}
        resp = await self.http.post("/v1/memory/turns", json=body)
        if resp.status_code != 202:
            raise AssertionError(f"the sentinel turn was refused: {resp.status_code} {resp.text}")
        return group, word

    async def sentinels(self, label: str = "sentinel") -> Sentinels:
        """One valid record per source, written last: each must reach its read store."""
        group, word = await self.sentinel(label)
        tag = uuid.uuid4().hex[:10]
        tenant = f"fz{label}{tag}"
        raws = [
            Raw(
                "kb.articles",
                f"kb-{tag}".encode(),
                wire_article(tenant, f"kb-{tag}", "Resetting the router", "Hold reset 10 s."),
            ),
            Raw(
                "files.changes",
                f"sentinel:docs/{tag}.md".encode(),
                wire_file(tenant, "sentinel", f"docs/{tag}.md", "# Sentinel\n\nWritten last."),
            ),
            Raw(
                "schema.changes",
                f"sentineldb.public.t{tag}".encode(),
                wire_table(tenant, "sentineldb", "public", f"t{tag}", "written last"),
            ),
        ]
        documents: list[InIndex] = []
        for raw in raws:
            entry = await self._raw(raw)
            documents += [e for e in entry.expect if isinstance(e, InIndex)]
        return Sentinels(group, word, tuple(documents))

    # -- HTTP -----------------------------------------------------------------------------

    async def _request(self, method: str, path: str, body: bytes | None) -> Sent:
        try:
            resp = await asyncio.wait_for(
                self.http.request(method, path, content=body, headers=JSON), ANSWER_WITHIN_S
            )
        except TimeoutError:
            return Sent(None, None, f"no answer within {ANSWER_WITHIN_S:.0f}s")
        except httpx.HTTPError as exc:
            return Sent(None, None, f"transport error: {type(exc).__name__}: {exc}")
        try:
            parsed: Any = resp.json()
        except ValueError:
            parsed = resp.text[:300]
        return Sent(resp.status_code, parsed, None)

    async def _http(self, call: HttpCall) -> Entry:
        sent = await self._request(call.method, call.path, call.body)
        entry = classify_http(call.surface, sent)
        if entry.outcome == "accepted" and call.surface in ("http:turns", "http:events"):
            receipt_entry(entry, sent.body, self.settings.topic_prefix + "memory.turns")
        elif entry.outcome == "accepted" and call.surface == "http:forget":
            # Only prepared targets are valid ids; anything else must have been refused.
            entry.problem = f"a forget of an invalid target was accepted: {sent.body}"
        return entry

    async def _turn(self, group_id: str, text: str) -> str:
        body = json.dumps({"group_id": group_id, "user_message": text}).encode()
        sent = await self._request("POST", "/v1/memory/turns", body)
        if sent.status != 202:
            raise AssertionError(f"a plain turn was refused: {sent.status} {sent.body}")
        return str(sent.body["episode_id"])

    async def prepare(self, items: list[Input], timeout: float = 120.0) -> None:
        """Write the doomed turn of every forget in ``items`` and wait until each has
        landed: a forget is then proven applied by its doomed turn being gone."""
        probe = self.stack.probe()
        waiting: list[InIndex] = []
        for item in items:
            target = item.forget if isinstance(item, HttpCall) else None
            if target is not None and target not in self.doomed:
                episode = await self._turn(target.group_id, "doomed turn, to be forgotten")
                self.doomed[target] = episode
                waiting.append(InIndex(Kind.EPISODE, target.tenant, episode))
        deadline = time.monotonic() + timeout
        while waiting:
            waiting = [w for w in waiting if not await probe(w)]
            if waiting and time.monotonic() > deadline:
                raise TimeoutError(f"{len(waiting)} doomed turns did not land in {timeout:.0f}s")
            await asyncio.sleep(0.5 if waiting else 0)

    async def _forget(self, call: HttpCall) -> Entry:
        """The forget of a prepared target. A group forget is followed by a survivor turn in
        the same lane, which must land after it. (A tenant-wide forget reaches the other
        partitions' lanes in their own time, so a turn written after it may still be
        erased there: the README tells callers so. It gets no survivor.)"""
        target = call.forget
        assert target is not None
        if target not in self.doomed:
            await self.prepare([call])
        doomed = self.doomed[target]
        sent = await self._request(call.method, call.path, call.body)
        entry = classify_http(call.surface, sent)
        if entry.outcome == "accepted":
            gone = InIndex(Kind.EPISODE, target.tenant, doomed, present=False)
            ids = {f"event:{sent.body.get('event_id')}", f"episode:{doomed}"}
            entry.expect = (gone,)
            if target.scope == "group":
                survivor = await self._turn(target.group_id, "survivor turn, written after")
                entry.expect = (gone, InIndex(Kind.EPISODE, target.tenant, survivor))
                ids.add(f"episode:{survivor}")
            entry.ids = frozenset(ids)
        return entry

    # -- MCP ------------------------------------------------------------------------------

    async def _mcp(self, call: McpCall) -> Entry:
        assert self.session is not None, "this driver was opened without MCP"
        try:
            result = await asyncio.wait_for(
                self.session.call_tool(call.tool, call.arguments), ANSWER_WITHIN_S
            )
        except TimeoutError:
            return Entry(call.surface, "answered", problem="no answer within 30s")
        except Exception as exc:  # the session itself failed: the server broke the protocol
            return Entry(call.surface, "answered", problem=f"{type(exc).__name__}: {exc}")
        return classify_mcp(call, result, self.settings.topic_prefix + "memory.turns")

    # -- schema registry ------------------------------------------------------------------

    async def _registry(self, call: RegistryCall) -> Entry:
        path = "/schema-registry" + call.path.replace("{prefix}", self.settings.topic_prefix)
        sent = await self._request(call.method, path, call.body)
        return classify_registry(call, sent)

    # -- raw records ----------------------------------------------------------------------

    async def _raw(self, raw: Raw) -> Entry:
        topic = self.settings.topic_prefix + raw.topic
        try:
            value = await asyncio.to_thread(encode_recipe, raw.recipe, self.serde, topic)
        except Exception as exc:  # not even a foreign producer could write this
            return Entry(raw.surface, "unsendable", message=f"{type(exc).__name__}: {exc}")
        meta = await self.producer.send_and_wait(topic, value, key=raw.key)
        return raw_entry(raw.surface, value, self.serde, at(topic, meta.partition, meta.offset))


def _short(item: Input, limit: int = 160) -> str:
    if isinstance(item, HttpCall | RegistryCall):
        body = (item.body or b"")[:limit]
        return f"{item.method} {item.path[:80]} {body!r}"
    if isinstance(item, McpCall):
        return f"{item.tool} {str(item.arguments)[:limit]}"
    return f"{item.topic} key={item.key!r} {str(item.recipe)[:limit]}"
