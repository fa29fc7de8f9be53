"""results.json schema, markdown tables and PNG figures."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from logic_rag.evals.quest import (
    RESULTS_SCHEMA,
    QuestQuery,
    evaluate_run,
    format_overall_table,
    format_table,
    load_results,
    plot_recall_by_template,
    plot_similarity_scatter,
    write_report_md,
    write_results,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _metrics(r20: float) -> dict:
    queries = [
        QuestQuery(qid="0", query="a", docs=frozenset({"x"}), template="_"),
        QuestQuery(qid="1", query="b", docs=frozenset({"y", "z"}), template="_ that are not _"),
    ]
    run = {"0": [("x", 1.0)], "1": [("y", 1.0), ("w", 0.5)]}
    result = evaluate_run(run, queries)
    result["by_template"]["_"]["R@20"] = r20
    return result


def test_write_results_exact_schema(tmp_path: Path) -> None:
    metrics = _metrics(1.0)
    metrics["all"]["R@5"] = np.float32(0.75)  # numpy scalars become plain floats
    path = write_results(tmp_path / "run1", strategy="vanilla", model="minilm", metrics=metrics)
    assert path == tmp_path / "run1" / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, RESULTS_SCHEMA)
    assert list(data) == ["strategy", "model", "metrics"]
    assert list(data["metrics"]) == ["all", "by_template"]  # per_query is not written
    assert data["metrics"]["all"]["R@5"] == 0.75 and data["metrics"]["all"]["n"] == 2
    assert data["metrics"]["all"]["violation_rate"] is None
    assert set(data["metrics"]["by_template"]) == {"_", "_ that are not _"}
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]  # no temp files left
    assert load_results(path.parent) == data

    with_extra = write_results(
        tmp_path / "run2", strategy="s", model="m", metrics=metrics, extra={"seed": 1}
    )
    data2 = json.loads(with_extra.read_text())
    jsonschema.validate(data2, RESULTS_SCHEMA)
    assert data2["extra"] == {"seed": 1}

    # What eval quest writes since it records costs: valid, and it reads back.
    costly = {**metrics, "costs": {"queries": 2, "seconds_p50": 0.5, "llm_calls_mean": 3.0}}
    path3 = write_results(tmp_path / "run3", strategy="quality", model="m", metrics=costly)
    data3 = json.loads(path3.read_text())
    jsonschema.validate(data3, RESULTS_SCHEMA)
    assert load_results(path3.parent)["costs"]["llm_calls_mean"] == 3.0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"strategy": "", "model": "m"}, ValueError),
        ({"strategy": "s", "model": None}, ValueError),
    ],
)
def test_write_results_rejects_bad_names(tmp_path: Path, kwargs, error) -> None:
    with pytest.raises(error):
        write_results(tmp_path, metrics=_metrics(0.5), **kwargs)


def test_write_results_rejects_bad_metrics(tmp_path: Path) -> None:
    bad = _metrics(0.5)
    bad["all"]["R@5"] = float("nan")
    with pytest.raises(ValueError, match="finite"):
        write_results(tmp_path, strategy="s", model="m", metrics=bad)
    with pytest.raises(ValueError, match="'all' and 'by_template'"):
        write_results(tmp_path, strategy="s", model="m", metrics={"all": {}})
    assert not (tmp_path / "results.json").exists()


def test_format_table_layout() -> None:
    results = {
        "vanilla": {"strategy": "vanilla", "model": "m", "metrics": _metrics(0.25)},
        "logic|ops": _metrics(0.5),  # an evaluate_run dict works too; pipes are escaped
    }
    # violation_rate is None everywhere here (no atom gold sets): its columns are left out
    # rather than printed as dashes (issue 43); a metric with some value keeps its column.
    table = format_table(results, ("R@20", "violation_rate"))
    lines = table.strip().splitlines()
    assert lines[0] == "| template | n | vanilla R@20 | logic\\|ops R@20 |"
    # QUEST order: "_" before "_ that are not _", then the all row
    assert lines[2].startswith("| `_` | 1 | 0.250 | 0.500 |")
    assert lines[3].startswith("| `_ that are not _` | 1 |")
    assert lines[4].startswith("| **all** | 2 |")
    assert len(lines) == 5
    separators = {line.count("|") - line.count("\\|") for line in lines}
    assert separators == {5}  # 4 columns on every row (escaped pipes do not split cells)
    assert format_table(results, ("violation_rate",)).startswith("(not computed")
    results["vanilla"]["metrics"]["by_template"]["_ that are not _"]["violation_rate"] = 0.5
    with_one = format_table(results, ("violation_rate",)).strip().splitlines()
    assert with_one[2].startswith("| `_` | 1 | – | – |")  # not applicable: a dash
    overall = format_overall_table(results, ("R@20",), models={"logic|ops": "gemma"})
    assert "| vanilla | m | 2 |" in overall and "| logic\\|ops | gemma | 2 |" in overall
    assert "| logic\\|ops | not recorded | 2 |" in format_overall_table(results, ("R@20",))


def test_report_names_the_model_and_says_what_it_left_out(tmp_path: Path) -> None:
    """What `eval quest` writes: per-strategy results.json beside report.md."""
    results = {"vanilla": _metrics(0.25), "rerank": _metrics(0.5)}
    for name, metrics in results.items():
        write_results(tmp_path / name, strategy=name, model="embeddinggemma-300m", metrics=metrics)
    text = write_report_md(tmp_path / "report.md", results).read_text(encoding="utf-8")
    assert "| vanilla | embeddinggemma-300m |" in text and "| – |" not in text.split("##")[1]
    assert "## violation_rate by template" not in text
    assert "`violation_rate` needs atom gold sets" in text


def test_write_report_and_plots(tmp_path: Path) -> None:
    results = {"vanilla": _metrics(0.25), "ops": _metrics(0.75)}
    bar = plot_recall_by_template(results, tmp_path / "fig" / "r20.png")
    rng = np.random.default_rng(0)
    x, y = rng.random(60), rng.random(60)
    labels = ["A∩B"] * 20 + ["A∖B"] * 20 + ["other"] * 20
    scatter = plot_similarity_scatter(x, y, labels, tmp_path / "fig" / "sim.png")
    for png in (bar, scatter):
        blob = png.read_bytes()
        assert blob.startswith(PNG_MAGIC) and len(blob) > 5000
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == ["r20.png", "sim.png"]
    report = write_report_md(
        tmp_path / "report.md", results, figures=[bar, scatter], notes="Synthetic."
    )
    text = report.read_text(encoding="utf-8")
    assert text.startswith("# QUEST evaluation\n\nSynthetic.")
    assert "## R@20 by template" in text and "## MRecall@100 by template" in text
    assert "![r20](fig/r20.png)" in text and "![sim](fig/sim.png)" in text
    with pytest.raises(ValueError, match="differ in length"):
        plot_similarity_scatter([1.0], [1.0, 2.0], ["a"], tmp_path / "bad.png")
    with pytest.raises(ValueError, match="empty"):
        plot_similarity_scatter([], [], [], tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()


def test_import_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, logic_rag.evals.quest; "
        "print(sorted(m for m in ('matplotlib', 'ir_measures', 'pytrec_eval', 'numpy') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
