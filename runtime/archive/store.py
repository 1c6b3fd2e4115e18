"""The on-disk layout of the archive, with crash-safe appends.

    archive/
      topics/<topic>/topic.json               partitions and config
      topics/<topic>/<partition>/<base>.avro  records, Avro OCF, appended in blocks
      topics/<topic>/<partition>/position.json  next offset + valid bytes of the tail
      offsets.avro                            committed offsets of every consumer group

A block is appended and fsynced before ``position.json`` moves past it, so a crash
mid-append leaves a torn tail that the next open truncates away.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro

SEGMENT_BYTES = 64 * 1024 * 1024


def _archive_record(name: str, doc: str, fields: list[dict[str, Any]]) -> Any:
    """A parsed Avro record schema of the archive."""
    return fastavro.parse_schema(
        {
            "type": "record",
            "name": name,
            "namespace": "tribal.archive",
            "doc": doc,
            "fields": fields,
        }
    )


RECORD_SCHEMA = _archive_record(
    "ArchivedRecord",
    "One Kafka record, exactly as the broker held it.",
    [
        {"name": "offset", "type": "long"},
        {"name": "timestamp_ms", "type": "long"},
        {"name": "key", "type": ["null", "bytes"], "default": None},
        {"name": "value", "type": ["null", "bytes"], "default": None},
        {
            "name": "headers",
            "default": [],
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "ArchivedHeader",
                    "fields": [
                        {"name": "key", "type": "string"},
                        {"name": "value", "type": ["null", "bytes"], "default": None},
                    ],
                },
            },
        },
    ],
)

OFFSET_SCHEMA = _archive_record(
    "CommittedOffset",
    "The next offset a consumer group will read from a partition.",
    [
        {"name": "group", "type": "string"},
        {"name": "topic", "type": "string"},
        {"name": "partition", "type": "int"},
        {"name": "offset", "type": "long"},
        {"name": "metadata", "type": "string", "default": ""},
    ],
)


@dataclass
class Position:
    """Where a partition's archive stands: next broker offset, and its tail segment."""

    next_offset: int = 0
    segment: str = ""
    valid_bytes: int = 0
    records: int = 0


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class PartitionLog:
    """The archive of one partition: append batches, read everything back."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.position = self._load_position()
        self._truncate_torn_tail()

    def _load_position(self) -> Position:
        path = self.dir / "position.json"
        if not path.exists():
            return Position()
        return Position(**json.loads(path.read_text()))

    def _truncate_torn_tail(self) -> None:
        # Segments begun after the last saved position hold nothing acknowledged; with
        # no saved position at all (a crash in the first append), none of them do.
        for other in self.dir.glob("*.avro"):
            if other.name > self.position.segment:
                other.unlink()
        if not self.position.segment:
            return
        seg = self.dir / self.position.segment
        if seg.exists() and seg.stat().st_size > self.position.valid_bytes:
            with open(seg, "r+b") as f:
                f.truncate(self.position.valid_bytes)

    def append(self, records: list[dict[str, Any]]) -> None:
        """Append records (in offset order) durably, then advance the position."""
        if not records:
            return
        pos = self.position
        segment, valid = pos.segment, pos.valid_bytes
        if not segment or valid >= SEGMENT_BYTES:
            segment, valid = f"{records[0]['offset']:020d}.avro", 0
        # The position moves only once the block is durable, so an append that fails
        # midway (and is retried by the same process) leaves it where it was.
        with open(self.dir / segment, "a+b") as f:
            # "a" mode writes at the end whatever we seek to: cut off what a failed
            # append left behind first, or the next block would follow the torn bytes.
            f.truncate(valid)
            f.seek(valid)
            fastavro.writer(f, RECORD_SCHEMA, records, codec="null", sync_interval=1 << 20)
            f.flush()
            os.fsync(f.fileno())
            size = f.tell()
        if valid == 0:
            _fsync_dir(self.dir)
        pos.segment, pos.valid_bytes = segment, size
        pos.next_offset = int(records[-1]["offset"]) + 1
        pos.records += len(records)
        self.save_position()

    def save_position(self) -> None:
        _atomic_write(self.dir / "position.json", json.dumps(self.position.__dict__).encode())

    def read(self) -> Iterator[dict[str, Any]]:
        """Every archived record, oldest first."""
        tail = self.position.segment
        for seg in sorted(self.dir.glob("*.avro")):
            if seg.name > tail:
                continue  # begun by an append that has not been acknowledged
            with open(seg, "rb") as f:
                if seg.name == tail:
                    # Bytes past valid_bytes belong to an unfinished append.
                    data = f.read(self.position.valid_bytes)
                    if not data:
                        continue
                    yield from fastavro.reader(io.BytesIO(data))  # type: ignore[misc]
                else:
                    yield from fastavro.reader(f)  # type: ignore[misc]


class ArchiveStore:
    """All partition logs and the offsets snapshot under one directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.topics_dir = self.root / "topics"
        self.topics_dir.mkdir(parents=True, exist_ok=True)
        self._logs: dict[tuple[str, int], PartitionLog] = {}

    def log(self, topic: str, partition: int) -> PartitionLog:
        key = (topic, partition)
        if key not in self._logs:
            self._logs[key] = PartitionLog(self.topics_dir / topic / str(partition))
        return self._logs[key]

    def save_topic(self, topic: str, partitions: int, config: dict[str, str]) -> None:
        d = self.topics_dir / topic
        d.mkdir(parents=True, exist_ok=True)
        meta = {"partitions": partitions, "config": config}
        path = d / "topic.json"
        if not path.exists() or json.loads(path.read_text()) != meta:
            _atomic_write(path, json.dumps(meta, sort_keys=True).encode())

    def topics(self) -> dict[str, dict[str, Any]]:
        """Archived topics with their ``partitions`` and ``config``."""
        out: dict[str, dict[str, Any]] = {}
        for meta in sorted(self.topics_dir.glob("*/topic.json")):
            out[meta.parent.name] = json.loads(meta.read_text())
        return out

    def save_offsets(self, offsets: Iterable[tuple[str, str, int, int, str]]) -> None:
        """Replace the committed-offsets snapshot: (group, topic, partition, offset, meta)."""
        rows = [
            {"group": g, "topic": t, "partition": p, "offset": o, "metadata": m}
            for g, t, p, o, m in sorted(offsets)
        ]
        tmp = self.root / "offsets.avro.tmp"
        with open(tmp, "wb") as f:
            fastavro.writer(f, OFFSET_SCHEMA, rows)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.root / "offsets.avro")

    def offsets(self) -> list[tuple[str, str, int, int, str]]:
        path = self.root / "offsets.avro"
        if not path.exists():
            return []
        with open(path, "rb") as f:
            return [
                (r["group"], r["topic"], r["partition"], r["offset"], r["metadata"])
                for r in fastavro.reader(f)
                if isinstance(r, dict)
            ]

    def is_empty(self) -> bool:
        return not self.topics()
