"""The ``anthropic`` provider: the real SDK, structured output through forced tool use."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from streams.llm.base import LLMError, StructuredRequest, StructuredResult, T, prompt_hash

DEFAULT_MODEL = "claude-haiku-4-5"


class AnthropicProvider:
    """Calls the Messages API with one tool whose input schema is the output type.

    The SDK retries connection errors, 429s and 5xx with exponential backoff
    (``max_retries``); each call also has a hard ``timeout``.
    """

    name = "anthropic"

    def __init__(
        self,
        api_key: str,
        model: str = DEFAULT_MODEL,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout_s: float = 30.0,
    ) -> None:
        try:
            from anthropic import AsyncAnthropic
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise RuntimeError("the anthropic provider needs: pip install anthropic") from exc
        self.model = model
        self._client = AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout_s
        )

    async def structured(self, request: StructuredRequest[T]) -> StructuredResult[T]:
        import anthropic
        from anthropic.types import MessageParam, ToolChoiceToolParam, ToolParam

        tool_name = f"record_{request.task}"[:64]
        tool: ToolParam = {
            "name": tool_name,
            "description": f"Record the {request.task} result.",
            "input_schema": request.output_type.model_json_schema(),
        }
        choice: ToolChoiceToolParam = {"type": "tool", "name": tool_name}
        messages: list[MessageParam] = [{"role": "user", "content": request.prompt}]
        try:
            message = await self._client.messages.create(
                model=self.model,
                max_tokens=request.max_tokens,
                system=request.system,
                messages=messages,
                tools=[tool],
                tool_choice=choice,
                timeout=request.timeout_s,
            )
        except anthropic.APITimeoutError as exc:
            raise LLMError("LLM_TIMEOUT", f"{request.task}: timed out") from exc
        except anthropic.APIError as exc:
            raise LLMError("LLM_API_ERROR", f"{request.task}: {type(exc).__name__}: {exc}") from exc
        payload: Any = None
        # A 200 that is not a Message (a proxy's error page) has no content at all.
        for block in getattr(message, "content", None) or ():
            if getattr(block, "type", None) == "tool_use":
                payload = getattr(block, "input", None)
                break
        if payload is None:
            raise LLMError("LLM_BAD_OUTPUT", f"{request.task}: the reply had no tool_use block")
        try:
            value = request.output_type.model_validate(payload)
        except ValidationError as exc:
            raise LLMError("LLM_BAD_OUTPUT", f"{request.task}: {exc.errors()[0]['msg']}") from exc
        usage = getattr(message, "usage", None)
        return StructuredResult(
            value=value,
            provider=self.name,
            model=getattr(message, "model", None) or self.model,
            generated_by="llm",
            prompt_hash=prompt_hash(request.system, request.prompt, self.model),
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
        )
