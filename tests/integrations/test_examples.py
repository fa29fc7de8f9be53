"""The README examples run as written and print logic-respecting results."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "integrations" / "examples"


@pytest.mark.parametrize(
    ("script", "framework"),
    [("llama_index_example.py", "llama_index.core"), ("langchain_example.py", "langchain_core")],
)
def test_example_runs(script, framework):
    pytest.importorskip(framework)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    # The berry is ranked below the California fruits that are not berries; no verdict
    # contradicts a page (✓ / ✗ / ? as True / False / None).
    assert "Avocados" in lines[0] and "Almonds" in lines[2]
    assert "Strawberries" in lines[4] and "'NOT berries': True" not in lines[5]
    assert "'NOT berries': False" not in lines[1] and "'NOT berries': False" not in lines[3]
    assert len((EXAMPLES / script).read_text().splitlines()) <= 30


@pytest.mark.parametrize(
    ("script", "framework"),
    [
        ("llama_index_reranker_example.py", "llama_index.core"),
        ("langchain_reranker_example.py", "langchain_core"),
    ],
)
def test_reranker_example_runs(script, framework):
    pytest.importorskip(framework)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 6
    # The vector store's candidates, re-ranked: the berry is last of the three, and no
    # verdict contradicts a page (✓ / ✗ / ? as True / False / None).
    assert {lines[0].split()[1], lines[2].split()[1]} == {"Avocados", "Almonds"}
    assert "Strawberries" in lines[4] and "'NOT berries': True" not in lines[5]
    assert "'NOT berries': False" not in lines[1] and "'NOT berries': False" not in lines[3]
    assert len((EXAMPLES / script).read_text().splitlines()) <= 30
