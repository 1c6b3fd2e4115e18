"""Snowflake schemas → ``tribal.schema.changes``, polled on ``LAST_ALTERED``.

Each poll reads ``INFORMATION_SCHEMA.TABLES`` (+ ``VIEWS``): when no table appeared,
vanished or has a ``LAST_ALTERED`` newer than the checkpoint, the poll ends there.
Otherwise the whole database is introspected (``COLUMNS``, ``SHOW PRIMARY KEYS``,
``SHOW IMPORTED KEYS``), hashed and diffed like PostgreSQL: only altered tables are
observed again, vanished ones become ``TableDropped``. The checkpoint is
``{"tables": {fqn: metadata_hash}, "last_altered": iso}``. The connector is
synchronous, so every call runs on one dedicated thread per source.

What fakesnow (0.12) cannot emulate, and how this module copes:

* ``SHOW PRIMARY KEYS IN DATABASE`` / ``SHOW IMPORTED KEYS IN DATABASE`` raise "not
  implemented": fall back to ``… IN SCHEMA`` per schema, then to no keys.
* ``SHOW IMPORTED KEYS`` returns the primary keys with empty ``pk_*`` columns: rows
  without a referenced table are ignored, so foreign keys come out empty.
* Primary-key constraint names are synthesised (``db1_public_t_pkey``).
* ``LAST_ALTERED`` is always 1970-01-01 and never moves: timestamps before 1971 are
  treated as unknown and every poll introspects in full (hashes still keep
  unchanged tables silent).
* Comments: table comments work; ``COMMENT ON COLUMN`` raises (though it applies),
  inline column ``COMMENT '…'`` and ``ALTER COLUMN … COMMENT`` are silently lost,
  view comments are lost. Views appear in ``INFORMATION_SCHEMA.VIEWS`` only, not in
  ``TABLES``, so both are read.
* ``ROW_COUNT`` is emulated (exact, not an estimate); there is no DATETIME_PRECISION.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from events.schema import Column, ForeignKey, IncomingForeignKey, TableObserved
from sources.checkpoint import CheckpointStore
from sources.config import ConfigError, SourceConfig
from sources.schema_snapshot import diff, emit_changes, with_hash
from sources.sink import EventSink

log = logging.getLogger(__name__)

UNKNOWN_BEFORE = datetime(1971, 1, 1, tzinfo=UTC)
BACKOFF_MAX_S = 300.0
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")
_SYSTEM = "'INFORMATION_SCHEMA'"


def ident(name: str) -> str:
    """``name`` as a Snowflake identifier (bare when it can be, else quoted)."""
    return name if _PLAIN.match(name) else '"' + name.replace('"', '""') + '"'


def column_type(dt: str, length: Any, precision: Any, scale: Any) -> str:
    """``NUMBER(10,2)``, ``TEXT(64)`` or the bare type."""
    if dt in ("NUMBER", "DECIMAL", "NUMERIC", "FIXED") and precision is not None:
        return f"NUMBER({precision},{scale or 0})"
    if dt in ("TEXT", "VARCHAR", "STRING", "CHAR", "CHARACTER") and length:
        return f"{dt}({length})"
    return dt


class SnowflakeSource:
    """Observes every table and view of one Snowflake database by polling."""

    def __init__(
        self,
        name: str,
        connect_args: dict[str, Any],
        *,
        interval: float = 300.0,
        schemas: tuple[str, ...] | None = None,
        tenant: str = "default",
    ) -> None:
        if not connect_args.get("database"):
            raise ConfigError(f"source {name!r} (snowflake): 'database' is required")
        self.name = name
        self.connect_args = {k: v for k, v in connect_args.items() if v is not None}
        self.database = str(connect_args["database"])
        self.interval = interval
        self.schemas = {s.upper() for s in schemas} if schemas else None
        self.tenant = tenant
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"snowflake-{name}")
        self._conn: Any = None

    # -- on the worker thread -----------------------------------------------------

    def _query(self, sql: str) -> list[dict[str, Any]]:
        if self._conn is None:
            import snowflake.connector

            self._conn = snowflake.connector.connect(**self.connect_args)
        cursor = self._conn.cursor()
        try:
            cursor.execute(sql)
            names = [str(d[0]).upper() for d in cursor.description or ()]
            return [dict(zip(names, row, strict=False)) for row in cursor.fetchall()]
        finally:
            cursor.close()

    def _first_working(self, *sqls: str) -> list[dict[str, Any]] | None:
        """Rows of the first statement this account (or emulator) supports."""
        from snowflake.connector.errors import ProgrammingError

        for sql in sqls:
            try:
                return self._query(sql)
            except ProgrammingError as exc:  # SQL the account (or fakesnow) does not know
                if self._conn is None:
                    raise
                log.debug("snowflake %s: %r unsupported (%s)", self.name, sql[:60], exc)
        return None

    def _in_scope(self, schema: str) -> bool:
        return self.schemas is None or schema.upper() in self.schemas

    def _listing(self) -> dict[tuple[str, str], dict[str, Any]]:
        db = ident(self.database)
        tables = self._first_working(
            f"SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, LAST_ALTERED, ROW_COUNT, COMMENT "
            f"FROM {db}.INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA <> {_SYSTEM}",
            f"SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM {db}.INFORMATION_SCHEMA.TABLES "
            f"WHERE TABLE_SCHEMA <> {_SYSTEM}",
        )
        if tables is None:
            raise RuntimeError("INFORMATION_SCHEMA.TABLES is not readable")
        views = self._first_working(
            f"SELECT TABLE_SCHEMA, TABLE_NAME, LAST_ALTERED, COMMENT "
            f"FROM {db}.INFORMATION_SCHEMA.VIEWS WHERE TABLE_SCHEMA <> {_SYSTEM}",
        )
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for row in [*({**v, "TABLE_TYPE": "VIEW"} for v in views or ()), *tables]:
            if self._in_scope(row["TABLE_SCHEMA"]):
                found[(row["TABLE_SCHEMA"], row["TABLE_NAME"])] = row
        return found

    def _show(self, what: str, schemas: set[str]) -> list[dict[str, Any]]:
        db = ident(self.database)
        rows = self._first_working(f"SHOW {what} IN DATABASE {db}")
        if rows is not None:
            return rows
        found: list[dict[str, Any]] = []
        for schema in sorted(schemas):
            found += self._first_working(f"SHOW {what} IN SCHEMA {db}.{ident(schema)}") or []
        return found

    def _fqn(self, database: str | None, schema: str, table: str) -> str:
        same = not database or database.upper() == self.database.upper()
        return f"{self.name if same else database}.{schema}.{table}"

    def _snapshot(self, listing: dict[tuple[str, str], dict[str, Any]]) -> list[TableObserved]:
        db = ident(self.database)
        picked = "TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, IS_NULLABLE, COLUMN_DEFAULT"
        sizes = "CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE"
        where = f"FROM {db}.INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA <> {_SYSTEM} "
        order = "ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION"
        rows = self._first_working(
            f"SELECT {picked}, {sizes}, COMMENT {where}{order}",
            f"SELECT {picked}, {sizes} {where}{order}",
        )
        if rows is None:
            raise RuntimeError("INFORMATION_SCHEMA.COLUMNS is not readable")
        columns: dict[tuple[str, str], list[Column]] = defaultdict(list)
        for c in rows:
            columns[(c["TABLE_SCHEMA"], c["TABLE_NAME"])].append(
                Column(
                    name=c["COLUMN_NAME"],
                    type=column_type(
                        c["DATA_TYPE"],
                        c.get("CHARACTER_MAXIMUM_LENGTH"),
                        c.get("NUMERIC_PRECISION"),
                        c.get("NUMERIC_SCALE"),
                    ),
                    nullable=c["IS_NULLABLE"] == "YES",
                    default_value=c.get("COLUMN_DEFAULT"),
                    comment=c.get("COMMENT") or None,
                )
            )
        schemas = {schema for schema, _ in listing}
        pks: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
        for k in self._show("PRIMARY KEYS", schemas):
            pks[(k["SCHEMA_NAME"], k["TABLE_NAME"])].append((k["KEY_SEQUENCE"], k["COLUMN_NAME"]))
        fk_parts: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        for k in self._show("IMPORTED KEYS", schemas):
            if k.get("PK_TABLE_NAME"):  # fakesnow answers with rows that reference nothing
                fk_parts[(k["FK_SCHEMA_NAME"], k["FK_TABLE_NAME"], k["FK_NAME"])].append(k)
        outgoing: dict[tuple[str, str], list[ForeignKey]] = defaultdict(list)
        incoming: dict[tuple[str, str], list[IncomingForeignKey]] = defaultdict(list)
        for (schema, table, fk_name), parts in sorted(fk_parts.items()):
            parts.sort(key=lambda p: int(p["KEY_SEQUENCE"]))
            first = parts[0]
            target = (first["PK_SCHEMA_NAME"], first["PK_TABLE_NAME"])
            fk = ForeignKey(
                name=fk_name,
                columns=tuple(p["FK_COLUMN_NAME"] for p in parts),
                references_table=self._fqn(first.get("PK_DATABASE_NAME"), *target),
                references_columns=tuple(p["PK_COLUMN_NAME"] for p in parts),
            )
            outgoing[(schema, table)].append(fk)
            incoming[target].append(
                IncomingForeignKey(
                    name=fk_name,
                    from_table=self._fqn(first.get("FK_DATABASE_NAME"), schema, table),
                    from_columns=fk.columns,
                    columns=fk.references_columns,
                )
            )
        observed = []
        for key, row in sorted(listing.items()):
            is_view = "VIEW" in str(row.get("TABLE_TYPE", ""))
            rows_count = row.get("ROW_COUNT")
            snapshot = TableObserved(
                tenant=self.tenant,
                database=self.name,
                schema_name=key[0],
                table_name=key[1],
                database_type="snowflake",
                object_type="view" if is_view else "table",
                columns=tuple(columns[key]),
                primary_key=tuple(col for _, col in sorted(pks.get(key, []))),
                foreign_keys=tuple(outgoing[key]),
                referenced_by=tuple(incoming[key]),
                comment=row.get("COMMENT") or None,
                row_count_approx=None if is_view or rows_count is None else int(rows_count),
                metadata_hash="",
            )
            observed.append(with_hash(snapshot))
        return observed

    def _observe(self, state: dict[str, Any]) -> tuple[list[TableObserved] | None, str | None]:
        """(snapshot or None when nothing can have changed, newest LAST_ALTERED)."""
        listing = self._listing()
        stamps = [r.get("LAST_ALTERED") for r in listing.values()]
        known = [s for s in stamps if isinstance(s, datetime) and s >= UNKNOWN_BEFORE]
        newest = max(known).astimezone(UTC).isoformat() if known else None
        fqns = {self._fqn(None, *key) for key in listing}
        unchanged = (
            len(known) == len(stamps)
            and fqns == set(state.get("tables", {}))
            and newest is not None
            and newest <= str(state.get("last_altered") or "")
        )
        return (None if unchanged else self._snapshot(listing)), newest

    def _close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    # -- on the event loop ------------------------------------------------------------

    async def _call(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def sync_once(self, sink: EventSink, checkpoint: CheckpointStore) -> int:
        """Poll once; introspect and emit only when something may have changed."""
        state = checkpoint.load()
        try:
            tables, newest = await self._call(self._observe, state)
        except Exception:
            await self._call(self._close)  # reconnect next time
            raise
        if tables is None:
            return 0
        changes = diff(state.get("tables", {}), tables, self.name, self.tenant)
        count = await emit_changes(sink, changes)
        checkpoint.save({"tables": changes.hashes, "last_altered": newest})
        if count:
            log.info("snowflake %s: %d schema events", self.name, count)
        return count

    async def run(self, sink: EventSink, checkpoint: CheckpointStore, stop: asyncio.Event) -> None:
        """Poll every ``interval`` seconds until ``stop``; errors back off, never escape."""
        delay = self.interval
        try:
            while not stop.is_set():
                try:
                    await self.sync_once(sink, checkpoint)
                    delay = self.interval
                except Exception as exc:
                    delay = min(max(delay, 1.0) * 2, BACKOFF_MAX_S)
                    log.warning(
                        "snowflake %s: %s; retrying in %.0fs", self.name, self._safe(exc), delay
                    )
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
        finally:
            await self._call(self._close)

    def _safe(self, exc: BaseException) -> str:
        text = f"{type(exc).__name__}: {exc}"
        password = self.connect_args.get("password")
        return text.replace(str(password), "***") if password else text


def from_config(config: SourceConfig) -> SnowflakeSource:
    """A :class:`SnowflakeSource` from one ``tribal.yaml`` entry (``kind: snowflake``)."""
    options = config.options()
    keys = ("account", "user", "password", "database", "warehouse", "role", "schema",
            "authenticator", "private_key_file", "host", "port", "protocol")  # fmt: skip
    connect_args = {k: options[k] for k in keys if options.get(k) is not None}
    for required in ("account", "user", "database"):
        if not connect_args.get(required):
            raise ConfigError(f"source {config.name!r} (snowflake): {required!r} is required")
    schemas = options.get("schemas")
    if isinstance(schemas, str):
        schemas = [s.strip() for s in schemas.split(",") if s.strip()]
    return SnowflakeSource(
        config.name,
        connect_args,
        interval=float(options.get("interval", 300.0)),
        schemas=tuple(schemas) if schemas else None,
        tenant=str(options.get("tenant", "default")),
    )
