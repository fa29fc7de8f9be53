"""In-process generation with llama.cpp (``llama-cpp-python``) on a GGUF model.

The fastest CPU runtime for the packaged GGUF models (``qwen2.5-coder-1.5b``: ~1 s to load, no
dequantisation, Q4 matrix kernels). ``llama-cpp-python`` has no wheels on PyPI; the
set-up builds it once from source (``scripts/llamacpp_build.sh``, flags without AVX-512,
because a native build produces garbage on this project's CPUs) and caches the wheel.
Without it, ``qwen2.5-coder-1.5b`` falls back to transformers (see :func:`llamacpp_available`).

What this backend adds to :class:`~logic_rag.generators.base.Generator`:

* ``choice_logprobs`` (:class:`~logic_rag.generators.base.ScoresChoices`), *exact*: the
  prompt is evaluated and the full next-token distribution is read from the context's
  last logits, so no ``logits_all`` buffer (n_ctx x vocab floats) is needed;
* ``generate(..., json_schema=...)`` and ``generate(..., grammar=...)``: constrained
  decoding with a llama.cpp grammar (GBNF), built from a JSON schema when given one;
* prefix (KV-cache) reuse: llama.cpp keeps the previous prompt's cache, so every call
  evaluates only the tokens after the longest prefix it shares with the previous one, and
  batches are processed in token order so that neighbours share their prefixes (judge
  prompts share the instructions, decomposer prompts the few-shot examples).

Prompts are rendered with the chat template stored in the GGUF (the same Jinja template
transformers uses), so the backends see identical token sequences.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_rag.generators.base import (
    GeneratorError,
    build_messages,
    check_generate_args,
    choice_token_ids,
)

__all__ = [
    "LLAMACPP_INSTALL_HINT",
    "LlamaCppGenerator",
    "close_models",
    "llamacpp_available",
    "resolve_gguf",
]

LLAMACPP_INSTALL_HINT = (
    "llama-cpp-python is not installed in this environment. It ships as source only; build "
    "it with `bash scripts/llamacpp_build.sh .venv` (about 8 minutes on 2 cores, cached "
    "afterwards; `make setup` runs it). A native build misbehaves on AVX-512 CPUs, so the "
    "script sets CMAKE_ARGS without AVX-512. Without it, use the transformers backend: "
    "'transformers:qwen2.5-coder-1.5b'."
)

_MODELS: dict[tuple[str, int, int, str], Any] = {}
_MODELS_LOCK = threading.Lock()
_LOCKS: dict[int, threading.Lock] = {}


def close_models() -> int:
    """Free every cached ``Llama``; return how many.

    Registered with :mod:`atexit` when a model loads: a ``Llama`` still alive at
    interpreter shutdown is freed after llama-cpp-python's own globals are gone, which
    prints "Exception ignored in Llama.__del__" for every model.
    """
    with _MODELS_LOCK:
        models = list(_MODELS.values())
        _MODELS.clear()
        _LOCKS.clear()
    for llm in models:
        close = getattr(llm, "close", None)
        if close is not None:
            close()
    return len(models)


def llamacpp_available() -> bool:
    """True when ``llama_cpp`` can be imported here (checked without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None


def resolve_gguf(model: str) -> Path:
    """The GGUF file for a registry name, a ``.gguf`` path, or a folder holding one."""
    path = Path(model).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return path.resolve()
    from logic_rag.models import resolve_model

    resolved = resolve_model(model, kind="generator")
    if resolved.gguf_file is None:
        found = sorted(resolved.path.glob("*.gguf"))
        if len(found) != 1:
            raise GeneratorError(
                f"model {model!r} is not a GGUF model; the llamacpp: backend needs a GGUF "
                f"file (e.g. 'llamacpp:qwen2.5-coder-1.5b' or 'llamacpp:/path/model.gguf')"
            )
        return found[0]
    return resolved.path / resolved.gguf_file


class LlamaCppGenerator:
    """A GGUF model in an in-process ``llama_cpp.Llama``.

    ``n_ctx`` bounds prompt plus answer (older prompt tokens are cut first);
    ``n_threads`` defaults to every core (llama-cpp-python's default is half of them).
    One ``Llama`` per (file, n_ctx, threads, ``context``) is shared within the process.
    Give two users of one model different ``context`` names (e.g. a RAG generator and its
    judge) and each keeps its own KV cache, so neither evaluates its shared prompt prefix
    again after the other ran; the weights are memory-mapped once.
    """

    def __init__(
        self,
        model: str = "qwen2.5-coder-1.5b",
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_batch: int = 512,
        seed: int = 0,
        context: str = "shared",
    ) -> None:
        if not llamacpp_available():
            raise GeneratorError(LLAMACPP_INSTALL_HINT)
        if n_ctx < 16:
            raise ValueError("n_ctx must be >= 16")
        self.model = model
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.n_batch = n_batch
        self.seed = seed
        self.context = context
        self.name = f"llamacpp:{model}"
        self._formatter: Any = None
        #: Scored prompts, their tokens, and the tokens evaluated after prefix reuse.
        self.counters = {"prompts": 0, "prompt_tokens": 0, "evaluated_tokens": 0}

    def __repr__(self) -> str:
        return f"LlamaCppGenerator({self.model!r}, n_ctx={self.n_ctx})"

    # --- loading ------------------------------------------------------------------------

    def load(self) -> Any:
        """The shared ``llama_cpp.Llama`` for this model, loaded on first use."""
        path = str(resolve_gguf(self.model))
        key = (path, self.n_ctx, self.n_threads, self.context)
        with _MODELS_LOCK:
            if key not in _MODELS:
                from llama_cpp import Llama

                atexit.unregister(close_models)
                atexit.register(close_models)
                _MODELS[key] = Llama(
                    model_path=path,
                    n_ctx=self.n_ctx,
                    n_batch=self.n_batch,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    seed=self.seed,
                    logits_all=False,
                    verbose=False,
                )
                _LOCKS[id(_MODELS[key])] = threading.Lock()
            return _MODELS[key]

    def _lock(self, llm: Any) -> threading.Lock:
        return _LOCKS[id(llm)]

    def _format(self, llm: Any) -> Any:
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = llm.metadata.get("tokenizer.chat_template")
            if not template:
                raise GeneratorError(f"{self.model}: the GGUF carries no chat template")

            def token_text(key: str) -> str:
                token_id = llm.metadata.get(key)
                if token_id is None:
                    return ""
                return llm.detokenize([int(token_id)], special=True).decode(errors="ignore")

            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=token_text("tokenizer.ggml.eos_token_id"),
                bos_token=token_text("tokenizer.ggml.bos_token_id"),
            )
        return self._formatter

    def prompt_tokens(self, prompt: str, system: str | None = None, *, budget: int) -> list[int]:
        """The chat-templated token ids of one prompt, cut from the left to ``budget``."""
        llm = self.load()
        result = self._format(llm)(messages=build_messages(prompt, system))
        tokens = llm.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        return tokens[-budget:]

    # --- generation ---------------------------------------------------------------------

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
        json_schema: Mapping[str, Any] | None = None,
        grammar: str | None = None,
    ) -> list[str]:
        """One answer per prompt; ``json_schema`` or ``grammar`` (GBNF) constrain it."""
        batch = check_generate_args(prompts, max_tokens, temperature)
        if json_schema is not None and grammar is not None:
            raise ValueError("pass json_schema or grammar, not both")
        if not batch:
            return []
        if max_tokens >= self.n_ctx:
            raise ValueError(
                f"max_tokens={max_tokens} leaves no room for the prompt with n_ctx={self.n_ctx}"
            )
        llm = self.load()
        compiled = self._grammar(llm, json_schema, grammar)
        tokens = [self.prompt_tokens(p, system, budget=self.n_ctx - max_tokens) for p in batch]
        out = [""] * len(batch)
        with self._lock(llm):
            for i in sorted(range(len(batch)), key=lambda k: tokens[k]):
                result = llm.create_completion(
                    prompt=tokens[i],
                    max_tokens=max_tokens,
                    temperature=float(temperature),
                    top_k=40 if temperature > 0 else 1,
                    repeat_penalty=1.0,
                    seed=self.seed,
                    grammar=compiled,
                )
                out[i] = result["choices"][0]["text"].strip()
        return out

    def generate_json(
        self,
        prompts: Sequence[str],
        schema: Mapping[str, Any],
        *,
        max_tokens: int = 256,
        system: str | None = None,
    ) -> list[str]:
        """Greedy answers constrained to JSON that matches ``schema`` (llama.cpp grammar)."""
        return self.generate(prompts, max_tokens=max_tokens, system=system, json_schema=schema)

    @staticmethod
    def _grammar(llm: Any, json_schema: Mapping[str, Any] | None, grammar: str | None) -> Any:
        """A compiled ``LlamaGrammar``, or None; a grammar llama.cpp rejects is an error.

        Why the trial compile: llama-cpp-python does not parse a grammar until sampling,
        and there a rejected grammar is a NULL sampler that crashes the process.
        """
        if json_schema is None and grammar is None:
            return None
        import llama_cpp
        from llama_cpp import LlamaGrammar

        try:
            if json_schema is not None:
                compiled = LlamaGrammar.from_json_schema(json.dumps(json_schema), verbose=False)
            else:
                compiled = LlamaGrammar.from_string(grammar or "", verbose=False)
        except Exception as exc:  # the schema converter raises ValueError/RuntimeError
            raise GeneratorError(f"llama.cpp could not build the grammar: {exc}") from exc
        trial = llama_cpp.llama_sampler_init_grammar(
            llm._model.vocab, compiled._grammar.encode("utf-8"), compiled._root.encode("utf-8")
        )
        if not trial:
            raise GeneratorError(f"llama.cpp rejected the grammar:\n{compiled._grammar[:500]}")
        llama_cpp.llama_sampler_free(trial)
        return compiled

    # --- scoring ------------------------------------------------------------------------

    def choice_logprobs(
        self, prompts: Sequence[str], choices: Sequence[str], *, system: str | None = None
    ) -> Any:
        """Exact first-token log-probabilities of each choice (see ``ScoresChoices``).

        Each prompt is evaluated after the longest prefix it shares with the previous one
        (prompts are visited in token order) and the log-softmax of the last logits is read
        at the tokens that start each choice.
        """
        import numpy as np

        batch = check_generate_args(prompts, 1, 0.0)
        llm = self.load()
        keys, ids = choice_token_ids(
            choices,
            lambda text: llm.tokenize(text.encode("utf-8"), add_bos=False, special=False),
            lambda token: llm.detokenize([token]).decode("utf-8", errors="replace"),
        )
        out = np.zeros((len(batch), len(keys)), dtype=np.float64)
        tokens = [self.prompt_tokens(p, system, budget=self.n_ctx - 1) for p in batch]
        with self._lock(llm):
            for i in sorted(range(len(batch)), key=lambda k: tokens[k]):
                logprobs, evaluated = self._next_token_logprobs(llm, tokens[i])
                self.counters["prompts"] += 1
                self.counters["prompt_tokens"] += len(tokens[i])
                self.counters["evaluated_tokens"] += evaluated
                for j, candidates in enumerate(ids):
                    out[i, j] = float(np.logaddexp.reduce(logprobs[candidates]))
        return out

    @staticmethod
    def _next_token_logprobs(llm: Any, tokens: list[int]) -> tuple[Any, int]:
        """Log-softmax (float64) of the next token after ``tokens``, reusing the KV cache,
        and how many tokens were evaluated (the rest came from the cache)."""
        import numpy as np

        cached = llm.input_ids[: llm.n_tokens].tolist()
        prefix = 0
        for a, b in zip(cached, tokens, strict=False):
            if a != b:
                break
            prefix += 1
        prefix = min(prefix, len(tokens) - 1)  # always evaluate >= 1 token: fresh logits
        if prefix > 0 and llm._ctx.kv_cache_seq_rm(-1, prefix, -1):
            llm.n_tokens = prefix
        else:
            llm.reset()
            prefix = 0
        llm.eval(tokens[prefix:])
        # With logits_all=False the context holds logits for the last evaluated token only.
        logits = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),))
        logits = logits.astype(np.float64)
        shifted = logits - logits.max()
        return shifted - np.log(np.exp(shifted).sum()), len(tokens) - prefix

    def as_llm(self, **options: Any) -> Any:
        """A LlamaIndex ``LLM`` over this generator (see :class:`GeneratorLLM`)."""
        from logic_rag.generators.llm_adapter import GeneratorLLM

        options.setdefault("context_window", self.n_ctx)
        return GeneratorLLM(self, **options)
