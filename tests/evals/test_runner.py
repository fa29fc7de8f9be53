"""eval quest: results.json in the issue's schema, one or several strategies."""

from __future__ import annotations

import json

from logic_rag.cli import main
from logic_rag.evals.quest import load_results

KEYS = {"P@1", "R@5", "R@20", "R@100", "R@1000", "MRecall@100", "violation_rate"}


def test_eval_quest_cli_single_and_several_strategies(small_world, tmp_path, capsys):
    index = tmp_path / "index"
    argv = [
        "eval",
        "quest",
        "--docs",
        str(small_world / "documents.jsonl"),
        "--queries",
        str(small_world / "test.jsonl"),
        "--index",
        str(index),
    ]
    assert main([*argv, "--out", str(tmp_path / "one"), "--strategy", "vanilla"]) == 0
    result = json.loads((tmp_path / "one" / "results.json").read_text())
    assert set(result) == {"strategy", "model", "metrics", "extra", "costs"}
    assert result["costs"]["queries"] == result["metrics"]["all"]["n"]
    assert result["costs"]["seconds_p50"] > 0 and "llm_calls_mean" not in result["costs"]
    assert result["strategy"] == "vanilla" and result["model"] == "minilm"
    assert KEYS <= set(result["metrics"]["all"])
    assert "_ that are not _" in result["metrics"]["by_template"]
    assert result["metrics"]["by_template"]["_ that are not _"]["violation_rate"] is not None
    assert (index / "manifest.json").is_file()  # built once, reused below
    assert (
        main(
            [*argv, "--out", str(tmp_path / "two"), "--strategy", "vanilla,setops", "--gold-logic"]
        )
        == 0
    )
    for strategy in ("vanilla", "setops"):
        assert load_results(tmp_path / "two" / strategy)["strategy"] == strategy
    assert (tmp_path / "two" / "report.md").read_text().count("setops") >= 2
    assert (tmp_path / "two" / "recall_by_template.png").stat().st_size > 1000
    assert "R@20 by template" in capsys.readouterr().out


def test_eval_quest_reads_the_official_quest_files(shared_data, tmp_path, small_world):
    # The 20 real QUEST queries have no corpus here: index the world, score what is found.
    assert (
        main(
            [
                "eval",
                "quest",
                "--docs",
                str(small_world / "documents.jsonl"),
                "--queries",
                str(shared_data / "quest" / "quest_train_sample20.jsonl"),
                "--out",
                str(tmp_path),
                "--strategy",
                "rerank",
                "--depth",
                "50",
            ]
        )
        == 0
    )
    metrics = load_results(tmp_path)["metrics"]
    assert metrics["all"]["n"] == 20
    assert metrics["all"]["violation_rate"] is None  # no atom gold sets for real QUEST
