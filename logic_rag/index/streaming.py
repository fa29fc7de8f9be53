"""Build an index folder from a corpus file in chunks: bounded memory, resumable after a kill.

:meth:`LogicRetriever.build <logic_rag.logic_retriever.LogicRetriever.build>` holds the
corpus, every document vector and every sentence vector in memory until ``save``; at a
million pages that is tens of GB, and a kill loses hours of encoding. :func:`stream_index`
reads the corpus ``chunk_size`` documents at a time, embeds each chunk (documents, then
their sentences) and appends it to shards in a work folder next to the output
(``.OUT.build``):

- each shard file is written atomically; a chunk counts as done only once
  ``progress.json`` lists it with its files' sizes and SHA-256 (also written atomically),
  so a kill at any moment leaves whole committed chunks and, at most, unlisted files that
  the next run overwrites;
- ``progress.json`` also records the inputs: the corpus file's size and SHA-256, the
  model's weights and configuration fingerprints, and every setting that changes what is
  written. A rerun with the same inputs continues after the last committed chunk; with
  other inputs it stops with :class:`ResumeMismatchError` naming each difference (pass
  ``restart=True``, ``--restart``, to start over);
- when every chunk is done the shards are joined into an ordinary index folder by
  :func:`~logic_rag.index.store.write_folder` (checksummed manifest, atomic swap), each
  output file written shard by shard, and the work folder is removed. The folder loads
  with :meth:`LogicRetriever.load <logic_rag.logic_retriever.LogicRetriever.load>` and
  holds what ``LogicRetriever.build(...).save(...)`` writes for the same corpus (the same
  documents file byte for byte; vectors equal up to the encoder's batch-padding noise).

Memory: one chunk's documents and float32 vectors while encoding; while joining, one
shard at a time, except the document index's own structure (HNSW's graph and vectors, or
IVF-PQ's training sample of at most ``max(40 nlist, 10,000)`` vectors and its codes; a flat
index is written without being built in memory). What grows with the corpus is 8 bytes of
id hash per document (duplicate ids are refused as chunks arrive) and the progress record.

Only dense and sentence vectors are built this way: a SPLADE index, a Milvus store and Ray
encoding go through ``LogicRetriever.build``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from logic_rag.atomic import atomic_open, atomic_write_json
from logic_rag.corpus import (
    DEFAULT_MAX_DOCUMENT_CHARS,
    CorpusFormat,
    Document,
    TextBudget,
    detect_format,
    iter_documents,
)
from logic_rag.errors import CorpusFormatError, IndexCorruptError, LogicRagError
from logic_rag.index.faiss_index import DenseIndex, IndexKind, write_flat_index
from logic_rag.index.npy import write_npy_blocks
from logic_rag.index.passages import (
    DEFAULT_SENTENCE_DTYPE,
    PassageVectors,
    SentenceDtype,
    check_sentence_dtype,
    document_bodies,
    quantize,
    split_corpus,
)
from logic_rag.index.store import check_out_dir, file_sha256, write_folder
from logic_rag.json_limits import loads_bounded

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "ResumeMismatchError",
    "CorpusChangedError",
    "stream_index",
    "work_folder",
    "discard_stale_build",
]

#: Documents per chunk: ~10 sentences each, so ~100k vectors (300 MB float32 at 768-d)
#: in memory at a time, and a kill loses at most a few minutes of encoding.
DEFAULT_CHUNK_SIZE = 10_000
PROGRESS_FILE = "progress.json"
_LOCK_FILE = "lock"
_FORMAT = "logic-rag-build"
_FORMAT_VERSION = 1
#: Names a build writes in its work folder (shards, the record, the lock) and the
#: temporaries of their atomic writes; nothing else is ever deleted from it.
_OURS = re.compile(
    r"\.?(\d{6}\.(docs\.jsonl|dense\.npy|ids\.npy|lengths\.npy|sent\.npy|scales\.npy)"
    r"|progress\.json|lock)(\.[A-Za-z0-9_]+\.tmp)?"
)


class ResumeMismatchError(LogicRagError, ValueError):
    """An interrupted build's work folder was made from other inputs than this run's."""


class CorpusChangedError(ResumeMismatchError):
    """The corpus file changed while it was being indexed: its chunks mix two versions."""


def work_folder(out_dir: str | os.PathLike[str]) -> Path:
    """Where the build of ``out_dir`` keeps its shards and progress: ``.OUT.build``."""
    out = Path(out_dir).absolute()
    return out.with_name(f".{out.name}.build")


def stream_index(
    docs: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    model: Any = None,
    format: CorpusFormat = "auto",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    passages: bool = True,
    sentence_dtype: SentenceDtype = DEFAULT_SENTENCE_DTYPE,
    index: IndexKind = "flat",
    max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS,
    restart: bool = False,
    progress: Callable[[str], None] | None = None,
    **index_options: Any,
) -> Path:
    """Index the corpus file ``docs`` into the folder ``out_dir`` chunk by chunk.

    ``model`` is a model name or a :class:`~logic_rag.encoders.dense.DenseEncoder`;
    ``sentence_dtype``, ``index``, ``index_options`` and ``max_document_chars`` mean what
    they mean for ``LogicRetriever.build``. ``progress`` receives one line per committed
    chunk. Returns the index folder. See the module docstring for resuming.
    """
    from logic_rag.encoders.dense import DenseEncoder

    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    check_sentence_dtype(sentence_dtype)
    DenseIndex(1, index, **index_options)  # refuse unknown kinds and options before any work
    out = check_out_dir(out_dir)
    source = Path(docs)
    corpus_file = source / "corpus.jsonl" if source.is_dir() else source
    if not corpus_file.is_file():
        raise FileNotFoundError(f"{corpus_file}: no such corpus file")
    resolved = detect_format(source) if format == "auto" else format
    # One reading pass before the model loads: a malformed line (invalid JSON, nested too
    # deep, longer than the line limit) fails in seconds with file:line, not after every
    # chunk before it was embedded (issue 42 item 6). Parsing is a small part of the time
    # encoding takes.
    for _document in iter_documents(source, resolved):
        pass
    encoder = model if isinstance(model, DenseEncoder) else DenseEncoder(model)
    settings = {
        "format": resolved,
        "chunk_size": chunk_size,
        "passages": bool(passages),
        "sentence_dtype": sentence_dtype,
        "index": index,
        "index_options": dict(sorted(index_options.items())),
        "max_document_chars": max_document_chars,
    }
    inputs = {
        "corpus": {"bytes": corpus_file.stat().st_size, "sha256": file_sha256(corpus_file)},
        "model": {
            "name": encoder.name,
            "weights_sha256": encoder.fingerprint,
            "config_sha256": encoder.config_fingerprint,
        },
        "settings": settings,
    }
    work = work_folder(out)
    say = progress or (lambda _line: None)
    with _locked(work, restart):
        record = _open_progress(work, inputs)
        builder = _ChunkWriter(work, record, encoder, settings, corpus_file)
        if record["chunks"]:
            done = len(record["chunks"])
            say(f"resuming after {done} committed chunks ({builder.documents:,} documents)")
        for number, chunk in enumerate(_chunks(iter_documents(source, resolved), chunk_size)):
            if number < len(record["chunks"]):
                continue
            builder.commit(number, chunk)
            say(f"chunk {number + 1}: {builder.documents:,} documents committed")
        if not record["chunks"]:
            raise CorpusFormatError(corpus_file, None, "holds no documents")
        _check_unchanged(corpus_file, inputs["corpus"], work)
        written = _join(work, record, encoder, settings, out, index_options)
    shutil.rmtree(work, ignore_errors=True)
    return written


def _check_unchanged(corpus: Path, recorded: dict[str, Any], work: Path) -> None:
    """Refuse to join when the corpus no longer has the bytes hashed when the build began.

    The chunks were read while the file was being written (an editor saving in place keeps
    the inode), so they may hold two versions of it: joining them gave an index mixing both,
    exit 0 (issue 42 item 11). Re-hashing costs one read of the corpus, next to hours of
    encoding. The committed chunks stay (their record names the old hash), so the next run
    refuses to resume them and says to pass ``--restart``.
    """
    try:
        now = {"bytes": corpus.stat().st_size, "sha256": file_sha256(corpus)}
    except OSError as exc:
        raise CorpusChangedError(
            f"{corpus} cannot be read again to check it did not change during the build "
            f"({exc.strerror or exc}); nothing was written"
        ) from None
    if now != {"bytes": recorded.get("bytes"), "sha256": recorded.get("sha256")}:
        raise CorpusChangedError(
            f"{corpus} changed while it was being indexed ({recorded.get('bytes')} -> "
            f"{now['bytes']} bytes, SHA-256 {_shown(recorded.get('sha256'))} -> "
            f"{_shown(now['sha256'])}); its chunks would mix two versions, so nothing was "
            f"written. Run again with --restart (restart=True) once the file is final"
        )


def discard_stale_build(out_dir: str | os.PathLike[str]) -> bool:
    """Remove the work folder of an interrupted chunked build of ``out_dir``, if no build
    holds it; returns whether it was removed.

    Called after a plain (in-memory) build wrote ``out_dir``: that index supersedes the
    interrupted one, and a work folder left behind made every later chunked build of the
    same output refuse to start until ``--restart`` (issue 42 item 15). Only the names a
    build writes are deleted; a folder holding anything else, or locked by a running
    build, is left alone.
    """
    work = work_folder(out_dir)
    if work.is_symlink() or not work.is_dir():
        return False
    if any(not _OURS.fullmatch(entry.name) for entry in work.iterdir()):
        return False
    try:
        lock = open(work / _LOCK_FILE, "a")  # noqa: SIM115 - closed below
    except OSError:
        return False
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a build is running: it will replace the output itself
        for entry in work.iterdir():
            if entry.name != _LOCK_FILE:
                entry.unlink()
        (work / _LOCK_FILE).unlink()
    with contextlib.suppress(OSError):
        work.rmdir()
    return not work.exists()


# ------------------------------------------------------------------------------ progress
@contextlib.contextmanager
def _locked(work: Path, restart: bool) -> Iterator[None]:
    """Hold the work folder's lock (a second build of the same output stops at once);
    ``restart`` first empties the folder of what earlier builds wrote."""
    if work.is_symlink() or (work.exists() and not work.is_dir()):
        raise FileExistsError(f"{work} is in the way of the build's work folder; remove it")
    if work.exists():
        strangers = sorted(e.name for e in work.iterdir() if not _OURS.fullmatch(e.name))
        if strangers:
            raise FileExistsError(
                f"{work} holds files a logic-rag build did not write ({', '.join(strangers[:5])})"
                f"; remove them or the folder"
            )
    work.mkdir(parents=True, exist_ok=True)
    with open(work / _LOCK_FILE, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FileExistsError(
                f"another process is building into {work}; wait for it to finish"
            ) from None
        if restart:
            for entry in work.iterdir():
                if entry.name != _LOCK_FILE:
                    entry.unlink()
        yield


def _open_progress(work: Path, inputs: dict[str, Any]) -> dict[str, Any]:
    """The progress record of ``work`` (created, or checked against ``inputs``)."""
    path = work / PROGRESS_FILE
    if path.exists():
        try:
            record = loads_bounded(path.read_text(encoding="utf-8"))
            ok = record.get("format") == _FORMAT and isinstance(record.get("chunks"), list)
        except (OSError, ValueError, AttributeError):
            ok = False
        if not ok:
            raise IndexCorruptError(
                f"{path} is not a logic-rag build record; remove {work} or pass --restart"
            )
        changed = _differences(record.get("inputs"), inputs)
        if changed:
            raise ResumeMismatchError(
                f"{work} holds an interrupted build of other inputs ({'; '.join(changed)}); "
                f"run again with the same corpus, model and settings to resume it, or pass "
                f"--restart (restart=True) to discard it and start over"
            )
        _remove_uncommitted(work, record)
        return record
    _remove_uncommitted(work, {"chunks": []})
    record = {
        "format": _FORMAT,
        "format_version": _FORMAT_VERSION,
        "inputs": inputs,
        "chunks": [],
    }
    atomic_write_json(path, record)
    return record


def _differences(old: Any, new: Any, where: str = "") -> list[str]:
    """Human-readable differences between two JSON values (``key: old -> new``)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new)):
            out += _differences(old.get(key), new.get(key), f"{where}.{key}" if where else key)
        return out
    if old == new:
        return []
    return [f"{where or 'inputs'}: {_shown(old)} -> {_shown(new)}"]


