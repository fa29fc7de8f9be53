"""The README's main job on real text: WordNet glosses, exact answer sets, verdicts shown.

The demo's WordNet 3.0 glosses ship with the package (no system package needed); the test
that they match what the build script makes from the full WordNet reads the shared data
(``$LOGIC_RAG_DATA/wordnet/data.noun.gz``) and skips without it.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from logic_rag.evals.demo import DEMO_METRICS, run_demo, verdict_mark
from logic_rag.evals.quest import load_results
from logic_rag.evals.wordnet_demo import (
    PACKAGED_WORDNET,
    build_demo_subset,
    load_wordnet_demo,
    plural,
)

#: Birds of prey and dogs: ~270 glosses, enough for three showcase queries.
SMALL_ROOTS = (("01604330", "bird of prey"), ("02084071", "dog"))


def test_verdict_marks_accept_bools_and_unsure() -> None:
    assert [verdict_mark(v) for v in (True, False, None)] == ["✓", "✗", "?"]
    assert verdict_mark(np.bool_(True)) == "✓" and verdict_mark(np.bool_(False)) == "✗"


def test_plural_names() -> None:
    assert plural("bird of prey") == "birds of prey"
    assert plural("berry") == "berries"
    assert plural("hound") == "hounds"
    assert plural("finch") == "finches"
    assert plural("goose", {"goose": "geese"}) == "geese"


def test_packaged_glosses_carry_wordnets_notice() -> None:
    text = gzip.decompress(PACKAGED_WORDNET.read_bytes()).decode("utf-8")
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in text
    notice = (PACKAGED_WORDNET.parent / "WORDNET_LICENSE").read_text(encoding="utf-8")
    assert "Permission to use, copy, modify and distribute" in notice
    assert len(text) < 1_000_000 and PACKAGED_WORDNET.stat().st_size < 300_000


def test_packaged_glosses_match_what_the_script_builds(shared_data: Path) -> None:
    """``python -m logic_rag.evals.wordnet_demo`` rebuilds the shipped file from the full
    WordNet 3.0 of the shared data; the shipped one must be what it makes."""
    source = shared_data / "wordnet"
    if not (source / "data.noun.gz").is_file():
        pytest.skip(f"WordNet 3.0 not in the shared data ({source}/data.noun.gz)")
    shipped = gzip.decompress(PACKAGED_WORDNET.read_bytes()).decode("utf-8")
    assert shipped == build_demo_subset(source), (
        "the packaged glosses are stale: run `python -m logic_rag.evals.wordnet_demo`"
    )


def test_answer_sets_are_wordnet_closures() -> None:
    data = load_wordnet_demo(per_template=5)
    queries = {q.query: q for q in data.queries}
    shown = {q.query: q for q in data.showcase}
    assert len(shown) >= 5 and "birds that are not birds of prey" in shown
    # Small answer sets are measured too; "birds that are not birds of prey" (~790) is not.
    assert "birds that are not birds of prey" not in queries
    assert all(q.query in queries for q in data.showcase if len(q.docs) <= 100)
    birds = shown["birds that are not birds of prey"].docs
    assert birds == data.categories["birds"] - data.categories["birds of prey"]
    ids = {d.id for d in data.documents}
    assert 2000 < len(ids) < 4000
    not_hawks = queries["birds of prey that are not hawks"]
    hawks, raptors = data.categories["hawks"], data.categories["birds of prey"]
    assert not_hawks.docs == raptors - hawks
    assert any(d.startswith("vulture.") for d in not_hawks.docs)
    assert any(d.startswith("goshawk.") for d in hawks) and not not_hawks.docs & hawks
    # Every answer set lies in the corpus; documents read as definitions (no taxa).
    assert all(q.docs and q.docs <= ids for q in data.queries)
    assert not any(d.title.startswith(("genus ", "family ", "order ")) for d in data.documents)
    glosses = {d.id: d.text for d in data.documents}
    assert "bird of prey" in next(t for i, t in glosses.items() if i.startswith("hawk."))
    # Each QUEST template is sampled.
    assert len({q.template for q in data.queries}) == 5


def test_demo_shows_real_text_with_verdicts(tmp_path: Path, capsys) -> None:
    results = run_demo(tmp_path, model="minilm", roots=SMALL_ROOTS, per_template=3, show=3)
    assert set(results) == {"vanilla", "rerank"}
    for strategy in results:
        assert load_results(tmp_path / strategy)["strategy"] == strategy
    out = capsys.readouterr().out
    assert '"birds of prey that are not hawks"' in out
    assert "bird of prey" in out and "plain dense retrieval (vanilla)" in out
    assert "NOT hawks ✓" in out or "NOT hawks ✗" in out or "NOT hawks ?" in out
    assert "| metric | `vanilla` | `rerank` | change |" in out
    assert "excluded pages in the top 5" in out and "violation rate" in out
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert report.splitlines()[2] == "## What to look at"
    assert "recall_by_template.png" in report
    # The report leads with the comparison: every headline metric, both strategies and the
    # change, before the showcase; then the wins and the losses, both said.
    look = report.split("## What to look at", 1)[1].split("## Showcase", 1)[0]
    for _, label, _ in DEMO_METRICS:
        assert label in look
    assert "| metric | `vanilla` | `rerank` | change |" in look
    assert "Where `rerank` does better" in look and "Where it does worse" in look
    for strategy in ("vanilla", "rerank"):
        block = results[strategy]["all"]
        assert block["excluded@5"] is not None and 0 <= block["excluded@5"] <= 5
        assert results[strategy]["by_template"]["_ that are also _"]["excluded@5"] is None
    assert (tmp_path / "index" / "manifest.json").is_file()


def test_missing_wordnet_fails_in_one_line_before_a_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from logic_rag.cli import main
    from logic_rag.logic_retriever import LogicRetriever

    def build(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(LogicRetriever, "build", build)
    assert main(["demo", "--out", str(tmp_path / "o"), "--wordnet-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("logic-rag demo: error: WordNet 3.0 not found")
    assert "--wordnet-dir" in err and "ship with logic-rag" in err and err.count("\n") == 1
