"""ASQA end to end: ALCE's metrics by hand, ALCE's prompt, the default corpus, the report."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from logic_rag.evals.rag.datasets import load_rag_dataset
from logic_rag.evals.rag.metrics import answer_words, exact_match_recall, rouge_lsum
from logic_rag.evals.rag.prompts import build_alce_prompt, load_alce_prompt
from logic_rag.evals.rag.runner import RagEvalConfig, run_rag_eval


def _demos(shared_data: Path) -> list[dict[str, Any]]:
    spec = json.loads((shared_data / "rag/alce/asqa_default.json").read_text(encoding="utf-8"))
    return spec["demos"]


# ------------------------------------------------------------------ metrics by hand
def test_str_em_by_hand_on_alce_demo_answers(shared_data: Path) -> None:
    rain, independence, field_goal, galen = (d["answer"] for d in _demos(shared_data))
    # both actors named: 2 of 2 groups; an alternative in a group is enough
    assert exact_match_recall(galen, [["Wright King"], ["Roddy McDowall", "McDowall"]]) == 1.0
    assert exact_match_recall(galen, [["Wright King"], ["Kim Hunter"]]) == 0.5
    assert exact_match_recall(
        field_goal, [["Matt Prater"], ["Ove Johansson"], ["Tom Dempsey"]]
    ) == (pytest.approx(2 / 3))
    # normalisation: punctuation and articles go ("Mawsynram, India" -> "mawsynram india",
    # "12,717" -> "12717"), accents stay ("Lloro" is not "Lloró")
    assert exact_match_recall(rain, [["Lloro"], ["Mawsynram, India"]]) == 0.5
    assert exact_match_recall(rain, [["12,717 mm"]]) == 1.0
    assert exact_match_recall(independence, [["The Treaty of Paris"], ["July 4, 1776"]]) == 1.0
    assert exact_match_recall(independence, [["1775"]]) == 0.0


def test_rouge_lsum_by_hand_on_an_alce_demo_answer(shared_data: Path) -> None:
    """Demo 4's answer has two sentences of 14 and 15 tokens once citations go (29 in all)."""
    galen = _demos(shared_data)[3]["answer"]
    # reference inside sentence 2: union LCS 6, recall 6/6, precision 6/29, F1 = 12/35
    whole = "Galen was played by Roddy McDowall."
    assert rouge_lsum(galen, [whole]) == pytest.approx(12 / 35)
    # "wright king played galen in the film" (7 tokens): the LCS with sentence 1 is
    # "in the film" (3), with sentence 2 "in the" (2); union 3: R 3/7, P 3/29, F1 = 1/6
    partial = "Wright King played Galen in the film."
    assert rouge_lsum(galen, [partial]) == pytest.approx(1 / 6)
    # the better of two references counts, as ALCE scores against both long answers
    assert rouge_lsum(galen, [partial, whole]) == pytest.approx(12 / 35)
    assert answer_words(galen) == 29
    assert rouge_lsum("", [whole]) == 0.0


# ------------------------------------------------------------------ ALCE's prompt
def test_alce_prompt_layout(shared_data: Path) -> None:
    spec = load_alce_prompt("asqa")
    passages = [SimpleNamespace(title="Page", text="Some   text\nhere.")]
    prompt = build_alce_prompt("Who won?", passages, spec, shots=2, demo_docs=1)
    blocks = prompt.split(spec["demo_sep"])
    assert len(blocks) == 3
    assert all(b.startswith(spec["instruction"]) for b in blocks)
    first = blocks[0]
    assert "Question: Which is the most rainy place on earth?" in first
    assert first.count("Document [") == 1 and "Document [1](Title: Cherrapunji): " in first
    assert first.rstrip().endswith("July 1861 [1].")  # the demo's answer, citations kept
    assert blocks[2].endswith(
        "Question: Who won?\n\nDocument [1](Title: Page): Some text here.\n\nAnswer:"
    )
    bare = build_alce_prompt("Who won?", [], spec, shots=0)
    assert bare == f"{spec['instruction']}\n\nQuestion: Who won?\n\nAnswer:"
    with pytest.raises(ValueError, match="4 demos, not 5"):
        build_alce_prompt("q", passages, spec, shots=5)
    with pytest.raises(ValueError, match="no prompt for 'nq'"):
        load_alce_prompt("nq")


def test_alce_prompt_file_missing_says_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGIC_RAG_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="asqa_default.json"):
        load_alce_prompt("asqa")


