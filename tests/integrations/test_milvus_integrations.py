"""LogicReranker over real Milvus Lite stores in LlamaIndex and LangChain (small corpus).

Runs the rankers of ``experiments/milvus_acceptance.py``: each framework's own Milvus
integration with logic-rag's embeddings, plain top-k and the reranked top-n.
"""

from __future__ import annotations

import argparse

import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")
pytest.importorskip("llama_index.vector_stores.milvus")
pytest.importorskip("langchain_milvus")
pytest.importorskip("langchain_classic")

from experiments import milvus_acceptance  # noqa: E402
from logic_rag.corpus import Document  # noqa: E402

TEXTS = [
    "Orchids of Indonesia. The flowers are white.",
    "Orchids of Thailand. It is found near Bangkok.",
    "Films set in Naples. Directed by an Italian.",
    "Birds of Malaysia. It eats fruit.",
    "Orchids of Malaysia and Indonesia. It has purple flowers.",
    "Orchids of Indonesia and Thailand. It grows on trees.",
]


@pytest.fixture(scope="module")
def docs() -> list[Document]:
    return [Document(id=f"d{i}", title=f"T{i}", text=t) for i, t in enumerate(TEXTS)]


def test_both_frameworks_rank_alike_over_milvus(docs, minilm, tmp_path):
    args = argparse.Namespace(candidates=5, top_n=3)
    query = "Orchids of Indonesia but not Thailand"
    found = {}
    for name, make in milvus_acceptance.FRAMEWORKS.items():
        rank = make(docs, minilm, tmp_path / f"{name}.db", args)
        found[name] = rank(query)
    (li_plain, li_logic), (lc_plain, lc_logic) = found["llama_index"], found["langchain"]
    assert [d for d, _ in li_plain] == [d for d, _ in lc_plain]  # both stores are exact
    assert len(li_plain) == 5 and len(li_logic) == 3
    assert [d for d, _ in li_logic] == [d for d, _ in lc_logic]
    for (_, a), (_, b) in zip(li_logic, lc_logic, strict=True):
        assert a == pytest.approx(b, abs=1e-5)
    # the page that is also an orchid of Thailand is pushed below the pure Indonesian ones
    top = [d for d, _ in li_logic]
    assert "d1" not in top[:2] and "d5" not in top[:2]


def test_memoised_encoder_encodes_each_text_once(minilm):
    import numpy as np

    from logic_rag.encoders.dense import DenseEncoder

    encoder = DenseEncoder(minilm.name)  # not the session fixture: memoised() patches it
    calls: list[list[str]] = []
    bound = encoder.encode_documents

    def counting(texts, **kwargs):
        calls.append(list(texts))
        return bound(texts, **kwargs)

    encoder.encode_documents = counting
    memo = milvus_acceptance.memoised(encoder)
    first = memo.encode_documents(["a cat", "a dog", "a cat"])
    again = memo.encode_documents(["a dog", "a cat"])
    assert calls == [["a cat", "a dog"]]
    np.testing.assert_allclose(first[[1, 0]], again)
    np.testing.assert_allclose(
        first, minilm.encode_documents(["a cat", "a dog", "a cat"]), atol=1e-5
    )
    assert memo.encode_documents([]).shape[0] == 0
