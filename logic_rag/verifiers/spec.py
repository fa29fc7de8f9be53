"""Verifier spec strings: ``embedding``, ``cross-encoder:FOLDER``, ``llm:GENERATOR``.

One string picks a verifier on the command line and in configs, like generator specs do:

* ``embedding`` — calibrated cosine evidence (no extra model);
* ``cross-encoder:FOLDER`` — a cross-encoder trained by ``logic-rag finetune verifier``;
* ``llm:GENERATOR`` — yes/no log-probabilities from a generator spec
  (``llm:qwen2.5-coder-1.5b``, ``llm:vllm:/path``, ``llm:openai:http://host:8000/v1#model``).

:func:`verifier_spec` is the inverse, for writing settings, pipelines and adapters out:
the spec string when one describes the verifier exactly, else the one serialisation rule
of every component (Haystack's ``default_to_dict``: ``{"type": "module.Class",
"init_parameters": {...}}``, :func:`~logic_rag.pipeline.stage.component_to_dict`).
:func:`make_verifier` reads both back; a dict is rebuilt only when its type is one of the
library's allow-listed verifiers, so a file never constructs a type outside logic_rag.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from logic_rag.pipeline.stage import component_from_dict, component_to_dict
from logic_rag.verifiers.base import Verifier

__all__ = ["make_verifier", "verifier_spec", "check_verifier_spec", "VERIFIER_KINDS"]

VERIFIER_KINDS = ("embedding", "cross-encoder", "llm")


def make_verifier(spec: str | dict[str, Any] | Verifier, **options: Any) -> Verifier:
    """The verifier a spec names (``options`` go to its constructor), or the one a
    :func:`verifier_spec` dict describes (only the library's allow-listed verifier types
    are built from a dict; another is refused with a ValueError that says to pass the
    object again)."""
    if isinstance(spec, Verifier):
        return spec
    if isinstance(spec, dict):
        return _from_dict(spec, options)
    if not isinstance(spec, str):
        raise TypeError(
            f"a verifier is a spec string, a verifier_spec dict or a Verifier, "
            f"got {type(spec).__name__}"
        )
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


def _from_dict(data: dict[str, Any], options: dict[str, Any]) -> Verifier:
    if options:
        raise TypeError("a verifier_spec dict holds its own parameters: give no options")
    name = str(data.get("type", ""))
    try:
        built = component_from_dict(data)
    except ValueError as exc:
        short = name.rpartition(".")[2][:60] or "?"
        raise ValueError(
            f"the verifier {short} cannot be built from a file ({exc}); pass it again, "
            f"e.g. from_dict(data, settings=...)"
        ) from None
    if not isinstance(built, Verifier):
        raise ValueError(f"{name[:120]!r} is not a verifier")
    return built


def verifier_spec(verifier: str | Verifier | None) -> str | dict[str, Any] | None:
    """How ``verifier`` is written out: ``None`` and spec strings as they are; a verifier
    a spec describes exactly as that spec (``embedding``, ``cross-encoder:FOLDER``,
    ``llm:GENERATOR``); any other as ``{"type", "init_parameters"}``. Raises TypeError
    for one whose values have no JSON form (an LLM verifier around a framework's model:
    pass that model again as the adapter's ``llm=``)."""
    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier
    from logic_rag.verifiers.embedding import EmbeddingVerifier
    from logic_rag.verifiers.llm import LLMVerifier

    if verifier is None or isinstance(verifier, str):
        return verifier
    if not isinstance(verifier, Verifier):
        raise TypeError(f"not a verifier: {type(verifier).__name__}")
    if type(verifier) is EmbeddingVerifier and verifier == EmbeddingVerifier():
        return "embedding"
    if type(verifier) is CrossEncoderVerifier and _only(verifier, "model"):
        return f"cross-encoder:{verifier.model}"
    if (
        type(verifier) is LLMVerifier
        and isinstance(verifier.generator, str)
        and _only(verifier, "generator")
    ):
        return f"llm:{verifier.generator}"
    return component_to_dict(verifier)


def _only(verifier: Any, name: str) -> bool:
    """Whether every init field of ``verifier`` but ``name`` has its default."""
    default = type(verifier)(**{name: getattr(verifier, name)})
    return all(
        getattr(verifier, f.name) == getattr(default, f.name)
        for f in fields(verifier)
        if f.init and f.compare and f.name != name
    )


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
