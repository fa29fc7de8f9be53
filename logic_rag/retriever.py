"""The dense retrieval engine: encoder + FAISS index + documents -> ranked hits.

``DenseRetriever.build`` embeds a corpus and indexes it; ``save`` writes a checksummed
index folder; ``DenseRetriever.load`` verifies the folder and that the query encoder is the
one the index was built with (same weights hash and dimension), then ``search`` returns
:class:`Hit` objects.

Named by its role: the dense-only retriever that :class:`~logic_rag.LogicRetriever` builds
on (``LogicRetriever.dense``); ``DenseIndex`` is the FAISS wrapper it holds. It was called
``Retriever`` until 0.1: that name still resolves here and in ``logic_rag`` for one release
and warns (DeprecationWarning).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from logic_rag.atomic import atomic_write_jsonl
from logic_rag.corpus import (
    DEFAULT_MAX_DOCUMENT_CHARS,
    CorpusFormat,
    Document,
    TextBudget,
    load_documents,
    read_jsonl,
)
from logic_rag.encoders.dense import DenseEncoder, check_texts
from logic_rag.errors import CorpusFormatError, IndexCorruptError, IndexMismatchError
from logic_rag.index.exact import ExactIndex
from logic_rag.index.faiss_index import DenseIndex, IndexKind
from logic_rag.index.layout import (
    DOCS_FILE,
    EXACT_FILE,
    FAISS_FILE,
    dense_manifest,
    document_row,
)
from logic_rag.index.snapshot import IndexSnapshot, open_snapshot
from logic_rag.index.store import write_folder

__all__ = ["Hit", "DenseRetriever", "make_hits", "dense_manifest", "document_row"]


@dataclass
class Hit:
    """One retrieved document with its score and 1-based rank.

    Logical strategies fill ``constraints`` (each constraint of the query, e.g.
    ``"Flora of Malaysia"`` or ``"NOT Flora of Thailand"``, mapped to the verdict: ``True``
    (✓ holds), ``False`` (✗ does not) or ``None`` (? unsure), see
    :mod:`logic_rag.verifiers.verdicts`), ``constraint_scores`` (the degrees in [0, 1] the
    verdicts come from), ``constraint_sources`` (which verifier gave each verdict:
    ``embedding``, ``llm``, ``cross-encoder``) and ``logic`` (the decomposed query, its
    confidence and its source).
    """

    id: str
    title: str
    text: str
    score: float
    rank: int
    metadata: dict[str, Any] = field(default_factory=dict)
    constraints: dict[str, bool | None] = field(default_factory=dict)
    constraint_scores: dict[str, float] = field(default_factory=dict)
    logic: dict[str, Any] = field(default_factory=dict)
    constraint_sources: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON shape: ``{"id","title","score","text"}`` plus extras if set."""
        row: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "score": float(self.score),
            "text": self.text,
        }
        if self.metadata:
            row["metadata"] = self.metadata
        if self.constraints:
            row["constraints"] = self.constraints
            row["constraint_scores"] = self.constraint_scores
            if self.constraint_sources:
                row["constraint_sources"] = self.constraint_sources
        if self.logic:
            row["logic"] = self.logic
        return row


#: Names kept for one release after a rename: old name -> new name.
RENAMED = {"Retriever": "DenseRetriever"}


