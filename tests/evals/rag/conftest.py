"""Test doubles for the RAG eval tests: a canned-text LlamaIndex LLM and a fake Generator."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest


def _make_canned_llm_class() -> type:
    from llama_index.core.base.llms.types import (
        CompletionResponse,
        CompletionResponseGen,
        LLMMetadata,
    )
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.llms.custom import CustomLLM
    from pydantic import PrivateAttr

    class CannedLLM(CustomLLM):
        """Answers each prompt with ``respond(prompt)``; records every prompt."""

        _respond: Any = PrivateAttr(default=None)
        _prompts: list = PrivateAttr(default_factory=list)

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(context_window=4096, num_output=64, model_name="canned")

        @property
        def prompts(self) -> list[str]:
            return self._prompts

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
            self._prompts.append(prompt)
            return CompletionResponse(text=self._respond(prompt))

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
            text = self.complete(prompt).text

            def gen() -> CompletionResponseGen:
                yield CompletionResponse(text=text, delta=text)

            return gen()

    return CannedLLM


@pytest.fixture
def canned_llm() -> Callable[..., Any]:
    """``canned_llm(responses)``: a list (cycled) or a function prompt -> text."""
    cls = _make_canned_llm_class()

    def make(responses: Sequence[str] | Callable[[str], str]) -> Any:
        llm = cls()
        if callable(responses):
            llm._respond = responses
        else:
            queue = list(responses)
            state = {"i": 0}

            def respond(prompt: str) -> str:
                text = queue[state["i"] % len(queue)]
                state["i"] += 1
                return text

            llm._respond = respond
        return llm

    return make


class FakeGenerator:
    """The Generator interface (``generate``, ``as_llm``, ``name``) with counted calls."""

    def __init__(self, answer: Callable[[str], str] | str = "an answer", llm: Any = None) -> None:
        self.name = "fake-generator"
        self.answer = answer
        self.calls: list[str] = []
        self.llm = llm

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
    ) -> list[str]:
        out = []
        for prompt in prompts:
            self.calls.append(prompt)
            out.append(self.answer(prompt) if callable(self.answer) else self.answer)
        return out

    def as_llm(self) -> Any:
        return self.llm


@pytest.fixture
def fake_generator() -> type:
    return FakeGenerator