def _shown(value: Any) -> str:
    """A value for a message; a SHA-256 shortened to its first 12 digits."""
    return f"{value[:12]}..." if isinstance(value, str) and len(value) == 64 else repr(value)


def _remove_uncommitted(work: Path, record: dict[str, Any]) -> None:
    """Delete files a killed chunk left behind (shards not in the record, temporaries)."""
    listed = {PROGRESS_FILE, _LOCK_FILE}
    listed |= {name for chunk in record["chunks"] for name in chunk["files"]}
    for entry in work.iterdir():
        if entry.name not in listed:
            entry.unlink()


def _chunks(documents: Iterable[Document], size: int) -> Iterator[list[Document]]:
    chunk: list[Document] = []
    for document in documents:
        chunk.append(document)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# ----------------------------------------------------------------------------- encoding
def _id_hashes(ids: Iterable[str]) -> np.ndarray:
    """64-bit hashes of document ids (8 bytes a document to find duplicates by)."""
    digests = (hashlib.blake2b(i.encode("utf-8", "surrogatepass"), digest_size=8) for i in ids)
    return np.array([int.from_bytes(d.digest(), "little") for d in digests], dtype=np.uint64)


def _part(chunk: dict[str, Any], number: int, part: str) -> str | None:
    """The file name of shard ``part`` of chunk ``number``, if that chunk wrote one."""
    name = f"{number:06d}.{part}"
    return name if name in chunk["files"] else None


