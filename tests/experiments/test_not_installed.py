"""experiments/ reproduces reports; pip installs the library only, never these drivers."""

from __future__ import annotations

import tomllib

from logic_rag.paths import project_root


def test_experiments_are_not_packaged():
    config = tomllib.loads((project_root() / "pyproject.toml").read_text())["tool"]["setuptools"]
    names = [*config["packages"], *config["package-dir"]]
    assert not [n for n in names if "experiments" in n]
    assert all(not v.startswith("experiments") for v in config["package-dir"].values())


def test_the_drivers_import_from_the_repository_root():
    import experiments.entailment
    import experiments.finetune.logicol_ablation
    import experiments.milvus_acceptance

    assert experiments.finetune.logicol_ablation.run_ablation
    assert experiments.entailment.run_experiment
    assert experiments.milvus_acceptance.FRAMEWORKS
