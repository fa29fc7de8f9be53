"""The rerankers' settings as JSON-shaped values, so the framework adapters serialise.

LlamaIndex (``to_dict`` / ``from_dict``) and LangChain (``dumpd`` / ``loads``) rebuild a
component by calling its constructor with the fields it wrote out, so every field is a
plain value the constructor also accepts: the model as its name, the strategy's settings
(:mod:`logic_rag.strategy_settings`) as their dict whose verifiers are spec strings, the
decomposer as a spec (``rules``, ``llm``, ``auto``, ``llm:MODEL``, ``auto:MODEL``). The
dict of the deprecated :class:`~logic_rag.strategies.LogicConfig` that older versions
wrote (``config``) still loads, for one release.

A verifier or decomposer given as a Python object that no spec describes is written as
``<object ClassName>``; reading that back raises a ValueError that says to pass the
object again (``from_dict(data, settings=...)``), rather than silently running without it.
This module imports neither framework.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from logic_rag.query.decompose import Decomposer
    from logic_rag.strategies import LogicConfig
    from logic_rag.strategy_settings import StrategySettings

__all__ = [
    "config_to_dict",
    "config_from",
    "settings_to_dict",
    "settings_from",
    "decomposer_spec",
    "decomposer_from",
    "verifier_spec",
]

_OBJECT = "<object "


def _marker(value: object) -> str:
    return f"{_OBJECT}{type(value).__name__}>"


def _is_default(value: Any, *, skip: tuple[str, ...]) -> bool:
    """True when every field of dataclass ``value`` but ``skip`` has its default."""
    default = type(value)(**{name: getattr(value, name) for name in skip})
    return all(
        getattr(value, f.name) == getattr(default, f.name)
        for f in fields(value)
        if f.init and f.compare and f.name not in skip
    )


def verifier_spec(verifier: Any) -> str | None:
    """The spec string of ``LogicConfig.verifier`` (``None`` stays ``None``)."""
    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier
    from logic_rag.verifiers.embedding import EmbeddingVerifier
    from logic_rag.verifiers.llm import LLMVerifier

    if verifier is None or isinstance(verifier, str):
        return verifier
    if type(verifier) is EmbeddingVerifier and verifier == EmbeddingVerifier():
        return "embedding"
    if type(verifier) is CrossEncoderVerifier and _is_default(verifier, skip=("model",)):
        return f"cross-encoder:{verifier.model}"
    if (
        type(verifier) is LLMVerifier
        and isinstance(verifier.generator, str)
        and _is_default(verifier, skip=("generator",))
    ):
        return f"llm:{verifier.generator}"
    return _marker(verifier)


def config_to_dict(config: LogicConfig) -> dict[str, Any]:
    """``config``'s fields as JSON values (a verifier, in any field, as its spec)."""
    from logic_rag.verifiers.base import Verifier

    return {
        f.name: verifier_spec(value) if isinstance(value, Verifier) else value
        for f in fields(config)
        for value in (getattr(config, f.name),)
    }


def _refuse_marker(value: Any, what: str, argument: str) -> None:
    if isinstance(value, str) and value.startswith(_OBJECT):
        raise ValueError(
            f"the {what} was the Python object {value[len(_OBJECT) : -1]}, which no spec "
            f"describes; pass it again, e.g. from_dict(data, {argument}=...)"
        )


def config_from(config: LogicConfig | dict[str, Any] | None) -> LogicConfig:
    """A :class:`LogicConfig` from one, from :func:`config_to_dict`'s dict, or the default."""
    from logic_rag.strategies import LogicConfig

    if config is None:
        return LogicConfig()
    if isinstance(config, LogicConfig):
        return config
    if not isinstance(config, dict):
        raise TypeError(f"config must be a LogicConfig or a dict, got {type(config).__name__}")
    known = {f.name for f in fields(LogicConfig)}
    unknown = sorted(set(config) - known)
    if unknown:
        raise ValueError(f"unknown LogicConfig field(s): {', '.join(unknown)}")
    for name, value in config.items():
        _refuse_marker(value, f"config's {name}", "config")
    return LogicConfig(**config)


def settings_to_dict(settings: StrategySettings) -> dict[str, Any]:
    """``settings.to_dict()``, except that a verifier object becomes its spec (or the
    ``<object ClassName>`` marker that :func:`settings_from` refuses to read back)."""
    from logic_rag.strategy_settings import StrategySettings
    from logic_rag.verifiers.base import Verifier

    out: dict[str, Any] = {}
    for f in fields(settings):
        value = getattr(settings, f.name)
        if isinstance(value, StrategySettings):
            value = settings_to_dict(value)
        elif isinstance(value, Verifier):
            value = verifier_spec(value)
        out[f.name] = value
    return out


def settings_from(
    strategy: str,
    settings: StrategySettings | dict[str, Any] | None,
    config: LogicConfig | dict[str, Any] | None = None,
) -> StrategySettings:
    """Strategy ``strategy``'s settings from its settings object, from
    :func:`settings_to_dict`'s dict, from a deprecated ``config`` (a LogicConfig or
    :func:`config_to_dict`'s dict), or the defaults. A clear error for unknown
    strategies, settings of another strategy, and both forms at once."""
    from logic_rag.strategies import settings_of

    if config == {}:
        config = None  # the adapters' empty default field
    if settings is not None and settings != {} and config is not None:
        raise ValueError("give the strategy's settings= or the deprecated config=, not both")
    if isinstance(settings, dict) and settings:
        cls = type(settings_of(strategy))
        for name in ("verifier", "cheap"):
            _refuse_marker(settings.get(name), f"settings' {name}", "settings")
        return settings_of(strategy, cls.from_dict(settings))
    if settings is not None and not isinstance(settings, dict):
        return settings_of(strategy, settings)
    if config is not None:
        return config_from(config).settings_for(strategy)
    return settings_of(strategy)


def decomposer_spec(decomposer: Any) -> str:
    """The spec of a decomposer: itself when a string, ``rules`` for a default
    ``RuleDecomposer``, else ``<object ClassName>``."""
    from logic_rag.query.rules import RuleDecomposer

    if isinstance(decomposer, str):
        return decomposer
    if decomposer is None:
        return "rules"
    default = RuleDecomposer()
    if (
        type(decomposer) is RuleDecomposer
        and decomposer.share_heads == default.share_heads
        and decomposer.protected_phrases == default.protected_phrases
    ):
        return "rules"
    return _marker(decomposer)


def decomposer_from(decomposer: Decomposer | str | None) -> Decomposer:
    """A decomposer from an object, a spec (``rules``, ``llm[:MODEL]``, ``auto[:MODEL]``)
    or ``None`` (rules). Nothing loads until the first LLM call."""
    from logic_rag.query.auto import make_decomposer

    if decomposer is None:
        return make_decomposer("rules")
    if not isinstance(decomposer, str):
        if not callable(getattr(decomposer, "decompose", None)):
            raise TypeError(
                f"decomposer must have a decompose(text) method or be a spec such as "
                f"'rules' or 'llm:qwen2.5-1.5b'; got {type(decomposer).__name__}"
            )
        return decomposer
    _refuse_marker(decomposer, "decomposer", "decomposer")
    kind, _, model = decomposer.strip().partition(":")
    if kind == "rules" and model:
        raise ValueError(f"decomposer {decomposer!r}: 'rules' takes no model")
    return make_decomposer(kind, **({"model": model} if model else {}))
