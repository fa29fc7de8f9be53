"""Choose a decomposer by name, and ``auto``: rules or the LLM, per query, by confidence.

``make_decomposer("rules")`` is the rule decomposer; ``make_decomposer("llm",
model="qwen2.5-coder-1.5b")`` an :class:`~logic_rag.query.llm.LLMDecomposer` on that generator
(grammar-constrained on llama.cpp); ``make_decomposer("auto", model=...)`` an
:class:`AutoDecomposer`.

How ``auto`` picks: the rule decomposer answers first (microseconds). Its confidence is
0.95 when the query's connectives are explicit and no heuristic fired, and lower for each
guess it had to make (a borrowed head noun, a comma list, mixed and/or, no connective at
all). The LLM decomposer's confidence is 0.9 for a first valid answer, 0.7 after a retry,
0 for a fallback. ``auto`` takes the rules' reading when their confidence is at least
:data:`RULES_TRUSTED` (0.7), asks the LLM otherwise, and keeps whichever of the two readings
is more confident (the rules' on ties and LLM fallbacks). So the LLM runs only on the
queries the rules are least sure of.

One exception, at any rule confidence: a query that holds a negation cue ("not",
"without", "apart from", "n't", ...; :func:`~logic_rag.query.exclusions.has_negation_cue`)
whose rule reading has no NOT goes to the LLM, because a missed exclusion turns the
query's meaning around while the rules' confidence only measures their own guesses. The
LLM's reading is taken there when it is valid and holds a NOT (the LLM decomposer only
returns answers grounded in the query's words); otherwise the rules' reading stands.

Why 0.7 and not the LLM's own 0.9: chosen on the QUEST-attr train split (136 queries,
thresholds 0.6-0.9). Where the rules say 0.76 (53 queries) their template is right more
often than Qwen2.5-1.5B's (43% vs 30%); under 0.7 (19 queries) less often (53% vs 79%).
Template accuracy on
train: 0.654 at 0.7 against 0.610 at 0.9; on the dev split, once: 0.634 against 0.611
(rules alone 0.626, LLM alone 0.649); on LIMIT, where no rule reading is under 0.7, auto is
the rules' 1.000.
"""

from __future__ import annotations

from typing import Any

from logic_rag.query.algebra import negated_atoms
from logic_rag.query.decompose import Decomposer, Decomposition, require_text
from logic_rag.query.exclusions import has_negation_cue

__all__ = ["DECOMPOSERS", "LLM_FIRST_TRY", "RULES_TRUSTED", "AutoDecomposer", "make_decomposer"]

DECOMPOSERS = ("rules", "llm", "auto")
#: The LLM decomposer's confidence in a first-try valid answer (see LLMDecomposer._ask).
LLM_FIRST_TRY = 0.9
#: ``auto`` keeps the rules' reading at this confidence or above (see the module doc).
RULES_TRUSTED = 0.7


class AutoDecomposer:
    """Rules first; the LLM where the rules are unsure or missed a negation (module doc)."""

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
        unread = has_negation_cue(text) and not negated_atoms(by_rules.query)
        if by_rules.confidence >= RULES_TRUSTED and not unread:
            return by_rules
        self.llm_calls += 1
        by_llm = self.llm.decompose(text)
        if unread and by_llm.source != "fallback" and negated_atoms(by_llm.query):
            return by_llm  # the LLM read the negation the rules missed
        if by_rules.confidence >= RULES_TRUSTED:
            return by_rules
        return by_llm if by_llm.confidence > by_rules.confidence else by_rules


def make_decomposer(
    kind: str = "rules",
    *,
    model: str = "qwen2.5-coder-1.5b",
    generator: Any | None = None,
    cache_path: str | None = None,
    constrained: bool = True,
) -> Decomposer:
    """The decomposer ``kind`` names (``rules``, ``llm``, ``auto``).

    ``model`` is a generator spec (``qwen2.5-coder-1.5b`` runs on llama.cpp when built);
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