def _save_part(path: Path, array: np.ndarray) -> None:
    with atomic_open(path, "wb") as handle:
        np.save(handle, array, allow_pickle=False)


class _ChunkWriter:
    """Embeds chunks and commits their shards to the work folder, one chunk at a time."""

    def __init__(
        self,
        work: Path,
        record: dict[str, Any],
        encoder: Any,
        settings: dict[str, Any],
        corpus: Path,
    ) -> None:
        self.work = work
        self.record = record
        self.encoder = encoder
        self.settings = settings
        self.corpus = corpus
        self.documents = sum(c["documents"] for c in record["chunks"])
        parts = [_load(p) for p in _verified_parts(work, record, "ids.npy")]
        self.seen = np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.uint64)

    def commit(self, number: int, chunk: list[Document]) -> None:
        """Embed ``chunk`` (the ``number``-th), write its shards, then record it as done."""
        from logic_rag.index.layout import document_row

        hashes = _id_hashes(d.id for d in chunk)
        self._refuse_duplicates(chunk, hashes)
        budget = TextBudget(self.settings["max_document_chars"])
        texts = budget.apply([d.content for d in chunk])
        dense = self.encoder.encode_documents(texts, show_progress_bar=False)
        del texts
        stem = f"{number:06d}"
        names: dict[str, str] = {}

        def put(part: str, array: np.ndarray) -> None:
            names[part] = f"{stem}.{part}"
            _save_part(self.work / names[part], array)

        put("dense.npy", np.asarray(dense, dtype=np.float32))
        put("ids.npy", hashes)
        sentences = 0
        if self.settings["passages"]:
            bodies = document_bodies(chunk, self.settings["max_document_chars"])
            texts, offsets = split_corpus(bodies)
            vectors = self.encoder.encode_documents(
                texts, show_progress_bar=False, progress_label="sentences"
            )
            stored, scales = quantize(vectors, self.settings["sentence_dtype"])
            sentences = len(stored)
            put("lengths.npy", np.diff(offsets).astype(np.int64))
            put("sent.npy", stored)
            if scales is not None:
                put("scales.npy", scales)
        names["docs.jsonl"] = f"{stem}.docs.jsonl"
        with atomic_open(self.work / names["docs.jsonl"], "w") as handle:
            for document in chunk:
                handle.write(json.dumps(document_row(document), ensure_ascii=False) + "\n")
        files = {
            name: {
                "bytes": (self.work / name).stat().st_size,
                "sha256": file_sha256(self.work / name),
            }
            for name in names.values()
        }
        self.record["chunks"].append(
            {
                "documents": len(chunk),
                "sentences": sentences,
                "cut": budget.cut,
                "longest": budget.longest,
                "files": files,
            }
        )
        atomic_write_json(self.work / PROGRESS_FILE, self.record)  # the commit point
        self.documents += len(chunk)
        self.seen = np.sort(np.concatenate([self.seen, hashes]))

    def _refuse_duplicates(self, chunk: list[Document], hashes: np.ndarray) -> None:
        unique, counts = np.unique(hashes, return_counts=True)
        clash = set(unique[counts > 1].tolist())
        if len(self.seen):
            where = np.searchsorted(self.seen, hashes).clip(max=len(self.seen) - 1)
            clash |= set(hashes[self.seen[where] == hashes].tolist())
        if not clash:
            return
        first = next(i for i, h in enumerate(hashes.tolist()) if h in clash)
        doc_id = chunk[first].id
        raise CorpusFormatError(
            self.corpus,
            None,
            f"duplicate document id {doc_id!r} (document {self.documents + first + 1} repeats "
            f"an earlier one); document ids must be unique",
        )


