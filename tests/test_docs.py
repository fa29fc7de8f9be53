"""The docs site: the API reference covers the public API, skipped blocks say why, and new
experiment reports reach the navigation. That every block runs as written, alone, from a
folder outside the checkout, and prints what the page shows is ``tests/docs/test_code_blocks.py``.

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
from tests.markdown_blocks import python_blocks, shell_commands

DOCS = project_root() / "docs"
#: Pages whose Python blocks are executed; experiment reports quote commands, not code.
PAGES = sorted([DOCS / "index.md", *(DOCS / "guides").glob("*.md")])


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


# ------------------------------------------------------------------ issue 43


def test_the_models_page_states_the_registrys_provenance():
    """The models guide says what `logic-rag models` prints: every short name with its
    published model, licence and every pinned SHA-256 (so the two cannot drift apart)."""
    from logic_rag.models import MODELS

    page = (DOCS / "guides" / "models.md").read_text(encoding="utf-8")
    assert "**Why these packages.**" in page
    for spec in MODELS.values():
        assert f"`{spec.name}`" in page, spec.name
        if spec.alias_of:
            continue
        assert spec.licence in page and (spec.revision or "not recorded") in page, spec.name
        for name, pin in spec.pinned.items():
            assert f"| `{spec.name}` | `{name}` ({pin.size:,} bytes) | `{pin.sha256}` |" in page


def test_guides_show_their_code_inline():
    """The repository host renders Markdown without pymdownx.snippets: an include line
    would show instead of the code."""
    for page in PAGES:
        assert "--8<--" not in page.read_text(encoding="utf-8"), page.name


def test_extras_bring_what_the_guides_import():
    """`pip install "logic-rag[langchain]"` must bring what the LangChain guide imports
    (ContextualCompressionRetriever moved to langchain-classic), likewise for LlamaIndex."""
    import ast
    import importlib.metadata
    import tomllib

    extras = tomllib.loads((project_root() / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]

    def names(extra: str) -> set[str]:
        return {re.split(r"[<>=!~ \[;]", r, maxsplit=1)[0].lower() for r in extras[extra]}

    distributions = importlib.metadata.packages_distributions()
    for page, extra in (("langchain.md", "langchain"), ("llama-index.md", "llama-index")):
        imported = set()
        for block in python_blocks((DOCS / "guides" / page).read_text(encoding="utf-8")):
            for node in ast.walk(ast.parse(block.code)):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    imported.add(node.module.split(".")[0])
                elif isinstance(node, ast.Import):
                    imported.update(a.name.split(".")[0] for a in node.names)
        imported -= {"logic_rag", *__import__("sys").stdlib_module_names}
        assert imported, page
        for module in sorted(imported):
            dists = {d.lower() for d in distributions.get(module, [])}
            assert dists & names(extra), (page, module, dists, extras[extra])


#: The pages a newcomer copies commands from (docs/index.md repeats the README).
COMMAND_PAGES = [project_root() / "README.md", *sorted((DOCS / "guides").glob("*.md"))]
_PLACEHOLDER = re.compile(r"\.\.\.|\[--|<[A-Za-z]|\bIDX\b")


def _argv(text: str) -> list[str] | None:
    """The words after ``logic-rag``, without comments and redirections (``$LOGIC_RAG_DATA``
    left as written); None for another program or a command with a placeholder."""
    import shlex

    # A comment starts a word, as in bash ("openai:http://host/v1#qwen" is one word).
    words = shlex.split(re.sub(r"(^|\s)#.*$", "", text))
    if not words or words[0] != "logic-rag" or _PLACEHOLDER.search(text):
        return None
    for cut in (">", ">>", "|", "2>"):
        if cut in words:
            words = words[: words.index(cut)]
    return words[1:]


def test_commands_run_from_any_folder_and_parse():
    """Every README and guide command reads data through ``$LOGIC_RAG_DATA`` (never a path
    relative to the checkout, which broke from any other folder), every path it names under
    it exists, and every ``logic-rag`` command parses with today's flags."""
    from logic_rag.cli import build_parser
    from logic_rag.paths import shared_data_dir

    data = shared_data_dir()
    parsed = 0
    for page in COMMAND_PAGES:
        text = page.read_text(encoding="utf-8")
        for block in python_blocks(text):
            assert "../shared" not in block.code, f"{page.name}:{block.line}: a relative path"
        for command in shell_commands(text):
            where = f"{page.name}:{command.line}: {command.text}"
            assert "../shared" not in command.text, f"{where}: a path relative to the checkout"
            argv = _argv(command.text)
            if argv is None:
                continue
            argv = [w.replace("$LOGIC_RAG_DATA", str(data)) for w in argv]
            try:
                build_parser().parse_args(argv)
            except SystemExit:
                pytest.fail(f"does not parse: {where}")
            parsed += 1
            for word in argv:
                if word.startswith(str(data)) and data.is_dir():
                    assert Path(word).exists(), f"{where}: {word} does not exist"
    assert parsed >= 15, parsed


def test_readme_commands_run_from_a_folder_outside_the_checkout(tmp_path: Path):
    """The README's evaluation block, first command as written, run by bash from a
    temporary folder with the venv's binaries first on PATH and LOGIC_RAG_DATA set."""
    import os
    import subprocess
    import sys

    from logic_rag.paths import shared_data_dir

    data = shared_data_dir()
    if not (data / "quest" / "attr" / "train_dev.jsonl").is_file():
        pytest.skip(f"QUEST-attr data not under {data} (LOGIC_RAG_DATA)")
    readme = (project_root() / "README.md").read_text(encoding="utf-8")
    (split,) = [c for c in shell_commands(readme) if "logic_rag.evals.quest.split" in c.text]
    assert not tmp_path.resolve().is_relative_to(project_root().resolve())
    env = {
        **os.environ,
        "LOGIC_RAG_DATA": str(data.resolve()),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    for command in (split.text, "logic-rag models --json > models.json"):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
    assert (tmp_path / "runs" / "split" / "dev.jsonl").is_file()
    assert (tmp_path / "models.json").stat().st_size > 100
