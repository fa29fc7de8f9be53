"""The README's framework examples are the example files the tests run, verbatim."""

from __future__ import annotations

import re

import pytest

from logic_rag.paths import project_root


@pytest.mark.parametrize(
    "name",
    [
        "llama_index_example.py",
        "langchain_example.py",
        "llama_index_reranker_example.py",
        "langchain_reranker_example.py",
    ],
)
def test_readme_shows_the_tested_example(name):
    root = project_root()
    code = (root / "integrations" / "examples" / name).read_text()
    code = re.sub(r'^""".*?"""\n\n', "", code, flags=re.S).rstrip() + "\n"
    assert f"```python\n{code}```" in (root / "README.md").read_text()


def test_readme_starts_with_the_two_commands():
    readme = (project_root() / "README.md").read_text()
    setup = readme.split("## Set-up: two commands", 1)[1].split("```", 2)[1]
    assert "make demo" in setup and "make test" in setup
    assert "make test" in (project_root() / ".ci" / "run").read_text()
