"""Source file events on ``tribal.files.changes`` (key ``repo:path``)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from events.base import NOTES_DOC, TenantEvent
from events.types import Sha256


class _FileEvent(TenantEvent):
    repo: str = Field(description="Repository or directory name.")
    path: str = Field(description="Path relative to the repository root, '/'-separated.")

    @property
    def key(self) -> str:
        """``repo:path``, the topic key."""
        return f"{self.repo}:{self.path}"


class FileChanged(_FileEvent):
    """A file was created or its content changed."""

    avro_name: ClassVar[str] = "tribal.files.FileChanged"

    content: str
    sha256: Sha256
    language: str | None = Field(default=None, description="e.g. 'python', 'markdown'.")
    size_bytes: int = Field(ge=0)
    renamed_from: str | None = Field(
        default=None,
        description="The path this content was at until a FileDeleted of that path in the "
        "same observation (a rename or move); None for plain creates and edits.",
    )
    notes: tuple[str, ...] = Field(default=(), description=NOTES_DOC)


class FileDeleted(_FileEvent):
    """A file was removed."""

    avro_name: ClassVar[str] = "tribal.files.FileDeleted"


class FileSkipped(_FileEvent):
    """A file was seen but will not be indexed."""

    avro_name: ClassVar[str] = "tribal.files.FileSkipped"

    reason: str = Field(description="'binary', 'too_large', 'ignored', 'unreadable', ...")
    size_bytes: int | None = None
    sha256: Sha256 | None = None
    notes: tuple[str, ...] = Field(default=(), description=NOTES_DOC)