# ------------------------------------------------------------------------------ joining
def _verified_parts(work: Path, record: dict[str, Any], part: str) -> list[Path]:
    """The committed shards of ``part`` in chunk order, each checked against its record."""
    paths = []
    for number, chunk in enumerate(record["chunks"]):
        name = _part(chunk, number, part)
        if name is None:
            continue
        path = work / name
        meta = chunk["files"][name]
        size = path.stat().st_size if path.is_file() else -1
        if size != meta["bytes"] or file_sha256(path) != meta["sha256"]:
            raise IndexCorruptError(
                f"{path} does not match its checksum in {work / PROGRESS_FILE}; the work "
                f"folder is damaged, run again with --restart"
            )
        paths.append(path)
    return paths


def _load(path: Path) -> np.ndarray:
    """One shard, read whole (a chunk's worth; shards are read one at a time, not mapped,
    so the pages of a joined shard do not stay counted in the process's memory)."""
    return np.load(path, allow_pickle=False)


def _shape(path: Path) -> tuple[tuple[int, ...], np.dtype]:
    """A shard's shape and dtype, from its header alone."""
    with open(path, "rb") as handle:
        fmt = np.lib.format
        version = fmt.read_magic(handle)
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, _fortran, dtype = read(handle)
    return shape, dtype


