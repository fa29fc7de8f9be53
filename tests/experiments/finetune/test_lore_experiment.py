"""LORE experiment: one index built with the base encoder serves both query encoders."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from experiments.finetune import lore_experiment as lx
from experiments.finetune import search

TINY = lx.LoreConfig(
    size=300, train_queries=40, val_queries=12, test_queries=30, max_steps=2, batch_size=4
)


class HashEncoder:
    """Bag-of-words hashing encoder: deterministic, instant, good enough to rank."""

    def __init__(self, name: str, log: list[tuple[str, str, int]]) -> None:
        self.name, self.log = name, log

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def encode_documents(self, texts: list[str], **_: object) -> np.ndarray:
        self.log.append((self.name, "documents", len(texts)))
        return self._embed(texts)

    def encode_queries(self, texts: list[str], **_: object) -> np.ndarray:
        self.log.append((self.name, "queries", len(texts)))
        return self._embed(texts)


def test_index_is_built_once_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[tuple[str, str, int]] = []
    monkeypatch.setattr(search, "load_encoder", lambda model, **_: HashEncoder(model, log))
    trained: list[int] = []

    def train(cfg: lx.LoreConfig, data_dir: Path, out: Path, ts: object) -> Path:
        queries = ts.queries  # type: ignore[attr-defined]
        trained.append(len(queries))
        assert any(q.distractors for q in queries), "LORE needs distractors (N1)"
        return out

    results = lx.run_lore_experiment(tmp_path, TINY, train_fn=train, log=lambda s: None)
    # Documents were encoded once, by the base model; the tuned encoder only saw queries.
    doc_calls = [entry for entry in log if entry[1] == "documents"]
    assert doc_calls == [("minilm", "documents", results["index"]["documents"])]
    assert {name for name, kind, _ in log if kind == "queries"} == {
        "minilm",
        str(tmp_path / "model"),
    }
    assert trained == [TINY.train_queries]
    # Same encoder before and after: identical recalls, no improvement claimed.
    assert results["base"] == results["tuned"]
    d = results["base"]["test"]["distractor"]
    assert d["n"] > 0 and 0 <= d["R@3"] <= d["R@5"] <= 1
    # A split without distractor queries reports None, never a made-up 0.
    v = results["base"]["val"]["distractor"]
    assert v["n"] > 0 or v["R@5"] is None
    report = (tmp_path / "report.md").read_text()
    assert "not met" in report and "+0.0%" in report
    assert json.loads((tmp_path / "results.json").read_text()) == results
    # Resume: nothing runs again.
    log.clear()
    lx.run_lore_experiment(tmp_path, TINY, train_fn=train, log=lambda s: None)
    assert log == [] and trained == [TINY.train_queries]


@pytest.mark.slow
def test_real_tiny_lore_run(tmp_path: Path) -> None:
    results = lx.run_lore_experiment(tmp_path, TINY, log=lambda s: None)
    assert Path(results["model"]).is_dir()
    for kind in ("distractor", "positive"):
        for k in ("R@3", "R@5"):
            assert 0 <= results["tuned"]["test"][kind][k] <= 1
