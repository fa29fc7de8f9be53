"""The docs site: every Python block of the home page and the guides runs as written, the
API reference covers the public API, and new experiment reports reach the navigation.

``mkdocs build --strict`` itself runs in ``.ci/run`` (it needs the ``docs`` extra).
Blocks that cannot run offline or fast carry ``<!-- docs-test: skip REASON -->`` in the
page, so what is not executed is visible where it is written.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import logic_rag
from logic_rag.paths import project_root
from tests.markdown_blocks import python_blocks, run_page

DOCS = project_root() / "docs"
#: Pages whose Python blocks are executed; experiment reports quote commands, not code.
PAGES = sorted([DOCS / "index.md", *(DOCS / "guides").glob("*.md")])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_python_block_runs(page: Path, tmp_path, monkeypatch):
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip("no Python blocks")
    run_page(page, tmp_path, monkeypatch)


def test_skipped_blocks_say_why():
    skipped = [b for p in PAGES for b in python_blocks(p.read_text()) if b.skip is not None]
    assert all(len(b.skip.split()) >= 4 for b in skipped), [b.skip for b in skipped]


def _reference() -> str:
    return "\n".join(p.read_text() for p in (DOCS / "reference").glob("*.md"))


def test_reference_covers_every_public_name():
    reference = _reference()
    exports = logic_rag._EXPORTS
    missing = [
        name
        for name in logic_rag.__all__
        if name != "__version__" and f"::: logic_rag.{exports[name]}.{name}\n" not in reference
    ]
    assert missing == []


@pytest.mark.parametrize("module", ["llama_index", "langchain"])
def test_reference_covers_the_adapters(module: str):
    # Read from the integrations/ folder, which the install maps to logic_rag.integrations.
    assert f"::: integrations.{module}\n" in _reference()


def test_reference_points_at_objects_that_exist():
    import importlib

    for target in re.findall(r"^::: (\S+)$", _reference(), re.M):
        if target.startswith("integrations."):
            continue  # needs the framework; covered by the adapters' own tests
        module, _, name = target.rpartition(".")
        assert hasattr(importlib.import_module(module), name), target


def _hook():
    path = DOCS / "hooks" / "experiments_nav.py"
    spec = importlib.util.spec_from_file_location("experiments_nav", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_new_report_reaches_the_navigation_without_editing_mkdocs_yml(tmp_path):
    hook = _hook()
    folder = tmp_path / "experiments"
    folder.mkdir()
    (folder / "index.md").write_text("# Reports\n\n<!-- reports -->\n")
    (folder / "2026-11-20-old.md").write_text("# An older report\n")
    (folder / "2026-11-27-new.md").write_text("intro\n# A new report\n")
    config = {
        "docs_dir": str(tmp_path),
        "nav": [{"Home": "index.md"}, {"Experiments": ["experiments/index.md"]}],
    }
    hook.on_config(config)
    assert config["nav"][1]["Experiments"] == [
        "experiments/index.md",
        {"2026-11-27: A new report": "experiments/2026-11-27-new.md"},
        {"2026-11-20: An older report": "experiments/2026-11-20-old.md"},
    ]
    hook.on_config(config)  # idempotent (mkdocs serve reloads the config)
    assert len(config["nav"][1]["Experiments"]) == 3

    class Page:
        class file:
            src_uri = "experiments/index.md"

    page = hook.on_page_markdown((folder / "index.md").read_text(), Page, config)
    assert "- [2026-11-27: A new report](2026-11-27-new.md)" in page


def test_every_report_is_listed_in_the_real_nav():
    hook = _hook()
    listed = {path for entry in hook.report_entries(DOCS) for path in entry.values()}
    on_disk = {
        f"experiments/{p.name}" for p in (DOCS / "experiments").glob("*.md") if p.name != "index.md"
    }
    assert listed == on_disk and listed
