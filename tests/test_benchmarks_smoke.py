"""Smoke test of the benchmarks: each runs at tiny scale and reports the documented JSON.

Benchmarks are measurements, never timed assertions: nothing here checks a speed. What is
checked: the command line, the JSON shape, that ratios are the quotients of the reported
numbers, that both dense sides produced the same embeddings and rankings, and that the
vector fill keeps the real sample and yields unit vectors.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def bench(monkeypatch):
    """The ``benchmarks`` package, importable from the repository root."""
    monkeypatch.syspath_prepend(str(ROOT))
    import benchmarks.common
    import benchmarks.run

    return benchmarks


def _latency(block: dict) -> None:
    assert set(block) == {"p50_ms", "p95_ms", "mean_ms"}
    assert 0 < block["p50_ms"] <= block["p95_ms"]


def test_tiny_run_writes_the_documented_json(bench, tmp_path, capsys):
    import torch

    out = tmp_path / "bench.json"
    # One torch thread: on a loaded 2-core machine, 2 spinning threads make each
    # single-query encode ~30x slower, and this test is about shape, not speed.
    argv = ["--sizes", "24,300", "--encode-max", "24", "--queries", "5", "--chunk", "8"]
    argv += ["--logic-size", "300", "--logic-sample", "8", "--logic-queries", "5"]
    argv += ["--verifier-pairs", "12", "--llm-verifier", "none", "--reranker-pool", "30"]
    threads = torch.get_num_threads()
    try:
        assert bench.run.main([*argv, "--threads", "1", "--out", str(out)]) == 0
    finally:
        torch.set_num_threads(threads)
    result = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert "docs/s @ 24" in printed and "setops" in printed
    # the report beside the JSON: ratios against their peers, and the figure
    report = (tmp_path / "bench.md").read_text(encoding="utf-8")
    assert report.startswith("# logic-rag benchmarks") and "| logic | rerank p50" in report
    assert (tmp_path / "bench.png").read_bytes()[:4] == b"\x89PNG"

    machine = result["machine"]
    assert machine["usable_cores"] >= 1 and machine["torch_threads"] >= 1
    assert machine["versions"]["sentence-transformers"]
    assert len(result["load_average_start"]) == 3

    dense = result["dense"]
    assert dense["encoded_documents"] == 24 and dense["chunks"] == 3  # 8 + 8 + 8
    # Both sides encoded the same texts with the same model: the same vectors.
    assert dense["embedding_max_abs_diff"] < 1e-4
    [tp] = dense["throughput"]  # only the size that was really encoded
    assert tp["documents"] == 24
    assert math.isclose(tp["ratio"], tp["logic_rag_docs_per_s"] / tp["raw_docs_per_s"])
    assert tp["meets_target"] == (tp["ratio"] >= 0.95)
    assert [r["documents"] for r in dense["latency"]] == [24, 300]
    assert [r["synthetic_documents"] for r in dense["latency"]] == [0, 276]
    for row in dense["latency"]:
        _latency(row["logic_rag"])
        _latency(row["raw"])
        assert row["queries"] == 5
        assert math.isclose(row["p50_ratio"], row["logic_rag"]["p50_ms"] / row["raw"]["p50_ms"])
        # Same vectors, same exact search: the two sides rank alike.
        assert row["same_top10_fraction"] >= 0.8

    logic = result["logic_latency"]
    assert logic["documents"] == 300 and logic["sampled_documents"] == 8
    assert logic["synthetic_documents"] == 292 and logic["queries"] == 5
    assert logic["sentences"] > logic["sampled_sentences"] > 8
    rows = {r["strategy"]: r for r in logic["strategies"]}
    assert list(rows) == ["vanilla", "rerank", "verify", "setops", "fusion", "orthogonal"]
    assert rows["vanilla"]["p50_ratio"] == 1.0
    for name, row in rows.items():
        _latency({k: row[k] for k in ("p50_ms", "p95_ms", "mean_ms")})
        base = rows["vanilla"]["p50_ms"]
        assert math.isclose(row["p50_ratio"], row["p50_ms"] / base)
        assert ("meets_target" in row) == (name in ("rerank", "setops"))
    assert rows["rerank"]["target_ratio"] == 2.0 and rows["setops"]["target_ratio"] == 3.0

    verifiers = result["verifiers"]
    ce = verifiers["cross-encoder"]
    assert ce["pairs"] == 12 and 0 < ce["mean_probability"] < 1
    assert math.isclose(ce["ms_per_pair"], 1000 * ce["seconds"] / 12)
    assert "not requested" in verifiers["llm"]["skipped"]
    assert "ms/pair" in printed

    reranker = result["reranker"]
    assert reranker["pool"] == 30 and reranker["queries"] == 5 and reranker["rounds"] == 2
    assert reranker["candidates"] == 20 and reranker["distinct_candidate_pages"] <= 30
    _latency(reranker["uncached"])
    _latency(reranker["cached"])
    assert math.isclose(
        reranker["p50_ratio"], reranker["cached"]["p50_ms"] / reranker["uncached"]["p50_ms"]
    )
    # The cache serves the vectors an encoding gives: the same rankings, cache on or off.
    assert reranker["same_ranking"] == 1.0
    # Round two asks the same 5 x 20 candidates again: every one is a hit, so at least
    # half of all the pages asked for are.
    assert reranker["cache_hit_rate"] >= 0.5
    assert set(reranker["by_round"]) == {"first_round", "later_rounds"}
    against = result["reranker_vs_retriever"]
    assert against["candidates"] == 100 and against["encoder_shared"] is True
    _latency(against["reranker"])
    _latency(against["retriever"])
    assert 0.0 < against["top10_overlap"] <= 1.0
    assert "candidate-embedding cache" in printed


def test_fill_keeps_the_sample_and_yields_unit_vectors(bench):
    rng = np.random.default_rng(0)
    sample = rng.standard_normal((7, 16)).astype(np.float32)
    sample /= np.linalg.norm(sample, axis=1, keepdims=True)
    filled = bench.common.fill_vectors(sample, 50, noise=0.3, seed=1)
    assert filled.shape == (50, 16)
    np.testing.assert_array_equal(filled[:7], sample)
    np.testing.assert_allclose(np.linalg.norm(filled, axis=1), 1.0, rtol=1e-5)
    # Each filled row stays near its source row (i mod 7), closer than to any other.
    cos = filled[7:] @ sample.T
    assert (cos.argmax(axis=1) == np.arange(7, 50) % 7).all()
    assert cos.max(axis=1).min() > 0.8


def test_chunk_edges_pass_through_every_measured_size(bench, monkeypatch):
    from benchmarks.bench_dense import chunk_edges

    edges = chunk_edges(100, 30, [45, 100, 500])
    assert edges == [0, 30, 45, 60, 90, 100]
    assert max(np.diff(edges)) <= 30


@pytest.mark.parametrize(
    "argv",
    [
        ["--sizes", "20k"],
        ["--sizes", "0,100"],
        ["--queries", "0"],
        ["--encode-max", "-1"],
        ["--reranker-pool", "0"],
    ],
)
def test_bad_arguments_exit_with_a_message(bench, argv, capsys):
    with pytest.raises(SystemExit) as info:
        bench.run.parse_args(argv)
    assert info.value.code == 2
    assert "error" in capsys.readouterr().err


def test_quick_defaults(bench):
    args = bench.run.parse_args(["--quick"])
    assert args.sizes == [2000, 5000] and args.logic_size == 5000
    full = bench.run.parse_args(["--sizes", "20000,100000", "--encode-max", "0"])
    assert full.sizes == [20000, 100000] and full.encode_max == 0 and full.logic_size == 100000
