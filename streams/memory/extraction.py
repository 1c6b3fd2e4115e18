"""``EntityExtractor`` (seed 003): entities and relationships from one episode.

The LLM answers with :class:`ExtractionOutput` (anthropic: forced tool use; local:
:mod:`streams.memory.rules`). The episode text is fenced as data in the prompt, so
instructions inside it are never followed. Results below ``min_confidence`` are
dropped, and so are relationships whose ends were dropped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from events.memory import EpisodeRecorded
from streams.llm import LLMError, LLMProvider, StructuredRequest
from streams.llm.base import FENCE_RULE, fence
from streams.memory import metrics
from streams.memory.config import CONFIDENCE_RANK, Confidence, EntityExtractionConfig
from streams.memory.errors import ExtractionError

log = logging.getLogger(__name__)

TASK = "extract_entities"


class ExtractedEntity(BaseModel):
    """A named thing in the episode."""

    name: str = Field(min_length=1, max_length=200)
    entity_type: str = Field(description="person, product, order, issue, concept, …")
    confidence: Confidence = "medium"
    attributes: dict[str, str] = Field(default_factory=dict)


class ExtractedRelationship(BaseModel):
    """``source`` —relation→ ``target``, both names of extracted entities."""

    source: str
    relation: str = Field(description="snake_case verb, e.g. lives_at, ordered, uses")
    target: str
    fact: str | None = Field(default=None, description="The statement in plain words.")
    confidence: Confidence = "medium"
    replaces: str | None = Field(
        default=None,
        description="The old value the statement replaces, when it names one "
        '("we switched from Square to Stripe": Square).',
    )


class ExtractionOutput(BaseModel):
    """What the LLM must return."""

    entities: list[ExtractedEntity] = Field(default_factory=list)
    relationships: list[ExtractedRelationship] = Field(default_factory=list)


@dataclass(frozen=True)
class EntityExtractionResult:
    """Entities and relationships of one episode, already filtered by confidence."""

    entities: tuple[ExtractedEntity, ...] = ()
    relationships: tuple[ExtractedRelationship, ...] = ()
    provider: str = ""
    model: str = ""
    error: str | None = None


SYSTEM = (
    "You extract a knowledge graph from one episode of a customer conversation. "
    "Return the named entities (person, product, order, issue, organization, address, "
    "email, concept) and the relationships between them, in this normalised vocabulary "
    "where it fits (else a snake_case verb): lives_in, lives_at, works_at, role, manager, "
    "colleague, billing_contact, contact, located_in, email, phone, uses, owns, plan, "
    "team_size, prefers, language, timezone, budget, birthday, ordered, contains. "
    "Give each a confidence: "
    "high when stated explicitly, medium when implied, low when guessed. "
    "A line that starts with a person's name (metadata.speaker) is that person speaking, "
    "and 'I'/'my' in it is them. 'I'/'my' in a User line is the speaker: the name they "
    "introduce, else the speaker known from earlier turns, else the user named in the "
    "metadata; 'we'/'our' is the speaker's organisation when known. " + FENCE_RULE
)


def _passes(confidence: str, minimum: str) -> bool:
    return CONFIDENCE_RANK.get(confidence, 0) >= CONFIDENCE_RANK[minimum]


def filter_confidence(output: ExtractionOutput, minimum: str) -> ExtractionOutput:
    """Entities and relationships at or above ``minimum`` (relationships need both ends)."""
    entities = [e for e in output.entities if _passes(e.confidence, minimum)]
    names = {e.name.casefold() for e in entities}
    relationships = [
        r
        for r in output.relationships
        if _passes(r.confidence, minimum)
        and r.source.casefold() in names
        and r.target.casefold() in names
    ]
    return ExtractionOutput(entities=entities, relationships=relationships)


class EntityExtractor:
    """Seed 003's ``extract`` / ``extract_batch`` over an :class:`LLMProvider`."""

    def __init__(self, provider: LLMProvider, config: EntityExtractionConfig | None = None):
        self.provider = provider
        self.config = config or EntityExtractionConfig()

    def request(
        self, episode: EpisodeRecorded, known: Mapping[str, str] | None = None
    ) -> StructuredRequest[ExtractionOutput]:
        """The structured request for ``episode``: its text is fenced as data.

        ``known``: what the conversation established before this episode, ``speaker``
        (who "I" is) and ``organisation`` (who "we" is)."""
        meta = json.dumps(episode.source_metadata, sort_keys=True)
        hints = (
            f"{fence('known from earlier turns', json.dumps(dict(known), sort_keys=True))}\n"
            if known
            else ""
        )
        prompt = (
            "Extract entities and relationships from this episode.\n"
            f"{fence('episode metadata', meta)}\n{hints}"
            f"{fence('episode content', episode.content)}"
        )
        return StructuredRequest(
            task=TASK,
            system=SYSTEM,
            prompt=prompt,
            output_type=ExtractionOutput,
            context={
                "content": episode.content,
                "metadata": dict(episode.source_metadata),
                "gazetteer": dict(self.config.gazetteer),
                **dict(known or {}),
            },
            max_tokens=self.config.max_tokens,
            timeout_s=self.config.timeout_ms / 1000,
        )

    async def extract(
        self, episode: EpisodeRecorded, known: Mapping[str, str] | None = None
    ) -> EntityExtractionResult:
        """Entities and relationships of ``episode``, filtered by ``min_confidence``.

        Raises :class:`ExtractionError` when the provider fails or answers badly, and
        :class:`TimeoutError` past ``timeout_ms`` (a model's; the local rules have none).
        """
        started = time.perf_counter()
        with metrics.span("memory.extract_entities", episode_id=episode.episode_id):
            try:
                result = await asyncio.wait_for(
                    self.provider.structured(self.request(episode, known)),
                    # the local rules bound their own work (they read a line's head
                    # only); on a busy machine a deadline would only lose its facts
                    None if self.provider.name == "local" else self.config.timeout_ms / 1000,
                )
            except TimeoutError:
                log.warning(
                    "extraction_timeout episode_id=%s timeout_ms=%d",
                    episode.episode_id, self.config.timeout_ms,
                )  # fmt: skip
                raise
            except LLMError as exc:
                raise ExtractionError(
                    f"extraction failed ({exc.code}): {exc}", episode.episode_id, exc.code, exc
                ) from exc
        kept = filter_confidence(result.value, self.config.min_confidence)
        ms = (time.perf_counter() - started) * 1000
        metrics.EXTRACTION_LATENCY.labels("entity_extract").observe(ms)
        for entity in kept.entities:
            metrics.ENTITIES_EXTRACTED.labels(entity.entity_type).inc()
        log.info(
            "entities_extracted episode_id=%s entity_count=%d relationship_count=%d "
            "latency_ms=%.1f",
            episode.episode_id, len(kept.entities), len(kept.relationships), ms,
        )  # fmt: skip
        return EntityExtractionResult(
            tuple(kept.entities), tuple(kept.relationships), result.provider, result.model
        )

    async def extract_batch(
        self,
        episodes: Sequence[EpisodeRecorded],
        known: Callable[[EpisodeRecorded], Mapping[str, str]] | None = None,
    ) -> list[EntityExtractionResult]:
        """One result per episode, in input order; a failure yields an empty result
        carrying its reason instead of failing the batch. ``known(episode)``: what the
        conversation established before it (see :meth:`request`)."""
        limit = asyncio.Semaphore(max(1, self.config.batch_size))

        async def one(episode: EpisodeRecorded) -> EntityExtractionResult:
            async with limit:
                try:
                    return await self.extract(episode, known(episode) if known else None)
                except Exception as exc:  # partial success: one failure costs itself only
                    log.error("extraction_failed episode_id=%s error=%s", episode.episode_id, exc)
                    reason = f"{type(exc).__name__}: {exc}"[:500]
                    return EntityExtractionResult(
                        provider=self.provider.name, model=self.provider.model, error=reason
                    )

        return list(await asyncio.gather(*(one(e) for e in episodes)))
