"""The embedded default registry: one JSON file, shared safely between processes.

Writers take an exclusive ``fcntl.flock`` on a lock file, re-read the registry,
append, and publish with an atomic rename; readers never need the lock because
they only ever see a complete file. Ids are sequential and never reused.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastavro import parse_schema

from events.registry.base import (
    AvroSchema,
    InvalidSchemaError,
    SchemaNotFoundError,
    canonical_json,
)
from events.registry.compat import check_backward_compatible


class _State:
    def __init__(self, schemas: dict[int, str], subjects: dict[str, list[int]]) -> None:
        self.schemas = schemas  # id -> canonical JSON
        self.subjects = subjects  # subject -> ids, oldest version first
        self.ids = {text: schema_id for schema_id, text in schemas.items()}


class FileSchemaRegistry:
    """A :class:`~events.registry.base.SchemaRegistry` stored in ``directory/registry.json``."""

    def __init__(self, directory: Path | str) -> None:
        self._dir = Path(directory)
        self._dir.mkdir(parents=True, exist_ok=True)
        self._path = self._dir / "registry.json"
        self._lock_path = self._dir / "registry.lock"
        self._mutex = threading.Lock()
        self._state = _State({}, {})
        self._stamp: tuple[int, int, int] | None = None

    def register(self, subject: str, schema: AvroSchema) -> int:
        """See :meth:`SchemaRegistry.register`."""
        text = canonical_json(schema)
        known = self._refresh()
        if text in known.ids and known.ids[text] in known.subjects.get(subject, ()):
            return known.ids[text]
        _validate(schema)
        with self._locked():
            state = self._read()  # a private copy: the cached state is never mutated
            versions = state.subjects.setdefault(subject, [])
            schema_id = state.ids.get(text)
            if schema_id is not None and schema_id in versions:
                return schema_id
            if versions:
                check_backward_compatible(json.loads(state.schemas[versions[-1]]), schema)
            if schema_id is None:
                schema_id = max(state.schemas, default=0) + 1
                state.schemas[schema_id] = text
                state.ids[text] = schema_id
            versions.append(schema_id)
            self._write(state)
            return schema_id

    def get_by_id(self, schema_id: int) -> AvroSchema:
        """See :meth:`SchemaRegistry.get_by_id`."""
        text = self._state.schemas.get(schema_id) or self._refresh().schemas.get(schema_id)
        if text is None:
            raise SchemaNotFoundError(f"schema id {schema_id} not found")
        schema: AvroSchema = json.loads(text)
        return schema

    def latest(self, subject: str) -> tuple[int, AvroSchema] | None:
        """See :meth:`SchemaRegistry.latest`."""
        state = self._refresh()
        versions = state.subjects.get(subject)
        if not versions:
            return None
        return versions[-1], json.loads(state.schemas[versions[-1]])

    def subjects(self) -> list[str]:
        """See :meth:`SchemaRegistry.subjects`."""
        return sorted(s for s, versions in self._refresh().subjects.items() if versions)

    def _refresh(self) -> _State:
        """The cached state, re-read if another process (or instance) replaced the file."""
        with self._mutex:
            try:
                st = os.stat(self._path)
            except FileNotFoundError:
                return self._state
            if (st.st_ino, st.st_mtime_ns, st.st_size) != self._stamp:
                self._state = self._read()
                self._stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
            return self._state

    def _read(self) -> _State:
        try:
            raw: dict[str, Any] = json.loads(self._path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return _State({}, {})
        return _State(
            {int(k): v for k, v in raw["schemas"].items()},
            {k: list(v) for k, v in raw["subjects"].items()},
        )

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self._lock_path, "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _write(self, state: _State) -> None:
        schemas = {str(k): v for k, v in state.schemas.items()}
        document = {"schemas": schemas, "subjects": state.subjects}
        fd, tmp = tempfile.mkstemp(dir=self._dir, prefix=".registry-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(document, out, indent=1)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self._path)
        except BaseException:
            os.unlink(tmp)
            raise
        with self._mutex:
            self._stamp = None  # force a re-read: our own write is now the truth


def _validate(schema: AvroSchema) -> None:
    try:
        parse_schema(schema, named_schemas={})
    except Exception as exc:  # fastavro raises several types for bad schemas
        raise InvalidSchemaError(f"not a valid Avro schema: {exc}") from exc
    # fastavro accepts a record without "fields", which the Avro spec requires.
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if node.get("type") in ("record", "error") and not isinstance(node.get("fields"), list):
                raise InvalidSchemaError(
                    f"not a valid Avro schema: record {node.get('name')!r} has no fields"
                )
            stack.extend(v for k, v in node.items() if k in ("type", "fields", "items", "values"))
