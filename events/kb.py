"""Help-desk article events on ``tribal.kb.articles`` (key: article id).

Field names follow seed 002's host KB API (``title``, ``url``, ``content``,
``intent``, ``device``, ``last_updated``, ``author``).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from events.base import NOTES_DOC, TenantEvent
from events.types import UtcDatetime


class KbArticleUpserted(TenantEvent):
    """A knowledge-base article was created or updated (full content)."""

    avro_name: ClassVar[str] = "tribal.kb.KbArticleUpserted"

    article_id: str = Field(description="The host's article id, e.g. 'kb-001'.")
    title: str
    url: str
    content: str = Field(description="Full article text.")
    intent: tuple[str, ...] = ()
    device: tuple[str, ...] = ()
    last_updated: UtcDatetime
    author: str | None = None
    notes: tuple[str, ...] = Field(default=(), description=NOTES_DOC)


class KbArticleDeleted(TenantEvent):
    """A knowledge-base article was removed from the host."""

    avro_name: ClassVar[str] = "tribal.kb.KbArticleDeleted"

    article_id: str