def renamed(name: str, module: str, *, stacklevel: int = 3) -> Any:
    """The object an old name of this module stands for, with a DeprecationWarning that
    names the new one (``module``: where the old name was looked up)."""
    new = RENAMED[name]
    warnings.warn(
        f"{module}.{name} is deprecated and goes in the next release: it is "
        f"{module}.{new} (the dense-only retriever LogicRetriever builds on)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return globals()[new]


def __getattr__(name: str) -> Any:
    """PEP 562: ``Retriever`` (renamed ``DenseRetriever``) still resolves, and warns."""
    if name in RENAMED:
        return renamed(name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class DenseRetriever:
    """Dense retrieval over a corpus.

    Build one with :meth:`build` (or :meth:`from_file`), persist it with :meth:`save`,
    reopen it with :meth:`load`.
    """

    def __init__(
        self,
        encoder: DenseEncoder,
        index: DenseIndex | ExactIndex,
        documents: Sequence[Document],
    ) -> None:
        """``index``: a FAISS :class:`DenseIndex` (or a Milvus one), or an in-memory
        :class:`~logic_rag.index.exact.ExactIndex` for vectors that live for one call (a
        reranker's candidates; it is not saved)."""
        if index.ntotal != len(documents):
            raise IndexMismatchError(
                f"the index holds {index.ntotal} vectors but {len(documents)} documents were given"
            )
        self.encoder = encoder
        self.index = index
        self.documents: list[Document] = list(documents)
        #: How the texts were bounded when this index was built (``None`` once loaded).
        self.text_budget: TextBudget | None = None

    def __len__(self) -> int:
        return len(self.documents)

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        *,
        model: str | os.PathLike[str] | DenseEncoder | None = None,
        index: IndexKind = "flat",
        show_progress_bar: bool | None = None,
        max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS,
        **index_options: Any,
    ) -> DenseRetriever:
        """Embed ``documents`` with ``model`` and index them.

        Each document's text is cut to ``max_document_chars`` characters before it is
        embedded (the stored document keeps its whole text); a cut is logged as a warning
        and recorded in the index manifest (``text_budget``).
        """
        docs = list(documents)
        if not docs:
            raise ValueError("cannot build an index over zero documents")
        encoder = model if isinstance(model, DenseEncoder) else DenseEncoder(model)
        budget = TextBudget(max_document_chars)
        embeddings = encoder.encode_documents(
            budget.apply([d.content for d in docs]), show_progress_bar=show_progress_bar
        )
        built = cls.from_embeddings(encoder, embeddings, docs, index=index, **index_options)
        built.text_budget = budget
        return built

    @classmethod
    def from_embeddings(
        cls,
        encoder: DenseEncoder,
        embeddings: np.ndarray,
        documents: Sequence[Document],
        *,
        index: IndexKind = "flat",
        **index_options: Any,
    ) -> DenseRetriever:
        """Index vectors computed elsewhere (e.g. by Ray actors) with ``encoder``.

        ``embeddings[i]`` must be ``encoder``'s document vector of ``documents[i]``; the
        manifest records ``encoder``'s weights and configuration as the index's model.
        """
        if embeddings.ndim != 2 or len(embeddings) != len(documents):
            raise IndexMismatchError(
                f"got {embeddings.shape} embeddings for {len(documents)} documents"
            )
        dense = DenseIndex(embeddings.shape[1], index, **index_options)
        dense.add(np.ascontiguousarray(embeddings, dtype=np.float32))
        return cls(encoder, dense, documents)

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        format: CorpusFormat = "auto",
        **kwargs: Any,
    ) -> DenseRetriever:
        """Load a corpus file (QUEST, BEIR, JSONL or text) and :meth:`build` over it."""
        return cls.build(load_documents(path, format), **kwargs)

    # ------------------------------------------------------------------ persistence
    def save(
        self,
        out_dir: str | os.PathLike[str],
        *,
        extra_files: Mapping[str, Callable[[Path], None]] | None = None,
        extra_manifest: Mapping[str, Any] | None = None,
    ) -> Path:
        """Write the index folder atomically (see :mod:`logic_rag.index.store`).

        ``extra_files`` / ``extra_manifest`` let wrappers (the logical retriever's sparse
        index) store more files under the same manifest and checksums.
        """
        if isinstance(self.index, ExactIndex):
            raise TypeError(
                "an in-memory ExactIndex (a reranker's candidates) is not saved; build the "
                "index with DenseRetriever.build or DenseRetriever.from_embeddings to save it"
            )
        manifest = {
            **dense_manifest(
                self.encoder,
                dimension=self.index.dim,
                index_kind=self.index.kind,
                document_count=len(self.documents),
            ),
            **(extra_manifest or {}),
        }
        if self.text_budget is not None and "text_budget" not in manifest:
            manifest["text_budget"] = self.text_budget.record()
        writers: dict[str, Callable[[Path], None]] = {
            DOCS_FILE: lambda p: atomic_write_jsonl(p, (document_row(d) for d in self.documents)),
            **(extra_files or {}),
        }
        store = getattr(self.index, "store", None)
        if store is None:
            manifest["index_file"] = FAISS_FILE
            writers[FAISS_FILE] = self.index.save
            exact = self.index.exact
            if exact is not None:
                manifest["doc_vectors_file"] = EXACT_FILE
                manifest["refine"] = self.index.refine
                writers[EXACT_FILE] = lambda p: _save_npy(p, exact)
        else:  # the vectors live in a vector store (Milvus): the folder names it
            manifest["store"] = store.record()
        return write_folder(out_dir, writers, manifest)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        model: str | os.PathLike[str] | DenseEncoder | None = None,
        verify: bool = True,
        allow_model_mismatch: bool = False,
    ) -> DenseRetriever:
        """Open an index folder.

        ``model`` defaults to the model recorded in the manifest. A model with other
        weights (or another dimension) raises :class:`IndexMismatchError` unless
        ``allow_model_mismatch`` is set, or unless it is a query encoder whose
        ``logic_rag_encoder.json`` names the index's document-encoder weights (a LORE-tuned
        query encoder: its document side is the index's model, unchanged).
        """
        return cls.load_with_manifest(
            path, model=model, verify=verify, allow_model_mismatch=allow_model_mismatch
        )[0]

    @classmethod
    def load_with_manifest(
        cls,
        path: str | os.PathLike[str],
        *,
        model: str | os.PathLike[str] | DenseEncoder | None = None,
        verify: bool = True,
        allow_model_mismatch: bool = False,
        store_uri: str | None = None,
        store_token: str | None = None,
    ) -> tuple[DenseRetriever, dict[str, Any]]:
        """:meth:`load`, also returning the verified manifest (for wrappers).

        For an index whose vectors live in Milvus (manifest ``store``), ``store_uri``
        replaces the recorded URI (the store moved) and ``store_token`` is the server
        token (default ``$LOGIC_RAG_MILVUS_TOKEN``); the opened sentence-vector store, if
        any, is left in ``manifest["_store_passages"]`` for :class:`LogicRetriever`.
        """
        with open_snapshot(path, verify=verify) as snapshot:
            return cls.load_snapshot(
                snapshot,
                model=model,
                allow_model_mismatch=allow_model_mismatch,
                store_uri=store_uri,
                store_token=store_token,
            )

    @classmethod
    def load_snapshot(
        cls,
        snapshot: IndexSnapshot,
        *,
        model: str | os.PathLike[str] | DenseEncoder | None = None,
        allow_model_mismatch: bool = False,
        store_uri: str | None = None,
        store_token: str | None = None,
    ) -> tuple[DenseRetriever, dict[str, Any]]:
        """:meth:`load_with_manifest` over an opened (and verified) index snapshot, so that
        wrappers read their own files from the same version of the folder."""
        folder = snapshot.folder
        manifest = snapshot.manifest
        recorded, dimension, count, kind = _check_manifest(folder, manifest)
        for name in _files_to_open(manifest):  # every file a loader opens must be checked
            snapshot.check_listed(name)
        if model is None:
            model = recorded["name"]
        encoder = model if isinstance(model, DenseEncoder) else DenseEncoder(model)
        encoder.normalize = bool(manifest.get("normalized", True))
        if (
            not allow_model_mismatch
            and encoder.fingerprint != recorded.get("weights_sha256")
            and not _serves_documents_of(encoder, recorded.get("weights_sha256"))
        ):
            raise IndexMismatchError(
                f"{folder} was built with model {recorded['name']!r} (weights "
                f"{str(recorded.get('weights_sha256'))[:12]}) but the query encoder is "
                f"{encoder.name!r} (weights {encoder.fingerprint[:12]}); search it with the "
                f"same model or rebuild the index"
            )
        if not allow_model_mismatch and isinstance(recorded.get("config"), dict):
            # A trained query encoder (LORE) may have its own prompts and length; its
            # pooling and normalisation must still be the document encoder's.
            trained = encoder.fingerprint != recorded.get("weights_sha256")
            _check_encoder_config(
                folder, recorded["config"], encoder, _STRUCTURE_KEYS if trained else None
            )
        if encoder.dimension != dimension:
            raise IndexMismatchError(
                f"{folder} holds {dimension}-d vectors but {encoder.name!r} produces "
                f"{encoder.dimension}-d embeddings; use the model the index was built with"
            )
        index: Any
        if "store" in manifest:
            from logic_rag.index.milvus_store import open_from_manifest

            index, manifest["_store_passages"] = open_from_manifest(
                folder, manifest, uri=store_uri, token=store_token
            )
        else:
            name = manifest.get("index_file", FAISS_FILE)
            with snapshot.open(name) as handle:
                index = DenseIndex.load(handle, kind, name=snapshot.display(name))
            if "doc_vectors_file" in manifest:
                _attach_exact(snapshot, manifest, index)
        if index.dim != dimension or index.ntotal != count:
            raise IndexCorruptError(
                f"{folder}: the FAISS file holds {index.ntotal} vectors of dimension "
                f"{index.dim}, the manifest says {count} of dimension {dimension}; rebuild it"
            )
        name = manifest.get("documents_file", DOCS_FILE)
        docs_path = snapshot.display(name)
        with snapshot.open(name) as handle:
            documents = [
                _document(docs_path, lineno, row)
                for lineno, row in _checked_rows(docs_path, handle)
            ]
        if len(documents) != count:
            raise IndexCorruptError(
                f"{docs_path} holds {len(documents)} documents, the manifest says {count}"
            )
        return cls(encoder, index, documents), manifest

    # ------------------------------------------------------------------ search
    def _hits(self, scores: np.ndarray, ids: np.ndarray) -> list[Hit]:
        return make_hits(self.documents, scores, ids)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The ``k`` documents most similar to ``query``. An empty query raises ValueError."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """Search several queries in one encoder call and one index call."""
        texts = check_texts(queries, "query")
        k = _cap_k(k, len(self))
        scores, ids = self.index.search(self.encoder.encode_queries(texts), k)
        return [self._hits(s, i) for s, i in zip(scores, ids, strict=True)]


def _save_npy(path: Path, array: np.ndarray) -> None:
    from logic_rag.atomic import atomic_open

    with atomic_open(path, "wb") as handle:
        np.save(handle, array, allow_pickle=False)


def _attach_exact(snapshot: IndexSnapshot, manifest: dict[str, Any], index: DenseIndex) -> None:
    """Map IVF-PQ's exact vectors (listed, hence checksummed) and give them to ``index``."""
    from logic_rag.index.npy import check_finite_npy, map_npy

    name = manifest["doc_vectors_file"]
    refine = manifest.get("refine", 4)
    where = snapshot.display(name)
    if isinstance(refine, bool) or not isinstance(refine, int) or refine < 1:
        raise IndexCorruptError(f"{where}: the manifest's refine must be a positive integer")
    if snapshot.verified:  # NaN would rescore every candidate to nothing
        with snapshot.open(name) as handle:
            check_finite_npy(handle, snapshot.size(name), where)
    vectors = map_npy(snapshot.descriptor(name), where)
    if vectors.ndim != 2 or vectors.dtype not in (np.float16, np.float32):
        raise IndexCorruptError(f"{where} holds {vectors.dtype} {vectors.shape}; rebuild the index")
    try:
        index.attach_exact(vectors, refine)
    except IndexMismatchError as exc:
        raise IndexCorruptError(f"{where}: {exc}; rebuild the index") from None


