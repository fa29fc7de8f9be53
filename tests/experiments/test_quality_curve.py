"""experiments/quality_curve.py: the saved verdicts make a rerun free, the runs go cheapest
first, and each pipeline's calls and R@k are measured on real pages (MiniLM, a test-double
LLM whose answers are known)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.quality_curve import Run, SavedVerdicts, main, measure, plan_runs
from tests.verifiers.test_llm import FakeGenerator

QUERY = "novels that are not science fiction novels"


def test_saved_verdicts_are_written_and_prefill_the_next_cache(tmp_path):
    path = tmp_path / "verdicts.json"
    first = SavedVerdicts(path, "llm:fake:1")
    asked = []

    def compute(missing):
        asked.append(list(missing))
        return np.asarray([float(i) + 0.5 for i in missing])

    got = first.get_or_compute("llm:fake:1", [("a", "d1"), ("b", "d2")], compute)
    assert got.tolist() == [0.5, 1.5] and asked == [[0, 1]]
    assert json.loads(path.read_text())["scores"] == [["a", "d1", 0.5], ["b", "d2", 1.5]]

    second = SavedVerdicts(path, "llm:fake:1")
    assert second.lookups() == 0  # the pre-fill is not counted as asking
    again = second.get_or_compute("llm:fake:1", [("b", "d2"), ("c", "d3")], compute)
    assert again.tolist() == [1.5, 1.5] and asked[-1] == [1]  # only the new pair computed
    assert second.lookups() == 2
    assert len(json.loads(path.read_text())["scores"]) == 3


def test_verdicts_of_another_verifier_are_refused(tmp_path):
    path = tmp_path / "verdicts.json"
    SavedVerdicts(path, "llm:fake:1").get_or_compute(
        "llm:fake:1", [("a", "d")], lambda m: np.zeros(len(m))
    )
    with pytest.raises(ValueError, match="another verifier"):
        SavedVerdicts(path, "llm:other:2")


def test_runs_go_cheapest_first_and_peers_follow_their_quality_run():
    runs = plan_runs([5, 20], [40, None, 10], all_pairs_top=40)
    names = [r.strategy for r in runs]
    assert names[:4] == ["vanilla", "vanilla", "rerank", "rerank"]
    budgets = [r.budget for r in runs if r.strategy == "quality"]
    assert budgets == [10, 40, 10, 40, None, None]  # finite budgets before the unbounded
    verify = names.index("verify")
    assert names[verify - 1] == "llm-rerank" and "quality" in names[verify:]
    peers = [r.equal_to for r in runs if r.strategy == "llm-rerank"]
    quality = [r.name for r in runs if r.strategy == "quality"]
    assert sorted(peers) == sorted(quality)


def test_bad_settings_are_one_line_and_exit_2(tmp_path, capsys):
    assert main(["--out", str(tmp_path / "run"), "--budgets", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("quality_curve: error:") and "\n" not in err


def test_measure_counts_calls_and_a_rerun_from_the_saved_file_asks_nothing(
    quest_novel_pages, minilm, tmp_path
):
    from logic_rag import Document
    from logic_rag.evals.quest.data import QuestQuery
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.verifiers.llm import LLMVerifier

    docs = [Document(id=p["title"], title=p["title"], text=p["text"]) for p in quest_novel_pages]
    retriever = LogicRetriever.build(docs, model=minilm)
    gold = frozenset(p["title"] for p in quest_novel_pages if "science fiction" not in p["text"])
    queries = [QuestQuery("q1", QUERY, gold or frozenset({docs[0].id}), template="_ not _")]

    def verifier():
        fingerprint = LLMVerifier(generator=FakeGenerator()).fingerprint()
        cache = SavedVerdicts(tmp_path / "verdicts.json", fingerprint)
        return LLMVerifier(generator=FakeGenerator(), cache=cache)

    llm = verifier()
    quality = measure(retriever, llm, queries, Run("quality", 3, budget=None), log=lambda _: None)
    row = quality["per_query"]["q1"]
    # ten pages, one positive and one negated atom: quality puts NOT atoms to the LLM too
    assert row["all_pairs_calls"] == 20
    # The fake says P(yes) = 0.5 where a page holds none of the atom's words, as these pages
    # do for both atoms: every verdict stays undecided, so no hit, hence no top 3, is
    # certified (the certificate covers every constraint, not only the order).
    assert 0 < row["calls"] <= 20 and row["certified"] is False
    assert row["new_checks"] == row["calls"]
    assert 0.0 <= quality["R@3"] <= 1.0 and set(quality["by_template"]) == {"_ not _"}

    peer = Run("llm-rerank", 3, top=4, equal_to="quality")
    assert measure(retriever, llm, queries, peer, log=lambda _: None)["calls_mean"] == 4
    every = measure(retriever, llm, queries, Run("verify", 3, top=10), log=lambda _: None)
    assert every["calls_mean"] == 10  # verify reports no info: its cache lookups count

    fresh = verifier()  # a rerun: a new process would start from the file the same way
    again = measure(retriever, fresh, queries, Run("quality", 3, budget=None), log=lambda _: None)
    assert again["per_query"]["q1"]["new_checks"] == 0
    assert again["per_query"]["q1"]["calls"] == row["calls"]
    assert again["R@3"] == quality["R@3"]
