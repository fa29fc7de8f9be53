"""Paired comparison of two encoders: counts and p-values against brute force, a real run."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from experiments.finetune import paired


def _row(violation: float | None, r20: float = 0.5, r100: float = 0.8) -> dict:
    return {"violation_rate": violation, "R@20": r20, "R@100": r100}


def _exact_two_sided(k: int, n: int) -> float:
    """Slow sign test: sum the probabilities of outcomes no likelier than k (p = 1/2)."""
    probs = [math.comb(n, i) / 2**n for i in range(n + 1)]
    return min(1.0, sum(p for p in probs if p <= probs[k] * (1 + 1e-7)))


@pytest.mark.parametrize(("fixed", "broken"), [(11, 1), (3, 3), (0, 5), (7, 0), (2, 9)])
def test_sign_test_counts_and_p_value_match_brute_force(fixed: int, broken: int) -> None:
    first, second = {}, {}
    flags = [(1.0, 0.0)] * fixed + [(0.0, 1.0)] * broken + [(1.0, 1.0)] * 4 + [(0.0, 0.0)] * 2
    for i, (a, b) in enumerate(flags):
        first[f"q{i}"], second[f"q{i}"] = _row(a), _row(b)
    # Queries without a negation (None on either side) never count.
    first["plain"], second["plain"] = _row(None), _row(None)
    first["half"], second["half"] = _row(1.0), _row(None)
    out = paired.violation_sign_test(first, second)
    assert out["n"] == len(flags)
    assert (out["fixed"], out["broken"]) == (fixed, broken)
    assert out["violations_first"] == fixed + 4 and out["violations_second"] == broken + 4
    assert out["p_value"] == pytest.approx(_exact_two_sided(fixed, fixed + broken), rel=1e-9)


def test_sign_test_without_discordant_queries_is_one() -> None:
    table = {"a": _row(1.0), "b": _row(0.0)}
    assert paired.violation_sign_test(table, table)["p_value"] == 1.0


def test_recall_differences_are_paired_means() -> None:
    rng = np.random.default_rng(1)
    first = {f"q{i}": _row(None, *rng.random(2)) for i in range(40)}
    second = {q: _row(None, r["R@20"] + 0.1, r["R@100"]) for q, r in first.items()}
    out = paired.compare_per_query(first, second, n_boot=500)
    assert out["R@20"]["diff"] == pytest.approx(0.1)
    assert out["R@20"]["low"] == pytest.approx(0.1) and out["R@20"]["high"] == pytest.approx(0.1)
    assert out["R@100"]["diff"] == pytest.approx(0.0)
    assert out["violation"]["n"] == 0
    text = paired.render(out, "a", "b")
    assert "R@20: " in text and "+0.1000" in text


def test_pairwise_order_is_compared_over_negation_queries_only() -> None:
    first = {f"n{i}": {**_row(1.0), "pairwise_order": 0.25 + 0.1 * i} for i in range(5)}
    second = {q: {**r, "pairwise_order": r["pairwise_order"] + 0.2} for q, r in first.items()}
    for i in range(7):  # queries without a negation have no pairwise order
        first[f"p{i}"], second[f"p{i}"] = _row(None), _row(None)
    out = paired.compare_per_query(first, second, n_boot=200)
    assert out["pairwise_order"]["n"] == 5 and out["R@20"]["n"] == 12
    assert out["pairwise_order"]["diff"] == pytest.approx(0.2)
    assert out["pairwise_order"]["mean_a"] == pytest.approx(0.45)
    # the non-negation queries alone: the measure is left out, not an error
    plain = {q: r for q, r in first.items() if q.startswith("p")}
    assert "pairwise_order" not in paired.compare_per_query(plain, plain, n_boot=50)


def test_different_query_sets_are_refused() -> None:
    with pytest.raises(ValueError, match="different queries"):
        paired.compare_per_query({"a": _row(1.0)}, {"b": _row(1.0)})


def test_real_models_on_a_generated_world(tmp_path: Path) -> None:
    """MiniLM against itself: identical per-query numbers, nothing discordant, diff 0."""
    from experiments.finetune.datasets import DatasetSpec, prepare_dataset

    spec = DatasetSpec(
        name="world", size=200, train_queries=10, val_queries=5, test_queries=25, seed=0
    )
    data = prepare_dataset(spec, tmp_path / "world")
    table = paired.per_query_metrics("minilm", data, "test")
    assert table and all({"R@20", "R@100", "violation_rate"} <= set(r) for r in table.values())
    assert any(r["violation_rate"] is not None for r in table.values())
    assert all(
        (r["pairwise_order"] is None) == (r["violation_rate"] is None) for r in table.values()
    )
    out = paired.compare_per_query(table, paired.per_query_metrics("minilm", data, "test"))
    assert out["violation"]["fixed"] == out["violation"]["broken"] == 0
    assert out["R@100"]["diff"] == 0.0 and out["R@100"]["n"] == len(table)


def test_pooled_tables_keep_seeds_apart_and_add_up() -> None:
    """Pooling two seeds: same query ids stay distinct; counts are the per-seed sums."""
    seed0_a = {"q1": _row(1.0, 0.2), "q2": _row(1.0, 0.4), "q3": _row(None, 0.6)}
    seed0_b = {"q1": _row(0.0, 0.3), "q2": _row(1.0, 0.4), "q3": _row(None, 0.6)}
    seed1_a = {"q1": _row(1.0, 0.1), "q2": _row(0.0, 0.5)}
    seed1_b = {"q1": _row(0.0, 0.1), "q2": _row(1.0, 0.9)}
    first = paired.pool_tables([seed0_a, seed1_a])
    second = paired.pool_tables([seed0_b, seed1_b])
    assert set(first) == {"0:q1", "0:q2", "0:q3", "1:q1", "1:q2"} == set(second)
    out = paired.compare_per_query(first, second, n_boot=200)
    each = [paired.violation_sign_test(a, b) for a, b in ((seed0_a, seed0_b), (seed1_a, seed1_b))]
    for key in ("n", "fixed", "broken", "violations_first", "violations_second"):
        assert out["violation"][key] == sum(e[key] for e in each)
    assert (out["violation"]["fixed"], out["violation"]["broken"]) == (2, 1)
    # Mean R@20 difference over the 5 pooled queries: (0.1 + 0 + 0 + 0 + 0.4) / 5.
    assert out["R@20"]["diff"] == pytest.approx(0.1)


def test_cli_refuses_an_incomplete_triple(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        paired.main(["data", "a", "b", "data2", "a2"])
    assert exc.value.code == 2
    assert "DATA FIRST SECOND triples" in capsys.readouterr().err


def test_by_template_splits_the_queries_and_keeps_their_paired_means() -> None:
    """Each template's diff is the plain mean over its own queries; counts add up."""
    rng = np.random.default_rng(7)
    templates = ["_", "_ or _", "_ that are not _"]
    first, second = {}, {}
    for i in range(60):
        template = templates[i % 3]
        violation = (float(i % 2), float(i % 4 == 0)) if template.endswith("not _") else (None,) * 2
        r20, r100 = rng.random(2)
        first[f"q{i}"] = {**_row(violation[0], r20, r100), "template": template}
        second[f"q{i}"] = {
            **_row(violation[1], r20 + 0.05 * (i % 3), r100 - 0.01 * i),
            "template": template,
        }
    first["bare"], second["bare"] = _row(None), _row(None, 0.9, 0.8)
    out = paired.compare_by_template(first, second, n_boot=200)
    assert set(out) == {*templates, "?"}
    assert sum(r["R@20"]["n"] for r in out.values()) == len(first)
    for template, result in out.items():
        qids = [q for q in first if (first[q].get("template") or "?") == template]
        for name in ("R@20", "R@100"):
            want = np.mean([second[q][name] - first[q][name] for q in qids])
            assert result[name]["diff"] == pytest.approx(want)
    assert out["_"]["violation"]["n"] == 0
    negation = out["_ that are not _"]["violation"]
    assert negation["n"] == 20 and negation["violations_first"] == 10
    text = paired.render_by_template(out)
    assert "'_ or _' (n = 20)" in text and "violating 10 ->" in text
