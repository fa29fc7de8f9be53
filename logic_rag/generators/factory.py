"""Pick and build a generator from its spec string: the factory above the interface.

:mod:`logic_rag.generators.base` holds the interface (:class:`~logic_rag.generators.base.Generator`,
:class:`~logic_rag.generators.base.GeneratorSpec`) and the checks every backend shares;
each backend module imports it. This module sits above both: :func:`parse_spec` reads a
spec string and :func:`make_generator` imports only the backend it names (lazily, so no
backend's dependencies load for another). The interface never imports a backend, so the
modules form no import loop.
"""

from __future__ import annotations

from typing import Any

from logic_rag.generators.base import (
    BACKENDS,
    LLAMACPP_FIRST,
    Backend,
    Generator,
    GeneratorError,
    GeneratorSpec,
    _normalise_base_url,
)

__all__ = ["make_generator", "parse_spec"]


def _fastest_local_backend() -> Backend:
    from logic_rag.generators.llamacpp import llamacpp_available

    return "llamacpp" if llamacpp_available() else "transformers"


def parse_spec(spec: str) -> GeneratorSpec:
    """Split a spec string into backend, model and (for ``openai:``) base URL.

    A string without a known ``backend:`` prefix is a transformers model (registry name or
    folder), so plain ``"smollm2-135m"`` and Windows-style paths keep working, except the
    names in :data:`LLAMACPP_FIRST` (``"qwen2.5-coder-1.5b"``), which take the fastest local
    runtime installed: llama.cpp, else transformers.
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
        if text.lower() in LLAMACPP_FIRST:
            return GeneratorSpec(_fastest_local_backend(), text)
        return GeneratorSpec("transformers", text)
    rest = rest.strip()
    if backend == "openai":
        url, _, model = rest.partition("#")
        urls = [u.strip() for u in url.split(",") if u.strip()] or [url]
        base = ",".join(_normalise_base_url(u, text) for u in urls)
        return GeneratorSpec("openai", model.strip() or None, base)
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

        if (parsed.model or "").lower() in LLAMACPP_FIRST:
            # 1.5B parameters: float32 is ~4x the memory and far slower on CPUs with bf16.
            options.setdefault("dtype", "bfloat16")

        return TransformersGenerator(parsed.model or "smollm2-135m", **options)
    if parsed.backend == "vllm":
        from logic_rag.generators.vllm_engine import VLLMGenerator

        return VLLMGenerator(parsed.model or "smollm2-135m", **options)
    if parsed.backend == "llamacpp":
        from logic_rag.generators.llamacpp import LlamaCppGenerator

        return LlamaCppGenerator(parsed.model or "smollm2-135m", **options)
    from logic_rag.generators.openai_server import OpenAIGenerator

    assert parsed.base_url is not None
    return OpenAIGenerator(parsed.base_url, parsed.model, **options)
