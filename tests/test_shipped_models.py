"""The adapters logic-rag ships (logic-gemma, logic-verifier): pinned, loadable offline by short
name, applied over their pinned bases, and refused when altered."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from logic_rag.errors import ModelNotFoundError
from logic_rag.models import MODELS, SHIPPED_DIR, SHIPPED_PINS, resolve_model
from logic_rag.weights import WeightsIntegrityError, sha256_file

SHIPPED = ("logic-gemma", "logic-verifier")


@pytest.mark.parametrize("name", SHIPPED)
def test_every_weight_file_of_a_shipped_adapter_is_pinned_and_matches(name):
    folder = SHIPPED_DIR / name
    files = sorted(p.name for p in folder.glob("*.safetensors"))
    assert files, f"{folder} ships no weights"
    assert sorted(SHIPPED_PINS[name]) == files
    for file in files:
        pin = SHIPPED_PINS[name][file]
        assert (folder / file).stat().st_size == pin.size
        assert sha256_file(folder / file) == pin.sha256
        assert pin.size <= 25 * 1024 * 1024


@pytest.mark.parametrize("name", SHIPPED)
def test_the_card_names_base_data_recipe_commit_and_licence(name):
    import json

    card = json.loads((SHIPPED_DIR / name / "logic_rag_training.json").read_text("utf-8"))
    assert card["artifact"] == name
    assert card["recipe_command"].startswith(f"logic-rag finetune {name} --out DIR")
    assert len(card["commit"]) == 40
    assert card["base_model"]["weights_sha256"]
    if name == "logic-gemma":
        assert "Gemma Terms of Use" in card["licence"]
    spec = MODELS[name]
    assert card["commit"] in spec.revision
    assert spec.licence == card["licence"]


def _resolved_or_skip(name: str):
    try:
        return resolve_model(name)
    except ModelNotFoundError as exc:
        if os.environ.get("LOGIC_RAG_REQUIRE_MODELS"):
            raise
        pytest.skip(f"the base of {name} is not installed ({exc}); run `make`")


def test_an_altered_adapter_is_refused(tmp_path, monkeypatch):
    import logic_rag.models as models

    copy = tmp_path / "logic-verifier"
    shutil.copytree(SHIPPED_DIR / "logic-verifier", copy)
    weights = copy / "adapter_model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    monkeypatch.setattr(models, "SHIPPED_DIR", tmp_path)
    with pytest.raises(WeightsIntegrityError, match="logic-verifier"):
        resolve_model("logic-verifier")


def test_an_adapter_for_other_base_weights_is_refused(tmp_path):
    import json

    copy = tmp_path / "adapter"
    shutil.copytree(SHIPPED_DIR / "logic-verifier", copy)
    meta = json.loads((copy / "logic_rag_adapter.json").read_text())
    meta["base_weights_sha256"] = "0" * 64
    (copy / "logic_rag_adapter.json").write_text(json.dumps(meta))
    with pytest.raises(ModelNotFoundError, match="trained on 'minilm' weights"):
        resolve_model(copy)


def test_logic_verifier_loads_by_short_name_and_tells_members_from_strangers():
    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier

    resolved = _resolved_or_skip("logic-verifier")
    assert resolved.kind == "cross-encoder" and resolved.adapter == SHIPPED_DIR / "logic-verifier"
    verifier = CrossEncoderVerifier(model="logic-verifier")
    logits = verifier.score_texts(
        [
            ("dogs", "poodle: an intelligent dog with a thick curly coat"),
            ("dogs", "oak, oak tree: a deciduous tree bearing acorns"),
            (
                "1990s films",
                "Heat is a 1995 American crime film written and directed by Michael Mann.",
            ),
            ("1990s films", "Casablanca is a 1942 American romantic drama film."),
        ]
    )
    assert logits[0] > logits[1]
    assert logits[2] > logits[3]


def test_logic_gemma_is_a_query_adapter_over_the_base_documents():
    from logic_rag.encoders.dense import DenseEncoder

    _resolved_or_skip("logic-gemma")
    tuned, base = DenseEncoder("logic-gemma"), DenseEncoder("embeddinggemma-300m")
    assert tuned.query_only
    docs = ["Heat is a 1995 American crime film.", "The oak is a tree."]
    np.testing.assert_array_equal(tuned.encode_documents(docs), base.encode_documents(docs))
    queries = ["1990s crime films that are not American"]
    assert not np.allclose(tuned.encode_queries(queries), base.encode_queries(queries))
    assert tuned.fingerprint != base.fingerprint


def test_logic_gemma_searches_an_index_built_with_the_base(tmp_path):
    from logic_rag.corpus import Document
    from logic_rag.retriever import DenseRetriever

    _resolved_or_skip("logic-gemma")
    docs = [
        Document("a", "Heat", "Heat is a 1995 American crime film."),
        Document("b", "Oak", "The oak is a deciduous tree."),
    ]
    DenseRetriever.build(docs, model="embeddinggemma-300m").save(tmp_path / "index")
    retriever = DenseRetriever.load(tmp_path / "index", model="logic-gemma")
    hits = retriever.search("crime films", k=2)
    assert [h.id for h in hits][0] == "a"


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ["logic-gemma", "logic-verifier"])
def test_the_recipe_rebuilds_an_adapter_end_to_end_on_a_tiny_configuration(
    recipe, tmp_path, shared_data: Path
):
    """The seeded command of each shipped artifact, on MiniLM and a few steps: it writes an
    adapter folder with its card that loads over the base."""
    from logic_rag.finetune.recipes.cli import main

    out = tmp_path / "run"
    argv = ["--out", str(out), "--data", str(shared_data), "--base", "minilm", "--max-steps", "2"]
    argv += ["--batch-size", "4", "--wordnet-docs", "300"]
    if recipe == "logic-gemma":
        argv += ["--wordnet-queries", "10"]
    else:
        argv += ["--nli-limit", "40", "--wordnet-pairs", "40"]
    assert main(recipe, argv) == 0
    model = out / "train" / "model"
    resolved = resolve_model(model)
    assert resolved.adapter == model.resolve()
    assert (model / "README.md").read_text().count("recipe_command") == 1
    if recipe == "logic-gemma":
        from logic_rag.encoders.dense import DenseEncoder

        assert DenseEncoder(model).encode_queries(["dogs"]).shape == (1, 384)
    else:
        from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier

        assert CrossEncoderVerifier(model=str(model)).score_texts([("dogs", "a poodle")]).shape == (
            1,
        )


def test_the_shipped_folders_are_package_data():
    """A wheel carries the adapters: every file under logic_rag/shipped matches a glob of
    the package data that setuptools installs with ``logic_rag``."""
    import fnmatch
    import tomllib

    root = SHIPPED_DIR.parent.parent
    config = tomllib.loads((root / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["logic_rag"]
    files = [
        p.relative_to(SHIPPED_DIR.parent).as_posix() for p in SHIPPED_DIR.rglob("*") if p.is_file()
    ]
    assert files
    for file in files:
        assert any(fnmatch.fnmatch(file, g) for g in globs), file


@pytest.mark.parametrize("recipe", ["logic-gemma", "logic-verifier"])
def test_a_bad_recipe_argument_is_one_usage_error(recipe, tmp_path, capsys):
    from logic_rag.finetune.recipes.cli import main

    with pytest.raises(SystemExit) as info:
        main(recipe, ["--out", str(tmp_path), "--lora-rank", "0"])
    assert info.value.code == 2
    assert "--lora-rank and --lora-alpha must be >= 1" in capsys.readouterr().err
