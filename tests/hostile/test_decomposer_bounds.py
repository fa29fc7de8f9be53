"""Issue 42, items 2, 3 and 5: decomposing a query costs time in proportion to its size,
and both the query and an LLM's answer are bounded.

* Item 2: the rule decomposer was superlinear ("w0 or w1 or ...": 10k atoms 67 s; 2,000
  "except" clauses 13.6 s). The passes are linear now, and a query over
  ``MAX_QUERY_CHARS`` characters or ``MAX_QUERY_ATOMS`` atoms is refused with one clear
  error (a ``ValueError``, so the CLI prints one line and exits 2).
* Item 3: ``extract_json`` was quadratic (a 400 KB answer of ``{`` took 54 s); it hands
  the JSON decoder a bounded number of characters now, and the decomposer refuses an
  answer over ``MAX_ANSWER_CHARS`` before parsing it.
* Item 5: an LLM answer nested 300 levels raised RecursionError; 5,000 atoms or a 2 MB
  atom were accepted. Depth, atom count and atom length are checked for every backend,
  and a bad answer is retried, then falls back, as documented.

Work is counted, not timed: the characters handed to the JSON decoder, the calls of the
head heuristics and the characters the exclusion regexes scan.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from logic_rag.query import exclusions, llm, rules
from logic_rag.query.auto import AutoDecomposer
from logic_rag.query.llm import LLMDecomposer, extract_json
from logic_rag.query.rules import (
    MAX_QUERY_ATOMS,
    MAX_QUERY_CHARS,
    QueryTooLargeError,
    RuleDecomposer,
)

# ----------------------------------------------------------------------- item 2: caps


def test_the_caps_are_the_documented_defaults():
    assert MAX_QUERY_CHARS == 4000
    assert MAX_QUERY_ATOMS == 64
    assert issubclass(QueryTooLargeError, ValueError)


def test_a_query_over_the_character_cap_is_refused_in_one_line():
    text = "orchids " * 600  # 4,800 characters
    with pytest.raises(QueryTooLargeError, match=r"4,799 characters.*cap of 4,000") as info:
        RuleDecomposer().decompose(text)
    assert "\n" not in str(info.value)


def test_a_query_with_too_many_atoms_is_refused():
    text = " or ".join(f"w{i}" for i in range(100))
    with pytest.raises(QueryTooLargeError, match=r"100 atoms.*64"):
        RuleDecomposer().decompose(text)
    # at the cap it is read
    at_cap = " or ".join(f"w{i}" for i in range(64))
    assert len(RuleDecomposer().decompose(at_cap).query.args) == 64


def test_the_caps_are_settings():
    text = " or ".join(f"w{i}" for i in range(300))
    wide = RuleDecomposer(max_query_chars=100_000, max_atoms=None)
    assert len(wide.decompose(text).query.args) == 300
    with pytest.raises(QueryTooLargeError, match="19 characters, over the cap of 10 "):
        RuleDecomposer(max_query_chars=10).decompose("orchids of Malaysia")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            RuleDecomposer(max_query_chars=bad)
        with pytest.raises(ValueError):
            RuleDecomposer(max_atoms=bad)


def test_the_llm_and_auto_decomposers_refuse_a_long_query_before_asking_the_model():
    asked: list[str] = []

    def generate(prompt: str) -> str:
        asked.append(prompt)
        return '{"atom": "orchids"}'

    text = "orchids " * 600
    with pytest.raises(QueryTooLargeError):
        LLMDecomposer(generate).decompose(text)
    with pytest.raises(QueryTooLargeError):
        AutoDecomposer(RuleDecomposer(), LLMDecomposer(generate)).decompose(text)
    assert asked == []


# ------------------------------------------------------------------ item 2: linear work


def _count_item_kind(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = rules.item_kind

    def counting(text: str) -> str:
        calls[0] += 1
        return real(text)

    monkeypatch.setattr(rules, "item_kind", counting)
    return calls


@pytest.mark.parametrize(
    "shape",
    [
        lambda n: " or ".join(f"w{i}" for i in range(n)),
        lambda n: "Orchids of " + " and ".join(f"Place{i}" for i in range(n)),
        lambda n: "films " + ", ".join(f"x{i}" for i in range(n)) + " or books",
    ],
)
def test_head_sharing_looks_at_each_item_a_bounded_number_of_times(monkeypatch, shape):
    wide = RuleDecomposer(max_query_chars=None, max_atoms=None)
    calls = _count_item_kind(monkeypatch)
    for n in (200, 800):
        calls[0] = 0
        wide.decompose(shape(n))
        assert calls[0] <= 4 * n + 10, (n, calls[0])


class _Scanned:
    """A compiled pattern that adds up how many characters each call may scan."""

    def __init__(self, pattern: re.Pattern[str], total: list[int]) -> None:
        self._pattern = pattern
        self._total = total

    def _count(
        self, string: str, pos: int = 0, endpos: int | None = None, found: Any = None
    ) -> None:
        """A search scans up to its match's end, or to its end position without one."""
        end = len(string) if endpos is None else min(endpos, len(string))
        if found is not None:
            end = found.end()
        self._total[0] += max(end - pos, 0)

    def search(self, string: str, *args: Any) -> Any:
        found = self._pattern.search(string, *args)
        self._count(string, *args, found=found)
        return found

    def match(self, string: str, *args: Any) -> Any:
        found = self._pattern.match(string, *args)
        self._count(string, *args, found=found)
        return found

    def finditer(self, string: str, *args: Any) -> Any:
        self._count(string, *args)
        return self._pattern.finditer(string, *args)

    def sub(self, repl: Any, string: str, *args: Any) -> Any:
        self._count(string)
        return self._pattern.sub(repl, string, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)


