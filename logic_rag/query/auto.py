"""Choose a decomposer by name, and ``auto``: rules or the LLM, per query, by confidence.

``make_decomposer("rules")`` is the rule decomposer; ``make_decomposer("llm",
model="qwen2.5-1.5b")`` an :class:`~logic_rag.query.llm.LLMDecomposer` on that generator
(grammar-constrained on llama.cpp); ``make_decomposer("auto", model=...)`` an
:class:`AutoDecomposer`.

How ``auto`` picks: the rule decomposer answers first (microseconds). Its confidence is
0.95 when the query's connectives are explicit and no heuristic fired, and lower for each
guess it had to make (a borrowed head noun, a comma list, mixed and/or, no connective at
all). The LLM decomposer's confidence is 0.9 for a first valid answer, 0.7 after a retry,
0 for a fallback. ``auto`` takes the rules' reading when it is at least as confident as the
LLM could be (``>= LLM_FIRST_TRY`` = 0.9), asks the LLM otherwise, and keeps whichever of
the two readings is more confident (the rules' on ties and LLM fallbacks). So the LLM runs
only on the queries the rules are unsure of.
"""

from __future__ import annotations

from typing import Any

from logic_rag.query.decompose import Decomposer, Decomposition, require_text

__all__ = ["DECOMPOSERS", "LLM_FIRST_TRY", "AutoDecomposer", "make_decomposer"]

DECOMPOSERS = ("rules", "llm", "auto")
#: The LLM decomposer's confidence in a first-try valid answer (see LLMDecomposer._ask).
LLM_FIRST_TRY = 0.9


class AutoDecomposer:
    """Rules first; the LLM only where the rules are less confident than it would be."""

    source = "auto"

    def __init__(self, rules: Decomposer, llm: Decomposer) -> None:
        self.rules = rules
        self.llm = llm
        self.llm_calls = 0

    def __repr__(self) -> str:
        return f"AutoDecomposer({self.rules!r}, {self.llm!r})"

    def decompose(self, text: str) -> Decomposition:
        text = require_text(text)
        by_rules = self.rules.decompose(text)
        if by_rules.confidence >= LLM_FIRST_TRY:
            return by_rules
        self.llm_calls += 1
        by_llm = self.llm.decompose(text)
        return by_llm if by_llm.confidence > by_rules.confidence else by_rules


def make_decomposer(
    kind: str = "rules",
    *,
    model: str = "qwen2.5-1.5b",
    generator: Any | None = None,
    cache_path: str | None = None,
    constrained: bool = True,
) -> Decomposer:
    """The decomposer ``kind`` names (``rules``, ``llm``, ``auto``).

    ``model`` is a generator spec (``qwen2.5-1.5b`` runs on llama.cpp when built);
    ``generator`` an already built one; ``cache_path`` a JSONL cache for LLM answers.
    Nothing loads until the first LLM call.
    """
    from logic_rag.query.rules import RuleDecomposer

    if kind not in DECOMPOSERS:
        raise ValueError(f"unknown decomposer {kind!r}; choose from {', '.join(DECOMPOSERS)}")
    if kind == "rules":
        return RuleDecomposer()
    from logic_rag.query.llm import LLMDecomposer

    if generator is None:
        from logic_rag.generators import make_generator

        generator = make_generator(model)
    llm = LLMDecomposer.from_generator(generator, constrained=constrained, cache_path=cache_path)
    return llm if kind == "llm" else AutoDecomposer(RuleDecomposer(), llm)
