"""What the database sources share: hashing a snapshot, diffing it, publishing the diff.

A schema source observes every table of one database as a list of
:class:`~events.schema.TableObserved` snapshots, then :func:`publish_changes` compares
their ``metadata_hash`` with the checkpoint (``{fqn: metadata_hash}``): a new or
altered table is emitted again, a vanished one becomes :class:`TableDropped`, an
unchanged one emits nothing. The checkpoint is saved only after the sink flushed.

Names and comments come from the database as they are: quotes, reserved words and any
Unicode stay (they are data, always bound or quoted), but control characters
(:mod:`events.text`) are removed by :func:`with_hash`, which every source calls last,
and the snapshot's ``notes`` says what was removed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from events.schema import TableDropped, TableObserved
from events.text import normalize_model
from sources.checkpoint import CheckpointStore
from sources.sink import EventSink

TOPIC = "schema.changes"

# Fields that change without the schema changing: event identity, timing, the
# planner's row estimate and sampled data. They never make a table "altered".
_VOLATILE = {"event_id", "occurred_at", "schema_version", "row_count_approx", "metadata_hash"}

# Whole words (``api_key``, ``userEmail`` → ``user``/``email``) and substrings that
# mark a column as secret or personal: such columns are never sampled.
_SENSITIVE_WORDS = frozenset((
    "password", "passwd", "pwd", "pass", "secret", "token", "key", "apikey", "ssn", "sin",
    "email", "mail", "phone", "mobile", "fax", "address", "addr", "street", "zip", "zipcode",
    "postcode", "postal", "dob", "birth", "birthday", "birthdate", "card", "cc", "ccn", "cvv",
    "cvc", "pan", "iban", "bic", "swift", "account", "acct", "routing", "salary", "wage",
    "wages", "income", "compensation", "tax", "taxid", "passport", "license", "licence",
    "national", "nid", "ip", "credential", "credentials", "auth", "otp", "pin", "hash", "salt",
    "signature", "lat", "lng", "lon", "latitude", "longitude", "gps", "surname", "firstname",
    "lastname", "fullname", "gender", "religion", "ethnicity", "health", "diagnosis",
))  # fmt: skip
_SENSITIVE_PARTS = (
    "password", "passwd", "secret", "token", "apikey", "privatekey", "email", "phone",
    "address", "birth", "salary", "iban", "creditcard", "cardnumber", "socialsecurity",
    "passport", "credential", "firstname", "lastname", "fullname", "surname",
)  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def is_sensitive_column(name: str) -> bool:
    """True when a column's name suggests secrets or personal data (never sampled)."""
    words = [w for w in re.split(r"[^a-z0-9]+", _CAMEL.sub("_", name).lower()) if w]
    if any(w in _SENSITIVE_WORDS for w in words):
        return True
    compact = "".join(words)
    return any(part in compact for part in _SENSITIVE_PARTS)


# Fields added to TableObserved after its first version: hashed only when set, so that
# hashes checkpointed before they existed still match and nothing is re-emitted for them.
_ADDED_LATER = ("notes", "partition_key", "partitions")

_EXCLUDE: dict[str, Any] = {
    **dict.fromkeys(_VOLATILE, True),
    **dict.fromkeys(_ADDED_LATER, True),
    "columns": {"__all__": {"sample_values"}},
}


def metadata_hash(event: TableObserved) -> str:
    """sha256 of the snapshot's JSON without volatile fields (row estimate, samples).

    The JSON is canonical because pydantic writes fields in declaration order.
    """
    exclude = {k: v for k, v in _EXCLUDE.items() if k not in _ADDED_LATER or not getattr(event, k)}
    return hashlib.sha256(event.model_dump_json(exclude=exclude).encode()).hexdigest()


def with_hash(event: TableObserved) -> TableObserved:
    """``event`` without control characters (noted in ``notes``), its ``metadata_hash`` set."""
    clean = normalize_model(event)
    return clean.model_copy(update={"metadata_hash": metadata_hash(clean)})


def split_fqn(fqn: str, database: str) -> tuple[str, str]:
    """(schema, table) of ``database.schema.table``; the database name may hold dots."""
    rest = fqn[len(database) + 1 :] if fqn.startswith(database + ".") else fqn
    schema, _, table = rest.partition(".")
    return schema, table


@dataclass
class Changes:
    """What one observation changed relative to the previous hashes."""

    observed: list[TableObserved] = field(default_factory=list)
    dropped: list[TableDropped] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.observed) + len(self.dropped)


def diff(
    previous: Mapping[str, str],
    current: Iterable[TableObserved],
    database: str,
    tenant: str = "default",
) -> Changes:
    """Altered or new tables (by hash) and dropped ones (in ``previous`` only)."""
    changes = Changes()
    for table in current:
        fqn = table.fully_qualified_name
        changes.hashes[fqn] = table.metadata_hash
        if previous.get(fqn) != table.metadata_hash:
            changes.observed.append(table)
    for fqn in sorted(set(previous) - set(changes.hashes)):
        schema, name = split_fqn(fqn, database)
        changes.dropped.append(
            TableDropped(tenant=tenant, database=database, schema_name=schema, table_name=name)
        )
    return changes


async def emit_changes(sink: EventSink, changes: Changes) -> int:
    """Emit every change keyed by FQN and wait for the acks; returns the count."""
    for observed in changes.observed:
        await sink.emit(TOPIC, observed.fully_qualified_name, observed)
    for dropped in changes.dropped:
        await sink.emit(TOPIC, dropped.fully_qualified_name, dropped)
    if changes:
        await sink.flush()
    return len(changes)


async def publish_changes(
    sink: EventSink,
    checkpoint: CheckpointStore,
    current: Iterable[TableObserved],
    database: str,
    tenant: str = "default",
) -> int:
    """Diff against the ``{fqn: hash}`` checkpoint, emit, flush, then save it."""
    previous = {k: v for k, v in checkpoint.load().items() if isinstance(v, str)}
    changes = diff(previous, current, database, tenant)
    count = await emit_changes(sink, changes)
    if count or previous != changes.hashes:
        checkpoint.save(changes.hashes)
    return count