def _concat_npy(
    path: Path, parts: list[Path], transform: Callable[[np.ndarray], np.ndarray] | None = None
) -> None:
    """Write the row-wise concatenation of the ``.npy`` shards ``parts`` (optionally each
    transformed) as one ``.npy`` file, one shard in memory at a time; the bytes are those
    ``np.save`` writes for the concatenated array."""
    shapes = [_shape(p) for p in parts]
    sample = np.zeros((0, *shapes[0][0][1:]), dtype=shapes[0][1])
    sample = transform(sample) if transform else sample
    shape = (sum(s[0] for s, _ in shapes), *sample.shape[1:])
    blocks = (transform(_load(p)) if transform else _load(p) for p in parts)
    write_npy_blocks(path, shape, sample.dtype, blocks)


def _write_offsets(path: Path, parts: list[Path]) -> None:
    """CSR offsets (``0`` then the running sum of every document's sentence count)."""
    total = sum(_shape(p)[0][0] for p in parts) + 1

    def blocks() -> Iterator[np.ndarray]:
        running = 0
        yield np.zeros(1, np.int64)
        for part in parts:
            sums = np.cumsum(_load(part), dtype=np.int64) + running
            yield sums
            running = int(sums[-1]) if len(sums) else running

    write_npy_blocks(path, (total,), np.int64, blocks())


