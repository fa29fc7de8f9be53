"""benchmarks.shapes: a model folder without weights, then random weights of its shapes."""

from __future__ import annotations

import pytest

from benchmarks import shapes


def test_strip_drops_weights_and_fill_restores_the_shapes(tmp_path):
    from sentence_transformers import SentenceTransformer

    from logic_rag.models import resolve_model

    source = resolve_model("minilm").path
    folder = tmp_path / "minilm"
    written = shapes.strip(source, folder)
    names = {p.name for p in written}
    assert "config.json" in names and "modules.json" in names
    assert not [p for p in written if p.suffix in (".safetensors", ".bin")]

    shapes.fill(folder)
    real = SentenceTransformer(str(source), device="cpu")
    random = SentenceTransformer(str(folder), device="cpu")
    a, b = real.encode(["a short text"]), random.encode(["a short text"])
    assert a.shape == b.shape == (1, 384)
    assert abs(float((a * b).sum())) < 0.9  # other weights, other vectors


def test_fill_writes_random_dense_heads(tmp_path):
    import json

    from safetensors.torch import load_file

    folder = tmp_path / "model"
    (folder / "2_Dense").mkdir(parents=True)
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "bert",
                "hidden_size": 32,
                "num_hidden_layers": 1,
                "num_attention_heads": 2,
                "intermediate_size": 37,
                "vocab_size": 99,
            }
        )
    )
    (folder / "modules.json").write_text(
        json.dumps(
            [
                {
                    "idx": 0,
                    "name": "2",
                    "path": "2_Dense",
                    "type": "sentence_transformers.models.Dense",
                }
            ]
        )
    )
    (folder / "2_Dense" / "config.json").write_text(
        json.dumps({"in_features": 32, "out_features": 48, "bias": False})
    )
    shapes.fill(folder, dtype="bfloat16")
    tensors = load_file(str(folder / "2_Dense" / "model.safetensors"))
    assert list(tensors) == ["linear.weight"]
    assert tuple(tensors["linear.weight"].shape) == (48, 32)
    assert (folder / "model.safetensors").is_file()


def test_strip_compresses_large_json_and_fill_unpacks_it(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    big = '{"vocab": "' + "x" * (5 << 20) + '"}'
    (source / "tokenizer.json").write_text(big)
    (source / "model.safetensors").write_bytes(b"weights")
    out = tmp_path / "out"
    names = {p.name for p in shapes.strip(source, out)}
    assert names == {"tokenizer.json.xz"}
    with pytest.raises((OSError, ValueError)):  # unpacks first, then finds no config.json
        shapes.fill(out)
    assert (out / "tokenizer.json").read_text() == big
