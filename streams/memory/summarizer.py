"""``ConversationSummarizer`` (seed 003): window summaries and meta-summaries.

The LLM answers :class:`SummaryOutput`; the local provider's answer is extractive
(:func:`extractive_summary`): the most informative sentences, in their original
order, 30-50% of the source's length (meta: 50-70%).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal
from uuid import UUID, uuid5

from pydantic import BaseModel, Field

from events.memory import EpisodeRecorded, SummaryCreated
from streams.llm import LLMError, LLMProvider, StructuredRequest
from streams.llm.base import FENCE_RULE, fence
from streams.memory import metrics
from streams.memory.config import SummarizationConfig
from streams.memory.errors import SummarizationError

log = logging.getLogger(__name__)

WINDOW_TASK, META_TASK = "summarize_window", "summarize_meta"
SUMMARY_NAMESPACE = UUID("c3f1f7a6-8d3e-5b6f-9e0a-2d4b6c8e1f30")
RATIOS = {WINDOW_TASK: (0.30, 0.50), META_TASK: (0.50, 0.70)}
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_ROLE = re.compile(r"^(?:User|Agent):\s*")
_INFORMATIVE = re.compile(r"#\w|@|\d|\b[A-Z][a-z]+ [A-Z][a-z]+")


class SummaryOutput(BaseModel):
    summary: str = Field(min_length=1, description="The summary, in plain prose.")


def summary_id_for(group_id: str, kind: str, covered: Sequence[UUID]) -> UUID:
    """Stable id of the summary of ``covered``: a redone summary replaces, never adds."""
    return uuid5(SUMMARY_NAMESPACE, "|".join([group_id, kind, *map(str, covered)]))


def extractive_summary(texts: Sequence[str], low: float, high: float) -> str:
    """Sentences of ``texts`` scored by how much they name (ids, numbers, names), the
    best kept in original order until the summary is ``low`` to ``high`` of the source."""
    sentences = [_ROLE.sub("", s).strip() for t in texts for s in _SENTENCE.split(t) if s.strip()]
    sentences = [s for s in sentences if s]
    source = sum(len(t) for t in texts)
    if not sentences:
        return ""
    ranked = sorted(
        range(len(sentences)),
        key=lambda i: (-len(_INFORMATIVE.findall(sentences[i])), i),
    )
    chosen: list[int] = []
    size = 0
    target = (low + high) / 2 * source
    for i in ranked:
        extra = len(sentences[i]) + (1 if chosen else 0)
        if size + extra <= high * source:
            chosen.append(i)
            size += extra
        if size >= target:
            break
    text = " ".join(sentences[i] for i in sorted(chosen))
    if len(text) < low * source:  # long sentences did not fit: cut the next best one
        rest = next((sentences[i] for i in ranked if i not in chosen), "")
        room = int(target) - len(text) - 1
        text = f"{text} {rest[:room].rsplit(' ', 1)[0]}".strip()
    return text


def summarize_local(context: dict[str, Any]) -> SummaryOutput:
    """The local provider's handler for both summary tasks."""
    low, high = RATIOS[str(context["task"])]
    return SummaryOutput(summary=extractive_summary(context["texts"], low, high) or "(empty)")


SYSTEM = (
    "You summarise a customer conversation for an AI agent's long-term memory. Keep "
    "names, identifiers, decisions and changes of fact; drop pleasantries. " + FENCE_RULE
)


class ConversationSummarizer:
    """Window and meta summaries through an :class:`LLMProvider`; nothing is persisted."""

    def __init__(self, provider: LLMProvider, config: SummarizationConfig | None = None):
        self.provider = provider
        self.config = config or SummarizationConfig()

    async def _summarize(
        self, task: str, group_id: str, texts: list[str], max_tokens: int
    ) -> tuple[str, str, str]:
        kind: Literal["window", "meta"] = "window" if task == WINDOW_TASK else "meta"
        low, high = RATIOS[task]
        body = "\n".join(fence(f"part {i + 1}", t) for i, t in enumerate(texts))
        request = StructuredRequest(
            task=task, system=SYSTEM, output_type=SummaryOutput, max_tokens=max_tokens,
            prompt=f"Summarise these parts in {int(low * 100)}-{int(high * 100)}% of "
            f"their length.\n{body}",
            context={"task": task, "texts": texts},
        )  # fmt: skip
        with metrics.span(f"memory.summarize_{kind}", group_id=group_id):
            try:
                result = await asyncio.wait_for(self.provider.structured(request), 60)
            except (LLMError, TimeoutError) as exc:
                msg = f"{kind} summary failed: {exc}"
                raise SummarizationError(msg, group_id, kind, exc) from exc
        return result.value.summary, result.provider, result.model

    async def summarize_window(
        self, episodes: Sequence[EpisodeRecorded], group_id: str
    ) -> SummaryCreated:
        """Summary of a window of episodes (``summary_type="window"``)."""
        texts = [e.content for e in episodes]
        ids = tuple(e.episode_id for e in episodes)
        content, provider, model = await self._summarize(
            WINDOW_TASK, group_id, texts, self.config.window.max_tokens
        )
        at = max((e.occurred_at for e in episodes), default=datetime.now(UTC))
        return self._created(group_id, "window", content, provider, model, texts, ids, (), at)

    async def create_meta_summary(
        self, summaries: Sequence[SummaryCreated], group_id: str
    ) -> SummaryCreated:
        """Summary of window summaries (``summary_type="meta"``); it lists the window
        summaries it covers and, for provenance, every episode they cover."""
        texts = [s.content for s in summaries]
        ids = tuple(s.summary_id for s in summaries)
        episodes = tuple(dict.fromkeys(e for s in summaries for e in s.episode_ids))
        content, provider, model = await self._summarize(
            META_TASK, group_id, texts, self.config.meta.max_tokens
        )
        at = max((s.occurred_at for s in summaries), default=datetime.now(UTC))
        return self._created(group_id, "meta", content, provider, model, texts, episodes, ids, at)

    def _created(
        self, group_id: str, kind: str, content: str, provider: str, model: str,
        texts: list[str], episode_ids: tuple[UUID, ...], summary_ids: tuple[UUID, ...],
        at: datetime,
    ) -> SummaryCreated:  # fmt: skip
        """The summary event; ``at`` is when what it covers ended (world time: the last
        turn's ``occurred_at``, not when the summary was written)."""
        # A meta summary is named by the summaries it covers (as it always was), a window
        # by its episodes: a summary already on the log keeps its id.
        summary_id = summary_id_for(group_id, kind, summary_ids or episode_ids)
        source = sum(len(t) for t in texts)
        metrics.SUMMARIES_CREATED.labels(kind).inc()
        log.info(
            "summary_created group_id=%s summary_type=%s episodes_covered=%d summary_id=%s "
            "compression_ratio=%.2f",
            group_id, kind, len(episode_ids), summary_id, len(content) / max(1, source),
        )  # fmt: skip
        return SummaryCreated(
            event_id=uuid5(summary_id, "event"), group_id=group_id, occurred_at=at,
            summary_id=summary_id,
            summary_type=kind, content=content, episode_ids=episode_ids,
            summary_ids=summary_ids, generated_by=provider, model=model,
            episodes_covered=len(episode_ids), summaries_covered=len(summary_ids),
            source_length=source,
        )  # fmt: skip
