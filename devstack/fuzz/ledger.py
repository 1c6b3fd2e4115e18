"""What each input came to, and the accounting that proves nothing was lost.

Every input sent becomes an :class:`Entry`: *rejected* at the edge (a 4xx with an error
code and a message), *answered* (a read), or *accepted* (a write the system now owes a
result). An accepted write must end either in a read store (its :data:`Expectation`
holds) or in ``tribal.deadletter`` (a dead letter whose origin or payload names it);
anything else is *lost*. An edge that answers 5xx, answers a 4xx without a code, or does
not answer at all is a *problem*, whatever the input.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from events.base import Event
from events.chunks import ChunksEmbedded, DocumentChunked, DocumentRetracted
from events.deadletter import DeadLettered
from events.documents import TableDocumented, table_document_id
from events.files import FileChanged
from events.kb import KbArticleUpserted
from events.memory import EpisodeRecorded, SystemEventRecorded, TurnRecorded, episode_id_for
from events.schema import TableObserved
from events.serde import DecodeError, EventSerde
from projections.index.port import Filters, Kind, SearchIndex
from runtime.settings import TribalSettings
from streams.chunker.files import file_document_id
from streams.chunker.kb import kb_document_id
from streams.deadletter_ops import read_dead_letters

Outcome = Literal["accepted", "rejected", "answered", "unsendable"]
Verdict = Literal["landed", "dead_lettered", "lost"]


@dataclass(frozen=True)
class InIndex:
    """An object of ``document_id`` is in the search index (or, ``present=False``, gone)."""

    kind: Kind
    tenant: str
    document_id: str
    present: bool = True


@dataclass(frozen=True)
class InRegistry:
    """A schema the registry accepted can be read back by its id."""

    schema_id: int


Expectation = InIndex | InRegistry


@dataclass
class Entry:
    """One input sent and what came of it at the edge."""

    surface: str
    outcome: Outcome
    status: int | None = None
    code: str | None = None
    """The error code of a rejection (AgentError ``code``, registry ``error_code``)."""
    message: str = ""
    expect: tuple[Expectation, ...] = ()
    ids: frozenset[str] = frozenset()
    """Identities a dead letter may carry for this input (see :func:`event_ids`)."""
    problem: str | None = None
    detail: str = ""
    verdict: Verdict | None = None
    reasons: tuple[str, ...] = ()
    """Dead-letter codes, once the verdict is ``dead_lettered``."""
    ms: float = 0.0
    """How long the edge took to answer (for a forget: with its doomed and survivor turns)."""

    @property
    def owes(self) -> bool:
        """An accepted write: it must land or be dead-lettered."""
        return self.outcome == "accepted" and bool(self.expect or self.ids)


def at(topic: str, partition: int, offset: int) -> str:
    return f"at:{topic}:{partition}:{offset}"


def event_ids(event: Event) -> set[str]:
    """What a dead letter of ``event`` (or of anything derived from it) is recognised by."""
    out = {f"event:{event.event_id}"}
    tenant = str(getattr(event, "tenant", ""))
    if isinstance(event, TurnRecorded | SystemEventRecorded):
        out.add(f"episode:{episode_id_for(event.event_id)}")
    elif isinstance(event, EpisodeRecorded):
        out |= {f"episode:{event.episode_id}", f"event:{event.source_event_id}"}
    elif isinstance(event, DocumentChunked | DocumentRetracted | ChunksEmbedded):
        out.add(f"doc:{tenant}:{event.document_id}")
    elif isinstance(event, KbArticleUpserted):
        out.add(f"doc:{tenant}:{kb_document_id(event.article_id)}")
    elif isinstance(event, FileChanged):
        out.add(f"doc:{tenant}:{file_document_id(event.repo, event.path)}")
    elif isinstance(event, TableObserved | TableDocumented):
        out.add(f"doc:{tenant}:{table_document_id(event.fully_qualified_name)}")
    episode = getattr(event, "episode_id", None)
    if episode is not None:  # facts extracted from an episode
        out.add(f"episode:{episode}")
    return out


def expectations(event: Event) -> tuple[Expectation, ...]:
    """Where a source event must end up when nothing refuses it."""
    tenant = str(getattr(event, "tenant", ""))
    if isinstance(event, TurnRecorded | SystemEventRecorded):
        return (InIndex(Kind.EPISODE, tenant, str(episode_id_for(event.event_id))),)
    if isinstance(event, KbArticleUpserted):
        return (InIndex(Kind.KB_CHUNK, tenant, kb_document_id(event.article_id)),)
    if isinstance(event, FileChanged):
        return (InIndex(Kind.CODE_CHUNK, tenant, file_document_id(event.repo, event.path)),)
    if isinstance(event, TableObserved):
        fqn = event.fully_qualified_name
        return (InIndex(Kind.TABLE_DOC, tenant, table_document_id(fqn)),)
    return ()


def letter_ids(letter: DeadLettered, serde: EventSerde) -> set[str]:
    """Identities of a dead letter: where it came from and, if its payload decodes, the
    events it is (or derives from)."""
    ids = {at(letter.origin_topic, letter.origin_partition, letter.origin_offset)}
    try:
        return ids | event_ids(serde.decode(letter.payload))
    except DecodeError:
        return ids


@dataclass
class Ledger:
    """Every entry of a run, in the order sent."""

    entries: list[Entry] = field(default_factory=list)

    def add(self, entry: Entry) -> Entry:
        self.entries.append(entry)
        return entry

    def problems(self) -> list[str]:
        return [f"{e.surface}: {e.problem} [{e.detail}]" for e in self.entries if e.problem]

    def owed(self) -> list[Entry]:
        return [e for e in self.entries if e.owes]

    def lost(self) -> list[Entry]:
        return [e for e in self.owed() if e.verdict != "landed" and e.verdict != "dead_lettered"]

    def by_surface(self) -> dict[str, dict[str, Any]]:
        """Counts per surface, as the benchmark reports them."""
        out: dict[str, dict[str, Any]] = {}
        for e in self.entries:
            row = out.setdefault(
                e.surface,
                {
                    "sent": 0,
                    "accepted": 0,
                    "answered": 0,
                    "rejected_4xx": 0,
                    "rejected_without_code": 0,
                    "server_errors": 0,
                    "no_answer": 0,
                    "unsendable": 0,
                    "dead_lettered": 0,
                    "landed": 0,
                    "lost": 0,
                    "rejection_codes": Counter(),
                    "dead_letter_reasons": Counter(),
                },
            )
            row["sent"] += 1
            if e.problem and e.status is not None and e.status >= 500:
                row["server_errors"] += 1
            elif e.problem and e.status is None and e.outcome != "unsendable":
                row["no_answer"] += 1
            elif e.problem and e.outcome == "rejected":
                row["rejected_without_code"] += 1
            if e.outcome == "unsendable":
                row["unsendable"] += 1
            elif e.outcome == "rejected":
                row["rejected_4xx"] += 1
                row["rejection_codes"][e.code or "(none)"] += 1
            elif e.outcome == "answered":
                row["answered"] += 1
            elif e.outcome == "accepted":
                row["accepted"] += 1
                if e.verdict == "landed":
                    row["landed"] += 1
                elif e.verdict == "dead_lettered":
                    row["dead_lettered"] += 1
                    row["dead_letter_reasons"].update(e.reasons)
                elif e.owes:
                    row["lost"] += 1
        for name, row in out.items():
            times = sorted(e.ms for e in self.entries if e.surface == name)
            row["p50_ms"] = round(times[len(times) // 2], 1)
            row["p95_ms"] = round(times[min(len(times) - 1, int(0.95 * len(times)))], 1)
            row["rejection_codes"] = dict(row["rejection_codes"].most_common())
            row["dead_letter_reasons"] = dict(row["dead_letter_reasons"].most_common())
        return out


Probe = Callable[[Expectation], Awaitable[bool]]


def index_probe(index: SearchIndex, registry_has: Callable[[int], Awaitable[bool]]) -> Probe:
    """Whether an expectation holds, read from the stores themselves."""

    async def holds(exp: Expectation) -> bool:
        if isinstance(exp, InRegistry):
            return await registry_has(exp.schema_id)
        try:
            n = await index.count(
                exp.kind, tenant=exp.tenant, filters=Filters(document_id=exp.document_id)
            )
        except Exception:  # a tenant the store has never seen has nothing
            n = 0
        return (n > 0) == exp.present

    return holds


@dataclass
class Accounting:
    landed: int
    dead_lettered: int
    lost: list[Entry]
    letters: int
    unexplained_letters: Counter[str]
    """Dead letters no entry accounts for (a derived stage's, or an extra), by code."""
    seconds: float


async def settle(
    ledger: Ledger,
    probe: Probe,
    settings: TribalSettings,
    serde: EventSerde,
    timeout: float,
    interval: float = 2.0,
    concurrency: int = 16,
) -> Accounting:
    """Wait until every accepted write has landed or been dead-lettered (or ``timeout``);
    set each entry's verdict. What is left at the deadline is lost."""
    started = time.monotonic()
    pending = [e for e in ledger.owed() if e.verdict is None]
    gate = asyncio.Semaphore(concurrency)
    letters: list[DeadLettered] = []
    named: dict[str, list[DeadLettered]] = {}

    async def all_hold(entry: Entry) -> bool:
        async with gate:
            for exp in entry.expect:
                if not await probe(exp):
                    return False
            return bool(entry.expect)

    while True:
        letters = [d.event for d in await read_dead_letters(settings, serde)]
        named = {}
        for letter in letters:
            for ident in letter_ids(letter, serde):
                named.setdefault(ident, []).append(letter)
        undecided: list[Entry] = []
        checks = await asyncio.gather(*(all_hold(e) for e in pending))
        for entry, landed in zip(pending, checks, strict=True):
            found = [letter for ident in entry.ids for letter in named.get(ident, [])]
            if landed:  # a fact or summary of it may still have been dead-lettered
                entry.verdict = "landed"
            elif found:
                entry.verdict = "dead_lettered"
                entry.reasons = tuple(sorted({letter.error_code for letter in found}))
            else:
                undecided.append(entry)
        pending = undecided
        if not pending or time.monotonic() - started > timeout:
            break
        await asyncio.sleep(interval)
    for entry in pending:
        entry.verdict = "lost"
    claimed = {ident for e in ledger.entries for ident in e.ids}
    unexplained: Counter[str] = Counter(
        letter.error_code for letter in letters if not (letter_ids(letter, serde) & claimed)
    )
    owed = ledger.owed()
    return Accounting(
        landed=sum(e.verdict == "landed" for e in owed),
        dead_lettered=sum(e.verdict == "dead_lettered" for e in owed),
        lost=pending,
        letters=len(letters),
        unexplained_letters=unexplained,
        seconds=round(time.monotonic() - started, 1),
    )


def describe(entries: Iterable[Entry], limit: int = 12) -> str:
    """A readable list of entries for an assertion message."""
    lines = [
        f"- {e.surface} {e.outcome} {e.status or ''} expect={e.expect} [{e.detail}]"
        for e in list(entries)[:limit]
    ]
    return "\n".join(lines)
