"""The README's main job at a small scale: report, results and both figures are written."""

from __future__ import annotations

import os

import pytest

from logic_rag.evals.demo import run_demo
from logic_rag.evals.quest import load_results


def test_demo_writes_report_results_and_plots(tmp_path, capsys):
    results = run_demo(
        tmp_path,
        entities=300,
        test_queries=40,
        sparse=False,
        strategies=("vanilla", "rerank", "setops"),
        compare_entities=60,
    )
    assert set(results) == {"vanilla", "rerank", "setops"}
    for strategy in results:
        assert load_results(tmp_path / strategy)["strategy"] == strategy
    report = (tmp_path / "report.md").read_text()
    assert "recall_by_template.png" in report and "similarity_scatter.png" in report
    assert (tmp_path / "similarity_scatter.png").stat().st_size > 1000
    assert (tmp_path / "index" / "manifest.json").is_file()
    assert "R@20 by template" in capsys.readouterr().out
    # The old default next to the new one, on a smaller world (EmbeddingGemma is slow).
    if not (tmp_path / "defaults").is_dir() and not os.environ.get("LOGIC_RAG_REQUIRE_MODELS"):
        pytest.skip("EmbeddingGemma not assembled (run `make`): no default-model comparison")
    assert "## Old default vs new default" in report
    for name in ("rerank-minilm", "rerank-embeddinggemma-300m", "vanilla-embeddinggemma-300m"):
        assert load_results(tmp_path / "defaults" / name)["strategy"] == name
