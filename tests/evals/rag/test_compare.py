from __future__ import annotations

import json
from dataclasses import asdict
from types import SimpleNamespace

import pytest

from logic_rag.evals.rag import runner as runner_mod
from logic_rag.evals.rag.compare import paired_metric_differences, pairwise_preferences
from logic_rag.evals.rag.judges import Judges
from logic_rag.evals.rag.runner import RagEvalConfig, run_rag_eval


def _records(values, metric="correctness", answers=None):
    return [
        {
            "id": f"q{i}",
            "question": f"question {i}",
            "answer": (answers or {}).get(i, f"ans {i}"),
            "metrics": {metric: v},
        }
        for i, v in enumerate(values)
    ]


def test_paired_differences_use_paired_bootstrap_on_complete_pairs():
    from logic_rag.evals.rag.bootstrap import paired_bootstrap

    a = _records([5.0, 4.0, None, 3.0, 4.0, 2.0])
    b = _records([3.0, 4.0, 2.0, None, 2.0, 1.0])
    out = paired_metric_differences(a, b, n_boot=500, seed=3)
    expected = paired_bootstrap(
        [5.0, 4.0, 4.0, 2.0], [3.0, 4.0, 2.0, 1.0], n_boot=500, confidence=0.95, seed=3
    )  # the complete pairs only
    got = out["correctness"]
    for key, value in asdict(expected).items():
        if key != "n_dropped":
            assert got[key] == pytest.approx(value), key
    assert got["n"] == 4
    assert got["diff"] == pytest.approx(-1.25)  # B - A
    assert got["n_dropped"] == 2


def test_paired_differences_with_no_pairs():
    out = paired_metric_differences(_records([None, 3.0]), _records([2.0, None]))
    assert out["correctness"] == {"n": 0, "n_dropped": 2, "diff": None}


def test_pairwise_preferences_tally_and_cache(tmp_path, canned_llm):
    # the judge prefers whichever answer mentions "good"
    def respond(prompt):
        a = prompt[prompt.index("Assistant A’s Answer]") : prompt.index("Assistant B’s Answer]")]
        b = prompt[prompt.index("Assistant B’s Answer]") :]
        if "good" in a and "good" not in b:
            return "[[A]]"
        if "good" in b and "good" not in a:
            return "[[B]]"
        return "[[C]]"

    a = _records([1, 1, 1, 1], answers={0: "good", 1: "bad", 2: "good", 3: "meh"})
    b = _records([1, 1, 1, 1], answers={0: "bad", 1: "good", 2: "good too", 3: "meh"})
    llm = canned_llm(respond)
    out = pairwise_preferences(a, b, Judges(llm), cache_path=tmp_path / "pw.jsonl")
    assert out["counts"] == {"a": 1, "b": 1, "tie": 2, "inconsistent": 0, "failed": 0}
    assert out["win_rate_a"] == pytest.approx(0.5)
    assert out["verdicts"] == {"q0": "a", "q1": "b", "q2": "tie", "q3": "tie"}
    assert len(llm.prompts) == 8  # both orders per item
    llm2 = canned_llm(respond)
    again = pairwise_preferences(a, b, Judges(llm2), cache_path=tmp_path / "pw.jsonl")
    assert again["verdicts"] == out["verdicts"] and llm2.prompts == []


def test_pairwise_failures_are_not_wins(canned_llm):
    a, b = _records([1, 1]), _records([1, 1])
    out = pairwise_preferences(a, b, Judges(canned_llm(["garbage"])))
    assert out["counts"]["failed"] == 2 and out["win_rate_a"] is None


class Retr:
    def __init__(self, word):
        self.word = word

    def __len__(self):
        return 10

    def search(self, query, k):
        return [
            SimpleNamespace(id=f"{self.word}{j}", title="", text=self.word, score=1.0)
            for j in range(k)
        ]


def _questions(monkeypatch, n):
    """``n`` ELI5-like questions whose reference is "the good answer"; no exclusion filter."""
    examples = [
        SimpleNamespace(
            id=f"q{i}", question=f"question {i}", answers=["the good answer"], short_answers=[]
        )
        for i in range(n)
    ]
    monkeypatch.setattr(runner_mod, "_load_examples", lambda config: examples)
    monkeypatch.setattr(runner_mod, "_exclusion_filter", lambda: None)


