"""A first ``logic-rag adapt`` into a fresh --out says nothing alarming (issue 52): no
"starting over: removing the earlier checkpoints" (there were none) and no transformers
"LOAD REPORT ... classifier.weight MISSING" block (the cross-encoder's head is new by
design)."""

from __future__ import annotations

from logic_rag.cli import main


def test_a_fresh_run_prints_no_false_alarms(tiny_index, tmp_path, capfd):
    index, queries = tiny_index
    out = tmp_path / "fresh"
    argv = ["adapt", str(index), "--out", str(out), "--queries", str(queries)]
    argv += ["--verifier", "embedding", "--max-pairs", "40", "--max-steps", "1"]
    assert main(argv) == 0
    said = capfd.readouterr()
    text = said.out + said.err
    assert "starting over" not in text and "LOAD REPORT" not in text and "MISSING" not in text
    assert (out / "verifier").is_dir() and (out / "model").is_dir()
