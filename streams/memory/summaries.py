"""When to summarise: a per-group fold over episodes (seed 003's thresholds).

Every ``turns_per_summary`` new episodes close a window; once a group has seen
``enabled_at_turn_count`` episodes, every ``summaries_per_meta`` window summaries not
yet covered become a meta-summary. Summary ids derive from what they cover, so when a
restart folds the episodes again, summaries already on the log are reused as they are
(``known``) and only missing ones are generated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from uuid import UUID

from events.memory import EpisodeRecorded, SummaryCreated
from streams.memory.config import SummarizationConfig
from streams.memory.summarizer import ConversationSummarizer, summary_id_for


@dataclass
class GroupSummaries:
    """One group's progress: episodes seen, the open window, summaries awaiting a meta."""

    seen: set[UUID] = field(default_factory=set)
    turns: int = 0
    window: list[EpisodeRecorded] = field(default_factory=list)
    unmeta: list[SummaryCreated] = field(default_factory=list)


@dataclass(frozen=True)
class Produced:
    summary: SummaryCreated
    new: bool
    """False when the summary was already on the log (reused, not generated)."""


class SummaryFold:
    """Advances each group's :class:`GroupSummaries` one episode at a time."""

    def __init__(
        self, summarizer: ConversationSummarizer, config: SummarizationConfig | None = None
    ) -> None:
        self.summarizer = summarizer
        self.config = config or summarizer.config
        self.groups: dict[str, GroupSummaries] = {}

    async def advance(
        self, episode: EpisodeRecorded, known: Mapping[UUID, SummaryCreated] | None = None
    ) -> list[Produced]:
        """The summaries ``episode`` completes (a redelivered episode completes none)."""
        g = self.groups.setdefault(episode.group_id, GroupSummaries())
        if episode.episode_id in g.seen or not self.config.enabled:
            return []
        g.seen.add(episode.episode_id)
        g.turns += 1
        # The vector is not needed to summarise: keep the window light.
        g.window.append(
            episode.model_copy(
                update={"embedding": None, "embedding_model": None, "embedding_error": "-"}
            )
        )
        return await self.check_and_summarize_if_needed(episode.group_id, known or {})

    async def check_and_summarize_if_needed(
        self, group_id: str, known: Mapping[UUID, SummaryCreated]
    ) -> list[Produced]:
        """Window and meta summaries due for ``group_id`` now (seed 003)."""
        g = self.groups.setdefault(group_id, GroupSummaries())
        out: list[Produced] = []
        if len(g.window) >= self.config.window.turns_per_summary:
            ids = [e.episode_id for e in g.window]
            hit = known.get(summary_id_for(group_id, "window", ids))
            made = hit or await self.summarizer.summarize_window(g.window, group_id)
            out.append(Produced(made, hit is None))
            g.window = []
            g.unmeta.append(made)
        meta = self.config.meta
        if g.turns >= meta.enabled_at_turn_count and len(g.unmeta) >= meta.summaries_per_meta:
            ids = [s.summary_id for s in g.unmeta]
            hit = known.get(summary_id_for(group_id, "meta", ids))
            made = hit or await self.summarizer.create_meta_summary(g.unmeta, group_id)
            out.append(Produced(made, hit is None))
            g.unmeta = []
        return out
