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
