"""Packaging: every package folder is listed in pyproject.toml."""

from __future__ import annotations

import tomllib

from logic_rag.paths import project_root

_ROOTS = {
    "logic_rag": "logic_rag",
    "integrations": "logic_rag.integrations",
    "finetune": "logic_rag.finetune",
    "evals": "logic_rag.evals",
}


def test_every_package_folder_is_listed():
    root = project_root()
    config = tomllib.loads((root / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = set()
    for folder, name in _ROOTS.items():
        for init in (root / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(root / folder).parts
            found.add(".".join((name, *parts)))
    assert found - listed == set(), "add these packages to [tool.setuptools] packages"


def test_package_data_files_exist_and_ship():
    """The demo's WordNet glosses and WordNet's notice are package data (a wheel carries
    them; the notice must go wherever the glosses go)."""
    root = project_root()
    config = tomllib.loads((root / "pyproject.toml").read_text())
    shipped = config["tool"]["setuptools"]["package-data"]["logic_rag.evals"]
    assert {"data/wordnet_demo.noun.gz", "data/WORDNET_LICENSE"} <= set(shipped)
    on_disk = {f"data/{p.name}" for p in (root / "evals" / "data").iterdir() if p.is_file()}
    assert on_disk == set(shipped), "list every file of evals/data in package-data"


def test_experiments_and_benchmarks_stay_out_of_the_wheel():
    """The experiment drivers and benchmarks live in the repository, not in the wheel
    (issue 50 item 6): no listed package and no package-dir folder reaches them, while the
    evals and fine-tuning users run (``logic-rag eval``, ``finetune``, ``adapt``) ship."""
    root = project_root()
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    assert not {p for p in listed if p.split(".")[0] in ("benchmarks", "experiments")}
    folders = {folder.split("/")[0] for folder in setuptools["package-dir"].values()}
    assert not folders & {"benchmarks", "experiments"}
    assert {"logic_rag.cli", "logic_rag.evals", "logic_rag.evals.world"} <= listed
    assert {"logic_rag.finetune", "logic_rag.finetune.adapt"} <= listed
