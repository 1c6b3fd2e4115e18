"""``tribal.deadletter``: messages that could not be processed, kept with the reason."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from events.base import Event


class DeadLettered(Event):
    """A message failed; its raw bytes are kept so it can be replayed after a fix."""

    avro_name: ClassVar[str] = "tribal.deadletter.DeadLettered"

    origin_topic: str
    origin_partition: int
    origin_offset: int
    origin_key: str | None = None
    error_code: str = Field(description="Machine-readable, e.g. a DecodeError code.")
    error_message: str
    payload: bytes = Field(description="The original raw value.")
