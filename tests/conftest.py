"""Shared fixtures: offline mode, the shared benchmark data, and a cached default model."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from logic_rag.paths import shared_data_dir  # noqa: E402


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared benchmark data folder; tests that need it skip when it is absent."""
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(f"shared benchmark data not found at {path}; set LOGIC_RAG_DATA to its folder")
    return path


@pytest.fixture(scope="session")
def minilm():
    """The default dense encoder, loaded once per test session."""
    from logic_rag.encoders.dense import DenseEncoder

    encoder = DenseEncoder("minilm")
    encoder.model  # noqa: B018 - load now so tests time their own work
    return encoder


@pytest.fixture(scope="session")
def msmarco_small(shared_data):
    """The first 300 MS MARCO passages plus every passage judged for the first 5 queries."""
    from logic_rag.corpus import load_beir

    data = load_beir(shared_data / "beir" / "msmarco")
    judged_qids = sorted(data.qrels)[:5]
    wanted = {d for q in judged_qids for d in data.qrels[q]}
    docs = [d for i, d in enumerate(data.corpus) if i < 300 or d.id in wanted]
    return docs, {q: data.queries[q] for q in judged_qids}, {q: data.qrels[q] for q in judged_qids}
