from __future__ import annotations

import base64
import re

from logic_rag.evals.rag.report import differences_png, histogram_png, write_reports

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

RESULTS = {
    "n": 3,
    "correctness": 4.0,
    "rougeL": 0.2,
    "parse_failures": 1,
    "metrics": {
        "rougeL": {"mean": 0.2, "std": 0.1, "count": 3},
        "correctness": {
            "mean": 4.0,
            "std": 1.4,
            "count": 2,
            "parse_failures": 1,
            "scale": [1.0, 5.0],
        },
    },
    "config": {"dataset": "eli5", "retriever": "minilm", "judges": ["correctness"]},
    "timings": {"wall_s": 12.5},
}
RECORDS = [
    {
        "id": "q1",
        "question": "Why <b>?",
        "answer": "Because | pipes & <tags>.",
        "metrics": {"rougeL": 0.3, "correctness": 5.0},
    },
    {
        "id": "q2",
        "question": "How?",
        "answer": "So.",
        "metrics": {"rougeL": 0.1, "correctness": None},
    },
    {"id": "q3", "question": "What?", "answer": "", "metrics": {"rougeL": 0.2, "correctness": 3.0}},
]


def _images(html: str) -> list[bytes]:
    return [
        base64.b64decode(m)
        for m in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    ]


def test_reports_written_with_tables_and_inline_images(tmp_path):
    md_path, html_path = write_reports(tmp_path, RESULTS, RECORDS)
    md = md_path.read_text()
    assert "| correctness | 4.000 | 1.400 | 2 | 1 | 1-5 |" in md
    assert "| rougeL | 0.200 | 0.100 | 3 | n/a | 0-1 |" in md
    assert "**A:** Because | pipes" in md
    assert "(empty)" in md
    html = html_path.read_text()
    images = _images(html)
    assert len(images) == 2  # one histogram per metric
    assert all(img.startswith(PNG_MAGIC) for img in images)
    assert "<b>?" not in html and "Why &lt;b&gt;?" in html  # escaped
    assert 'src="http' not in html  # self-contained
    assert not list(tmp_path.glob(".*.tmp"))


def test_compare_and_meta_sections(tmp_path):
    results = dict(RESULTS)
    results["compare"] = {
        "a": "minilm",
        "b": "tuned",
        "paired": {
            "correctness": {
                "mean_a": 4.0,
                "mean_b": 3.5,
                "diff": 0.5,
                "low": -0.2,
                "high": 1.1,
                "p_value": 0.2,
                "n": 2,
            },
            "rougeL": {"n": 0, "diff": None},
        },
        "pairwise": {
            "counts": {"a": 2, "b": 0, "tie": 1, "inconsistent": 0, "failed": 0},
            "win_rate_a": 0.83,
        },
    }
    results["judge_meta_eval"] = {
        "judge": "smollm2-135m",
        "metric": "correctness",
        "per_dataset": {"asqa": {"spearman": 0.31, "kendall": 0.22, "n": 10, "parse_failures": 2}},
    }
    md_path, html_path = write_reports(tmp_path, results, RECORDS)
    md = md_path.read_text()
    assert "| correctness | 4.000 | 3.500 | 0.500 | [-0.200, 0.800] |" not in md
    assert "| correctness | 4.000 | 3.500 | 0.500 | [-0.200, 1.100] | 0.200 | 2 |" in md
    assert "A wins 2, B wins 0, ties 1" in md
    assert "| asqa | 0.310 | 0.220 | 10 | 2 |" in md
    assert len(_images(html_path.read_text())) == 3


def test_plot_functions_return_png():
    assert histogram_png("correctness", [1, 2, 5, 4.5], [1.0, 5.0]).startswith(PNG_MAGIC)
    assert differences_png({"x": {"diff": None}}) is None
    assert differences_png({"x": {"diff": 0.1, "low": 0.0, "high": 0.2}}).startswith(PNG_MAGIC)


def test_a_judge_that_never_parsed_is_called_out(tmp_path):
    import copy

    from logic_rag.evals.rag.report import unscored_judges, unscored_warning

    assert unscored_judges(RESULTS) == [] and unscored_warning(RESULTS) is None
    results = copy.deepcopy(RESULTS)
    results["metrics"]["correctness"].update(mean=None, std=None, count=0, parse_failures=3)
    results["config"]["judge"] = "smollm2-135m"
    assert unscored_judges(results) == ["correctness"]
    warning = unscored_warning(results)
    assert "correctness" in warning and "smollm2-135m" in warning and "--judge" in warning
    md = write_reports(tmp_path, results, RECORDS)[0].read_text()
    assert "**Warning:** No correctness score could be parsed from smollm2-135m" in md
