"""Fixtures for the fine-tuning data tests: a small generated world with a train split."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def train_world(tmp_path_factory) -> Path:
    """A 300-entity world with 120 training queries (documents, atoms, train.jsonl)."""
    from logic_rag.evals.world import WorldConfig, generate_world, write_world

    out = tmp_path_factory.mktemp("train_world")
    config = WorldConfig(
        n_entities=300, n_queries_per_split={"train": 120, "val": 0, "test": 0}, seed=5
    )
    write_world(generate_world(config), out)
    return out
