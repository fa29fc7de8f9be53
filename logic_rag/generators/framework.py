"""The LLM a LlamaIndex or LangChain pipeline already holds, as a verifier's generator.

A user of LlamaIndex has ``Settings.llm`` (an ``OpenAILike``, a local model, ...), a
LangChain user a chat model: :class:`FrameworkLLM` lets :class:`~logic_rag.verifiers.llm.
LLMVerifier` ask that object the yes/no constraint questions instead of loading a model of
its own. It implements :class:`~logic_rag.generators.base.ScoresChoices` in the strongest
way the object allows:

1. **Log-probabilities** where the LLM returns them (OpenAI-compatible servers do:
   LlamaIndex ``OpenAI`` / ``OpenAILike`` put them in ``ChatResponse.logprobs``, LangChain
   ``ChatOpenAI`` in ``response_metadata["logprobs"]``): P(Yes) and P(No) are read from the
   first token's top alternatives, exactly as the ``openai:`` backend reads them.
2. Otherwise a **strict one-word answer**: the first word of the reply, stripped of
   punctuation and case, must be ``yes`` or ``no``. Anything else is a *parse failure*:
   counted in :attr:`FrameworkLLM.counters` and returned as an unusable (NaN) row, never
   read as Yes (LOTUS counts it True; LlamaIndex ``LLMRerank`` breaks on it).

Our own :class:`~logic_rag.generators.llm_adapter.GeneratorLLM` is unwrapped to its
generator, whose logprobs are exact. Requests of one batch go out concurrently through the
framework's own async calls (``achat`` / ``acomplete``, ``ainvoke``), at most
``concurrency`` at a time, on one event loop kept for the adapter's lifetime (HTTP clients
that LlamaIndex and LangChain cache are bound to the loop that made them). Prompt tokens
are counted where the reply reports usage.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, Literal, TypeVar

import numpy as np

from logic_rag.generators.base import check_choices, logprobs_from_top

__all__ = ["FrameworkLLM", "framework_kind", "as_choice_scorer"]

FrameworkKind = Literal[
    "llama-index-chat", "llama-index-completion", "langchain-chat", "langchain-llm"
]

_T = TypeVar("_T")

#: First-token alternatives asked for where the LLM returns logprobs (OpenAI's maximum).
TOP_LOGPROBS = 20

_WORD = re.compile(r"[A-Za-z]+")


def framework_kind(llm: object) -> FrameworkKind | None:
    """Which framework interface ``llm`` offers (``None``: neither). Checked by the real
    base classes, imported only when installed."""
    try:
        from llama_index.core.llms import LLM as LlamaIndexLLM
    except ImportError:  # pragma: no cover - the extra is not installed
        LlamaIndexLLM = None  # noqa: N806
    if LlamaIndexLLM is not None and isinstance(llm, LlamaIndexLLM):
        chat = bool(getattr(llm.metadata, "is_chat_model", True))
        return "llama-index-chat" if chat else "llama-index-completion"
    try:
        from langchain_core.language_models import BaseChatModel, BaseLLM
    except ImportError:  # pragma: no cover
        return None
    if isinstance(llm, BaseChatModel):
        return "langchain-chat"
    if isinstance(llm, BaseLLM):
        return "langchain-llm"
    return None


def as_choice_scorer(llm: object) -> Any:
    """``llm`` as something with ``choice_logprobs``: a generator as it is, our
    ``GeneratorLLM`` unwrapped to its generator, a LlamaIndex / LangChain LLM wrapped in a
    :class:`FrameworkLLM`; TypeError otherwise (one line naming what is accepted)."""
    if callable(getattr(llm, "choice_logprobs", None)):
        return llm
    inner = getattr(llm, "generator", None)
    if inner is not None and callable(getattr(inner, "choice_logprobs", None)):
        return inner
    if framework_kind(llm) is not None:
        return FrameworkLLM(llm)
    raise TypeError(
        f"llm must be a LlamaIndex LLM, a LangChain chat model / LLM or a logic-rag generator "
        f"with choice_logprobs, got {type(llm).__name__}"
    )


def read_yes_no(text: object) -> bool | None:
    """``True`` / ``False`` for a reply whose first word is yes / no (any case, any
    punctuation around it), ``None`` for anything else: a parse failure, never a Yes."""
    if not isinstance(text, str):
        return None
    match = _WORD.search(text)
    if match is None or text[: match.start()].strip(" \t\n\"'*`.:([{"):
        return None  # no word, or something else came first
    word = match.group(0).lower()
    return True if word == "yes" else False if word == "no" else None


class _Loop:
    """One event loop in a daemon thread: every batch of one adapter runs on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()


