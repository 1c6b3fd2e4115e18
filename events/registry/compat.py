"""BACKWARD compatibility of Avro schemas: can the new schema read the old data?

Follows Avro schema resolution: the new schema is the reader, the old the writer.
Added fields need a default; removed fields are fine (the reader ignores them);
types may only be promoted (int -> long -> float -> double, string <-> bytes).
"""

from __future__ import annotations

from typing import Any

from events.registry.base import AvroSchema

_PROMOTIONS = {
    ("int", "long"), ("int", "float"), ("int", "double"), ("long", "float"),
    ("long", "double"), ("float", "double"), ("string", "bytes"), ("bytes", "string"),
}  # fmt: skip
_NAMED = ("record", "enum", "fixed")


class IncompatibleSchemaError(ValueError):
    """A new schema cannot read data written with the old one; ``field`` names where."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def check_backward_compatible(old_schema: AvroSchema, new_schema: AvroSchema) -> None:
    """Raise :class:`IncompatibleSchemaError` unless ``new_schema`` can read ``old_schema`` data."""
    writer, reader = _Names(old_schema), _Names(new_schema)
    _Check(writer, reader).compatible(old_schema, new_schema, "")


class _Names:
    """Named types of one schema, so references by name can be followed."""

    def __init__(self, schema: Any) -> None:
        self.types: dict[str, dict[str, Any]] = {}
        self._collect(schema, "")

    def _collect(self, node: Any, namespace: str) -> None:
        if isinstance(node, list):
            for branch in node:
                self._collect(branch, namespace)
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind in _NAMED:
                name = _full_name(node, namespace)
                self.types[name] = node
                namespace = name.rpartition(".")[0]
            for field in node.get("fields", ()):
                self._collect(field["type"], namespace)
            for key in ("items", "values"):
                if key in node:
                    self._collect(node[key], namespace)
            if isinstance(kind, dict | list):
                self._collect(kind, namespace)

    def resolve(self, node: Any) -> Any:
        if isinstance(node, str):
            if node in self.types:
                return self.types[node]
            short = [v for k, v in self.types.items() if k.rpartition(".")[2] == node]
            return short[0] if len(short) == 1 else node
        if isinstance(node, dict) and isinstance(node.get("type"), dict | list):
            return self.resolve(node["type"])
        if isinstance(node, dict) and node.get("type") in self.types:
            return self.types[node["type"]]  # {"type": "ns.Name"} references a named type
        return node


class _Check:
    def __init__(self, writer: _Names, reader: _Names) -> None:
        self.writer, self.reader = writer, reader
        self.seen: set[tuple[str, str]] = set()

    def compatible(self, w: Any, r: Any, path: str) -> None:
        w, r = self.writer.resolve(w), self.reader.resolve(r)
        if isinstance(w, list):
            for branch in w:  # every value the writer may have written must be readable
                self.compatible(branch, r, path)
            return
        if isinstance(r, list):
            if not any(self._ok(w, branch, path) for branch in r):
                raise _changed(path, w, r)
            return
        wt, rt = _kind(w), _kind(r)
        if wt != rt and (wt, rt) not in _PROMOTIONS:
            raise _changed(path, w, r)
        if _logical(w) != _logical(r):
            raise _changed(path, w, r)
        if rt == "record":
            self._records(w, r, path)
        elif rt == "array":
            self.compatible(w["items"], r["items"], f"{path}[]")
        elif rt == "map":
            self.compatible(w["values"], r["values"], f"{path}{{}}")
        elif rt == "enum":
            missing = set(w["symbols"]) - set(r["symbols"])
            if missing and "default" not in r:
                raise IncompatibleSchemaError(
                    f"field '{path}': enum symbols {sorted(missing)} were removed", path
                )
        elif rt == "fixed" and w["size"] != r["size"]:
            raise _changed(path, w, r)

    def _ok(self, w: Any, r: Any, path: str) -> bool:
        seen = set(self.seen)
        try:
            self.compatible(w, r, path)
        except IncompatibleSchemaError:
            self.seen = seen
            return False
        return True

    def _records(self, w: dict[str, Any], r: dict[str, Any], path: str) -> None:
        names = {
            r["name"].rpartition(".")[2],
            *(a.rpartition(".")[2] for a in r.get("aliases", ())),
        }
        if w["name"].rpartition(".")[2] not in names:
            where = path or "(record)"
            raise IncompatibleSchemaError(
                f"field '{where}': record {w['name']} cannot be read as {r['name']}", where
            )
        if (w["name"], r["name"]) in self.seen:
            return  # already checked, or a recursive type being checked
        self.seen.add((w["name"], r["name"]))
        written = {f["name"]: f for f in w.get("fields", ())}
        for field in r.get("fields", ()):
            name = f"{path}.{field['name']}" if path else field["name"]
            source = next(
                (written[a] for a in (field["name"], *field.get("aliases", ())) if a in written),
                None,
            )
            if source is not None:
                self.compatible(source["type"], field["type"], name)
            elif "default" not in field:
                raise IncompatibleSchemaError(
                    f"field '{name}' was added without a default, so data written "
                    "before it cannot be read",
                    name,
                )


def _full_name(node: dict[str, Any], namespace: str) -> str:
    name: str = node["name"]
    if "." in name:
        return name
    namespace = node.get("namespace", namespace)
    return f"{namespace}.{name}" if namespace else name


def _kind(node: Any) -> str:
    return node if isinstance(node, str) else str(node["type"])


def _logical(node: Any) -> str | None:
    return node.get("logicalType") if isinstance(node, dict) else None


def _describe(node: Any) -> str:
    if isinstance(node, list):
        return "[" + ", ".join(_describe(b) for b in node) + "]"
    if isinstance(node, str):
        return node
    kind = _kind(node)
    if kind in _NAMED:
        return f"{kind} {node['name']}"
    if kind == "array":
        return f"array<{_describe(node['items'])}>"
    if kind == "map":
        return f"map<{_describe(node['values'])}>"
    logical = _logical(node)
    return f"{kind} ({logical})" if logical else kind


def _changed(path: str, w: Any, r: Any) -> IncompatibleSchemaError:
    where = path or "(record)"
    return IncompatibleSchemaError(
        f"field '{where}': type changed from {_describe(w)} to {_describe(r)}", where
    )
