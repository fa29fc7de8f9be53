"""LLMDecomposer with fake generators: parsing, retries, fallback, caching."""

from __future__ import annotations

import json
import warnings

import pytest

from logic_rag.query.algebra import And, Atom, Not, Or, to_json
from logic_rag.query.decompose import Decomposer
from logic_rag.query.llm import LLMDecomposer, extract_json

GOOD = And((Atom("Orchids of Malaysia"), Not(Atom("Orchids of Thailand"))))
GOOD_JSON = json.dumps(to_json(GOOD))


class Fake:
    """Returns canned answers in turn and records every prompt it got."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answers[min(len(self.prompts), len(self.answers)) - 1]


def test_valid_json_first_try() -> None:
    fake = Fake(GOOD_JSON)
    d = LLMDecomposer(fake).decompose("Orchids of Malaysia but not Thailand")
    assert d.query == GOOD
    assert d.source == "llm"
    assert d.confidence == pytest.approx(0.9)
    assert len(fake.prompts) == 1
    assert "Query: Orchids of Malaysia but not Thailand\nJSON:" in fake.prompts[0]
    assert isinstance(LLMDecomposer(fake), Decomposer)


def test_invalid_then_valid_retries_with_the_error() -> None:
    fake = Fake('{"op": "xor", "args": []}', GOOD_JSON)
    d = LLMDecomposer(fake).decompose("orchids")
    assert d.query == GOOD
    assert d.source == "llm"
    assert d.confidence < 0.9
    assert len(fake.prompts) == 2
    assert "previous answer was invalid" in fake.prompts[1]
    assert "does not match the schema" in fake.prompts[1]
    assert '"xor"' in fake.prompts[1]


def test_always_invalid_falls_back_to_atom() -> None:
    fake = Fake("I think the answer is orchids.")
    d = LLMDecomposer(fake, retries=2).decompose("  Orchids of Malaysia  ")
    assert d.query == Atom("Orchids of Malaysia")
    assert d.confidence == 0.0
    assert d.source == "fallback"
    assert len(fake.prompts) == 3
    assert "contains no JSON object" in fake.prompts[1]


def test_retries_zero_means_one_call() -> None:
    fake = Fake("nope")
    assert LLMDecomposer(fake, retries=0).decompose("x").source == "fallback"
    assert len(fake.prompts) == 1


@pytest.mark.parametrize(
    "answer",
    [
        f"Sure! Here is the decomposition:\n{GOOD_JSON}\nHope this helps.",
        f"```json\n{GOOD_JSON}\n```",
        f"```\n{GOOD_JSON}\n```\nThe query excludes Thailand.",
        f"Answer: {{not json}} then {GOOD_JSON}",
    ],
)
def test_json_inside_prose_or_fences(answer) -> None:
    assert LLMDecomposer(Fake(answer)).decompose("orchids").query == GOOD


def test_extract_json_errors() -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("[1, 2] and nothing else {")
    assert extract_json(' {"atom": "x"} ') == {"atom": "x"}


def test_schema_violations_are_not_accepted() -> None:
    # "not" with two args passes json.loads but not the schema
    bad = json.dumps({"op": "not", "args": [{"atom": "a"}, {"atom": "b"}]})
    fake = Fake(bad)
    d = LLMDecomposer(fake).decompose("a")
    assert d.source == "fallback"
    assert len(fake.prompts) == 2


def test_empty_text_raises_before_calling_the_model() -> None:
    fake = Fake(GOOD_JSON)
    with pytest.raises(ValueError, match="empty query"):
        LLMDecomposer(fake).decompose("   ")
    assert fake.prompts == []


def test_generator_errors_propagate() -> None:
    def broken(prompt: str) -> str:
        raise ConnectionError("server down")

    with pytest.raises(ConnectionError):
        LLMDecomposer(broken).decompose("x")


def test_constructor_validation() -> None:
    with pytest.raises(TypeError):
        LLMDecomposer("not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="retries"):
        LLMDecomposer(Fake(GOOD_JSON), retries=-1)
    with pytest.raises(ValueError, match="{query}"):
        LLMDecomposer(Fake(GOOD_JSON), prompt_template="no placeholder")


def test_memory_cache_and_fallbacks_not_cached() -> None:
    fake = Fake(GOOD_JSON)
    dec = LLMDecomposer(fake)
    first = dec.decompose("Orchids  of Malaysia")
    assert dec.decompose(" Orchids of Malaysia ") == first  # whitespace-normalised key
    assert len(fake.prompts) == 1

    failing = Fake("no", "no", GOOD_JSON)
    dec = LLMDecomposer(failing, retries=1)
    assert dec.decompose("orchids").source == "fallback"
    assert dec.decompose("orchids").source == "llm"  # asked again, not served from cache
    assert len(failing.prompts) == 3


def test_file_cache_round_trip(tmp_path) -> None:
    path = tmp_path / "sub" / "cache.jsonl"
    fake = Fake(GOOD_JSON, json.dumps(to_json(Or((Atom("a"), Atom("b"))))))
    dec = LLMDecomposer(fake, cache_path=path)
    dec.decompose("Orchids of Malaysia, not Thailand")
    dec.decompose("a or b")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["text"] for r in rows] == ["Orchids of Malaysia, not Thailand", "a or b"]
    assert not list(path.parent.glob("*.tmp"))  # atomic write left no temp file

    def never(prompt: str) -> str:
        raise AssertionError("served from the file cache, the model must not be called")

    again = LLMDecomposer(never, cache_path=path)
    assert again.decompose("Orchids of Malaysia, not Thailand").query == GOOD
    assert again.decompose("a or b").query == Or((Atom("a"), Atom("b")))


def test_corrupt_cache_lines_are_skipped_with_file_and_line(tmp_path) -> None:
    path = tmp_path / "cache.jsonl"
    good = {"text": "ok", "query": {"atom": "ok atom"}, "confidence": 0.9, "source": "llm"}
    lines = [
        json.dumps(good),
        "{truncated",
        json.dumps(
            {"text": "bad schema", "query": {"op": "xor"}, "confidence": 1, "source": "llm"}
        ),
        json.dumps({"query": {"atom": "no text"}, "confidence": 1, "source": "llm"}),
        json.dumps({**good, "text": "bad conf", "confidence": 7}),
        "[]",
    ]
    path.write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # grounding off: this test is about the cache file, not the answers' words
        dec = LLMDecomposer(Fake(GOOD_JSON), cache_path=path, min_grounding=None)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 5
    for lineno in (2, 3, 4, 5, 6):
        assert any(m.startswith(f"{path}:{lineno}: skipping corrupt") for m in messages)
    assert dec.decompose("ok").query == Atom("ok atom")
    assert dec.decompose("bad schema").query == GOOD  # not cached: the model was asked


def test_implied_conjuncts_are_dropped_but_cached_as_answered(tmp_path) -> None:
    redundant = And((Atom("Dave Eggers books"), Atom("books")))
    fake = Fake(json.dumps(to_json(redundant)))
    cache = tmp_path / "cache.jsonl"
    first = LLMDecomposer(fake, cache_path=cache).decompose("Dave Eggers books")
    assert first.query == Atom("Dave Eggers books") and first.confidence == pytest.approx(0.9)
    row = json.loads(cache.read_text().splitlines()[0])
    assert row["query"] == to_json(redundant)  # the model's own reading stays on record
    again = LLMDecomposer(Fake("never asked"), cache_path=cache).decompose("Dave Eggers books")
    assert again.query == Atom("Dave Eggers books")
