"""The rerankers' settings and decomposer as JSON-shaped values, so the adapters serialise.

LlamaIndex (``to_dict`` / ``from_dict``) and LangChain (``dumpd`` / ``loads``) rebuild a
component by calling its constructor with the fields it wrote out, so every field is a
plain value the constructor also accepts. The strategy's settings are written by the one
serialisation rule of the library (``StrategySettings.to_dict``: ``{"type",
"init_parameters"}``, a verifier as :func:`~logic_rag.verifiers.spec.verifier_spec` writes
it) and read back by ``from_dict``, which builds a verifier only from the library's
allow-listed types: a verifier of another type is named in the file but refused on reading
with a ValueError that says to pass the object again (``from_dict(data, settings=...)``).
The decomposer is a spec (``rules``, ``llm``, ``auto``, ``llm:MODEL``, ``auto:MODEL``), or,
for an object no spec describes, ``{"type": "module.Class"}``, refused the same way. This
module imports neither framework.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from logic_rag.query.decompose import Decomposer
    from logic_rag.strategy_settings import StrategySettings

__all__ = ["settings_from", "decomposer_spec", "decomposer_from"]


def settings_from(
    strategy: str, settings: StrategySettings | dict[str, Any] | None
) -> StrategySettings:
    """Strategy ``strategy``'s settings from its settings object, from their ``to_dict()``
    (or the plain dict of their fields), or the defaults. A clear error for unknown
    strategies and settings of another strategy."""
    from logic_rag.strategies import settings_of

    if isinstance(settings, dict):
        if not settings:
            return settings_of(strategy)
        return settings_of(strategy, type(settings_of(strategy)).from_dict(settings))
    return settings_of(strategy, settings)


def decomposer_spec(decomposer: Any) -> str | dict[str, Any]:
    """The spec of a decomposer: itself when a string, ``rules`` for ``None`` or a default
    ``RuleDecomposer``, else ``{"type": "module.Class"}`` (which :func:`decomposer_from`
    refuses: the object must be passed again)."""
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
    kind = type(decomposer)
    return {"type": f"{kind.__module__}.{kind.__qualname__}"}


def decomposer_from(decomposer: Decomposer | str | dict[str, Any] | None) -> Decomposer:
    """A decomposer from an object, a spec (``rules``, ``llm[:MODEL]``, ``auto[:MODEL]``)
    or ``None`` (rules). Nothing loads until the first LLM call."""
    from logic_rag.query.auto import make_decomposer

    if decomposer is None:
        return make_decomposer("rules")
    if isinstance(decomposer, dict):
        name = str(decomposer.get("type", "?")).rpartition(".")[2][:60]
        raise ValueError(
            f"the decomposer was the Python object {name}, which no spec describes; pass "
            f"it again, e.g. from_dict(data, decomposer=...)"
        )
    if not isinstance(decomposer, str):
        if not callable(getattr(decomposer, "decompose", None)):
            raise TypeError(
                f"decomposer must have a decompose(text) method or be a spec such as "
                f"'rules' or 'llm:qwen2.5-coder-1.5b'; got {type(decomposer).__name__}"
            )
        return decomposer
    kind, _, model = decomposer.strip().partition(":")
    if kind == "rules" and model:
        raise ValueError(f"decomposer {decomposer!r}: 'rules' takes no model")
    return make_decomposer(kind, **({"model": model} if model else {}))
