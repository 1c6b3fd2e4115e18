"""The archive's files on their own: crash-safe partition logs, offsets, translation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st

from runtime.archive import store as store_module
from runtime.archive.restore import _translate
from runtime.archive.store import ArchiveStore, PartitionLog


def _rows(offsets: range | list[int], tag: str = "v") -> list[dict[str, Any]]:
    return [
        {
            "offset": o,
            "timestamp_ms": 1_700_000_000_000 + o,
            "key": f"k{o}".encode(),
            "value": f"{tag}{o}".encode() if o % 5 else None,
            "headers": [
                {"key": "trace", "value": f"t{o}".encode()},
                {"key": "empty", "value": None},
            ],
        }
        for o in offsets
    ]


def _segments(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("*.avro"))


def test_appended_batches_read_back_in_offset_order(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "p0")
    log.append(_rows(range(0, 3)))
    log.append(_rows(range(3, 10)))
    log.append([])  # nothing to do, and no harm

    assert list(log.read()) == _rows(range(10))
    assert (log.position.next_offset, log.position.records) == (10, 10)


def test_a_reopened_log_resumes_where_it_stopped(tmp_path: Path) -> None:
    PartitionLog(tmp_path / "p0").append(_rows(range(4)))

    reopened = PartitionLog(tmp_path / "p0")
    assert (reopened.position.next_offset, reopened.position.records) == (4, 4)
    reopened.append(_rows(range(4, 6)))

    assert list(PartitionLog(tmp_path / "p0").read()) == _rows(range(6))


def _tear_tail(log: PartitionLog, rows: list[dict[str, Any]]) -> None:
    """Write part of a real block past the saved position, as a crash mid-append would."""
    seg = log.dir / log.position.segment
    whole = seg.read_bytes()
    with open(seg, "a+b") as f:
        fastavro.writer(f, store_module.RECORD_SCHEMA, rows, codec="null")
    torn = seg.read_bytes()
    seg.write_bytes(torn[: len(whole) + (len(torn) - len(whole)) // 2])


def test_a_torn_tail_is_truncated_on_reopen_and_later_appends_read_back(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "p0")
    log.append(_rows(range(3)))
    valid = log.position.valid_bytes
    _tear_tail(log, _rows(range(3, 8), tag="lost"))
    seg = log.dir / log.position.segment
    assert seg.stat().st_size > valid
    assert list(log.read()) == _rows(range(3))  # a reader ignores the unfinished append

    reopened = PartitionLog(tmp_path / "p0")
    assert seg.stat().st_size == valid
    assert list(reopened.read()) == _rows(range(3))
    reopened.append(_rows(range(3, 6)))

    assert list(PartitionLog(tmp_path / "p0").read()) == _rows(range(6))


def test_garbage_past_the_saved_position_is_truncated_too(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "p0")
    log.append(_rows(range(2)))
    with open(log.dir / log.position.segment, "ab") as f:
        f.write(b"\x00\xff half a block")

    reopened = PartitionLog(tmp_path / "p0")
    reopened.append(_rows(range(2, 4)))

    assert list(reopened.read()) == _rows(range(4))


def failed_append(
    log: PartitionLog,
    rows: list[dict[str, Any]],
    torn: bytes,
    error: OSError,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Append ``rows`` with an Avro writer that writes ``torn`` and then fails with ``error``."""

    def failing_writer(f: Any, schema: Any, records: Any, **kw: Any) -> None:
        f.write(torn)
        raise error

    with monkeypatch.context() as patch:
        patch.setattr(fastavro, "writer", failing_writer)
        with pytest.raises(OSError, match=str(error.strerror)):
            log.append(rows)


def test_an_append_that_failed_midway_does_not_corrupt_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The writer retries a failed pass in the same process, without reopening the log.
    log = PartitionLog(tmp_path / "p0")
    log.append(_rows(range(2)))

    disk_full = OSError(28, "No space left on device")
    failed_append(log, _rows(range(2, 5)), b"\x02partial block", disk_full, monkeypatch)
    assert log.position.next_offset == 2

    log.append(_rows(range(2, 5)))

    assert list(log.read()) == _rows(range(5))
    assert list(PartitionLog(tmp_path / "p0").read()) == _rows(range(5))