def test_run_with_compare_end_to_end(tmp_path, monkeypatch, fake_generator, canned_llm):
    _questions(monkeypatch, 6)

    def answer(prompt):  # better passages -> better answer
        return "the good answer" if "GOODDOC" in prompt else "something else"

    def judge(prompt):
        if "[[A]]" in prompt:  # pairwise
            a = prompt[
                prompt.index("Assistant A’s Answer]") : prompt.index("Assistant B’s Answer]")
            ]
            return "[[A]]" if "good" in a else "[[B]]"
        if "[RESULT]" in prompt:
            return "[RESULT] 2"
        return (
            "5\nright"
            if "the good answer\n" in prompt.split("## Generated Answer")[-1]
            else "2\nwrong"
        )

    config = RagEvalConfig(
        dataset="eli5", out=tmp_path / "run", limit=6, compare="other", n_boot=300
    )
    results = run_rag_eval(
        config,
        generator=fake_generator(answer),
        judge_llm=canned_llm(judge),
        retriever=Retr("GOODDOC"),
        compare_retriever=Retr("BADDOC"),
    )
    compare = results["compare"]
    assert compare["a"] == "minilm@vanilla" and compare["b"] == "other@vanilla"
    assert compare["paired"]["correctness"]["diff"] == pytest.approx(-3.0)  # B - A
    assert compare["paired"]["correctness"]["n"] == 6
    assert compare["paired"]["rougeL"]["diff"] < 0
    assert compare["pairwise"]["counts"]["a"] == 6
    assert (tmp_path / "run" / "compare" / "items.jsonl").exists()
    assert (
        json.loads((tmp_path / "run" / "results.json").read_text())["compare"]["b"]
        == "other@vanilla"
    )
    html = (tmp_path / "run" / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 4  # 3 histograms + differences plot
    assert "Paired comparison" in (tmp_path / "run" / "report.md").read_text()


def test_three_retrievers_all_pairs_and_reuse_of_identical_prompts(
    tmp_path, monkeypatch, fake_generator, canned_llm
):
    _questions(monkeypatch, 5)
    generator = fake_generator(lambda p: "the good answer" if "GOODDOC" in p else "something else")

    def judge(prompt):
        if "[[A]]" in prompt:
            return "[[C]]"
        if "[RESULT]" in prompt:
            return "[RESULT] 2"
        good = "the good answer\n" in prompt.split("## Generated Answer")[-1]
        return "5\nright" if good else "2\nwrong"

    llm = canned_llm(judge)
    config = RagEvalConfig(
        dataset="eli5",
        out=tmp_path / "run",
        limit=5,
        compare=("twin@vanilla", "bad@rerank"),
        n_boot=200,
        judge_style="llamaindex",
    )
    results = run_rag_eval(
        config,
        generator=generator,
        judge_llm=llm,
        retriever=Retr("GOODDOC"),
        compare_retriever=[Retr("GOODDOC"), Retr("BADDOC")],  # "twin" = same passages
    )
    # 5 prompts for A, none for the twin (same prompts), 5 for "bad"
    assert len(generator.calls) == 10
    runs = {r["label"]: r for r in results["runs"]}
    assert list(runs) == ["minilm@vanilla", "twin@vanilla", "bad@rerank"]
    assert [runs[k]["reused"] for k in runs] == [0, 5, 0]
    twin = [json.loads(x) for x in (tmp_path / "run" / "compare" / "items.jsonl").open()]
    first = [json.loads(x) for x in (tmp_path / "run" / "items.jsonl").open()]
    assert all(t["reused_from"] == "minilm@vanilla" for t in twin)
    assert [t["answer"] for t in twin] == [f["answer"] for f in first]
    assert [t["metrics"] for t in twin] == [f["metrics"] for f in first]
    assert (tmp_path / "run" / "compare-2" / "items.jsonl").exists()
    pairs = [(c["a"], c["b"]) for c in results["comparisons"]]
    assert pairs == [
        ("minilm@vanilla", "twin@vanilla"),
        ("minilm@vanilla", "bad@rerank"),
        ("twin@vanilla", "bad@rerank"),
    ]
    assert results["compare"] == results["comparisons"][0]
    by_pair = {(c["a"], c["b"]): c for c in results["comparisons"]}
    assert by_pair[("minilm@vanilla", "twin@vanilla")]["paired"]["correctness"]["diff"] == 0
    assert by_pair[("twin@vanilla", "bad@rerank")]["paired"]["correctness"][
        "diff"
    ] == pytest.approx(-3.0)
    # the LLM pairwise judge runs against --retriever only
    assert ["pairwise" in c for c in results["comparisons"]] == [True, True, False]
    md = (tmp_path / "run" / "report.md").read_text()
    assert "## Retrievers" in md and md.count("## Paired comparison") == 3
    # resuming answers nothing again
    generator.calls.clear()
    again = run_rag_eval(
        config,
        generator=generator,
        judge_llm=llm,
        retriever=Retr("GOODDOC"),
        compare_retriever=[Retr("GOODDOC"), Retr("BADDOC")],
    )
    assert generator.calls == []
    assert [c["paired"] for c in again["comparisons"]] == [
        c["paired"] for c in results["comparisons"]
    ]


def test_no_pairwise_skips_the_llm_judge(tmp_path, monkeypatch, fake_generator, canned_llm):
    examples = [SimpleNamespace(id="q0", question="q", answers=["a"], short_answers=[])]
    monkeypatch.setattr(runner_mod, "_load_examples", lambda config: examples)
    monkeypatch.setattr(runner_mod, "_exclusion_filter", lambda: None)
    prompts = []

    def judge(prompt):
        prompts.append(prompt)
        return "[RESULT] 2" if "[RESULT]" in prompt else "4\nok"

    config = RagEvalConfig(
        dataset="eli5",
        out=tmp_path / "run",
        limit=1,
        compare="other",
        pairwise=False,
        judge_style="llamaindex",
    )
    results = run_rag_eval(
        config,
        generator=fake_generator("x"),
        judge_llm=canned_llm(judge),
        retriever=Retr("A"),
        compare_retriever=Retr("B"),
    )
    assert "pairwise" not in results["compare"]
    assert not any("[[A]]" in p for p in prompts)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("minilm", ("minilm", "vanilla")),
        ("embeddinggemma-300m@rerank", ("embeddinggemma-300m", "rerank")),
        ("runs/a@b/model", ("runs/a@b/model", "vanilla")),
    ],
)
def test_split_retriever_spec(spec, expected):
    assert runner_mod.split_retriever_spec(spec, "vanilla") == expected


def test_bad_compare_specs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown strategy 'rerankk'"):
        RagEvalConfig(dataset="eli5", out=tmp_path, compare="minilm@rerankk")
    with pytest.raises(ValueError, match="given twice"):
        RagEvalConfig(dataset="eli5", out=tmp_path, compare=("minilm@vanilla",))
    with pytest.raises(ValueError, match="3 compare retrievers given for 1"):
        runner_mod._per_compare([1, 2, 3], 1)
