"""Shared fixtures: offline mode, the shared benchmark data, and a cached default model."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The shipped default is EmbeddingGemma-300M; the suite builds hundreds of small indexes,
# so it runs on MiniLM unless a test names a model (tests/test_models.py checks Gemma).
os.environ.setdefault("LOGIC_RAG_DEFAULT_MODEL", "minilm")

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
def qwen_1_5b() -> str:
    """``qwen2.5-1.5b``, once it is installed: skips when it is not, but fails under
    ``LOGIC_RAG_REQUIRE_MODELS=1`` (CI, where `make` installs it)."""
    from logic_rag.errors import ModelNotFoundError
    from logic_rag.models import resolve_model

    try:
        resolve_model("qwen2.5-1.5b")
    except ModelNotFoundError as error:
        if os.environ.get("LOGIC_RAG_REQUIRE_MODELS"):
            raise
        pytest.skip(f"qwen2.5-1.5b not installed ({error}); run `make`")
    return "qwen2.5-1.5b"


@pytest.fixture(scope="session")
def msmarco_small(shared_data):
    """The first 300 MS MARCO passages plus every passage judged for the first 5 queries."""
    from logic_rag.corpus import load_beir

    data = load_beir(shared_data / "beir" / "msmarco")
    judged_qids = sorted(data.qrels)[:5]
    wanted = {d for q in judged_qids for d in data.qrels[q]}
    docs = [d for i, d in enumerate(data.corpus) if i < 300 or d.id in wanted]
    return docs, {q: data.queries[q] for q in judged_qids}, {q: data.qrels[q] for q in judged_qids}


@pytest.fixture(scope="session")
def small_world(tmp_path_factory):
    """A 400-entity generated world on disk (documents, atoms, query splits)."""
    from logic_rag.evals.world import WorldConfig, generate_world, write_world

    out = tmp_path_factory.mktemp("world")
    config = WorldConfig(
        n_entities=400, n_queries_per_split={"train": 0, "val": 0, "test": 80}, seed=3
    )
    write_world(generate_world(config), out)
    return out


@pytest.fixture(scope="session")
def small_logic_retriever(small_world, minilm):
    """A LogicRetriever over the small world with passages and SPLADE-tiny."""
    from logic_rag.corpus import load_documents
    from logic_rag.logic_retriever import LogicRetriever

    docs = load_documents(small_world / "documents.jsonl")
    return LogicRetriever.build(docs, model=minilm, sparse_model="splade-tiny")


#: MiniLM's whole-query top 10 for "novels that are not science fiction novels" among the
#: first 200 QUEST-attr novel pages, in that order (the first six are science fiction).
QUEST_NOVEL_TITLES = [
    "Against the Fall of Night",
    "Allegiant (novel)",
    "2001: A Space Odyssey (novel)",
    "An Anglo-American Alliance",
    "Against a Dark Background",
    "A Dusk of Demons",
    "Arlington Park (novel)",
    "A Storm of Swords",
    "Among the Missing (novel)",
    "A Sicilian Romance",
]


@pytest.fixture(scope="session")
def quest_novel_pages(shared_data):
    """Ten real QUEST-attr novel pages (``{"title", "text"}``), in QUEST_NOVEL_TITLES order."""
    import json

    path = shared_data / "quest" / "attr" / "documents.jsonl"
    if not path.is_file():
        pytest.skip(f"QUEST-attr pages not found at {path}")
    by_title = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["title"] in QUEST_NOVEL_TITLES:
                by_title[row["title"]] = row
    missing = [t for t in QUEST_NOVEL_TITLES if t not in by_title]
    if missing:
        pytest.skip(f"QUEST-attr pages missing from {path}: {missing}")
    return [by_title[t] for t in QUEST_NOVEL_TITLES]
