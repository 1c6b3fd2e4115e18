"""PostgreSQL schemas → ``tribal.schema.changes`` (seed 001's planner, as events).

One source watches one database; its ``name`` is the ``database`` part of every
fully qualified name, so ``tribal.yaml`` can list several databases side by side::

    - kind: postgres
      name: warehouse
      dsn: postgresql://reader:${WAREHOUSE_PASSWORD}@db:5432/warehouse
      install_trigger: true     # DDL event trigger + LISTEN (needs a superuser)
      interval: 30              # seconds between safety-net polls
      schemas: [public, sales]  # default: every non-system schema
      include_samples: false    # a few values per non-sensitive column

Change detection: with ``install_trigger`` an event trigger notifies
``tribal_ddl`` and the source re-introspects about 50 ms later (notifications
arriving meanwhile are folded into one pass); polling every ``interval`` seconds
runs regardless, as a safety net. Either way :mod:`~sources.schema_snapshot`
turns the snapshot into events: altered tables are observed again, dropped ones
become ``TableDropped``, unchanged ones emit nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from sources.checkpoint import CheckpointStore
from sources.config import ConfigError, SourceConfig, redact
from sources.pg_catalog import introspect
from sources.pg_trigger import CHANNEL, install_trigger
from sources.schema_snapshot import publish_changes
from sources.sink import EventSink

log = logging.getLogger(__name__)

BACKOFF_INITIAL_S = 0.5
BACKOFF_MAX_S = 30.0


@dataclass(eq=False, repr=False)
class PostgresSource:
    """Observes every table and view of one PostgreSQL database."""

    name: str
    dsn: str
    _: KW_ONLY
    install_trigger: bool = False
    interval: float = 30.0
    schemas: Sequence[str] | None = None
    include_samples: bool = False
    tenant: str = "default"
    debounce: float = 0.05
    """Seconds to wait after a DDL doorbell, so a burst of DDL is read in one pass."""
    connect_timeout: float = 10.0
    trigger_installed: bool = field(default=False, init=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False)

    def __post_init__(self) -> None:
        self.schemas = tuple(self.schemas) if self.schemas else None

    def __repr__(self) -> str:
        return f"PostgresSource({self.name!r}, {redact(self.dsn)!r})"

    def _safe(self, exc: BaseException) -> str:
        """An error message fit for a log: no password, whatever the driver put in it."""
        text = str(redact(f"{type(exc).__name__}: {exc}"))
        password = re.search(r"://[^:/@\s]+:([^@\s]+)@", self.dsn)
        if password:
            text = text.replace(password.group(1), "***")
        return text

    async def _connect(self) -> Any:
        import asyncpg

        return await asyncpg.connect(self.dsn, timeout=self.connect_timeout)

    async def _sync(self, conn: Any, sink: EventSink, checkpoint: CheckpointStore) -> int:
        async with self._lock:
            tables = await introspect(
                conn,
                self.name,
                schemas=self.schemas,
                include_samples=self.include_samples,
                tenant=self.tenant,
            )
            count = await publish_changes(sink, checkpoint, tables, self.name, self.tenant)
        if count:
            log.info("postgres %s: %d schema events", self.name, count)
        return count

    async def sync_once(self, sink: EventSink, checkpoint: CheckpointStore) -> int:
        """Introspect the whole database once, emit what changed, flush, checkpoint."""
        conn = await self._connect()
        try:
            return await self._sync(conn, sink, checkpoint)
        finally:
            await conn.close()

    async def run(self, sink: EventSink, checkpoint: CheckpointStore, stop: asyncio.Event) -> None:
        """Listen for DDL (when the trigger is installed) and poll until ``stop``.

        Connection and broker errors are logged without secrets and retried with
        exponential backoff; they never end the loop.
        """
        backoff = BACKOFF_INITIAL_S
        while not stop.is_set():
            try:
                await self._session(sink, checkpoint, stop)
                backoff = BACKOFF_INITIAL_S
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning(
                    "postgres %s (%s): %s; retrying in %.1fs",
                    self.name,
                    redact(self.dsn),
                    self._safe(exc),
                    backoff,
                )
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), backoff)
                backoff = min(backoff * 2, BACKOFF_MAX_S)

    async def _session(
        self, sink: EventSink, checkpoint: CheckpointStore, stop: asyncio.Event
    ) -> None:
        """One connection's life: set up, sync, then wait for a doorbell or the poll."""
        conn = await self._connect()
        wake = asyncio.Event()
        lost = asyncio.Event()
        try:
            if self.install_trigger and not self.trigger_installed:
                await self._install(conn)

            def on_lost(*_: object) -> None:
                lost.set()
                wake.set()

            await conn.add_listener(CHANNEL, lambda *_: wake.set())
            conn.add_termination_listener(on_lost)
            await self._sync(conn, sink, checkpoint)
            while not stop.is_set():
                await _first(stop, wake, timeout=self.interval)
                if stop.is_set():
                    return
                if lost.is_set():
                    raise ConnectionError("connection to PostgreSQL lost")
                if wake.is_set():
                    await asyncio.sleep(self.debounce)  # fold a burst of DDL into one pass
                wake.clear()
                await self._sync(conn, sink, checkpoint)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), 5)

    async def _install(self, conn: Any) -> None:
        try:
            await install_trigger(conn)
        except Exception as exc:  # most often: not a superuser
            log.warning(
                "postgres %s: DDL trigger not installed (%s); polling every %.1fs",
                self.name,
                self._safe(exc),
                self.interval,
            )
            return
        self.trigger_installed = True
        log.info("postgres %s: DDL trigger installed, listening on %s", self.name, CHANNEL)


async def _first(stop: asyncio.Event, wake: asyncio.Event, timeout: float) -> None:
    """Return when either event is set or ``timeout`` seconds pass."""
    waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(wake.wait())]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _schemas(value: Any) -> tuple[str, ...] | None:
    if value in (None, "", []):
        return None
    if isinstance(value, str):
        return tuple(s.strip() for s in value.split(",") if s.strip())
    return tuple(str(s) for s in value)


def from_config(config: SourceConfig) -> PostgresSource:
    """A :class:`PostgresSource` from one ``tribal.yaml`` entry (``kind: postgres``)."""
    options = config.options()
    dsn = options.get("dsn")
    if not dsn:
        raise ConfigError(f"source {config.name!r} (postgres): 'dsn' is required")
    try:
        return PostgresSource(
            config.name,
            str(dsn),
            install_trigger=_flag(options.get("install_trigger", False)),
            interval=float(options.get("interval", 30.0)),
            schemas=_schemas(options.get("schemas")),
            include_samples=_flag(options.get("include_samples", False)),
            tenant=str(options.get("tenant", "default")),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"source {config.name!r} (postgres): {exc}") from exc
