"""Verifier spec strings: ``embedding``, ``cross-encoder:FOLDER``, ``llm:GENERATOR``.

One string picks a verifier on the command line and in configs, like generator specs do:

* ``embedding`` — calibrated cosine evidence (no extra model);
* ``cross-encoder:FOLDER`` — a cross-encoder trained by ``logic-rag finetune verifier``;
* ``llm:GENERATOR`` — yes/no log-probabilities from a generator spec
  (``llm:qwen2.5-1.5b``, ``llm:vllm:/path``, ``llm:openai:http://host:8000/v1#model``).
"""

from __future__ import annotations

from typing import Any

from logic_rag.verifiers.base import Verifier

__all__ = ["make_verifier", "VERIFIER_KINDS"]

VERIFIER_KINDS = ("embedding", "cross-encoder", "llm")


def make_verifier(spec: str | Verifier, **options: Any) -> Verifier:
    """The verifier a spec names; ``options`` go to its constructor."""
    if isinstance(spec, Verifier):
        return spec
    text = spec.strip()
    kind, _, rest = text.partition(":")
    kind = kind.lower()
    if kind == "embedding" and not rest:
        from logic_rag.verifiers.embedding import EmbeddingVerifier

        return EmbeddingVerifier(**options)
    if kind == "cross-encoder" and rest:
        from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier

        return CrossEncoderVerifier(model=rest, **options)
    if kind == "llm" and rest:
        from logic_rag.verifiers.llm import LLMVerifier

        return LLMVerifier(generator=rest, **options)
    raise ValueError(
        f"unknown verifier {spec!r}: use 'embedding', 'cross-encoder:FOLDER' (a model from "
        f"`logic-rag finetune verifier`) or 'llm:GENERATOR' (e.g. 'llm:qwen2.5-1.5b')"
    )