def _count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    total = [0]
    for name in dir(exclusions):
        value = getattr(exclusions, name)
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(exclusions, name, _Scanned(value, total))
    real_search = re.search

    def search(pattern: Any, string: str, flags: int = 0) -> Any:
        total[0] += len(string)
        return real_search(pattern, string, flags)

    monkeypatch.setattr(exclusions.re, "search", search)
    return total


@pytest.mark.parametrize(
    "shape",
    [
        lambda n: "Films " + " ".join(f"except x{i}," for i in range(n)),
        lambda n: " ".join(["a and b or c but not d"] * n),
        lambda n: "What did X make, " + ", ".join(f"apart from F{i}" for i in range(n)) + "?",
    ],
)
def test_reading_exclusions_scans_each_character_a_bounded_number_of_times(monkeypatch, shape):
    for n in (100, 400):
        text = exclusions.normalise_question(shape(n))
        total = _count_scans(monkeypatch)
        exclusions.find_exclusions(text)
        monkeypatch.undo()
        assert total[0] <= 40 * len(text), (n, len(text), total[0])


# ------------------------------------------------------------ item 3: extract_json work


def _count_decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    total = [0]
    real = llm._decode

    def counting(text: str) -> Any:
        total[0] += len(text)
        return real(text)

    monkeypatch.setattr(llm, "_decode", counting)
    return total


@pytest.mark.parametrize(
    "answer",
    [
        "{" * 100_000,
        "x{" * 50_000,
        '{"a": ' * 30_000,
        '{"a": 1} ' * 20_000 + "{",
        "```" * 30_000,
        '{"atom": "' + "x" * 100_000,
        "{" * 20_000 + '{"atom": "orchids"}' + "}" * 20_000,
    ],
)
def test_extract_json_hands_the_decoder_a_bounded_number_of_characters(monkeypatch, answer):
    total = _count_decoded(monkeypatch)
    try:
        extract_json(answer)
    except ValueError:
        pass
    assert total[0] <= 4 * len(answer) + 4096, total[0]


def test_extract_json_still_finds_the_first_object():
    assert extract_json('prose {not json} then {"atom": "a"} and {"atom": "b"}') == {"atom": "a"}
    assert extract_json('{"note": {"atom": "x"}, oops}') == {"atom": "x"}
    assert extract_json('```json\n{"atom": "f"}\n```') == {"atom": "f"}
    assert extract_json('say "hi" {"atom": "q \\" } {"}') == {"atom": 'q " } {'}
    assert extract_json("[1, 2]") == [1, 2]
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("[1, 2] and nothing else {")


def test_deeply_nested_json_is_a_bad_answer_not_a_recursion_error():
    for answer in ("[" * 200_000 + "]" * 200_000, '{"a": ' * 100_000 + "1" + "}" * 100_000):
        with pytest.raises(ValueError):
            extract_json(answer)


def test_the_decomposer_refuses_an_oversized_answer_before_parsing_it(monkeypatch):
    total = _count_decoded(monkeypatch)
    answers = ["{" * 400_000, '{"atom": "orchids"}']
    prompts: list[str] = []

    def generate(prompt: str) -> str:
        prompts.append(prompt)
        return answers[len(prompts) - 1]

    d = LLMDecomposer(generate).decompose("orchids")
    assert d.source == "llm" and d.confidence == pytest.approx(0.7)
    assert "400,000 characters" in prompts[1]
    assert total[0] < 1000  # the oversized answer was never decoded


# --------------------------------------------------------- item 5: answers' shape caps


def _fixed(answer: str) -> Any:
    calls: list[str] = []

    def generate(prompt: str) -> str:
        calls.append(prompt)
        return answer

    generate.calls = calls  # type: ignore[attr-defined]
    return generate


def _nested_not(depth: int) -> str:
    obj: Any = {"atom": "orchids"}
    for _ in range(depth):
        obj = {"op": "not", "args": [obj]}
    return json.dumps(obj)


def test_an_answer_nested_300_levels_falls_back_after_a_retry():
    generate = _fixed(_nested_not(300))
    d = LLMDecomposer(generate).decompose("orchids")
    assert d.source == "fallback" and d.confidence == 0.0
    assert len(generate.calls) == 2
    assert "nested" in generate.calls[1]


def test_5000_atoms_fall_back():
    answer = json.dumps({"op": "or", "args": [{"atom": "orchids"}] * 5000})
    generate = _fixed(answer)
    d = LLMDecomposer(generate).decompose("orchids")
    assert d.source == "fallback"
    assert "atoms" in generate.calls[1]


@pytest.mark.parametrize("size", [2 * 2**20, 500])
def test_a_huge_atom_falls_back(size):
    answer = json.dumps({"atom": "orchids " * (size // 8)})
    generate = _fixed(answer)
    d = LLMDecomposer(generate).decompose("orchids")
    assert d.source == "fallback"
    assert "characters" in generate.calls[1]


def test_answers_within_the_caps_are_taken():
    ok = json.dumps(
        {
            "op": "and",
            "args": [
                {"atom": "Orchids of Indonesia"},
                {"op": "or", "args": [{"atom": "Orchids of Malaysia"}, {"atom": "Fiji"}]},
                {"op": "not", "args": [{"atom": "Orchids of Thailand"}]},
            ],
        }
    )
    d = LLMDecomposer(_fixed(ok)).decompose(
        "Orchids of Indonesia and Malaysia or Fiji but not Thailand"
    )
    assert d.source == "llm" and d.confidence == pytest.approx(0.9)