def _build_faiss(
    path: Path, parts: list[Path], kind: IndexKind, options: dict[str, Any], dim: int, total: int
) -> None:
    """The document index file, from the dense shards (flat: written, never built)."""
    if kind == "flat":
        write_flat_index(path, dim, total, (_load(p) for p in parts))
        return
    index = DenseIndex(dim, kind, **{**options, "refine": 0})
    if kind == "ivfpq":
        lists = index.lists_for(total)
        want = min(total, max(40 * lists, 10_000))
        picks = np.unique(np.linspace(0, total - 1, want).astype(np.int64))
        sample, start = [], 0
        for p in parts:
            block = np.load(p, mmap_mode="r", allow_pickle=False)  # only the sampled rows
            local = picks[(picks >= start) & (picks < start + len(block))] - start
            sample.append(np.asarray(block[local], dtype=np.float32))
            start += len(block)
            del block
        index.train(np.concatenate(sample), total)
        del sample
    for p in parts:
        index.add_trained(_load(p))
    index.save(path)


def _join(
    work: Path,
    record: dict[str, Any],
    encoder: Any,
    settings: dict[str, Any],
    out: Path,
    index_options: dict[str, Any],
) -> Path:
    """Write the index folder from the committed shards (see the module docstring)."""
    from logic_rag.index.layout import DOCS_FILE, EXACT_FILE, FAISS_FILE, dense_manifest

    chunks = record["chunks"]
    total = sum(c["documents"] for c in chunks)
    dense_parts = _verified_parts(work, record, "dense.npy")
    docs_parts = _verified_parts(work, record, "docs.jsonl")
    dim = int(_shape(dense_parts[0])[0][1])
    kind: IndexKind = settings["index"]
    manifest = dense_manifest(encoder, dimension=dim, index_kind=kind, document_count=total)
    manifest["text_budget"] = {
        "max_document_chars": settings["max_document_chars"],
        "documents_cut": sum(c["cut"] for c in chunks),
        "longest_document_chars": max(c["longest"] for c in chunks),
    }
    manifest["passages"] = settings["passages"]
    manifest["index_file"] = FAISS_FILE

    def documents(path: Path) -> None:
        with atomic_open(path, "wb") as handle:
            for part in docs_parts:
                with open(part, "rb") as source:
                    shutil.copyfileobj(source, handle, 1 << 20)

    writers: dict[str, Callable[[Path], None]] = {
        DOCS_FILE: documents,
        FAISS_FILE: lambda p: _build_faiss(p, dense_parts, kind, index_options, dim, total),
    }
    refine = int(index_options.get("refine", 4))
    if kind == "ivfpq" and refine:
        manifest["doc_vectors_file"] = EXACT_FILE
        manifest["refine"] = refine
        writers[EXACT_FILE] = lambda p: _concat_npy(p, dense_parts, lambda a: a.astype(np.float16))
    if settings["passages"]:
        manifest["sentence_dtype"] = settings["sentence_dtype"]
        sent = _verified_parts(work, record, "sent.npy")
        lengths = _verified_parts(work, record, "lengths.npy")
        writers[PassageVectors.VECTORS_FILE] = lambda p: _concat_npy(p, sent)
        writers[PassageVectors.OFFSETS_FILE] = lambda p: _write_offsets(p, lengths)
        if settings["sentence_dtype"] == "int8":
            scales = _verified_parts(work, record, "scales.npy")
            writers[PassageVectors.SCALES_FILE] = lambda p: _concat_npy(p, scales)
    return write_folder(out, writers, manifest)
