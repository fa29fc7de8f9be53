"""Issue 32, case 5: ``eval quest`` says when the metrics cannot be fair.

Gold pages missing from the corpus used to be scored as misses without a word, and a
query given twice counted twice without a word. Both are now warned about on stderr and
recorded in ``results.json``; ``--missing-gold drop|keep`` decides what recall uses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_rag.evals.quest.checks import check_queries
from logic_rag.evals.quest.data import QuestQuery

DOCS = [
    {"id": "p1", "title": "Red apple", "text": "The red apple is a sweet fruit."},
    {"id": "p2", "title": "Green pear", "text": "The green pear is a juicy fruit."},
    {"id": "p3", "title": "Blue whale", "text": "The blue whale is the largest animal."},
    {"id": "p4", "title": "Grey seal", "text": "The grey seal lives on rocky coasts."},
]
QUERIES = [
    {"id": "q1", "query": "fruits", "docs": ["p1", "p2", "gone-1"]},
    {"id": "q2", "query": "sea animals", "docs": ["p3", "p4"]},
    {"id": "q3", "query": "Sea  animals", "docs": ["p3", "p4"]},  # q2 again
    {"id": "q4", "query": "extinct birds", "docs": ["gone-2"]},
]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _q(qid: str, text: str, docs: list[str]) -> QuestQuery:
    return QuestQuery(qid=qid, query=text, docs=frozenset(docs))


def test_d32_05_check_queries_counts_and_applies_the_policy():
    queries = [_q(r["id"], r["query"], r["docs"]) for r in QUERIES]
    kept, checks = check_queries(queries, {"p1", "p2", "p3", "p4"}, "keep")
    assert kept == queries
    record = checks.record()
    assert (record["gold_missing"], record["gold_pages"]) == (2, 8)
    assert record["queries_with_missing_gold"] == 2 and record["duplicate_queries"] == 1
    assert record["duplicate_groups"] == [["q2", "q3"]]
    dropped, checks = check_queries(queries, {"p1", "p2", "p3", "p4"}, "drop")
    assert [q.qid for q in dropped] == ["q1", "q2", "q3"]
    assert dropped[0].docs == frozenset({"p1", "p2"})
    assert checks.queries_dropped == 1
    assert any("2 of 8 gold pages" in line for line in checks.warnings())
    with pytest.raises(ValueError, match="--missing-gold"):
        check_queries(queries, set(), "ignore")


@pytest.mark.parametrize("policy", ["keep", "drop"])
def test_d32_05_eval_quest_warns_and_records(tmp_path, capsys, policy):
    from logic_rag.evals.quest.runner import run_eval_quest

    docs = _write(tmp_path / "docs.jsonl", DOCS)
    queries = _write(tmp_path / "queries.jsonl", QUERIES)
    out = tmp_path / f"out-{policy}"
    results = run_eval_quest(
        docs=docs,
        queries=queries,
        out=out,
        model="minilm",
        strategies=("vanilla",),
        missing_gold=policy,
    )
    err = capsys.readouterr().err
    assert "2 of 8 gold pages" in err and "are not in the corpus" in err
    assert "1 queries repeat the text of an earlier one" in err
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    checks = saved["extra"]["query_checks"]
    assert checks["policy"] == policy and checks["gold_missing"] == 2
    assert checks["duplicate_groups"] == [["q2", "q3"]]
    recall = results["vanilla"]["all"]["R@5"]
    if policy == "keep":  # missing pages stay misses: q1 at most 2/3, q4 0
        assert results["vanilla"]["all"]["n"] == 4 and recall < 0.75
    else:  # scored on what the corpus holds; q4 has nothing left and is skipped
        assert results["vanilla"]["all"]["n"] == 3 and recall == pytest.approx(1.0)
