"""SpladeEncoder on real sentences with the packaged SPLADE-tiny model."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from logic_rag.compose.sparse_ops import as_vector, disentangled_negation
from logic_rag.encoders.sparse import SpladeEncoder
from logic_rag.errors import ModelNotFoundError

SENTENCES = [
    "orchids of malaysia",
    "Italian crime films of the 1990s",
    "The Manhattan Project was a research and development program during World War II "
    "that produced the first nuclear weapons, led by the United States.",
    "moths",
]


@pytest.fixture(scope="module")
def encoder() -> SpladeEncoder:
    return SpladeEncoder(batch_size=2, device="cpu")


def test_shapes_dtype_and_non_negative(encoder) -> None:
    mat = encoder.encode_documents(SENTENCES)
    assert isinstance(mat, sp.csr_matrix)
    assert mat.shape == (len(SENTENCES), encoder.vocab_size) == (4, 30522)
    assert mat.dtype == np.float32
    assert mat.data.min() > 0  # log(1 + ReLU(.)) >= 0, and zeros are not stored
    assert (mat.getnnz(axis=1) > 0).all()


def test_expected_terms_rank_high(encoder) -> None:
    q = encoder.encode_queries(["orchids of malaysia"])
    top = [tok for tok, _ in encoder.decode(q[0], top_k=5)]
    assert "orchid" in top and "malaysia" in top
    films = [tok for tok, _ in encoder.decode(encoder.encode_queries([SENTENCES[1]])[0], 8)]
    assert {"italian", "crime"} <= set(films)
    weights = [w for _, w in encoder.decode(q[0], top_k=10)]
    assert weights == sorted(weights, reverse=True)


def test_matches_splade_formula_from_raw_logits(encoder) -> None:
    """w_j = max_i log(1 + ReLU(logit_ij)), each text alone (no padding), vs batched rows."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(encoder.path), local_files_only=True)
    mlm = AutoModelForMaskedLM.from_pretrained(str(encoder.path), local_files_only=True).eval()
    batched = encoder.encode_documents(SENTENCES).toarray()  # padded batches of 2
    for row, text in zip(batched, SENTENCES, strict=True):
        enc = tok(text, return_tensors="pt", truncation=True, max_length=256)
        with torch.inference_mode():
            logits = mlm(**enc).logits[0]  # (tokens, vocab)
        ref = torch.log1p(torch.relu(logits)).max(dim=0).values.numpy()
        np.testing.assert_allclose(row, ref, rtol=1e-4, atol=1e-4)


def test_max_length_truncates(encoder) -> None:
    from transformers import AutoTokenizer

    short = SpladeEncoder(encoder.path, max_length=12, device="cpu")
    tok = AutoTokenizer.from_pretrained(str(encoder.path), local_files_only=True)
    ids = tok(SENTENCES[2], truncation=True, max_length=12)["input_ids"]
    assert len(ids) == 12
    prefix = tok.decode(ids[1:-1])  # the 10 word pieces that fit, without [CLS]/[SEP]
    np.testing.assert_allclose(
        short.encode_documents([SENTENCES[2]]).toarray(),
        encoder.encode_documents([prefix]).toarray(),
        atol=1e-4,
    )
    assert (short.encode_documents([SENTENCES[2]]) != encoder.encode_documents([SENTENCES[2]])).nnz


def test_rows_keep_input_order_and_do_not_depend_on_batching(encoder) -> None:
    texts = [SENTENCES[3], SENTENCES[2], SENTENCES[0]]
    together = encoder.encode_documents(texts).toarray()
    for i, text in enumerate(texts):
        alone = encoder.encode_documents([text]).toarray()[0]
        np.testing.assert_allclose(together[i], alone, atol=1e-4)
    assert encoder.encode_documents([]).shape == (0, 30522)


def test_bad_text_is_rejected(encoder) -> None:
    with pytest.raises(ValueError, match="text 1 is empty"):
        encoder.encode_queries(["orchids", "  "])
    # a single string is one text (as in DenseEncoder), not a list of characters
    assert encoder.encode_documents("orchids").shape == (1, 30522)
    with pytest.raises(TypeError, match="text 0 is int"):
        encoder.encode_documents([3])


def test_weights_fingerprint(encoder) -> None:
    want = hashlib.sha256((encoder.path / "model.safetensors").read_bytes()).hexdigest()
    assert encoder.weights_fingerprint == want
    assert encoder.weights_fingerprint is encoder.weights_fingerprint  # cached


def test_model_resolution(encoder, tmp_path) -> None:
    with pytest.raises(ModelNotFoundError, match="local"):
        SpladeEncoder("no-such-sparse-model")
    assert SpladeEncoder(encoder.path).fingerprint == encoder.fingerprint  # a local folder
    (tmp_path / "config.json").write_text('{"architectures": ["BertModel"]}')
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(ModelNotFoundError, match="not a SPLADE"):
        SpladeEncoder(tmp_path)


def test_disentangled_negation_on_real_vectors(encoder) -> None:
    """'orchids of malaysia' NOT 'orchids of thailand': orchid stays, thailand is penalised."""
    qa, qb = encoder.encode_queries(["orchids of malaysia", "orchids of thailand"])
    composed = disentangled_negation(as_vector(qa), as_vector(qb))
    terms = dict(encoder.decode(composed, top_k=None))
    assert terms["orchid"] > 0 and terms["malaysia"] > 0
    assert terms["thailand"] < 0


def test_imports_stay_light() -> None:
    code = (
        "import sys, logic_rag.encoders.sparse, logic_rag.index.inverted, "
        "logic_rag.compose.sparse_ops; "
        "heavy = {'torch', 'transformers', 'sentence_transformers'} & set(sys.modules); "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
