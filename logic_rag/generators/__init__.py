"""Text generators behind one interface: transformers, in-process vLLM, vLLM's server.

``make_generator("smollm2-135m")`` (the offline default), ``make_generator("vllm:...")`` or
``make_generator("llamacpp:qwen2.5-coder-1.5b")`` or
``make_generator("openai:http://host:port/v1#model")`` all return a :class:`Generator`:
``generate(prompts, max_tokens=..., temperature=..., system=...) -> list[str]`` and
``as_llm()`` for LlamaIndex judges. :func:`export_hf` turns a packaged GGUF model into
the HF folder vLLM needs; :func:`serve` runs ``vllm serve`` for a ``with`` block.

Names resolve lazily (PEP 562): importing this package imports neither torch nor vLLM.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logic_rag.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Generator": "base",
    "GeneratorError": "base",
    "GeneratorSpec": "base",
    "ScoresChoices": "base",
    "LlamaCppGenerator": "llamacpp",
    "make_generator": "factory",
    "parse_spec": "factory",
    "TransformersGenerator": "transformers_local",
    "VLLMGenerator": "vllm_engine",
    "shutdown_engines": "vllm_engine",
    "OpenAIGenerator": "openai_server",
    "Server": "openai_server",
    "serve": "openai_server",
    "GeneratorLLM": "llm_adapter",
    "export_hf": "export",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .base import (
        Generator,
        GeneratorError,
        GeneratorSpec,
        ScoresChoices,
    )
    from .export import export_hf
    from .factory import make_generator, parse_spec
    from .llamacpp import LlamaCppGenerator
    from .llm_adapter import GeneratorLLM
    from .openai_server import OpenAIGenerator, Server, serve
    from .transformers_local import TransformersGenerator
    from .vllm_engine import VLLMGenerator, shutdown_engines


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
