"""``make_decomposer``, the ``auto`` choice, and the LLM decomposer over a generator
(grammar-constrained when the backend takes one), on fakes; plus the real grammar on
llama.cpp when it is installed."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from typing import Any

import pytest

from logic_rag.query import Atom, Decomposition, Not, Or
from logic_rag.query.auto import LLM_FIRST_TRY, RULES_TRUSTED, AutoDecomposer, make_decomposer
from logic_rag.query.llm import QUERY_GBNF, LLMDecomposer
from logic_rag.query.rules import RuleDecomposer


class Fixed:
    def __init__(self, decomposition: Decomposition) -> None:
        self.decomposition = decomposition
        self.calls = 0

    def decompose(self, text: str) -> Decomposition:
        self.calls += 1
        return self.decomposition


def test_auto_asks_the_llm_only_where_the_rules_are_unsure() -> None:
    sure = Fixed(Decomposition(Atom("rules"), 0.95, "rules"))
    llm = Fixed(Decomposition(Atom("llm"), LLM_FIRST_TRY, "llm"))
    auto = AutoDecomposer(sure, llm)
    assert auto.decompose("x").source == "rules" and llm.calls == 0
    fair = Fixed(Decomposition(Atom("rules"), RULES_TRUSTED, "rules"))
    assert AutoDecomposer(fair, llm).decompose("x").source == "rules" and llm.calls == 0
    unsure = Fixed(Decomposition(Atom("rules"), RULES_TRUSTED - 0.01, "rules"))
    assert AutoDecomposer(unsure, llm).decompose("x").source == "llm" and llm.calls == 1
    failed = Fixed(Decomposition(Atom("x"), 0.0, "fallback"))
    assert AutoDecomposer(unsure, failed).decompose("x").source == "rules"  # keep the rules'
    with pytest.raises(ValueError):
        auto.decompose("   ")


class FakeGenerator:
    name = "fake:json"

    def __init__(self, answer: str, takes_grammar: bool = True) -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []
        if not takes_grammar:
            self.generate = self._plain  # type: ignore[method-assign]

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
        grammar: str | None = None,
    ) -> list[str]:
        self.calls.append({"max_tokens": max_tokens, "grammar": grammar})
        return [self.answer for _ in prompts]

    def _plain(self, prompts, *, max_tokens=256, temperature=0.0, system=None):
        self.calls.append({"max_tokens": max_tokens, "grammar": None})
        return [self.answer for _ in prompts]


ANSWER = json.dumps(
    {"op": "or", "args": [{"atom": "Moths of Guadeloupe"}, {"atom": "Insects of Guadeloupe"}]}
)


def test_llm_decomposer_from_generator_constrains_when_it_can() -> None:
    gen = FakeGenerator(ANSWER)
    decomposer = LLMDecomposer.from_generator(gen)
    result = decomposer.decompose("moths or insects of Guadeloupe")
    assert result.query == Or((Atom("Moths of Guadeloupe"), Atom("Insects of Guadeloupe")))
    assert result.source == "llm" and decomposer.constrained and decomposer.model == "fake:json"
    assert gen.calls[0]["grammar"] == QUERY_GBNF and gen.calls[0]["max_tokens"] == 160
    plain = FakeGenerator(ANSWER, takes_grammar=False)
    unconstrained = LLMDecomposer.from_generator(plain)
    result = unconstrained.decompose("moths or insects of Guadeloupe")
    assert not unconstrained.constrained and result.source == "llm"
    off = LLMDecomposer.from_generator(FakeGenerator(ANSWER), constrained=False)
    off.decompose("q")
    assert not off.constrained


def test_make_decomposer_builds_each_kind_lazily() -> None:
    assert isinstance(make_decomposer("rules"), RuleDecomposer)
    gen = FakeGenerator(ANSWER)
    llm = make_decomposer("llm", generator=gen)
    assert isinstance(llm, LLMDecomposer) and not gen.calls  # nothing asked yet
    auto = make_decomposer("auto", generator=gen)
    assert isinstance(auto, AutoDecomposer)
    # Explicit connectives and no borrowed head noun: the rules are sure (0.95).
    sure = "Orchids of Malaysia that are not Orchids of Thailand"
    assert auto.decompose(sure).source == "rules"
    assert not gen.calls
    with pytest.raises(ValueError, match="unknown decomposer"):
        make_decomposer("magic")


def test_cli_offers_decomposer_flags() -> None:
    from logic_rag.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["search", "idx", "q", "--decomposer", "auto"])
    assert args.decomposer == "auto" and args.decomposer_model == "qwen2.5-coder-1.5b"
    args = parser.parse_args(
        ["eval", "quest", "--queries", "q.jsonl", "--out", "o", "--decomposer", "llm"]
    )
    assert args.decomposer == "llm"
    with pytest.raises(SystemExit):
        parser.parse_args(["search", "idx", "q", "--decomposer", "magic"])


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama-cpp-python is not installed: bash scripts/llamacpp_build.sh .venv",
)
def test_query_grammar_forces_schema_valid_json_on_llamacpp() -> None:
    """Even SmolLM2-135M writes schema-valid decompositions under the grammar."""
    from logic_rag.generators import make_generator

    gen = make_generator("llamacpp:smollm2-135m", n_ctx=1024)
    try:
        gen.load()
    except LookupError as exc:
        pytest.skip(f"SmolLM2 weights not installed: {exc}")
    # grounding off: this test is about the grammar (SmolLM2 often copies the few-shot
    # example, which grounding rejects; tests/query/test_exclusions.py covers that)
    decomposer = LLMDecomposer.from_generator(gen, max_tokens=96, retries=0, min_grounding=None)
    for text in ("Orchids of Indonesia but not Thailand", "1990s films or Italian crime films"):
        result = decomposer.decompose(text)
        assert result.source == "llm", result  # never the fallback: the JSON always parses
    assert isinstance(Not(Atom("x")), Not)
