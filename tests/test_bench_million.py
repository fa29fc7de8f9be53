"""Smoke test of the million-document benchmark at tiny scale: the JSON fields only.

Nothing here checks a speed or a memory figure (benchmarks are measurements, never timed
assertions); what is checked is that every stage ran in its own process through the
library's chunked build, and that the reported numbers hang together.
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
    monkeypatch.syspath_prepend(str(ROOT))
    import benchmarks.bench_million
    import benchmarks.run

    return benchmarks


def test_tiny_million_run_writes_the_documented_json(bench, tmp_path, capsys):
    out = tmp_path / "bench.json"
    argv = ["--only", "million", "--million-docs", "300", "--million-real", "50"]
    argv += ["--million-recall", "200", "--logic-queries", "4", "--threads", "1"]
    assert bench.run.main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "a million documents" in printed and "rerank/vanilla p50" in printed
    assert "| million | rerank p50 @ 300 | vanilla |" in (tmp_path / "bench.md").read_text()

    m = json.loads(out.read_text())["million"]
    assert (m["documents"], m["real_documents"], m["generated_documents"]) == (300, 50, 250)
    assert m["sentences"] > 300 and math.isclose(m["sentences_per_document"], m["sentences"] / 300)
    # the real subset: measured throughput, and the projection made from it
    enc = m["real_encode"]
    assert enc["documents"] == 50 and enc["docs_per_s"] > 0 and enc["sentences_per_s"] > 0
    projected = 300 / enc["docs_per_s"] + m["sentences"] / enc["sentences_per_s"]
    assert math.isclose(m["projected_real_encode_seconds"], projected)
    # the build: the library's chunked build, real vectors for the real texts
    build = m["build"]
    assert build["documents"] == 300 and build["chunks"] == 1  # default chunk: 10,000
    assert build["rows"]["real"] >= 50 + enc["sentences"] and build["rows"]["stand_in"] > 0
    assert math.isclose(build["other_seconds"], build["seconds"] - build["vector_seconds"])
    assert {"documents.jsonl", "index.faiss", "passages.npy"} <= set(m["disk_bytes"])
    assert m["disk_total_bytes"] == sum(m["disk_bytes"].values())
    # queries: both strategies, alternated, with sentence evidence on every rerank query
    query = m["query"]
    assert query["queries"] == 4 and query["rerank_queries_with_sentence_evidence"] == 4
    lat = query["latency"]
    assert math.isclose(query["p50_ratio"], lat["rerank"]["p50_ms"] / lat["vanilla"]["p50_ms"])
    assert query["memory_after_load"]["vmrss_mib"] > 0
    for stage in ("build", "query"):
        assert m["peak_rss_gib"][stage] == m[stage]["memory"]["peak_rss_mib"] / 1024
    assert m["targets"]["peak_rss_met"] == (max(m["peak_rss_gib"].values()) <= 20)
    # the same queries again, the index's files evicted from the page cache first
    cold = m["query_cold"]
    assert cold["queries"] == 4 and set(cold["latency"]) == {"vanilla", "rerank"}
    assert m["peak_rss_gib"]["query_cold"] == cold["memory"]["peak_rss_mib"] / 1024
    # compressed evidence against float32 on the recall subset
    recall = m["recall"]
    assert recall["documents"] == 200 and set(recall["dtypes"]) == {"float16", "int8"}
    for row in recall["dtypes"].values():
        for k in (10, 20):
            assert 0 <= row[f"top{k}_same_set"] <= row[f"top{k}_overlap"] <= 1
    assert recall["dtypes"]["int8"]["bytes"] < recall["dtypes"]["float16"]["bytes"]
    assert len(m["load_average_start"]) == 3 and len(m["load_average_end"]) == 3
    assert not (tmp_path / "bench-million-work" / "index-300").exists()  # removed after use


def test_stand_in_encoder_returns_real_vectors_for_real_texts(bench, tmp_path):
    bm = bench.bench_million
    rng = np.random.default_rng(0)
    for kind, n in (("doc", 3), ("sent", 5)):
        texts = [f"{kind} text {i}" for i in range(n)]
        vectors = rng.standard_normal((n, 8)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        np.save(tmp_path / f"{kind}_keys.npy", bm.text_keys(texts))
        np.save(tmp_path / f"{kind}_vectors.npy", vectors)
    encoder = bm.StandInEncoder(tmp_path)
    sent = np.load(tmp_path / "sent_vectors.npy")
    got = encoder.encode_documents(
        ["sent text 3", "unseen sentence", "sent text 0"], progress_label="sentences"
    )
    assert np.array_equal(got[0], sent[3]) and np.array_equal(got[2], sent[0])
    assert np.isclose(np.linalg.norm(got[1]), 1.0, atol=1e-5)
    assert np.max(got[1] @ sent.T) > 0.8  # a noisy copy of one real sentence
    again = encoder.encode_documents(
        ["sent text 3", "unseen sentence", "sent text 0"], progress_label="sentences"
    )
    assert np.array_equal(got, again)  # the same call gives the same vectors
    assert encoder.rows == {"real": 4, "stand_in": 2}
