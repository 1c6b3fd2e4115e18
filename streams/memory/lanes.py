"""The extractor's and the summarizer's lanes (see :mod:`streams.memory.lane`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from uuid import UUID

from events.base import Event
from events.facts import EntitiesExtracted
from events.memory import EpisodeRecorded, SummaryCreated
from streams.embedder.model import Embedder
from streams.memory import places
from streams.memory.config import EntityExtractionConfig
from streams.memory.dedup import is_identifier
from streams.memory.english import english_doc
from streams.memory.extraction import EntityExtractor
from streams.memory.facts import FactsFold, extracted_event
from streams.memory.lane import MemoryLane
from streams.memory.learned import shipped_model
from streams.memory.rules import OF_ONE_SUBJECT, SPEAKER
from streams.memory.succession import HELD_BY_ONE_PERSON, Held, encode_holders, hold, holders_of
from streams.memory.summaries import SummaryFold
from streams.warm import WARM_TEXT
from streams.wiring import Emit

FACTS, SUMMARIES = "memory.facts", "memory.summaries"


class NameEmbedder:
    """Vectors of entity names for the embedding dedup stage, cached by name."""

    def __init__(self, model: Embedder | None, capacity: int = 100_000) -> None:
        self.model = model
        self.capacity = capacity
        self._cache: dict[str, list[float]] = {}

    async def __call__(self, names: Sequence[str]) -> dict[str, list[float]]:
        if self.model is None:
            return {}
        wanted = sorted({n for n in names if not is_identifier(n)})
        missing = [n for n in wanted if n not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > self.capacity:
                self._cache.clear()
            vectors = await asyncio.to_thread(self.model.encode, missing)
            self._cache.update(zip(missing, vectors, strict=True))
        return {n: self._cache[n] for n in wanted if n in self._cache}


class ExtractorLane(MemoryLane):
    """Episodes → ``EntitiesExtracted`` (raw), then the dedup and temporal fold."""

    output = FACTS

    def __init__(
        self,
        extractor: EntityExtractor,
        fold: FactsFold | None = None,
        names: NameEmbedder | None = None,
        partitions: int = 1,
    ) -> None:
        super().__init__(partitions)
        self.extractor = extractor
        self.config: EntityExtractionConfig = extractor.config
        self.fold = fold or FactsFold(single_valued=self.config.single_valued_relations)
        self.names = names or NameEmbedder(None)
        self.known_raw: dict[UUID, EntitiesExtracted] = {}
        self.known_ids: set[UUID] = set()
        self.established: dict[str, dict[str, str]] = {}
        """Per group, what its earlier turns established: ``speaker`` (who "I" is),
        ``organisation`` (who "we" is) and ``people`` (the full names said, ``|``-joined,
        for "he", "she" and first names); rebuilt from the raw extractions on replay."""
        self.organisations: dict[str, dict[str, str]] = {}
        """Per group, where each named speaker said they work (who "we" is for them)."""

    def groups(self) -> list[str]:
        return list({*self.fold.groups, *self.fold.dedup.groups})

    def warm(self) -> None:
        """Load spaCy's English pipeline, the extraction model and the name embedder
        before the first episode (:mod:`streams.warm`)."""
        english_doc(WARM_TEXT)
        shipped_model()
        places.warm()
        if self.names.model is not None:
            self.names.model.encode([WARM_TEXT])

    def learn(self, raw: EntitiesExtracted) -> None:
        """Remember who the speaker (and their organisation) is from one extraction."""
        known = self.established.setdefault(raw.group_id, {})
        names = {e.entity_id: e.name for e in raw.entities}
        people = [p for p in known.get("people", "").split("|") if p]
        for e in raw.entities:
            if e.attributes.get(SPEAKER) == "true":
                known["speaker"] = e.name
            elif e.entity_type == "person" and " " in e.name and e.name not in people:
                people.append(e.name)
        if people:
            known["people"] = "|".join(people[-20:])
        organisations = [o for o in known.get("organisations", "").split("|") if o]
        for e in raw.entities:
            if e.entity_type == "organization" and e.name not in organisations:
                organisations.append(e.name)
        if organisations:
            known["organisations"] = "|".join(organisations[-20:])
        self._learn_holders(raw, known)
        self._learn_subjects(raw, known)
        relations = set(filter(None, known.get("relations", "").split("|")))
        relations |= {r.relation_type for r in raw.relationships}
        if relations:
            known["relations"] = "|".join(sorted(relations))
        speakers = {e.entity_id for e in raw.entities if e.attributes.get(SPEAKER) == "true"}
        for r in raw.relationships:
            if r.relation_type != "works_at" or r.source_entity_id not in speakers:
                continue
            who, where = names.get(r.source_entity_id, ""), names.get(r.target_entity_id, "")
            self.organisations.setdefault(raw.group_id, {})[who] = where
            if who == known.get("speaker"):
                known["organisation"] = where

    @staticmethod
    def _learn_holders(raw: EntitiesExtracted, known: dict[str, str]) -> None:
        """Who holds a role one person holds at a time (a contact, a manager), for the
        successions later turns state (:mod:`streams.memory.succession`)."""
        entities = {e.entity_id: e for e in raw.entities}
        holders = holders_of(known.get("holders"))
        for r in raw.relationships:
            subject, value = entities.get(r.source_entity_id), entities.get(r.target_entity_id)
            if (
                r.relation_type in HELD_BY_ONE_PERSON
                and subject is not None
                and value is not None
                and value.entity_type == "person"
            ):
                held = Held(subject.name, subject.entity_type, r.relation_type)
                hold(holders, value.name, held)
        if holders:
            known["holders"] = encode_holders(holders)

    @staticmethod
    def _learn_subjects(raw: EntitiesExtracted, known: dict[str, str]) -> None:
        """Whom the relations of :data:`~streams.memory.rules.OF_ONE_SUBJECT` were stated
        of, and what each subject uses (for a switch that names only the new value)."""
        entities = {e.entity_id: e for e in raw.entities}
        stated: dict[str, list[list[str]]] = json.loads(known.get("stated") or "{}")
        for r in raw.relationships:
            subject = entities.get(r.source_entity_id)
            if r.relation_type in OF_ONE_SUBJECT and subject is not None:
                said = stated.setdefault(r.relation_type, [])
                if [subject.name, subject.entity_type] not in said:
                    said.append([subject.name, subject.entity_type])
        if stated:
            known["stated"] = json.dumps(stated)
        used: dict[str, list[str]] = json.loads(known.get("uses") or "{}")
        for r in raw.relationships:
            subject, value = entities.get(r.source_entity_id), entities.get(r.target_entity_id)
            if r.relation_type != "uses" or subject is None or value is None:
                continue
            values = used.setdefault(subject.name, [])
            if r.replaces:
                values[:] = [v for v in values if r.replaces.casefold() not in v.casefold()]
            if value.name not in values:
                values[:] = [*values, value.name][-10:]
        if used:
            known["uses"] = json.dumps(used)

    def known(self, episode: EpisodeRecorded) -> dict[str, str]:
        """What the turns before ``episode`` established for it: for a turn of a named
        speaker, "we" is that speaker's organisation, not the last speaker's."""
        known = dict(self.established.get(episode.group_id, {}))
        speaker = episode.source_metadata.get(SPEAKER)
        if speaker:
            known.pop("speaker", None)
            known.pop("organisation", None)
            organisation = self.organisations.get(episode.group_id, {}).get(speaker)
            if organisation:
                known["organisation"] = organisation
        return known

    def drop_group(self, group_id: str) -> None:
        self.established.pop(group_id, None)
        self.organisations.pop(group_id, None)
        self.fold.groups.pop(group_id, None)
        self.fold.dedup.groups.pop(group_id, None)
        for episode_id in [k for k, v in self.known_raw.items() if v.group_id == group_id]:
            del self.known_raw[episode_id]

    def reset(self, partition: int, known: Sequence[Event]) -> None:
        for group_id in [g for g in self.groups() if self.owns(g, partition)]:
            self.fold.groups.pop(group_id, None)
            self.fold.dedup.groups.pop(group_id, None)
            self.established.pop(group_id, None)
            self.organisations.pop(group_id, None)
        for event in known:
            if isinstance(event, EntitiesExtracted):
                self.known_raw.setdefault(event.episode_id, event)
                self.learn(event)
            self.known_ids.add(event.event_id)

    def _wanted(self, episode: EpisodeRecorded) -> bool:
        if not self.config.enabled:
            return False
        return episode.content_type != "event" or self.config.extract_system_events

    async def process(self, episodes: Sequence[EpisodeRecorded]) -> list[Emit]:
        todo: dict[UUID, EpisodeRecorded] = {}
        for e in episodes:
            fresh = not self.fold.seen(e.group_id, e.episode_id)
            if fresh and e.episode_id not in self.known_raw and self._wanted(e):
                todo.setdefault(e.episode_id, e)
        made = await self._extract(list(todo.values()))
        raws: list[EntitiesExtracted] = []
        for e in episodes:
            raw = self.known_raw.pop(e.episode_id, None) or made.pop(e.episode_id, None)
            if raw is not None and not self.fold.seen(e.group_id, e.episode_id):
                raws.append(raw)
        vectors = await self.names([x.name for raw in raws for x in raw.entities])
        out: list[Emit] = []
        for raw in raws:
            for event in (raw, *self.fold.apply(raw, vectors)):
                if event.event_id in self.known_ids:
                    self.known_ids.discard(event.event_id)  # already on the log
                else:
                    out.append(Emit(FACTS, raw.group_id, event))
        return out

    async def _extract(self, episodes: list[EpisodeRecorded]) -> dict[UUID, EntitiesExtracted]:
        """A conversation is read in order (what a turn establishes, such as the
        speaker's name, is known to the turns after it); conversations concurrently."""
        by_group: dict[str, list[EpisodeRecorded]] = {}
        for e in episodes:
            by_group.setdefault(e.group_id, []).append(e)
        made: dict[UUID, EntitiesExtracted] = {}
        limit = asyncio.Semaphore(max(1, self.config.batch_size))

        async def conversation(turns: list[EpisodeRecorded]) -> None:
            for e in turns:
                async with limit:
                    [result] = await self.extractor.extract_batch([e], self.known)
                raw = extracted_event(e, result)
                self.learn(raw)
                made[e.episode_id] = raw

        await asyncio.gather(*(conversation(turns) for turns in by_group.values()))
        return made


class SummarizerLane(MemoryLane):
    """Episodes → window and meta ``SummaryCreated``."""

    output = SUMMARIES

    def __init__(self, fold: SummaryFold, partitions: int = 1) -> None:
        super().__init__(partitions)
        self.fold = fold
        self.known: dict[UUID, SummaryCreated] = {}

    def groups(self) -> list[str]:
        return list(self.fold.groups)

    def drop_group(self, group_id: str) -> None:
        self.fold.groups.pop(group_id, None)

    def reset(self, partition: int, known: Sequence[Event]) -> None:
        for group_id in [g for g in self.fold.groups if self.owns(g, partition)]:
            del self.fold.groups[group_id]
        self.known.update({e.summary_id: e for e in known if isinstance(e, SummaryCreated)})

    async def process(self, episodes: Sequence[EpisodeRecorded]) -> list[Emit]:
        out: list[Emit] = []
        for episode in episodes:
            for produced in await self.fold.advance(episode, self.known):
                summary = produced.summary
                if produced.new:
                    out.append(Emit(SUMMARIES, summary.group_id, summary))
                else:
                    self.known.pop(summary.summary_id, None)
        return out
