"""Tribal as separate processes, as it runs in production, for the end-to-end tests.

:class:`DistributedStack`: N ``tribal worker``, ``tribal project`` and ``tribal api`` on
Apache Kafka, PostgreSQL (a database of its own) and Weaviate. :class:`UpStack`: one
``tribal up``, embedded or on external services. Both are asked through HTTP with a
bearer key bound to the corpus's tenant, as a deployment with ``TRIBAL_API_KEYS`` is;
on the shared Weaviate each run keeps collections of its own (``TRIBAL_WEAVIATE_PREFIX``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from devstack.children import Children
from devstack.endpoints import WeaviateEndpoint
from devstack.pipeline import Pipeline, isolated_settings, settings_env
from projections.index import Kind, SearchIndex, index_from_settings
from runtime.databases import drop_database, fresh_database
from runtime.embedded.process import ChildProcess, free_port
from runtime.settings import TribalSettings
from tests.distributed.corpus import Question, gist

SERVICES = ("TRIBAL_KAFKA_BOOTSTRAP", "TRIBAL_POSTGRES_DSN", "TRIBAL_WEAVIATE_URL")
SEARCHABLE = (Kind.CODE_CHUNK, Kind.KB_CHUNK, Kind.TABLE_DOC)
ANSWER_WITHIN_S = 30.0


def tenant_and_key() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:10]
    return f"e2e-{tag}", f"key-{tag}"


def weaviate_prefix() -> str:
    """Collections of their own: no other test's objects in the keyword statistics, and
    a generation swap elsewhere never moves them."""
    return f"E2e{uuid.uuid4().hex[:10]}"


class Api:
    """HTTP to one Tribal API as the tenant's caller."""

    def __init__(self, url: str, key: str) -> None:
        self.url = url
        self.http = httpx.AsyncClient(
            base_url=url, timeout=ANSWER_WITHIN_S, headers={"Authorization": f"Bearer {key}"}
        )

    async def health(self) -> tuple[int, dict[str, Any]]:
        resp = await self.http.get("/healthz")
        return resp.status_code, resp.json()

    async def ask(self, question: Question) -> httpx.Response:
        if question.method == "GET":
            return await self.http.get(question.path, params=question.params)
        return await self.http.post(question.path, json=question.params)

    async def answer(self, question: Question) -> list[str]:
        """The gist of the answer. ``/v1/retrieve`` answers a fallback when the search
        takes longer than its 100 ms budget (a loaded 2-core machine); the search goes on
        and its answer is shared with the same question for a while, so ask again."""
        for _ in range(50):
            resp = await self.ask(question)
            assert resp.status_code == 200, f"{question}: {resp.status_code} {resp.text}"
            if "X-Tribal-Fallback" not in resp.headers:
                return gist(question, resp.json())
            await asyncio.sleep(0.2)
        raise AssertionError(f"{question}: only fallbacks ({resp.headers['X-Tribal-Fallback']})")

    async def answers(self, questions: list[Question]) -> list[list[str]]:
        return [await self.answer(q) for q in questions]

    async def close(self) -> None:
        await self.http.aclose()


def settled(status: int, body: dict[str, Any]) -> bool:
    """Every agent and every projection has read its topics to the end, none is stuck."""
    projections = body.get("projections") or {}
    agents = body.get("agents") or {}
    return (
        status == 200
        and body.get("status") == "ok"
        and bool(projections)
        and bool(agents)
        and all(p["lag_messages"] == 0 for p in projections.values())
        and all(a["lag_messages"] == 0 for a in agents.values())
    )


async def wait_settled(api: Api, alive: Callable[[], None], timeout: float, polls: int = 3) -> None:
    """Until ``/healthz`` says settled ``polls`` times in a row, a second apart (a stage
    between two hops can read as caught up for a moment)."""
    deadline = time.monotonic() + timeout
    streak = 0
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        alive()
        with contextlib.suppress(httpx.HTTPError):
            status, body = await api.health()
            streak = streak + 1 if settled(status, body) else 0
            if streak >= polls:
                return
        await asyncio.sleep(1.0)
    raise AssertionError(f"not settled in {timeout:.0f}s: {json.dumps(body)}")


async def searchable(index: SearchIndex, tenant: str) -> dict[str, int]:
    """Objects with a vector, per kind, of one tenant."""
    return {kind.value: await index.count(kind, tenant) for kind in SEARCHABLE}


def sigkill(child: ChildProcess) -> None:
    """``kill -9`` the child (and only its own process group)."""
    assert child.proc is not None
    os.killpg(child.proc.pid, signal.SIGKILL)
    child.proc.wait(10)


