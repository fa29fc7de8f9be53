"""Issue 18, in process: memory stays bounded whatever k or the number of ANDs (d02, d03),
and every strategy refuses text that is not valid Unicode (d08) instead of crashing.

Memory is asserted structurally: tracemalloc sees numpy's allocations, so a search with
k = 10**8 over a handful of documents must allocate next to nothing.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from logic_rag.compose.sparse_ops import (
    MAX_PSEUDO_TERMS,
    combined_pseudo_terms,
    disentangled_negation,
    search_pseudo_terms,
)
from logic_rag.corpus import Document
from logic_rag.index.faiss_index import DenseIndex
from logic_rag.index.inverted import InvertedIndex, top_k

HUGE_K = 10**8
LIMIT = 20 * 2**20  # 20 MiB: k = 10**8 float32 scores alone would be 400 MB


def _peak(fn):
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def _inverted(n_docs=20, vocab=50):
    rng = np.random.default_rng(0)
    index = InvertedIndex(vocab)
    index.add(sp.random(n_docs, vocab, density=0.3, format="csr", random_state=rng))
    return index


def test_d03_inverted_search_caps_k_before_allocating():
    index = _inverted()
    (scores, ids), peak = _peak(lambda: index.search(np.ones(50, np.float32), HUGE_K))
    assert ids.shape == scores.shape == (1, 20)
    assert peak < LIMIT
    (scores, ids), peak = _peak(lambda: top_k(np.zeros((2, 7), np.float32), HUGE_K))
    assert ids.shape == (2, 7) and peak < LIMIT


def test_d03_pseudo_term_search_caps_k_before_allocating():
    index = _inverted()
    rng = np.random.default_rng(1)
    query = combined_pseudo_terms(*(rng.random(50).astype(np.float32) for _ in range(3)))
    (scores, ids), peak = _peak(lambda: search_pseudo_terms(index, [query], HUGE_K))
    assert ids.shape == (1, 20) and peak < LIMIT


def test_d03_faiss_search_caps_k_before_allocating():
    index = DenseIndex(4)
    (scores, ids), peak = _peak(lambda: index.search(np.ones((1, 4), np.float32), HUGE_K))
    assert ids.shape == (1, 1) and peak < LIMIT  # empty index
    index.add(np.eye(4, dtype=np.float32))
    (scores, ids), peak = _peak(lambda: index.search(np.ones((3, 4), np.float32), HUGE_K))
    assert ids.shape == (3, 4) and peak < LIMIT


@pytest.mark.parametrize("n_atoms", [2, 3, 4, 6, 8, 65, 70])
def test_d02_combined_pseudo_terms_are_capped(n_atoms):
    rng = np.random.default_rng(n_atoms)
    vectors = [rng.random(300).astype(np.float32) for _ in range(n_atoms)]
    query, peak = _peak(lambda: combined_pseudo_terms(*vectors))
    assert query.terms.shape == (query.terms_used, n_atoms)
    assert query.terms_used <= MAX_PSEUDO_TERMS
    assert query.truncated == (n_atoms > 3)  # up to 3 atoms: the paper's full 5^n
    assert query.info()["truncated"] == query.truncated
    assert peak < LIMIT
    negated = disentangled_negation(query, rng.random(300).astype(np.float32))
    assert negated.truncated == query.truncated and negated.top_k == query.top_k
    index = _inverted(200, 300)
    (scores, ids), peak = _peak(lambda: search_pseudo_terms(index, [negated], 10))
    assert ids.shape == (1, 10) and peak < LIMIT


def test_d02_three_atoms_keep_the_exact_outer_product():
    a, b, c = (np.arange(1, 8, dtype=np.float32) * s for s in (1, 2, 3))
    query = combined_pseudo_terms(a, b, c)
    assert query.terms_used == 125 and not query.truncated
    # tuple (6, 6, 6) (the heaviest term of each) first, weight (7*14*21)^(1/3)
    assert query.terms[0].tolist() == [6, 6, 6]
    assert query.weights[0] == pytest.approx((7 * 14 * 21) ** (1 / 3), rel=1e-5)


DOCS = [
    Document(id="d1", title="Apple", text="Apples are crisp red fruits grown in orchards."),
    Document(id="d2", title="Lemon", text="Lemons are sour yellow citrus fruits."),
    Document(id="d3", title="Jazz", text="Jazz is a music genre from New Orleans."),
    Document(id="d4", title="Comedy film", text="A comedy film is a funny movie."),
]


@pytest.fixture(scope="module")
def tiny(minilm):
    from logic_rag.logic_retriever import LogicRetriever

    return LogicRetriever.build(DOCS, model=minilm, sparse_model="splade-tiny")


def test_d03_every_strategy_caps_k(tiny):
    from logic_rag.logic_retriever import STRATEGIES
    from tests.verifier_doubles import KeywordVerifier

    for strategy in STRATEGIES:
        # The LLM of quality and llm-rerank is a test double: the bound is the pipeline's.
        llm = strategy in ("quality", "llm-rerank")
        own = STRATEGIES[strategy].settings
        engine = tiny.with_settings(own(verifier=KeywordVerifier())) if llm else tiny
        hits, peak = _peak(
            lambda s=strategy, e=engine: e.search("fruits but not citrus", k=HUGE_K, strategy=s)
        )
        assert len(hits) == len(DOCS), strategy
        assert peak < 10 * LIMIT, strategy  # model activations included
    assert len(tiny.dense.search("fruits", k=HUGE_K)) == len(DOCS)


def test_d08_every_strategy_refuses_a_lone_surrogate(tiny):
    from logic_rag.logic_retriever import STRATEGIES

    for strategy in STRATEGIES:
        with pytest.raises(ValueError, match="not valid Unicode"):
            tiny.search("fruits \ud800 but not citrus", k=2, strategy=strategy)
    with pytest.raises(ValueError, match="document 1 is not valid Unicode"):
        tiny.dense.encoder.encode_documents(["fine", "bad \udcff"])


def test_d03_adapters_cap_k(tiny):
    from logic_rag.integrations._engine import cap_k, search

    assert cap_k(tiny, HUGE_K) == len(DOCS)
    assert len(search(tiny, "fruits", HUGE_K)) == len(DOCS)


def test_d12_nan_metadata_is_written_as_null(tiny, tmp_path):
    import json

    from logic_rag.retriever import DenseRetriever

    docs = [Document(id="a", text="apples", metadata={"year": float("nan"), "n": [1.0, np.inf]})]
    retriever = DenseRetriever.build(docs, model=tiny.dense.encoder)
    out = retriever.save(tmp_path / "idx")

    def refuse(name):
        raise AssertionError(name)

    row = json.loads((out / "documents.jsonl").read_text(), parse_constant=refuse)
    assert row["metadata"] == {"year": None, "n": [1.0, None]}


def test_d02_encoder_batches_are_bounded_in_padded_tokens():
    """65 atoms plus one long query text: the long text no longer pads a 32/64-text batch
    (MLM logits and attention grow with batch x padded length)."""
    from logic_rag.encoders import dense, sparse

    lengths = [260] + [6] * 65  # sorted longest first, as the encoders sort them
    for batches, limit in (
        (sparse._token_batches(lengths, 32, sparse._BATCH_TOKENS), sparse._BATCH_TOKENS),
        (dense._token_batches(lengths, 64), dense._BATCH_TOKENS),
    ):
        assert batches[0][0] == 0 and batches[-1][1] == len(lengths)
        assert all(a[1] == b[0] for a, b in zip(batches, batches[1:], strict=False))
        for start, stop in batches:
            assert (stop - start) * lengths[start] <= limit or stop - start == 1
    assert sparse._token_batches([10_000], 32, 1024) == [(0, 1)]  # one text always fits


def test_d02_encoder_batch_tokens_follow_the_device():
    """CPUs keep the 4,096-token cap; an accelerator gets whole batches; a setting wins."""
    from types import SimpleNamespace

    from logic_rag.encoders import dense
    from logic_rag.encoders.dense import DenseEncoder

    encoder = DenseEncoder("minilm", batch_size=64)
    cpu = SimpleNamespace(device="cpu", max_seq_length=256)
    gpu = SimpleNamespace(device="cuda:0", max_seq_length=256)
    assert encoder._batch_tokens(cpu) == dense._BATCH_TOKENS
    assert encoder._batch_tokens(gpu) == 64 * 256
    lengths = [150] * 200
    assert {b - a for a, b in dense._token_batches(lengths, 64, encoder._batch_tokens(gpu))} == {
        64,
        8,
    }
    assert max(b - a for a, b in dense._token_batches(lengths, 64)) == 4096 // 150
    assert DenseEncoder("minilm", max_batch_tokens=512)._batch_tokens(gpu) == 512
    with pytest.raises(ValueError, match="max_batch_tokens"):
        DenseEncoder("minilm", max_batch_tokens=0)
