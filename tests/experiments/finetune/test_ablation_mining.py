"""Mined hard negatives of the ablation: read from the base's cached index, keyed by weights."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from experiments.finetune import logicol_ablation as ab
from experiments.finetune import search
from logic_rag.finetune.data import TrainingSet, TrainQuery

VOCAB = ("cat", "dog", "car", "sea", "sun", "red")


class WordEncoder:
    """Stands in for a DenseEncoder: bag-of-words vectors over VOCAB, counting documents."""

    def __init__(self, fingerprint: str = "w" * 64) -> None:
        self.fingerprint = fingerprint
        self.config_fingerprint = "config" * 4
        self.dtype = "float32"
        self.name = "words"
        self.documents_encoded = 0

    def _embed(self, texts) -> np.ndarray:
        rows = np.array(
            [[t.lower().count(w) + 0.01 * i for i, w in enumerate(VOCAB)] for t in texts]
        )
        rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return rows.astype(np.float32)

    def encode_documents(self, texts, show_progress_bar=False):
        self.documents_encoded += len(texts)
        return self._embed(texts)

    def encode_queries(self, texts, show_progress_bar=False):
        return self._embed(texts)


def _data(tmp_path: Path) -> tuple[Path, TrainingSet]:
    docs = {
        f"p{i}": text
        for i, text in enumerate(
            [
                "cat cat",
                "cat dog",
                "cat car",
                "dog dog",
                "cat sea",
                "sun sun",
                "red car",
                "cat cat dog",
            ]
        )
    }
    (tmp_path / "documents.jsonl").write_text(
        "".join(json.dumps({"title": d, "text": t}) + "\n" for d, t in docs.items()),
        encoding="utf-8",
    )
    (tmp_path / "atoms.jsonl").write_text("", encoding="utf-8")
    from logic_rag.finetune.data import load_documents_map

    documents = load_documents_map(tmp_path / "documents.jsonl")
    queries = [TrainQuery("q1", "cat", ("p0",)), TrainQuery("q2", "dog", ("p3", "p1"))]
    return tmp_path, TrainingSet(queries, documents)


def test_mined_negatives_follow_the_base_ranking_and_share_its_cached_embeddings(
    tmp_path: Path, monkeypatch
) -> None:
    data_dir, ts = _data(tmp_path)
    encoder = WordEncoder()
    monkeypatch.setattr(search, "load_encoder", lambda name, **_: encoder)
    cfg = ab.AblationConfig(base="words", mined_negatives=2)
    out = ab.hard_negative_set(ts, data_dir, cfg, log=lambda _: None)

    # Brute force: cosine ranking of every page, best first, gold removed, first two kept.
    ids = list(ts.documents)
    doc_vectors = encoder._embed([ts.documents[d] for d in ids])
    for q in out.queries:
        scores = doc_vectors @ encoder._embed([q.text])[0]
        order = [ids[i] for i in np.argsort(-scores, kind="stable") if ids[i] not in q.gold]
        assert list(q.hard_negatives) == order[:2], q.query_id
    assert encoder.documents_encoded == len(ids)

    # The evaluation of the base reads the same cached embeddings: nothing is encoded again.
    ab.document_index(data_dir, encoder)
    assert encoder.documents_encoded == len(ids)
    (cached,) = (data_dir / "embeddings").glob("*.npy")
    assert cached == search.document_cache_path(
        encoder, [ts.documents[d] for d in ids], data_dir / "embeddings"
    )

    # The mined lists are cached under the weights; another model of the same name mines afresh.
    (mined,) = data_dir.glob("mined-*.json")
    assert encoder.fingerprint[:12] in mined.name
    other = WordEncoder(fingerprint="v" * 64)
    monkeypatch.setattr(search, "load_encoder", lambda name, **_: other)
    ab.hard_negative_set(ts, data_dir, cfg, log=lambda _: None)
    assert other.documents_encoded == len(ids)
    assert len(list(data_dir.glob("mined-*.json"))) == 2