def test_a_failed_first_append_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = PartitionLog(tmp_path / "p0")

    io_error = OSError(5, "I/O error")
    failed_append(log, _rows(range(3)), b"Obj\x01 torn header", io_error, monkeypatch)

    log.append(_rows(range(3)))

    assert list(log.read()) == _rows(range(3))
    assert list(PartitionLog(tmp_path / "p0").read()) == _rows(range(3))


def test_a_segment_begun_after_the_last_saved_position_is_discarded(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "p0")
    log.append(_rows(range(3)))
    # A crash after rolling to a new segment, before position.json moved to it.
    orphan = log.dir / f"{3:020d}.avro"
    with open(orphan, "wb") as f:
        fastavro.writer(f, store_module.RECORD_SCHEMA, _rows(range(3, 5), tag="lost"))

    reopened = PartitionLog(tmp_path / "p0")

    assert not orphan.exists()
    assert list(reopened.read()) == _rows(range(3))
    reopened.append(_rows(range(3, 5)))
    assert list(PartitionLog(tmp_path / "p0").read()) == _rows(range(5))


def test_a_segment_written_before_any_position_was_saved_is_discarded(tmp_path: Path) -> None:
    # A crash during the very first append: the segment exists, position.json does not.
    directory = tmp_path / "p0"
    directory.mkdir()
    orphan = directory / f"{0:020d}.avro"
    orphan.write_bytes(b"Obj\x01 torn header")

    log = PartitionLog(directory)

    assert _segments(directory) == []
    assert list(log.read()) == []
    log.append(_rows(range(2)))
    assert list(PartitionLog(directory).read()) == _rows(range(2))


def test_full_segments_roll_over_and_read_back_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "SEGMENT_BYTES", 1)
    log = PartitionLog(tmp_path / "p0")
    for start in range(0, 12, 3):
        log.append(_rows(range(start, start + 3)))

    assert _segments(log.dir) == [f"{o:020d}.avro" for o in (0, 3, 6, 9)]
    assert list(PartitionLog(tmp_path / "p0").read()) == _rows(range(12))


def test_position_file_records_what_was_acknowledged(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "p0")
    log.append(_rows([5, 7, 9]))

    saved = json.loads((log.dir / "position.json").read_text())

    assert saved["next_offset"] == 10
    assert saved["records"] == 3
    assert saved["valid_bytes"] == (log.dir / saved["segment"]).stat().st_size


def test_offsets_snapshot_round_trips(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path)
    assert store.offsets() == []
    rows = [
        ("workers", "t.b", 1, 7, ""),
        ("api", "t.a", 0, 3, "meta"),
        ("workers", "t.a", 0, 12, "x"),
    ]
    store.save_offsets(rows)

    assert ArchiveStore(tmp_path).offsets() == sorted(rows)

    store.save_offsets([])
    assert ArchiveStore(tmp_path).offsets() == []


def test_topic_metadata_round_trips_and_an_empty_store_says_so(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path)
    assert store.is_empty()
    store.save_topic("t.a", 3, {"retention.ms": "-1"})
    store.save_topic("t.b", 1, {})

    assert ArchiveStore(tmp_path).topics() == {
        "t.a": {"partitions": 3, "config": {"retention.ms": "-1"}},
        "t.b": {"partitions": 1, "config": {}},
    }
    assert not store.is_empty()


@given(st.integers(min_value=0, max_value=200), st.integers(min_value=0, max_value=200))
def test_offsets_of_a_gap_free_archive_translate_to_themselves(n: int, committed: int) -> None:
    committed = min(committed, n)
    assert _translate(list(range(n)), committed) == committed


@given(
    st.lists(st.integers(min_value=0, max_value=10_000), unique=True).map(sorted),
    st.integers(min_value=0, max_value=10_010),
)
def test_a_committed_offset_translates_to_the_records_before_it(
    originals: list[int], committed: int
) -> None:
    new = _translate(originals, committed)

    # The renumbered partition holds originals[i] at offset i: the group must next read
    # the first archived record at or after the one it would have read.
    assert new == sum(1 for o in originals if o < committed)
    assert all(o < committed for o in originals[:new])
    assert all(o >= committed for o in originals[new:])
