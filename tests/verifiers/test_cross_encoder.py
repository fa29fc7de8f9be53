"""The cross-encoder verifier against CrossEncoder.predict itself, and its guards."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A binary CrossEncoder on MiniLM with an untrained head (enough to test plumbing)."""
    from sentence_transformers import CrossEncoder

    from logic_rag.models import resolve_model

    folder = tmp_path_factory.mktemp("ce")
    model = CrossEncoder(
        str(resolve_model("minilm").path), num_labels=1, local_files_only=True, device="cpu"
    )
    model.save_pretrained(str(folder))
    return folder


def test_probabilities_are_the_sigmoid_of_the_models_logits(tiny_cross_encoder):
    import torch
    from sentence_transformers import CrossEncoder

    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier

    pairs = [("Italian crime films", "Title\nA 1994 Italian crime film."), ("novels", "A poem.")]
    verifier = CrossEncoderVerifier(model=str(tiny_cross_encoder))
    reference = CrossEncoder(str(tiny_cross_encoder), local_files_only=True, device="cpu")
    logits = reference.predict([list(p) for p in pairs], activation_fn=torch.nn.Identity())
    np.testing.assert_allclose(verifier.verify_pairs(pairs), 1 / (1 + np.exp(-logits)), rtol=1e-4)
    assert verifier.cache.misses == 2
    verifier.verify_pairs(pairs)
    assert verifier.cache.hits == 2


def test_the_fingerprint_follows_the_weights(tiny_cross_encoder, tmp_path):
    import shutil

    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier

    copy = tmp_path / "copy"
    shutil.copytree(tiny_cross_encoder, copy)
    a = CrossEncoderVerifier(model=str(tiny_cross_encoder))
    b = CrossEncoderVerifier(model=str(copy))
    assert a.fingerprint() == b.fingerprint()
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert CrossEncoderVerifier(model=str(copy)).fingerprint() != a.fingerprint()


def test_a_multi_label_model_is_refused(tmp_path):
    from sentence_transformers import CrossEncoder

    from logic_rag.models import resolve_model
    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier

    model = CrossEncoder(
        str(resolve_model("minilm").path), num_labels=3, local_files_only=True, device="cpu"
    )
    model.save_pretrained(str(tmp_path))
    with pytest.raises(ValueError, match="3 output labels"):
        CrossEncoderVerifier(model=str(tmp_path)).verify_pairs([("a", "b")])
    with pytest.raises(ValueError, match="model=FOLDER"):
        CrossEncoderVerifier()


def test_spec_strings_build_verifiers(tiny_cross_encoder):
    from logic_rag.verifiers import CrossEncoderVerifier, EmbeddingVerifier, make_verifier

    assert isinstance(make_verifier("embedding"), EmbeddingVerifier)
    assert isinstance(make_verifier(f"cross-encoder:{tiny_cross_encoder}"), CrossEncoderVerifier)
    with pytest.raises(ValueError, match="unknown verifier"):
        make_verifier("nli")
