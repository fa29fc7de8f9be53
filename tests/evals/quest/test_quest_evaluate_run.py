"""evaluate_run end to end: key layout, averaging, per-template grouping, edge cases."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from logic_rag.evals.quest import (
    QuestQuery,
    evaluate_run,
    load_atom_sets,
    load_quest_queries,
    metric_names,
)

KEYS = [
    "P@1",
    "R@5",
    "R@20",
    "R@100",
    "R@1000",
    "MRecall@100",
    "set_P",
    "set_R",
    "set_F1",
    "violation_rate",
    "pairwise_order",
    "n",
]


def _slow_row(ranked: list[str], gold: set[str], cutoff: int) -> dict[str, float]:
    """Reference per-query metrics with plain loops (independent of the module)."""
    row = {"P@1": 1.0 if ranked and ranked[0] in gold else 0.0}
    for k in (5, 20, 100, 1000):
        row[f"R@{k}"] = sum(1 for d in ranked[:k] if d in gold) / len(gold)
    top = ranked[:100]
    if len(gold) <= 100:
        row["MRecall@100"] = float(all(g in top for g in gold))
    else:
        row["MRecall@100"] = float(len(top) == 100 and all(d in gold for d in top))
    pred = ranked[:cutoff]
    tp = sum(1 for d in pred if d in gold)
    if tp:
        p, r = tp / len(pred), tp / len(gold)
        row.update(set_P=p, set_R=r, set_F1=2 * p * r / (p + r))
    else:
        row.update(set_P=0.0, set_R=0.0, set_F1=0.0)
    return row


def test_real_limit_queries_against_reference(shared_data: Path) -> None:
    queries = load_quest_queries(shared_data / "limit" / "limit_quest_format_queries.jsonl")
    rng = random.Random(7)
    pool = sorted({d for q in queries for d in q.docs})
    run, ranked_by_qid = {}, {}
    for q in queries:
        gold = sorted(q.docs)
        picked = rng.sample(gold, k=rng.randint(0, len(gold)))
        noise = rng.sample(pool, k=rng.randint(0, 150))
        docs = list(dict.fromkeys(picked + noise))
        rng.shuffle(docs)
        docs = docs[: rng.randint(0, len(docs))]
        scores = sorted((float(rng.randint(0, 5)) for _ in docs), reverse=True)  # ties
        if docs or rng.random() < 0.5:  # some queries are absent from the run
            run[int(q.qid)] = list(zip(docs, scores, strict=True))  # int keys on purpose
        ranked_by_qid[q.qid] = docs
    result = evaluate_run(run, queries, set_cutoff=20)
    assert list(result["all"]) == KEYS == metric_names()
    assert result["all"]["n"] == 700 and result["all"]["violation_rate"] is None
    assert set(result["by_template"]) == {q.template for q in queries}
    by_t: dict[str, list[dict]] = {}
    for q in queries:
        ref = _slow_row(ranked_by_qid[q.qid], set(q.docs), 20)
        row = result["per_query"][q.qid]
        for key, value in ref.items():
            assert row[key] == pytest.approx(value, abs=1e-12), (q.qid, key)
        by_t.setdefault(q.template, []).append(ref)
    for template, refs in by_t.items():
        block = result["by_template"][template]
        assert list(block) == KEYS and block["n"] == len(refs) == 100
        for key in refs[0]:
            assert block[key] == pytest.approx(sum(r[key] for r in refs) / len(refs))


def test_generated_world_violation_rate(tmp_path: Path) -> None:
    atoms = [
        {"atom": "A", "domain": "t", "docs": ["a1", "a2", "ab1", "ab2", "abc"]},
        {"atom": "B", "domain": "t", "docs": ["ab1", "ab2", "abc", "b1"]},
        {"atom": "C", "domain": "t", "docs": ["abc", "c1"]},
    ]
    recs = [
        {
            "query": "A not B",
            "docs": ["a1", "a2"],
            "original_query": None,
            "metadata": {"template": "_ that are not _", "atoms": ["A", "B"]},
        },
        {
            "query": "A not B again",
            "docs": ["a1", "a2"],
            "metadata": {"template": "_ that are not _", "atoms": ["A", "B"]},
        },
        {
            "query": "A and B not C",
            "docs": ["ab1", "ab2"],
            "metadata": {"template": "_ that are also _ but not _", "atoms": ["A", "B", "C"]},
        },
        {
            "query": "A or B",
            "docs": ["a1", "a2", "ab1", "ab2", "abc", "b1"],
            "metadata": {"template": "_ or _", "atoms": ["A", "B"]},
        },
    ]
    (tmp_path / "atoms.jsonl").write_text("".join(json.dumps(a) + "\n" for a in atoms))
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    queries = load_quest_queries(tmp_path / "q.jsonl")
    atom_sets = load_atom_sets(tmp_path / "atoms.jsonl")

    def scored(docs):
        return [(d, float(len(docs) - i)) for i, d in enumerate(docs)]

    run = {
        "0": scored(["ab1", "ab2", "a1", "a2"]),  # excluded first: violation
        "1": scored(["a1", "a2", "ab1"]),  # excluded ab2 unretrieved (rank 4): fine
        "2": scored(["abc", "ab1", "x", "y", "ab2"]),  # gold avg 3.5 > excluded 1: violation
        "3": scored(["a1"]),
    }
    result = evaluate_run(run, queries, atom_sets)
    per = result["per_query"]
    assert [per[q]["violation_rate"] for q in "0123"] == [1.0, 0.0, 1.0, None]
    # excluded = A ∩ B = {ab1, ab2, abc}: ranks 3, then 4 and 4 (unretrieved: depth + 1)
    assert per["1"]["avg_rank_excluded"] == pytest.approx((3 + 4 + 4) / 3)
    assert per["2"]["avg_rank_gold"] == 3.5 and per["2"]["avg_rank_excluded"] == 1.0
    # gold a1 @3, a2 @4 sit above only the unretrieved abc (rank 5) of the three excluded
    assert per["0"]["pairwise_order"] == pytest.approx(1 / 3) and per["3"]["pairwise_order"] is None
    assert result["all"]["violation_rate"] == pytest.approx(2 / 3)
    assert result["by_template"]["_ that are not _"]["violation_rate"] == 0.5
    assert result["by_template"]["_ or _"]["violation_rate"] is None
    # query 1: both gold above all three excluded (1.0); query 2: abc above both gold (0.0)
    assert per["1"]["pairwise_order"] == 1.0 and per["2"]["pairwise_order"] == 0.0
    assert result["all"]["pairwise_order"] == pytest.approx((1 / 3 + 1.0 + 0.0) / 3)
    assert result["by_template"]["_ that are not _"]["pairwise_order"] == pytest.approx(2 / 3)
    assert result["by_template"]["_ or _"]["pairwise_order"] is None
    # without atom sets the metric does not apply anywhere
    without = evaluate_run(run, queries)["all"]
    assert without["violation_rate"] is None and without["pairwise_order"] is None


def _q(qid, docs, template=None):
    return QuestQuery(qid=qid, query=qid, docs=frozenset(docs), template=template)


def test_absent_queries_score_zero_and_unknown_template() -> None:
    queries = [_q("a", {"x"}), _q("b", {"y"}, "_")]
    result = evaluate_run({"a": [("x", 1.0)], "zzz": [("q", 1.0)]}, queries)
    assert result["per_query"]["b"]["R@5"] == 0.0 and result["per_query"]["b"]["P@1"] == 0.0
    assert result["per_query"]["a"]["set_F1"] == 1.0
    assert result["all"]["R@5"] == 0.5
    assert set(result["by_template"]) == {"unknown", "_"}


def test_set_cutoff_none_uses_whole_ranking() -> None:
    ranking = [(f"d{i}", float(-i)) for i in range(30)]
    queries = [_q("a", {"d0", "d25"})]
    assert evaluate_run({"a": ranking}, queries)["all"]["set_R"] == 0.5
    assert evaluate_run({"a": ranking}, queries, set_cutoff=None)["all"]["set_R"] == 1.0


def test_input_errors() -> None:
    queries = [_q("a", {"x"})]
    with pytest.raises(ValueError, match="none of the run's query ids"):
        evaluate_run({"other": [("x", 1.0)]}, queries)
    with pytest.raises(ValueError, match="empty gold set"):
        evaluate_run({"a": [("x", 1.0)]}, queries + [_q("e", set())])
    skipped = evaluate_run({"a": [("x", 1.0)]}, queries + [_q("e", set())], skip_empty_gold=True)
    assert skipped["all"]["n"] == 1 and "e" not in skipped["per_query"]
    with pytest.raises(ValueError, match="appears twice"):
        evaluate_run({"a": []}, queries + queries)
    with pytest.raises(ValueError, match="two entries"):
        evaluate_run({1: [], "1": []}, [_q("1", {"x"})])
    with pytest.raises(ValueError, match="not sorted"):
        evaluate_run({"a": [("y", 0.0), ("x", 1.0)]}, queries)
    with pytest.raises(ValueError, match="set_cutoff"):
        evaluate_run({}, queries, set_cutoff=0)
    empty = evaluate_run({}, [])
    assert empty["all"]["n"] == 0 and empty["all"]["R@20"] is None and empty["by_template"] == {}
