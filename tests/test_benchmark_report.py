"""The benchmark report turns a result into ratios against peers, markdown and a PNG."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.report import Ratio, ratios, write_report


def _result() -> dict:
    return {
        "command": "python -m benchmarks.run --quick",
        "machine": {"cpu_model": "cpu", "usable_cores": 2},
        "load_average_start": [0.1],
        "load_average_end": [0.2],
        "logic_latency": {
            "documents": 5000,
            "strategies": [
                {"strategy": "vanilla", "p50_ratio": 1.0},
                {"strategy": "rerank", "p50_ratio": 1.8, "target_ratio": 3.0},
            ],
        },
        "milvus": {
            "documents": 2000,
            "strategies": [
                {"strategy": "vanilla", "p50_ratio": 1.4},
                {"strategy": "rerank", "p50_ratio": 2.6, "cold_p50_ratio": 10.2},
            ],
        },
        "loaded_indexing": {
            "competitor": "torch",
            "competitors": 2,
            "competitor_threads": 1,
            "fair_share_ratio": 2.0,
            "loaded": {"default": {"ratio_to_quiet": 2.2}},
        },
    }


def test_ratios_carry_peers_and_targets() -> None:
    got = {(r.section, r.name): r for r in ratios(_result())}
    assert ("logic", "vanilla p50 @ 5,000") not in got  # vanilla is the peer, not a ratio
    assert got[("logic", "rerank p50 @ 5,000")].meets is True
    milvus = got[("milvus", "rerank p50 @ 2,000")]
    assert (milvus.peer, milvus.target, milvus.meets) == ("FAISS", 2.0, False)
    assert got[("milvus", "vanilla p50 @ 2,000")].target is None
    assert got[("milvus", "rerank cold p50 @ 2,000")].meets is False
    loaded = got[("loaded indexing", "beside 2 torch x1 threads (default)")]
    assert (loaded.target, loaded.meets) == (2.5, True)


def test_loaded_target_scales_with_the_neighbours_threads() -> None:
    """Two-thread neighbours: fair share 3x, so the 2.5x-of-fair target becomes 3.75x."""
    result = _result()
    result["loaded_indexing"].update(
        competitor_threads=2,
        fair_share_ratio=3.0,
        loaded={"default": {"ratio_to_quiet": 2.69}, "spinning": {"ratio_to_quiet": 4.1}},
    )
    got = {(r.section, r.name): r for r in ratios(result)}
    default = got[("loaded indexing", "beside 2 torch x2 threads (default)")]
    assert (default.target, default.meets) == (3.75, True)
    assert got[("loaded indexing", "beside 2 torch x2 threads (spinning)")].meets is False
    assert Ratio("dense", "x", "raw", 0.9, 0.95, higher_is_better=True).meets is False


def test_write_report_markdown_and_png(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(_result()), encoding="utf-8")
    md, png = write_report(_result(), path, "the text table")
    text = md.read_text(encoding="utf-8")
    assert "| milvus | rerank p50 @ 2,000 | FAISS | 2.6 | ≤ 2 | **no** |" in text
    assert "![ratios](bench.png)" in text and "the text table" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_combined_report_keeps_each_runs_peers(tmp_path) -> None:
    """Several runs in one report: a section each, one figure, standalone JSONs accepted."""
    import json

    from benchmarks.report import main

    run = tmp_path / "cpu.json"
    via_run = {"command": "python -m benchmarks.run --only loaded"}
    via_run["loaded_indexing"] = _result()["loaded_indexing"]
    run.write_text(json.dumps(via_run))
    loaded = tmp_path / "loaded.json"
    standalone = {"quiet_s": 10.0, "competitor": "llamacpp", "competitors": 2}
    standalone |= {"loaded": {"default": {"ratio_to_quiet": 3.0}}, "fair_share_ratio": 2.0}
    loaded.write_text(json.dumps(standalone))
    out = tmp_path / "all.md"
    assert main(["--out", str(out), str(run), str(loaded)]) == 0
    text = out.read_text()
    assert "## cpu" in text and "## loaded" in text and "--only loaded" in text
    assert "| beside 2 torch x1 threads (default) | quiet, same run | 2.2 | ≤ 2.5 | yes |" in text
    assert (
        "| loaded indexing | beside 2 llamacpp x2 threads (default) | quiet, same run | 3 |" in text
    )
    assert "| **no** |" in text
    assert main(["--out", str(out)]) == 2
