"""Small-model judges: rubric prompts, scores from token probabilities, the strict
``Score: N`` parser, grammar-constrained judging, the judge set-up meta-eval, and the
``eval rag`` wiring, all on fake generators (no model loads here)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from logic_rag.evals.rag.judge_meta import (
    balanced_order,
    meta_eval_judges,
    split_of,
    summarise_setups,
)
from logic_rag.evals.rag.small_judges import (
    MIN_CHOICE_MASS,
    RUBRICS,
    ChoiceJudge,
    ChoiceJudges,
    GrammarJudge,
    judge_prompt,
    parse_score_line,
    score_from_logprobs,
)


class FakeScorer:
    """choice_logprobs from a number in the answer ("quality 4" -> prefers high grades)."""

    name = "fake:scorer"

    def __init__(self, mass: float = 0.9) -> None:
        self.mass = mass
        self.calls: list[dict[str, Any]] = []

    def _quality(self, prompt: str) -> float:
        answer = prompt.split("Answer to grade:", 1)[1]
        digits = [int(c) for c in answer if c.isdigit()]
        return (digits[0] - 1) / 4 if digits else 0.5

    def choice_logprobs(
        self, prompts: Sequence[str], choices: Sequence[str], *, system: str | None = None
    ) -> np.ndarray:
        self.calls.append({"prompts": list(prompts), "choices": list(choices), "system": system})
        rows = []
        for prompt in prompts:
            q = self._quality(prompt)
            if tuple(choices) == ("Yes", "No") or tuple(choices) == ("No", "Yes"):
                p = {"Yes": 0.05 + 0.9 * q, "No": 0.95 - 0.9 * q}
                weights = [p[c] for c in choices]
            else:
                values = np.arange(len(choices)) / max(len(choices) - 1, 1)
                weights = list(np.exp(-8 * (values - q) ** 2))
            total = sum(weights)
            rows.append([math.log(self.mass * w / total) for w in weights])
        return np.asarray(rows)

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
        grammar: str | None = None,
    ) -> list[str]:
        self.calls.append({"prompts": list(prompts), "grammar": grammar})
        return [f"Score: {1 + round(4 * self._quality(p))}" for p in prompts]

    def as_llm(self) -> Any:
        from logic_rag.generators import GeneratorLLM

        return GeneratorLLM(self)


def test_prompts_put_the_shared_part_first_and_the_rubric_last() -> None:
    rubric = RUBRICS["likert5"]
    prompt = judge_prompt(rubric, " Why is the sky blue? ", "Rayleigh scattering.")
    assert prompt.startswith("Question: Why is the sky blue?\n\nAnswer to grade: Rayleigh")
    assert prompt.endswith(rubric.instruction)
    other = judge_prompt(RUBRICS["binary"], "Why is the sky blue?", "Rayleigh scattering.")
    shared = len(prompt) - len(rubric.instruction)
    assert other[:shared] == prompt[:shared]  # llama.cpp reuses this prefix
    with pytest.raises(ValueError, match="reference"):
        judge_prompt(RUBRICS["likert5-ref"], "q", "a")
    assert "Reference answer: r" in judge_prompt(RUBRICS["likert5-ref"], "q", "a", "r")


def test_score_from_logprobs_expected_greedy_and_failures() -> None:
    rubric = RUBRICS["likert3"]
    scored = score_from_logprobs(rubric, np.log([0.1, 0.2, 0.5]))
    assert scored.choice_mass == pytest.approx(0.8)
    assert scored.probs == pytest.approx({"0": 0.125, "1": 0.25, "2": 0.625})
    assert scored.score == pytest.approx(0.25 + 2 * 0.625) and scored.greedy == 2.0
    tiny = score_from_logprobs(rubric, np.log([MIN_CHOICE_MASS / 10] * 3))
    assert tiny.score is None and tiny.parse_failure  # counted, never scored 0
    assert score_from_logprobs(rubric, [-math.inf] * 3).score is None
    binary = score_from_logprobs(RUBRICS["binary"], np.log([0.6, 0.2]))
    assert binary.score == pytest.approx(0.75) and binary.greedy == 1.0


def test_choice_judge_scores_every_rubric_with_one_call_each() -> None:
    fake = FakeScorer()
    judge = ChoiceJudge(fake, ["binary", "likert3", "likert5", "likert5-ref"])
    good = judge.score("q?", "answer of quality 5")
    bad = judge.score("q?", "answer of quality 1")
    assert set(good) == {"binary", "likert3", "likert5"}  # no reference: -ref skipped
    for name in good:
        assert good[name].score > bad[name].score
    assert [c["choices"] for c in fake.calls[:3]] == [["Yes", "No"], ["0", "1", "2"], list("12345")]
    assert all(c["system"] for c in fake.calls)
    assert set(judge.score("q?", "quality 3", reference="ref")) == set(good) | {"likert5-ref"}
    with pytest.raises(ValueError, match="unknown rubric"):
        ChoiceJudge(fake, ["nope"])
    with pytest.raises(TypeError, match="choice_logprobs"):
        ChoiceJudge(object())


def test_parse_score_line_is_strict() -> None:
    assert parse_score_line("Score: 4") == 4
    assert parse_score_line("**Score:** 2\nbecause ...") == 2
    assert parse_score_line("Score: 3\nScore: 3") == 3  # repeated, consistent
    assert parse_score_line("Score: 3\nScore: 5") is None  # conflict = failure
    assert parse_score_line("4") is None and parse_score_line("I give it a 4") is None
    assert parse_score_line("Score: 7") is None and parse_score_line(None) is None


def test_grammar_judge_constrains_when_the_backend_can() -> None:
    fake = FakeScorer()
    judge = GrammarJudge(fake)
    assert judge.constrained
    result = judge.score("q?", "answer of quality 5")
    assert result == {"score": 5.0, "raw": "Score: 5"}
    assert fake.calls[-1]["grammar"] == 'root ::= "Score: " [1-5]'
    assert "Reply with exactly 'Score: N'" in fake.calls[-1]["prompts"][0]

    class Plain:
        def generate(self, prompts, *, max_tokens=256, temperature=0.0, system=None):
            return ["The answer is fine.\nScore: 3"]

    plain = GrammarJudge(Plain())
    assert not plain.constrained and plain.score("q", "a")["score"] == 3.0


def test_choice_judges_map_eval_rag_metrics_to_rubrics() -> None:
    fake = FakeScorer()
    judges = ChoiceJudges(fake, name="fake")
    correctness = judges.score("correctness", "q?", "quality 5", reference="gold")
    assert 4.0 < correctness.score <= 5.0
    assert json.loads(correctness.raw)["rubric"] == "likert5-ref"
    # Without a reference: the binary rubric chosen on ALCE's dev half, P(Yes) on 1-5.
    plain = judges.correctness("q?", "quality 5")
    raw = json.loads(plain.raw)
    assert raw["rubric"] == "binary"
    assert plain.score == pytest.approx(1.0 + 4.0 * raw["score"])
    assert 4.0 < plain.score <= 5.0
    assert judges.correctness("q?", "quality 1").score < 1.5
    relevancy = judges.answer_relevancy("q?", "quality 1")
    assert 0.0 <= relevancy.score < 0.5 and json.loads(relevancy.raw)["rubric"] == "relevancy"
    with pytest.raises(ValueError, match="unknown judge metric"):
        judges.score("faithfulness", "q", "a")


def test_eval_rag_uses_choice_judges_when_the_judge_gives_logprobs(tmp_path: Path) -> None:
    from logic_rag.evals.rag.judges import Judges
    from logic_rag.evals.rag.runner import RagEvalConfig, _build_context

    fake = FakeScorer()
    config = RagEvalConfig(dataset="eli5", out=tmp_path, generator="x", judge="x")
    assert RagEvalConfig("eli5", tmp_path).judge == "qwen2.5-coder-1.5b"  # the new default
    assert isinstance(_build_context(config, fake, None).judges, ChoiceJudges)
    forced = RagEvalConfig(
        dataset="eli5", out=tmp_path, generator="x", judge="x", judge_style="llamaindex"
    )
    assert isinstance(_build_context(forced, fake, None).judges, Judges)
    assert "judge_style" in forced.settings() and "judge_style" not in config.settings()
    with pytest.raises(ValueError, match="judge_style"):
        RagEvalConfig(dataset="eli5", out=tmp_path, judge_style="nope")


# --- judge set-up meta-eval -----------------------------------------------------------------


def _ratings_file(path: Path, n_questions: int = 12) -> Path:
    data: dict[str, Any] = {}
    for dataset in ("asqa", "eli5"):
        data[dataset] = {}
        for system in ("sysA.json", "sysB.json"):
            items: dict[str, Any] = {}
            for q in range(n_questions):
                utility = 1 + (q * 7 + len(system) + (dataset == "eli5")) % 5
                items[str(q)] = {
                    "id": f"{dataset}_{q}",
                    "question": f"question {q}?",
                    "output": f"an answer of quality {utility}",
                    "utility_score": utility,
                }
            items["overall_results"] = {"rougeLsum": 0.3}
            data[dataset][system] = items
    path.write_text(json.dumps(data))
    return path


def test_split_is_by_question_and_order_is_balanced(tmp_path: Path) -> None:
    from logic_rag.evals.rag.meta_eval import load_human_ratings

    ratings = load_human_ratings(_ratings_file(tmp_path / "h.json"))
    for r in ratings:  # both systems' answers to one question share a split
        twin = r.item_id.replace("sysA", "sysB") if "sysA" in r.item_id else r.item_id
        assert split_of(r.dataset, r.item_id) == split_of(r.dataset, twin)
    assert {split_of(r.dataset, r.item_id) for r in ratings} == {"dev", "test"}
    order = balanced_order(ratings)
    assert sorted(r.item_id for r in order) == sorted(r.item_id for r in ratings)
    first = order[:8]
    assert {r.dataset for r in first} == {"asqa", "eli5"} and {r.system for r in first} == {
        "sysA",
        "sysB",
    }


def test_summarise_setups_reports_cis_failures_and_the_dev_choice() -> None:
    records = []
    for i in range(40):
        utility = 1 + i % 5
        records.append(
            {
                "item_id": f"d/s/{i}",
                "dataset": "asqa" if i % 2 else "eli5",
                "split": "dev" if i < 20 else "test",
                "utility": float(utility),
                "choices": {
                    "good": {"score": utility + 0.1 * (i % 3), "greedy": utility},
                    "noisy": {"score": float((i * 7) % 5), "greedy": 1.0},
                    "flaky": {"score": None if i % 4 == 0 else float(utility), "greedy": None},
                },
            }
        )
    summary = summarise_setups(records, n_boot=200)
    good = summary["setups"]["good"]["dev"]["pooled"]
    assert good["spearman"] > 0.95 and good["spearman_ci"][0] <= good["spearman"] + 1e-9
    assert good["n"] == 20 and good["parse_failures"] == 0 and good["failure_rate"] == 0.0
    flaky = summary["setups"]["flaky"]["dev"]["pooled"]
    assert flaky["parse_failures"] == 5 and flaky["failure_rate"] == 0.25
    assert summary["setups"]["good-greedy"]["test"]["eli5"]["n"] == 10
    # flaky fails > 2% and is never chosen; good-greedy equals the utility exactly
    assert summary["chosen_on_dev"] == "good-greedy"


def test_meta_eval_judges_end_to_end_and_resumes(tmp_path: Path) -> None:
    ratings = _ratings_file(tmp_path / "h.json")
    fake = FakeScorer()
    out = tmp_path / "run"
    seen: list[int] = []
    results = meta_eval_judges(
        "fake",
        out,
        ratings_path=ratings,
        generator=fake,
        n_boot=50,
        limit=10,
        on_item=lambda i, r: seen.append(i),
    )
    meta = results["judge_setups_meta_eval"]
    assert meta["n"] == 20 and len(seen) == 20  # 10 per dataset
    assert set(meta["setups"]) == {
        "binary",
        "binary-greedy",
        "likert3",
        "likert3-greedy",
        "likert5",
        "likert5-greedy",
        "likert5-grammar",
    }
    assert meta["setups"]["likert5"]["all"]["pooled"]["spearman"] > 0.9
    assert meta["chosen_on_dev"] in meta["setups"]
    report = (out / "report.md").read_text()
    assert "chosen on dev" in report and "likert5-grammar" in report and "## test" in report
    assert json.loads((out / "results.json").read_text())["judge_setups_meta_eval"]["n"] == 20
    calls = len(fake.calls)
    meta_eval_judges("fake", out, ratings_path=ratings, generator=fake, n_boot=50, limit=10)
    assert len(fake.calls) == calls  # resumed from judge_items.jsonl: nothing re-scored


def test_rubric_scores_map_linearly_onto_the_metric_scale() -> None:
    from logic_rag.evals.rag.small_judges import to_metric_scale

    assert to_metric_scale(0.0, (0.0, 1.0), (1.0, 5.0)) == 1.0
    assert to_metric_scale(1.0, (0.0, 1.0), (1.0, 5.0)) == 5.0
    assert to_metric_scale(0.25, (0.0, 1.0), (1.0, 5.0)) == pytest.approx(2.0)
    assert to_metric_scale(3.5, (1.0, 5.0), (1.0, 5.0)) == 3.5
    assert to_metric_scale(None, (0.0, 1.0), (1.0, 5.0)) is None
