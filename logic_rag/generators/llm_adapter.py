"""Any :class:`~logic_rag.generators.base.Generator` as a LlamaIndex ``LLM``.

LlamaIndex evaluators (the RAG judges) take an ``llm=``; without one they fall back to
OpenAI, which is unreachable offline. :class:`GeneratorLLM` lets every backend serve as a
judge with the same bounded, greedy-by-default generation the runner uses.

The Generator interface takes one user message (plus an optional system message) per
prompt, so a multi-turn chat is rendered into one user message with role labels.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM

__all__ = ["GeneratorLLM", "split_chat"]


def split_chat(messages: Sequence[ChatMessage]) -> tuple[str, str | None]:
    """Turn chat messages into ``(prompt, system)`` for :meth:`Generator.generate`.

    System messages are joined into the system prompt. One remaining user message is the
    prompt as is; a longer conversation is rendered as ``Role: text`` lines so no turn is
    silently dropped.
    """
    system = [m.content or "" for m in messages if m.role == MessageRole.SYSTEM]
    rest = [m for m in messages if m.role != MessageRole.SYSTEM]
    if len(rest) == 1 and rest[0].role == MessageRole.USER:
        prompt = rest[0].content or ""
    else:
        prompt = "\n\n".join(f"{m.role.value.capitalize()}: {m.content or ''}" for m in rest)
    return prompt, ("\n\n".join(system) if system else None)


class GeneratorLLM(CustomLLM):
    """A LlamaIndex ``CustomLLM`` that forwards to a logic-rag Generator.

    ``max_tokens`` and ``temperature`` are the defaults for every call; a call may override
    them with keyword arguments of the same names (``max_new_tokens`` is accepted too).
    """

    generator: Any = Field(description="the logic-rag Generator that writes the text")
    max_tokens: int = Field(default=256, gt=0)
    temperature: float = Field(default=0.0, ge=0.0)
    context_window: int = Field(default=2048, gt=0)

    def __init__(self, generator: Any, **kwargs: Any) -> None:
        super().__init__(generator=generator, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "LogicRagGeneratorLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.max_tokens,
            is_chat_model=True,
            model_name=str(getattr(self.generator, "name", type(self.generator).__name__)),
        )

    def _generate(self, prompt: str, system: str | None, kwargs: dict[str, Any]) -> str:
        max_tokens = kwargs.get("max_tokens", kwargs.get("max_new_tokens")) or self.max_tokens
        temperature = kwargs.get("temperature", self.temperature)
        [text] = self.generator.generate(
            [prompt], max_tokens=int(max_tokens), temperature=float(temperature), system=system
        )
        return text

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._generate(prompt, None, kwargs))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        """Generates the whole answer, then yields it as one chunk."""
        text = self._generate(prompt, None, kwargs)

        def gen() -> CompletionResponseGen:
            yield CompletionResponse(text=text, delta=text)

        return gen()

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        prompt, system = split_chat(messages)
        text = self._generate(prompt, system, kwargs)
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        """Generates the whole answer, then yields it as one chunk."""
        response = self.chat(messages, **kwargs)

        def gen() -> ChatResponseGen:
            yield ChatResponse(message=response.message, delta=response.message.content)

        return gen()

    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        # The generators block (model forward passes, HTTP); run them off the event loop.
        return await asyncio.to_thread(self.complete, prompt, formatted, **kwargs)

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return await asyncio.to_thread(self.chat, messages, **kwargs)
