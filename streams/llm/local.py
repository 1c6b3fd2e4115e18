"""The ``local`` provider: deterministic functions registered per task."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from typing import Any

from pydantic import BaseModel

from streams.llm.base import LLMError, StructuredRequest, StructuredResult, T, prompt_hash

Handler = Callable[[dict[str, Any]], BaseModel]


def _background() -> Executor:
    # Rules over a turn's text are background work: the thread runs at a lower priority,
    # so embedding the turns that make episodes searchable gets the cores first.
    from streams.embedder.model import background_executor

    return background_executor()


class LocalProvider:
    """Answers each task with a pure function of the request's ``context``."""

    name = "local"
    model = "local-rules-v1"

    def __init__(
        self, handlers: dict[str, Handler] | None = None, threaded: Iterable[str] = ()
    ) -> None:
        self.handlers: dict[str, Handler] = dict(handlers or {})
        self.threaded = frozenset(threaded)
        """Tasks whose handler can take long on a hostile input: they run on a worker
        thread, so the event loop (and the consumer's heartbeat) never waits on them."""

    def register(self, task: str, handler: Handler) -> None:
        self.handlers[task] = handler

    async def structured(self, request: StructuredRequest[T]) -> StructuredResult[T]:
        handler = self.handlers.get(request.task)
        if handler is None:
            raise LLMError("NO_LOCAL_HANDLER", f"the local provider cannot do {request.task!r}")
        if request.task in self.threaded:
            loop = asyncio.get_running_loop()
            value = await loop.run_in_executor(_background(), handler, request.context)
        else:
            value = handler(request.context)
        if not isinstance(value, request.output_type):
            value = request.output_type.model_validate(value.model_dump())
        return StructuredResult(
            value=value,
            provider=self.name,
            model=self.model,
            generated_by="template",
            prompt_hash=prompt_hash(request.system, request.prompt, self.model),
        )
