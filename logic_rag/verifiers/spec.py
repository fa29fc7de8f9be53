"""Verifier spec strings: ``embedding``, ``cross-encoder:FOLDER``, ``llm:GENERATOR``.

One string picks a verifier on the command line and in configs, like generator specs do:

* ``embedding`` — calibrated cosine evidence (no extra model);
* ``cross-encoder:FOLDER`` — a cross-encoder trained by ``logic-rag finetune verifier``;
* ``llm:GENERATOR`` — yes/no log-probabilities from a generator spec
  (``llm:qwen2.5-1.5b``, ``llm:vllm:/path``, ``llm:openai:http://host:8000/v1#model``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logic_rag.verifiers.base import Verifier

__all__ = ["make_verifier", "check_verifier_spec", "VERIFIER_KINDS"]

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

        check_verifier_spec(text)  # a typo'd model fails here, not at the first search
        return LLMVerifier(generator=rest, **options)
    raise _unknown_verifier(spec)


def _unknown_verifier(spec: object) -> ValueError:
    import difflib

    kind = str(spec).strip().partition(":")[0].lower()
    close = difflib.get_close_matches(kind, list(VERIFIER_KINDS), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close and close[0] != kind else ""
    return ValueError(
        f"unknown verifier {spec!r}{hint}: use 'embedding', 'cross-encoder:FOLDER' (a model "
        f"from `logic-rag finetune verifier`) or 'llm:GENERATOR' (e.g. "
        f"'llm:qwen2.5-coder-1.5b')"
    )


def check_verifier_spec(spec: str | Verifier) -> None:
    """Check a spec without loading any model: its kind, and that the model it names can be
    found (a registry name, a folder, a ``.gguf`` file; servers are not contacted). A typo
    (``llm:qwen2.5-3b``) raises at once, in one line that names the fix, instead of after
    an index and a dense model have loaded."""
    if isinstance(spec, Verifier):
        return
    from logic_rag.models import ModelNotFoundError, resolve_model

    text = spec.strip()
    kind, _, rest = text.partition(":")
    kind, rest = kind.lower(), rest.strip()
    if kind == "embedding" and not rest:
        return
    if kind == "cross-encoder" and rest:
        if not Path(rest).expanduser().is_dir():
            raise ValueError(
                f"--verifier {text}: no such folder; pass the model folder written by "
                f"`logic-rag finetune verifier` or `logic-rag adapt` (its verifier/)"
            )
        return
    if kind == "llm" and rest:
        from logic_rag.generators.factory import parse_spec

        generator = parse_spec(rest)
        local = generator.backend in ("transformers", "llamacpp", "vllm")
        if local and generator.model and not Path(generator.model).expanduser().exists():
            try:
                resolve_model(generator.model, kind="generator")
            except ModelNotFoundError as exc:
                raise ModelNotFoundError(f"--verifier {text}: {exc}") from None
        return
    raise _unknown_verifier(spec)
