"""Each adapter imports only its own framework; the package imports neither."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def loaded(module: str) -> set[str]:
    listing = "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    proc = run(f"import json, sys, {module}\n{listing}")
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout))


def test_package_imports_no_framework():
    mods = loaded("logic_rag.integrations")
    assert not mods & {"llama_index", "langchain_core", "langchain", "torch"}


@pytest.mark.parametrize(
    ("adapter", "own", "other"),
    [
        ("logic_rag.integrations.llama_index", "llama_index", "langchain_core"),
        ("logic_rag.integrations.langchain", "langchain_core", "llama_index"),
    ],
)
def test_adapter_imports_only_its_framework(adapter, own, other):
    pytest.importorskip(own)
    mods = loaded(adapter)
    assert own in mods and other not in mods and "langchain" not in mods
    assert "torch" not in mods and "sentence_transformers" not in mods


@pytest.mark.parametrize(
    ("adapter", "framework", "extra"),
    [
        ("logic_rag.integrations.llama_index", "llama_index", "llama-index"),
        ("logic_rag.integrations.langchain", "langchain_core", "langchain"),
    ],
)
def test_missing_framework_says_what_to_install(adapter, framework, extra):
    # A None entry in sys.modules makes `import framework` raise ImportError.
    proc = run(f"import sys; sys.modules[{framework!r}] = None; import {adapter}")
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr
    assert f"pip install 'logic-rag[{extra}]'" in proc.stderr