def check_k(k: object) -> int:
    """``k`` as a positive int: any integer type (numpy's too); not a bool, float or str."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(f"k must be a positive integer, got {type(k).__name__} {k!r}")
    if k <= 0:
        raise ValueError(f"k must be positive (at least 1), got {k}")
    return int(k)


def _cap_k(k: int, size: int) -> int:
    """``k`` checked and capped at the corpus size before anything is allocated for it."""
    return min(check_k(k), max(size, 1))


_INDEX_KINDS = ("flat", "hnsw", "ivfpq")


def _check_manifest(folder: Path, manifest: dict[str, Any]) -> tuple[dict[str, Any], int, int, Any]:
    """The manifest's model record, dimension, document count and index kind, type-checked."""
    where = f"{folder / 'manifest.json'}"
    recorded = manifest.get("model")
    if not isinstance(recorded, dict) or not isinstance(recorded.get("name"), str):
        raise IndexCorruptError(
            f"{where}: 'model' must be an object with a 'name' (got {type(recorded).__name__}); "
            f"rebuild the index"
        )
    values = []
    for key in ("dimension", "document_count"):
        value = manifest.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise IndexCorruptError(
                f"{where}: {key!r} must be a non-negative integer, got {value!r}; rebuild the index"
            )
        values.append(value)
    kind = manifest.get("index_kind", "flat")
    if kind not in _INDEX_KINDS:
        raise IndexCorruptError(
            f"{where}: unknown index_kind {kind!r} (expected one of {', '.join(_INDEX_KINDS)}); "
            f"rebuild the index"
        )
    metric = manifest.get("metric", "inner_product")
    if metric != "inner_product":
        raise IndexCorruptError(
            f"{where}: metric {metric!r} is not supported (logic-rag ranks by inner product); "
            f"rebuild the index"
        )
    # "normalized": "no" is a non-empty string, true to Python: read as true, it silently
    # normalised the queries of an index built without normalisation (issue 42 item 19).
    for key in ("passages", "normalized"):
        if key in manifest and not isinstance(manifest[key], bool):
            raise IndexCorruptError(f"{where}: {key!r} must be true or false; rebuild the index")
    sparse = manifest.get("sparse")
    if sparse is not None and (
        not isinstance(sparse, dict) or not isinstance(sparse.get("model"), str)
    ):
        raise IndexCorruptError(
            f"{where}: 'sparse' must be an object with a 'model' name; rebuild the index"
        )
    return recorded, values[0], values[1], kind


