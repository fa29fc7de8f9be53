"""The ablation harness: resumability, results.json schema, report; a real tiny run (slow)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from experiments.finetune import logicol_ablation as ab

TINY = ab.AblationConfig(
    datasets=("world",),
    world_entities=300,
    train_queries=40,
    val_queries=12,
    test_queries=30,
    max_steps=2,
    batch_size=4,
)


def _fake_metrics(model: str) -> dict[str, Any]:
    # Distinct, deterministic numbers per model so the report can be checked.
    base = {"minilm": 0.5, "supcon": 0.4, "logicol-noconstraints": 0.35, "logicol": 0.2}
    v = base[Path(model).name]
    split = {
        "R@20": 0.6,
        "R@100": 0.9,
        "violation_rate": v,
        "n": 30,
        "n_violation": 8,
        "avg_group_sim": v / 2,
        "by_template": {},
    }
    return {"val": dict(split), "test": dict(split)}


@pytest.fixture
def fake_eval(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []

    def evaluate(model: str, data_dir: Path, *a: Any, **k: Any) -> dict[str, Any]:
        calls.append(Path(model).name)
        return _fake_metrics(model)

    monkeypatch.setattr(ab, "evaluate_model", evaluate)
    return calls


def test_harness_schema_report_and_resume(tmp_path: Path, fake_eval: list[str]) -> None:
    trained: list[tuple[str, int]] = []

    def train(condition: str, cfg: Any, data_dir: Path, out: Path, ts: Any) -> Path:
        trained.append((condition, len(ts.queries)))
        assert (data_dir / "atoms.jsonl").is_file() and cfg.max_steps == 2
        return out  # folder named after the condition

    results = ab.run_ablation(tmp_path, TINY, train_fn=train, log=lambda s: None)
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk == results
    jsonschema.validate(on_disk, ab.RESULTS_SCHEMA)
    assert list(on_disk["datasets"]["world"]) == list(ab.CLASSIC_CONDITIONS)
    # Every trained condition got the same training set; zero-shot was not trained.
    assert [c for c, _ in trained] == ["supcon", "logicol-noconstraints", "logicol"]
    assert len({n for _, n in trained}) == 1
    assert fake_eval == ["minilm", "supcon", "logicol-noconstraints", "logicol"]
    report = (tmp_path / "report.md").read_text()
    assert "| logicol | 0.600 | 0.900 | 0.200 (8)" in report
    assert "violation -50.0%" in report and "Acceptance" in report and ": met" in report

    # Resume: nothing is trained or evaluated again.
    trained.clear()
    fake_eval.clear()
    ab.run_ablation(tmp_path, TINY, train_fn=train, log=lambda s: None)
    assert trained == [] and fake_eval == []

    # Partial results resume from the first missing condition.
    del on_disk["datasets"]["world"]["logicol"]
    (tmp_path / "results.json").write_text(json.dumps(on_disk))
    ab.run_ablation(tmp_path, TINY, train_fn=train, log=lambda s: None)
    assert [c for c, _ in trained] == ["logicol"] and fake_eval == ["logicol"]

    with pytest.raises(SystemExit, match="different configuration"):
        ab.run_ablation(tmp_path, replace(TINY, max_steps=3), train_fn=train, log=lambda s: None)


def test_acceptance_rules() -> None:
    old = {"violation_rate": 0.5, "R@20": 0.6, "R@100": 0.9}
    assert ab.acceptance({"violation_rate": 0.39, "R@20": 0.6, "R@100": 0.9}, old) == "met"
    assert ab.acceptance({"violation_rate": 0.41, "R@20": 0.6, "R@100": 0.9}, old).startswith(
        "not met (violation change"
    )
    got = ab.acceptance({"violation_rate": 0.1, "R@20": 0.5, "R@100": 0.9}, old)
    assert got.startswith("not met") and "R@20 fell" in got
    assert ab.acceptance(
        {"violation_rate": 0.1, "R@20": 0.6, "R@100": 0.9}, {**old, "violation_rate": 0.0}
    ).startswith("undecided")


def test_schema_rejects_a_broken_results_file() -> None:
    bad = {"version": 1, "config": {"max_steps": 1, "batch_size": 1, "seed": 0, "base": "m"}}
    bad["datasets"] = {"world": {"mystery": {"model": "m", "wall_s": 1, "cpu_s": 1, "metrics": {}}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, ab.RESULTS_SCHEMA)


@pytest.mark.slow
def test_real_tiny_ablation_end_to_end(tmp_path: Path) -> None:
    results = ab.run_ablation(tmp_path, TINY, log=lambda s: None)
    jsonschema.validate(results, ab.RESULTS_SCHEMA)
    world = results["datasets"]["world"]
    for condition in ("supcon", "logicol-noconstraints", "logicol"):
        assert Path(world[condition]["model"]).is_dir()
        assert world[condition]["train_wall_s"] > 0
    zero = world["zero-shot"]["metrics"]["test"]
    assert 0 < zero["R@100"] <= 1 and zero["n_violation"] > 0
    # Two steps at lr 2e-5 move the model, but not far: recall stays in the same region.
    tuned = world["logicol"]["metrics"]["test"]
    assert abs(tuned["R@100"] - zero["R@100"]) < 0.2
    report = (tmp_path / "report.md").read_text()
    main_table, _, rest = report.partition("R@20 per template")
    assert main_table.count("| logicol") == 2  # logicol-noconstraints and logicol rows
    paired = rest.split("Paired against zero-shot", 1)[1]
    assert paired.count("| logicol") == 2 and "| supcon |" in paired


def test_recipe_overrides_are_typed_and_checked():
    from experiments.finetune.logicol_ablation import _recipe_extra

    assert _recipe_extra(["exclusion_temperature=0.05", "save_steps=7", "cached=true"]) == {
        "exclusion_temperature": 0.05,
        "save_steps": 7,
        "cached": True,
    }
    for bad in ("nonsense=1", "exclusion_temperature"):
        with pytest.raises(SystemExit, match="FIELD=VALUE"):
            _recipe_extra([bad])


def test_quest_config_runs_every_condition_on_dev_and_resumes_with_its_config() -> None:
    import json

    cfg = ab.quest_config()
    assert cfg.datasets == ("quest",) and cfg.eval_splits == ("test",)
    assert list(cfg.conditions) == list(ab.CONDITIONS)
    assert {"supcon-hardneg", "logicol-hardneg"} <= set(cfg.conditions)
    # What results.json stores must compare equal after a JSON round trip (resume).
    data = ab._config_json(cfg)
    assert json.loads(json.dumps(data)) == data
    assert ab.CONDITIONS["logicol-hardneg"] == ("logicol", "groups", True)