# ------------------------------------------------------------------ the run, with doubles
class GoldFirst:
    """Retrieves an example's own passages first, then other questions' (a good retriever)."""

    def __init__(self, examples: list[Any], *, own: bool = True) -> None:
        self.by_question = {ex.question: list(ex.documents) for ex in examples}
        self.others = [d for ex in examples for d in ex.documents]
        self.own = own

    def __len__(self) -> int:
        return len(self.others)

    def search(self, query: str, k: int) -> list[Any]:
        own = self.by_question[query] if self.own else []
        rest = [d for d in self.others if d not in own]
        return [
            SimpleNamespace(id=d.id, title=d.title, text=d.text, score=1.0, metadata=d.metadata)
            for d in (own + rest)[:k]
        ]


def test_asqa_run_with_alce_prompt_reports_retrieval_and_corpus(
    tmp_path: Path, shared_data: Path, fake_generator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = shared_data / "rag/asqa/asqa_dev500.jsonl"
    examples = load_rag_dataset("asqa", path, limit=3)
    gen = fake_generator(lambda prompt: "Ali Daei scored 109 goals [2].")
    config = RagEvalConfig(
        dataset="asqa",
        out=tmp_path / "run",
        data_path=str(path),
        limit=3,
        judges=(),
        prompt="alce",
        shots=1,
        demo_docs=2,
        compare=("other@vanilla",),
    )
    results = run_rag_eval(
        config,
        generator=gen,
        retriever=GoldFirst(examples),
        compare_retriever=GoldFirst(examples, own=False),
    )
    assert all(p.startswith("Instruction: Write an accurate") for p in gen.calls)
    assert all(p.endswith("Answer:") for p in gen.calls)
    items = [json.loads(x) for x in (tmp_path / "run/items.jsonl").read_text().splitlines()]
    good = GoldFirst(examples)
    for item, ex in zip(items, examples, strict=True):
        m = item["metrics"]
        n_own = len(ex.documents)
        assert n_own  # the first three questions all ship Wikipedia text
        assert m["gold_passage_recall"] == pytest.approx(min(n_own, 5) / n_own)
        shown = "\n".join(h.text for h in good.search(ex.question, 5))
        assert m["str_em_passages"] == pytest.approx(exact_match_recall(shown, ex.short_answers))
        said = exact_match_recall("Ali Daei scored 109 goals", ex.short_answers)
        assert m["str_em"] == pytest.approx(said)
        assert m["answer_words"] == 5
    corpus = results["corpus"]
    assert corpus["documents"] == 2103  # every question's text, deduplicated
    assert corpus["gold_of_evaluated_questions"] == len(
        {(d.title, d.text) for ex in examples for d in ex.documents}
    )
    assert "smaller and easier" in corpus["note"]
    other = results["compare"]["paired"]["gold_passage_recall"]
    assert other["diff"] < 0  # the retriever that skips the gold finds less of it
    report = (tmp_path / "run/report.md").read_text(encoding="utf-8")
    assert "## Corpus" in report and "2103 documents" in report
    assert "| significant |" in report
    assert (tmp_path / "run/report.html").read_text(encoding="utf-8").count("<h2>Corpus</h2>") == 1
    # the prompt settings are part of what a resumed run must match
    settings = json.loads((tmp_path / "run/run_settings.json").read_text(encoding="utf-8"))
    assert settings["prompt"] == "alce" and settings["shots"] == 1


# ------------------------------------------------------------------ real models, real data
@pytest.mark.slow
def test_cli_end_to_end_real_models_on_asqa_dev500(tmp_path: Path, shared_data: Path) -> None:
    """`logic-rag eval rag --dataset asqa` with MiniLM and SmolLM2 (ALCE prompt, 1 shot),
    then the same command again: it resumes and generates nothing."""
    import subprocess
    import sys

    out = tmp_path / "run"
    argv = [
        sys.executable,
        "-m",
        "logic_rag",
        "eval",
        "rag",
        "--dataset",
        "asqa",
        "--data-path",
        str(shared_data / "rag/asqa/asqa_dev500.jsonl"),
        "--limit",
        "2",
        "--retriever",
        "minilm",
        "--generator",
        "smollm2-135m",
        "--judge",
        "smollm2-135m",
        "--prompt",
        "alce",
        "--shots",
        "1",
        "--max-tokens",
        "32",
        "--out",
        str(out),
    ]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=1200)
    assert first.returncode == 0, first.stderr[-2000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["n"] == 2 and results["corpus"]["documents"] == 2103
    for name in ("str_em", "rougeL", "str_em_passages", "gold_passage_recall", "answer_words"):
        assert results["metrics"][name]["count"] == 2
    for name in ("correctness", "answer_relevancy"):
        block = results["metrics"][name]
        assert block["count"] + block["parse_failures"] == 2
    items = (out / "items.jsonl").read_text(encoding="utf-8")
    again = subprocess.run(argv, capture_output=True, text=True, timeout=1200)
    assert again.returncode == 0, again.stderr[-2000:]
    assert (out / "items.jsonl").read_text(encoding="utf-8") == items  # nothing redone
    assert "str_em" in (out / "report.html").read_text(encoding="utf-8")