def _files_to_open(manifest: dict[str, Any]) -> list[str]:
    """The files the loaders (dense, passages, SPLADE) will open for this manifest."""
    names = [manifest.get("documents_file", DOCS_FILE)]
    if "store" in manifest:  # the vectors live in Milvus; only SPLADE stays in the folder
        return names + _sparse_files(manifest)
    names.insert(0, manifest.get("index_file", FAISS_FILE))
    if "doc_vectors_file" in manifest:
        names.append(manifest["doc_vectors_file"])
    if manifest.get("passages"):
        from logic_rag.index.passages import PassageVectors

        names += PassageVectors.files(manifest.get("sentence_dtype"))
    return names + _sparse_files(manifest)


def _sparse_files(manifest: dict[str, Any]) -> list[str]:
    if manifest.get("sparse") is None:
        return []
    from logic_rag.index.inverted import MANIFEST_FILE, MATRIX_FILE

    return [f"sparse/{MATRIX_FILE}", f"sparse/{MANIFEST_FILE}"]


_STRUCTURE_KEYS = ("modules", "pooling", "normalize")


def _check_encoder_config(
    folder: Path,
    recorded: dict[str, Any],
    encoder: DenseEncoder,
    keys: Sequence[str] | None = None,
) -> None:
    """Refuse a query encoder whose pooling, prompts, length or normalisation differ
    (only ``keys`` of the configuration when given)."""
    current = encoder.config
    names = sorted(set(recorded) | set(current)) if keys is None else list(keys)
    diff = [k for k in names if recorded.get(k) != current.get(k)]
    if diff:
        details = "; ".join(
            f"{k}: index {recorded.get(k)!r}, query encoder {current.get(k)!r}" for k in diff
        )
        raise IndexMismatchError(
            f"{folder} was built with another encoder configuration than "
            f"{encoder.name!r} ({details}); search it with the model the index was built with "
            f"or rebuild the index"
        )