async def wait_healthy(api: Api, children: Children, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children.check()
        with contextlib.suppress(httpx.HTTPError):
            status, body = await api.health()
            if status == 200:
                return body
        await asyncio.sleep(0.5)
    raise AssertionError(f"the API was not healthy in {timeout:.0f}s\n{children.tails()}")


@dataclass(eq=False, repr=False)
class DistributedStack:
    """``n_workers`` times ``tribal worker --role all`` (one group), ``tribal project``
    and ``tribal api``, each its own OS process, on isolated topics, a database of their
    own and Weaviate as the index."""

    kafka_bootstrap: str
    admin_dsn: str
    weaviate: WeaviateEndpoint
    data_dir: Path
    tenant: str
    key: str
    n_workers: int = 2
    children: Children = field(init=False)
    workers: list[ChildProcess] = field(default_factory=list, init=False)
    dsn: str = field(default="", init=False)

    def __post_init__(self) -> None:
        self.children = Children(self.data_dir / "logs")

    async def start(self, timeout: float = 150.0) -> DistributedStack:
        self.dsn = dsn = await fresh_database(self.admin_dsn, "e2e")
        self.settings = isolated_settings(
            self.kafka_bootstrap,
            self.data_dir,
            postgres_dsn=dsn,
            weaviate_url=self.weaviate.url,
            weaviate_grpc_port=self.weaviate.grpc_port,
            weaviate_prefix=weaviate_prefix(),
            default_partitions=4,  # two partitions of each topic per worker
            mode="distributed",
        )
        self.pipeline = Pipeline(self.settings)
        await self.pipeline.create_topics()
        env = settings_env(self.settings) | {
            "TRIBAL_MODE": "distributed",
            "TRIBAL_POSTGRES_DSN": dsn,
            "TRIBAL_WEAVIATE_URL": self.weaviate.url,
            "TRIBAL_WEAVIATE_GRPC_PORT": str(self.weaviate.grpc_port),
            "TRIBAL_WEAVIATE_PREFIX": self.settings.weaviate_prefix,
            "TRIBAL_API_KEYS": json.dumps({self.key: self.tenant}),
            # the killed worker's partitions move to the other one after this long
            "TRIBAL_SESSION_TIMEOUT": "6",
            "TRIBAL_LLM_PROVIDER": "local",  # never a paid LLM from a test
            "TRIBAL_LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
        for n in range(self.n_workers):
            self.workers.append(
                self.children.start(f"worker-{n}", ["worker", "--role", "all"], env)
            )
        self.children.start("projections", ["project"], env)
        port = free_port()
        self.children.start("api", ["api", "--port", str(port)], env)
        self.api = Api(f"http://127.0.0.1:{port}", self.key)
        self.health = await wait_healthy(self.api, self.children, timeout)
        self.index = index_from_settings(self.settings)
        await self.index.setup()
        return self

    async def stop(self) -> None:
        with contextlib.suppress(AttributeError):
            await self.api.close()
        await self.children.stop()
        index: SearchIndex | None = getattr(self, "index", None)
        if index is not None:  # its own collections
            await index.drop()
            await index.close()
        if self.dsn:
            await drop_database(self.admin_dsn, self.dsn)


class UpStack:
    """One ``tribal up`` process. ``services`` are the ``TRIBAL_*`` variables it gets
    (none: everything embedded, whatever the caller's environment holds)."""

    def __init__(
        self, data_dir: Path, tenant: str, key: str, services: dict[str, str] | None = None
    ) -> None:
        self.data_dir = data_dir
        self.tenant = tenant
        self.key = key
        self.services = services or {}
        self.port = free_port()
        self.children = Children(data_dir.parent / f"{data_dir.name}-logs")

    async def start(self, timeout: float = 150.0) -> UpStack:
        env = dict(os.environ) | {v: "" for v in SERVICES} | self.services
        env |= {
            "TRIBAL_API_KEYS": json.dumps({self.key: self.tenant}),
            "TRIBAL_LLM_PROVIDER": "local",
            "HF_HUB_OFFLINE": "1",
        }
        self.up = self.children.start(
            "up", ["up", "--data-dir", str(self.data_dir), "--api-port", str(self.port)], env
        )
        self.api = Api(f"http://127.0.0.1:{self.port}", self.key)
        deadline = time.monotonic() + timeout
        while not (self.data_dir / "stack.json").exists():  # written once it is healthy
            self.children.check()
            if time.monotonic() > deadline:
                raise AssertionError(f"tribal up did not start in {timeout:.0f}s\n{self.log()}")
            await asyncio.sleep(0.5)
        self.info = json.loads((self.data_dir / "stack.json").read_text())
        values: dict[str, Any] = {"weaviate_url": ""} | {
            k.removeprefix("TRIBAL_").lower(): v for k, v in self.services.items()
        }
        values |= {
            "kafka_bootstrap": self.info["kafka_bootstrap"],
            "postgres_dsn": self.info["postgres_dsn"],
            "data_dir": self.data_dir,
        }
        settings = TribalSettings(**values)
        self.pipeline = Pipeline(settings)
        self.index = index_from_settings(settings)
        await self.index.setup()
        return self

    def log(self) -> str:
        return self.children.tails(6000)

    async def stop(self) -> None:
        """The index is closed before the stack stops when it lives in the stack's own
        PostgreSQL; on Weaviate its collections are dropped once the stack stopped."""
        with contextlib.suppress(AttributeError):
            await self.api.close()
        index: SearchIndex | None = getattr(self, "index", None)
        on_weaviate = bool(self.services.get("TRIBAL_WEAVIATE_URL"))
        if index is not None and not on_weaviate:
            await index.close()
        await self.children.stop()
        if index is not None and on_weaviate:
            await index.drop()
            await index.close()
