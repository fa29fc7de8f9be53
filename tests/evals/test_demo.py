"""The README's main job at a small scale: report, results and both figures are written."""

from __future__ import annotations

from logic_rag.evals.demo import run_demo
from logic_rag.evals.quest import load_results


def test_demo_writes_report_results_and_plots(tmp_path, capsys):
    results = run_demo(
        tmp_path,
        entities=300,
        test_queries=40,
        sparse=False,
        strategies=("vanilla", "rerank", "setops"),
    )
    assert set(results) == {"vanilla", "rerank", "setops"}
    for strategy in results:
        assert load_results(tmp_path / strategy)["strategy"] == strategy
    report = (tmp_path / "report.md").read_text()
    assert "recall_by_template.png" in report and "similarity_scatter.png" in report
    assert (tmp_path / "similarity_scatter.png").stat().st_size > 1000
    assert (tmp_path / "index" / "manifest.json").is_file()
    assert "R@20 by template" in capsys.readouterr().out