def _document(path: Path, lineno: int, row: dict[str, Any]) -> Document:
    for key in ("title", "text"):
        if not isinstance(row.get(key, ""), str):
            raise CorpusFormatError(path, lineno, f"field {key!r} must be a string")
    metadata = row.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise CorpusFormatError(path, lineno, "field 'metadata' must be an object")
    return Document(
        id=str(row["id"]), title=row.get("title", ""), text=row.get("text", ""), metadata=metadata
    )


def make_hits(documents: Sequence[Document], scores: np.ndarray, ids: np.ndarray) -> list[Hit]:
    """Hits for one ranked row of (scores, row ids); stops at the first missing slot."""
    hits = []
    for rank, (score, idx) in enumerate(zip(scores.tolist(), ids.tolist(), strict=True), 1):
        if idx < 0 or not np.isfinite(score):
            break
        doc = documents[idx]
        hits.append(Hit(doc.id, doc.title, doc.text, float(score), rank, doc.metadata))
    return hits


def _checked_rows(path: Path, handle: BinaryIO) -> Iterable[tuple[int, dict[str, Any]]]:
    for lineno, row in read_jsonl(path, handle=handle):
        if "id" not in row:
            raise CorpusFormatError(path, lineno, "document row has no 'id'")
        yield lineno, row


def _serves_documents_of(encoder: DenseEncoder, document_fingerprint: Any) -> bool:
    """True when ``encoder`` is a query encoder trained for documents of these weights.

    A LORE-tuned query encoder (``logic-rag finetune lore``) carries ``logic_rag_encoder.json``
    = ``{"role": "query", "document_encoder": {"name", "weights_sha256"}}``: indexes built with
    that document encoder stay valid for it, so no flag is needed to search them.
    """
    from logic_rag.encoders.query_only import document_encoder_meta

    if not isinstance(document_fingerprint, str) or not document_fingerprint:
        return False
    try:
        doc = document_encoder_meta(encoder.resolved.adapter or encoder.resolved.path)
    except ValueError:
        return False
    return doc is not None and doc.get("weights_sha256") == document_fingerprint
