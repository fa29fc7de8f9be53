"""Statistics and resume safety of the measurable entailment-tuning comparison."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from logic_rag.finetune.entailment.measurable import (
    Collection,
    MeasurableArgs,
    ResumeRefused,
    check_manifest,
    compare_per_query,
    sha256_file,
    sha256_tree,
    summarise,
    verdict,
)


def _sign_test_brute(wins: int, losses: int) -> float:
    """Two-sided exact binomial p by summing every outcome as likely as the observed one."""
    n = wins + losses
    probs = [math.comb(n, k) / 2**n for k in range(n + 1)]
    observed = probs[wins]
    return min(1.0, sum(p for p in probs if p <= observed * (1 + 1e-7)))


def test_wins_losses_ties_and_sign_test_match_brute_force() -> None:
    base = {"a": 0.5, "b": 0.2, "c": 0.0, "d": 0.9, "e": 0.3, "f": 0.3, "g": 0.1}
    tuned = {"a": 0.6, "b": 0.2, "c": 0.4, "d": 0.8, "e": 0.5, "f": 0.3 + 1e-12, "g": 0.7}
    r = compare_per_query(base, tuned, n_boot=2000)
    diffs = [tuned[q] - base[q] for q in base]
    assert (r["wins"], r["losses"], r["ties"]) == (4, 1, 2)  # 1e-12 is a tie
    assert r["n"] == 7
    assert r["diff"] == pytest.approx(sum(diffs) / 7)
    assert r["base"] == pytest.approx(sum(base.values()) / 7)
    assert r["sign_test_p"] == pytest.approx(_sign_test_brute(4, 1))
    assert r["sign_test_p"] == pytest.approx(0.375)


def test_bootstrap_ci_matches_exact_bootstrap_distribution() -> None:
    """With 4 queries every one of the 4**4 resamples can be enumerated."""
    base = {"q1": 0.1, "q2": 0.4, "q3": 0.5, "q4": 0.2}
    tuned = {"q1": 0.3, "q2": 0.3, "q3": 0.9, "q4": 0.2}
    d = [tuned[q] - base[q] for q in sorted(base)]
    means = sorted(sum(d[i] for i in idx) / 4 for idx in itertools.product(range(4), repeat=4))

    def quantile(p: float) -> float:  # numpy's default (linear) percentile
        pos = p * (len(means) - 1)
        lo = math.floor(pos)
        return means[lo] + (means[min(lo + 1, len(means) - 1)] - means[lo]) * (pos - lo)

    r = compare_per_query(base, tuned, n_boot=200_000, seed=1)
    assert r["ci_low"] == pytest.approx(quantile(0.025), abs=0.01)
    assert r["ci_high"] == pytest.approx(quantile(0.975), abs=0.01)


def test_all_ties_give_sign_p_one_and_null() -> None:
    same = {"a": 0.5, "b": 0.25}
    r = compare_per_query(same, dict(same), n_boot=100)
    assert (r["wins"], r["losses"], r["ties"], r["sign_test_p"]) == (0, 0, 2, 1.0)
    assert r["verdict"] == "null"


def test_verdict() -> None:
    assert verdict(0.001, 0.05, 0.02) == "effect"
    assert verdict(-0.05, -0.001, 0.02) == "effect"
    assert verdict(-0.015, 0.019, 0.02) == "null"
    assert verdict(-0.03, 0.01, 0.02) == "inconclusive"


def test_mismatched_queries_raise() -> None:
    with pytest.raises(ValueError, match="same query ids"):
        compare_per_query({"a": 1.0}, {"b": 1.0})


def test_sha256_tree_sees_a_changed_file(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "weights.bin").write_bytes(b"abc")
    first = sha256_tree(tmp_path / "m")
    (tmp_path / "m" / "weights.bin").write_bytes(b"abd")
    assert sha256_tree(tmp_path / "m") != first
    with pytest.raises(ValueError, match="holds no file"):
        sha256_tree(tmp_path / "empty-does-not-exist")


def _manifest(model_sha: str, data_sha: str) -> dict:
    return {
        "models": {
            "base": {"path": "/m", "sha256": "b"},
            "entailment_tuned": {"sha256": model_sha},
        },
        "settings": {"depth": 100},
        "inputs": {"vaswani": {"/d/qrels": data_sha}},
    }


def test_changed_model_or_data_refuses_to_resume(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(_manifest("m1", "d1")))
    assert check_manifest(path, _manifest("m1", "d1"))["inputs"] == {"vaswani": {"/d/qrels": "d1"}}
    with pytest.raises(ResumeRefused, match="models.entailment_tuned"):
        check_manifest(path, _manifest("m2", "d1"))
    with pytest.raises(ResumeRefused, match=r"inputs\.vaswani\./d/qrels"):
        check_manifest(path, _manifest("m1", "d2"))
    other = _manifest("m1", "d1")
    other["settings"] = {"depth": 50}
    with pytest.raises(ResumeRefused, match="settings.depth"):
        check_manifest(path, other)
    # A new collection is added, not refused.
    more = _manifest("m1", "d1")
    more["inputs"]["quest"] = {"/d/q": "x"}
    assert set(check_manifest(path, more)["inputs"]) == {"vaswani", "quest"}


def test_run_refuses_when_a_data_file_changed(tmp_path: Path, monkeypatch) -> None:
    """End to end through run_measurable up to the manifest check (no model is loaded)."""
    from logic_rag.finetune.entailment import measurable

    data = tmp_path / "qrels"
    data.write_text("1 0 1 1\n")
    model = tmp_path / "model"
    model.mkdir()
    (model / "modules.json").write_text("[]")
    coll = Collection(
        name="vaswani",
        corpus={"1": "x"},
        queries={"1": "y"},
        measures=("nDCG@10",),
        primary="nDCG@10",
        score=lambda run: {},
        files=(data,),
    )
    monkeypatch.setattr(measurable, "load_collection", lambda name, args: coll)
    monkeypatch.setattr(
        measurable,
        "dense_run",
        lambda *a, **k: (_ for _ in ()).throw(RuntimeError("stop after the manifest")),
    )
    args = MeasurableArgs(out=str(tmp_path / "out"), tuned_model=str(model), collections="vaswani")
    with pytest.raises(RuntimeError, match="stop after the manifest"):
        measurable.run_measurable(args)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["inputs"]["vaswani"] == {str(data): sha256_file(data)}
    data.write_text("1 0 1 0\n")
    with pytest.raises(ResumeRefused, match="inputs.vaswani"):
        measurable.run_measurable(args)


def test_summarise_pools_primary_measures(tmp_path: Path) -> None:
    def write(name: str, arm: str, values: dict[str, float]) -> None:
        part = tmp_path / "parts" / f"{name}__{arm}.json"
        part.parent.mkdir(exist_ok=True)
        part.write_text(json.dumps({"per_query": {"m": values}, "seconds": 1.0}))

    write("a", "base", {"1": 0.1, "2": 0.2})
    write("a", "entailment_tuned", {"1": 0.2, "2": 0.2})
    write("b", "base", {"1": 0.5})
    write("b", "entailment_tuned", {"1": 0.4})
    colls = {n: Collection(n, {}, {}, ("m",), "m", lambda run: {}, ()) for n in ("a", "b")}
    r = summarise(tmp_path, colls, MeasurableArgs(out="", n_boot=500))
    pooled = r["pooled"]
    assert pooled["n"] == 3
    assert (pooled["wins"], pooled["losses"], pooled["ties"]) == (1, 1, 1)
    assert pooled["diff"] == pytest.approx(0.0)
    assert r["collections"]["a"]["measures"]["m"]["wins"] == 1
    assert (tmp_path / "collections" / "a.json").is_file()


def _shared_data() -> Path:
    from logic_rag.paths import shared_data_dir

    data = shared_data_dir()
    if not (data / "vaswani" / "qrels").is_file() or not (data / "quest" / "attr").is_dir():
        pytest.skip(f"shared data not found at {data}; set LOGIC_RAG_DATA")
    return data


def test_real_collections_have_the_documented_sizes() -> None:
    from logic_rag.finetune.entailment.measurable import load_collection

    _shared_data()
    args = MeasurableArgs(out="")
    sizes = {n: load_collection(n, args) for n in ("vaswani", "msmarco", "quest")}
    assert (len(sizes["vaswani"].corpus), len(sizes["vaswani"].queries)) == (11429, 93)
    assert (len(sizes["msmarco"].corpus), len(sizes["msmarco"].queries)) == (5000, 12)
    assert (len(sizes["quest"].corpus), len(sizes["quest"].queries)) == (6410, 131)
    assert sum(len(c.queries) for c in sizes.values()) >= 100


@pytest.mark.slow
def test_same_model_in_both_arms_ties_everywhere(tmp_path: Path) -> None:
    """Real encoder, real MS MARCO test side: identical arms must tie on every query."""
    from logic_rag.finetune.entailment.measurable import run_measurable
    from logic_rag.models import resolve_model

    _shared_data()
    base = str(resolve_model("minilm").path)
    r = run_measurable(
        MeasurableArgs(out=str(tmp_path), tuned_model=base, collections="msmarco", n_boot=200)
    )
    c = r["collections"]["msmarco"]["measures"]["nDCG@10"]
    assert (c["wins"], c["losses"], c["ties"]) == (0, 0, 12)
    assert c["verdict"] == "null"
    assert (tmp_path / "report.md").read_text().count("| msmarco |") == 1