class FrameworkLLM:
    """A LlamaIndex ``LLM`` or a LangChain ``BaseChatModel`` / ``BaseLLM`` as a generator
    that scores choices (see the module doc).

    Args:
        llm: the framework object.
        concurrency: requests in flight at once.
        logprobs: ask for log-probabilities (``True``), never (``False``), or ask and fall
            back to the one-word answer when the reply carries none (``"auto"``).
        max_tokens: the reply length asked for on the one-word path.
    """

    def __init__(
        self,
        llm: Any,
        *,
        concurrency: int = 4,
        logprobs: bool | Literal["auto"] = "auto",
        max_tokens: int = 2,
    ) -> None:
        kind = framework_kind(llm)
        if kind is None:
            raise TypeError(
                f"FrameworkLLM needs a LlamaIndex LLM or a LangChain chat model / LLM, got "
                f"{type(llm).__name__}"
            )
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be an int >= 1, got {concurrency!r}")
        if logprobs not in (True, False, "auto"):
            raise ValueError(f"logprobs must be True, False or 'auto', got {logprobs!r}")
        self.llm = llm
        self.kind: FrameworkKind = kind
        self.concurrency = concurrency
        self.logprobs = logprobs
        self.max_tokens = max_tokens
        #: ``prompts`` sent, ``prompt_tokens`` the replies reported, ``logprob_answers``
        #: read from logprobs, ``text_answers`` read as one word, ``parse_failures``
        #: replies that were neither (unusable: NaN rows).
        self.counters = {
            "prompts": 0,
            "prompt_tokens": 0,
            "logprob_answers": 0,
            "text_answers": 0,
            "parse_failures": 0,
        }
        self._lock = threading.Lock()
        self._loop: _Loop | None = None
        self._kwargs_refused = False

    @property
    def name(self) -> str:
        """``llama-index:CLASS:MODEL`` or ``langchain:CLASS:MODEL`` (part of cache keys)."""
        llm = self.llm
        if self.kind.startswith("llama-index"):
            model = getattr(llm.metadata, "model_name", "") or ""
        else:
            model = getattr(llm, "model_name", None) or getattr(llm, "model", None) or ""
        family = "llama-index" if self.kind.startswith("llama-index") else "langchain"
        return f"{family}:{type(llm).__name__}:{model}"

    def __repr__(self) -> str:
        return f"FrameworkLLM({self.name!r})"

    # ------------------------------------------------------------------ running
    def _run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        with self._lock:
            if self._loop is None:
                self._loop = _Loop()
        return self._loop.run(coro)

    async def _gather(self, calls: list[Any]) -> list[Any]:
        gate = asyncio.Semaphore(self.concurrency)

        async def one(call: Any) -> Any:
            async with gate:
                return await call()

        return await asyncio.gather(*(one(c) for c in calls))

    def _count(self, **added: int) -> None:
        with self._lock:
            for key, value in added.items():
                self.counters[key] += value

    # ------------------------------------------------------------------ one request
    def _want_logprobs(self) -> bool:
        return self.logprobs is not False and not self._kwargs_refused

    async def _ask(self, prompt: str, system: str | None, max_tokens: int) -> Any:
        """The framework's async call for one prompt; returns its reply object."""
        extra: dict[str, Any] = {"max_tokens": max_tokens}
        if self._want_logprobs():
            extra.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
        try:
            return await self._call(prompt, system, extra)
        except TypeError:
            if len(extra) == 1:
                raise
            # An LLM whose call takes no such keyword: ask plainly from now on.
            self._kwargs_refused = True
            return await self._call(prompt, system, {})

    async def _call(self, prompt: str, system: str | None, extra: dict[str, Any]) -> Any:
        llm = self.llm
        if self.kind == "llama-index-chat":
            from llama_index.core.base.llms.types import ChatMessage, MessageRole

            messages = [ChatMessage(role=MessageRole.USER, content=prompt)]
            if system:
                messages.insert(0, ChatMessage(role=MessageRole.SYSTEM, content=system))
            return await llm.achat(messages, **extra)
        if self.kind == "llama-index-completion":
            text = f"{system}\n\n{prompt}" if system else prompt
            return await llm.acomplete(text, **extra)
        if self.kind == "langchain-chat":
            from langchain_core.messages import HumanMessage, SystemMessage

            messages = [HumanMessage(content=prompt)]
            if system:
                messages.insert(0, SystemMessage(content=system))
            return await llm.ainvoke(messages, **extra)
        text = f"{system}\n\n{prompt}" if system else prompt
        result = await llm.agenerate([text], **extra)
        return result.generations[0][0]

    # ------------------------------------------------------------------ reading replies
    def _top_logprobs(self, reply: Any) -> list[tuple[str, float]] | None:
        """The first generated token's alternatives, where the reply carries them."""
        first: Any = None
        if self.kind.startswith("llama-index"):
            listed = getattr(reply, "logprobs", None)
            if listed:
                first = [(lp.token, lp.logprob) for lp in listed[0]]
        elif self.kind == "langchain-chat":
            meta = getattr(reply, "response_metadata", None) or {}
            content = (
                (meta.get("logprobs") or {}).get("content") if isinstance(meta, dict) else None
            )
            if content:
                entry = content[0]
                first = [
                    (t.get("token"), t.get("logprob")) for t in entry.get("top_logprobs") or []
                ]
                if entry.get("token") not in {token for token, _ in first}:
                    first.append((entry.get("token"), entry.get("logprob")))  # the sampled one
        else:
            info = getattr(reply, "generation_info", None) or {}
            top = (
                (info.get("logprobs") or {}).get("top_logprobs") if isinstance(info, dict) else None
            )
            if top:
                first = list(top[0].items())
        return first or None

    def _text(self, reply: Any) -> str:
        if self.kind == "llama-index-chat":
            return str(reply.message.content or "")
        if self.kind == "llama-index-completion":
            return str(reply.text or "")
        if self.kind == "langchain-chat":
            content = reply.content
            return content if isinstance(content, str) else str(content)
        return str(reply.text or "")

    def _prompt_tokens(self, reply: Any) -> int:
        """Prompt tokens the reply reports (0 where it reports none)."""
        value: Any = None
        if self.kind.startswith("llama-index"):
            raw = getattr(reply, "raw", None)
            usage = raw.get("usage") if isinstance(raw, dict) else getattr(raw, "usage", None)
            value = (
                usage.get("prompt_tokens")
                if isinstance(usage, dict)
                else getattr(usage, "prompt_tokens", None)
            )
            if value is None:
                value = (getattr(reply, "additional_kwargs", None) or {}).get("prompt_tokens")
        elif self.kind == "langchain-chat":
            usage = getattr(reply, "usage_metadata", None) or {}
            value = usage.get("input_tokens") if isinstance(usage, dict) else None
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31
        return int(value) if ok else 0

    def _row(self, reply: Any, keys: Sequence[str]) -> np.ndarray:
        """One row of log-probabilities for ``keys`` (NaN: unusable reply)."""
        top = self._top_logprobs(reply) if self._want_logprobs() else None
        if top is not None:
            try:
                row = logprobs_from_top(top, keys)
            except Exception:  # a reply no model gives: unusable, not a verdict
                row = np.full(len(keys), np.nan)
            self._count(logprob_answers=1)
            return row
        if self.logprobs is True:
            self._count(parse_failures=1)
            return np.full(len(keys), np.nan)
        said = read_yes_no(self._text(reply))
        lowered = [k.lower() for k in keys]
        if said is None or ("yes" if said else "no") not in lowered:
            self._count(parse_failures=1)
            return np.full(len(keys), np.nan)
        self._count(text_answers=1)
        row = np.full(len(keys), -math.inf)
        row[lowered.index("yes" if said else "no")] = 0.0
        return row

    # ------------------------------------------------------------------ the protocol
    def choice_logprobs(
        self, prompts: Sequence[str], choices: Sequence[str], *, system: str | None = None
    ) -> np.ndarray:
        """Log-probabilities of ``choices`` as each reply's first token: from the reply's
        logprobs where it has them, else 0 / -inf for the one word it answered; a NaN row
        for a reply that is neither (see :attr:`counters`)."""
        keys = check_choices(choices)
        prompts = list(prompts)
        if not prompts:
            return np.zeros((0, len(keys)))
        calls = [lambda p=p: self._ask(p, system, self.max_tokens) for p in prompts]
        replies = self._run(self._gather(calls))
        rows = []
        for reply in replies:
            self._count(prompts=1, prompt_tokens=self._prompt_tokens(reply))
            rows.append(self._row(reply, keys))
        return np.stack(rows)

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
    ) -> list[str]:
        """Free text (what a decomposer or a judge asks), through the same async calls."""
        del temperature  # the framework object's own setting applies
        saved, self._kwargs_refused = self._kwargs_refused, True  # no logprobs asked
        try:
            calls = [lambda p=p: self._call(p, system, {"max_tokens": max_tokens}) for p in prompts]
            replies = self._run(self._gather(calls))
        finally:
            self._kwargs_refused = saved
        return [self._text(r) for r in replies]
