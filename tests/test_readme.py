"""The README is a short front page whose every Python block runs as written.

Blocks that use the default model run with the fast one here (``LOGIC_RAG_DEFAULT_MODEL``
is ``minilm`` for the whole suite, see ``conftest.py``); blocks that name a model run it.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from logic_rag.paths import project_root
from tests.markdown_blocks import python_blocks, run_page

README = project_root() / "README.md"

#: The order a newcomer reads in (the issue that shaped the README fixed it).
SECTIONS = ["Install", "Quickstart", "LlamaIndex", "LangChain", "Strategies", "Quality"]


def _without_outputs(text: str) -> list[str]:
    """The README's lines less the printed output after its code blocks and the test
    markers above them (tests/docs/test_code_blocks.py checks both)."""
    text = re.sub(
        r"(^```(?:python|bash)\n.*?^```\n)\n*```text\n.*?^```\n", r"\1", text, flags=re.S | re.M
    )
    return [line for line in text.splitlines() if not line.startswith("<!-- docs-test:")]


def test_readme_is_short_and_in_order():
    text = README.read_text()
    assert len(_without_outputs(text)) <= 200
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert [h for h in headings if h in SECTIONS] == SECTIONS
    first_block = text.split("```bash", 1)[1].split("```", 1)[0]
    assert "make demo" in first_block and "make test" in first_block
    assert "make test" in (project_root() / ".ci" / "run").read_text()


def test_readme_blocks_are_short():
    lines = [len(b.code.splitlines()) for b in python_blocks(README.read_text())]
    quickstart, *frameworks = lines
    assert quickstart <= 15
    assert all(n <= 11 for n in frameworks)  # the reranker shares the embedding's model


def test_no_readme_block_is_skipped():
    assert all(b.skip is None for b in python_blocks(README.read_text()))


def test_every_python_block_runs(tmp_path, monkeypatch, capsys):
    ran = run_page(README, tmp_path, monkeypatch)
    assert ran == len(python_blocks(README.read_text())) >= 3
    out = capsys.readouterr().out
    assert "Orchids of Malaysia" in out  # the quickstart printed its hits' constraints
    assert (tmp_path / "orchid-index").is_dir()


def test_framework_blocks_print_the_same_scores(tmp_path, monkeypatch, capsys):
    """The LlamaIndex and LangChain blocks rerank the same candidates for the same query:
    their printed scores agree (they once showed 1.023 and 0.887 with no word on why)."""
    blocks = python_blocks(README.read_text())
    text = README.read_text()
    picked = [b for b in blocks if "llama_index" in b.code or "langchain" in b.code]
    assert len(picked) == 2
    monkeypatch.chdir(tmp_path)
    scores = []
    for block in picked:
        if any(importlib.util.find_spec(m) is None for m in ("llama_index", "langchain_core")):
            pytest.skip("needs the llama-index and langchain extras")
        exec(compile(block.code, f"README.md:{block.line}", "exec"), {"__name__": "__docs__"})
        out = capsys.readouterr().out
        scores.append([line.split()[0] + " " + line.split("  ")[1] for line in out.splitlines()])
    assert scores[0] == scores[1] and len(scores[0]) == 2
    assert "**Scores.**" in text


@pytest.mark.parametrize("link", re.findall(r"\]\(((?:docs/)[^)#]+)", README.read_text()))
def test_links_into_the_docs_exist(link):
    assert (project_root() / link).is_file(), link
