"""Smoke test of the input-scaling benchmarks (issue 42 items 2 and 3) at tiny sizes.

Measurements, never timed assertions: what is checked is the JSON shape, that every shape
of the issue is measured at every size, and that the tables print.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    import benchmarks.bench_decomposer_scaling
    import benchmarks.bench_json_extraction

    return benchmarks


def test_decomposer_scaling_reports_every_shape(bench):
    mod = bench.bench_decomposer_scaling
    result = mod.run([20, 40], repeats=1)
    assert result["caps"] == {"max_query_chars": 4000, "max_atoms": 64}
    assert set(result["shapes"]) == set(mod.SHAPES)
    for shape in result["shapes"].values():
        assert [row["n"] for row in shape["rows"]] == [20, 40]
        assert all(row["seconds"] > 0 and row["chars"] > 0 for row in shape["rows"])
        assert shape["at_default_caps"]["chars"] <= 4000
    assert "per-char growth" in mod.format_table(result)


def test_json_extraction_reports_every_shape(bench):
    mod = bench.bench_json_extraction
    result = mod.run([300, 600], repeats=1)
    assert set(result["shapes"]) == set(mod.SHAPES)
    found = {name: [r["found_object"] for r in s["rows"]] for name, s in result["shapes"].items()}
    assert found["prose-then-object"] == [True, True]
    assert found["all-open-braces"] == [False, False]
    assert "ns/char" in mod.format_table(result)


def test_run_registers_both_sections(bench, monkeypatch):
    import benchmarks.run

    for section in ("decomposer", "json"):
        assert benchmarks.run.parse_args(["--only", section]).only == section
    table = benchmarks.run.format_table(
        {
            "decomposer_scaling": bench.bench_decomposer_scaling.run([10, 20], repeats=1),
            "json_extraction": bench.bench_json_extraction.run([100, 200], repeats=1),
        }
    )
    assert "rule decomposer" in table and "extract_json" in table
