"""Milvus as the vector store of an index: document and sentence vectors in collections.

A Milvus-backed index keeps its vectors in Milvus and everything else in the index folder:
the folder holds the documents (JSONL) and ``manifest.json``, whose ``store`` entry names
the Milvus URI, the collection and a build id; no FAISS file and no ``passages.npy``.
``logic-rag search --index DIR`` therefore works unchanged: the folder says where the
vectors are.

Where things live (one index = two collections):

* ``<collection>``: one row per document, ``id`` = the document's row number in the
  folder's ``documents.jsonl`` (INT64 primary key), ``vector`` = its embedding
  (``FLOAT_VECTOR``, FLAT index, inner product, so scores equal FAISS's ``IndexFlatIP``).
  Candidate search is a Milvus ``search``; the vectors of given candidates are fetched
  with ``get(ids=...)``.
* ``<collection>__sentences``: one row per sentence, ``id`` = sentence row (the CSR
  layout of :class:`~logic_rag.index.passages.PassageVectors`), ``doc`` = the document
  row, ``vector``. A separate collection because a document has 1 to 32 sentences and a
  Milvus row holds one vector per field. Its ``logic_rag.sentence_counts`` property holds
  each document's sentence count, so the client knows the primary keys of a document's
  sentences: the best-sentence evidence reads the candidates' sentences by primary key
  and computes it in numpy, as the FAISS backend does (see
  :mod:`logic_rag.index.milvus_local` for why, and for the client's vector cache).
* A Milvus Lite store also gets a local copy of both tables, beside its file
  (``<file>.db.logic-rag/``, :class:`~logic_rag.index.milvus_local.LocalCopy`): a store
  opened with one reads the candidates' vectors from that memory map, never from Milvus
  (``vector_source``, ``$LOGIC_RAG_MILVUS_VECTORS``); Milvus still searches the documents.
* The SPLADE index, when built, stays a local file in the folder: the composed
  intersections (Combined Pseudo-Terms) need the inverted lists themselves, which a
  Milvus sparse search does not expose.

The build's manifest (format version, model fingerprint, dimension, counts, build id) is
stored as a collection property and checked against the folder's manifest on open: a
collection rebuilt from another corpus, or a missing one, is refused with an error that
says what to do. Writes go to temporary collections that are renamed into place at the
end (create-then-swap); an existing collection is only replaced with ``overwrite=True``.
A write that fails drops its temporary collections. One that is killed leaves its
``<collection>__tmp_<host>_<pid>_<id>`` collections behind (they never shadow an index);
the next write of the same collection from the same machine drops those whose process is
gone (:meth:`MilvusStore.recover_leftovers`; ``<host>`` is a hash of the host name, so a
writer on another machine sharing a server is never judged by a local process table).

URIs: ``milvus://path/to/file.db`` is a Milvus Lite file (relative paths are resolved
against the working directory when the index is built, and stored absolute);
``http://host:port`` / ``https://host:port`` is a Milvus server. A server token is passed
as ``token=`` or in ``$LOGIC_RAG_MILVUS_TOKEN`` and is never written anywhere. pymilvus is
imported only when a store is opened (``pip install 'logic-rag[milvus]'``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from logic_rag.errors import IndexCorruptError, IndexMismatchError, StoreError
from logic_rag.index import milvus_local
from logic_rag.index.milvus_local import (
    LocalCopy,
    VectorCache,
    cache_bytes,
    compact,
    decode_counts,
    encode_counts,
    offsets_from_owners,
    sentence_rows,
)
from logic_rag.json_limits import loads_bounded

if TYPE_CHECKING:
    from logic_rag.index.passages import PassageVectors

__all__ = [
    "TOKEN_ENV",
    "StoreLocation",
    "parse_store_uri",
    "check_collection_name",
    "MilvusStore",
    "MilvusDenseIndex",
    "MilvusPassages",
]

#: Environment variable read for a Milvus server token when none is passed.
TOKEN_ENV = "LOGIC_RAG_MILVUS_TOKEN"
STORE_FORMAT = "logic-rag/milvus"
STORE_FORMAT_VERSION = 1
_MANIFEST_PROPERTY = "logic_rag.manifest"
#: Property of the sentence collection: per-document sentence counts (encode_counts).
_COUNTS_PROPERTY = "logic_rag.sentence_counts"
#: Larger counts are not stored (a server keeps properties in its metadata store); such a
#: store's offsets are read from its ``doc`` field when it is opened (logged).
_MAX_COUNTS_PROPERTY = 1 << 20
_SENTENCES = "__sentences"
#: Rows per insert call: bounds the memory of one request (about 6 MB at 768-d).
INSERT_BATCH = 2000
#: Ids per ``get`` (under Milvus's 16,384 limit; larger batches measured no faster).
_GET_BATCH = 4096
#: Rows per query when the sentence offsets are read from the ``doc`` field.
_SCAN_BATCH = 16384
#: Milvus's largest ``limit`` for one search.
MAX_TOPK = 16384
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")
#: ``__tmp_<host>_<pid>_<build>`` (and ``__tmp_<pid>_<build>``, written before the host
#: was recorded) after a collection or sentence-collection name.
_TMP_SUFFIX = re.compile(r"__tmp_(?:(?P<host>[0-9a-f]{8})_)?(?P<pid>[0-9]+)_[0-9a-f]{8}")

log = logging.getLogger(__name__)


def _host_tag() -> str:
    """This machine's tag in temporary collection names (a hash: names allow no dots)."""
    return hashlib.sha256(socket.gethostname().encode("utf-8")).hexdigest()[:8]


_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]+\]")


def _pymilvus() -> Any:
    """pymilvus, imported on first use so that ``logic-rag --help`` stays instant."""
    try:
        import pymilvus
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "a Milvus store needs pymilvus (and milvus-lite for milvus:// files); install "
            "them with: pip install 'logic-rag[milvus]'",
            name="pymilvus",
        ) from exc
    return pymilvus


# ------------------------------------------------------------------------------ locations
def check_collection_name(name: object) -> str:
    """``name`` if Milvus accepts it as a collection name and it is not one of ours.

    Letters, digits and ``_``, not starting with a digit, at most 200 characters (room
    for our suffixes) and no ``__`` (reserved for the sentence and temporary collections,
    so one index can never overwrite another's sentences).
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name) or "__" in name:
        raise ValueError(
            f"collection name {name!r} is not valid: use letters, digits and single "
            f"underscores, starting with a letter or '_', at most 200 characters"
        )
    return name


@dataclass(frozen=True)
class StoreLocation:
    """Where an index's vectors live: a URI pymilvus accepts and a collection name."""

    uri: str
    collection: str

    @property
    def is_lite(self) -> bool:
        return not self.uri.startswith(("http://", "https://"))

    @property
    def sentences(self) -> str:
        return self.collection + _SENTENCES

    def display(self) -> str:
        shown = f"milvus://{self.uri}" if self.is_lite else self.uri
        return f"{shown} (collection {self.collection!r})"


def parse_store_uri(uri: object, collection: object = "logic_rag") -> StoreLocation:
    """Check a store URI and collection name; see the module docstring for the forms.

    Refused: other schemes, control characters, credentials in the URI (a token would
    end up in the manifest), a Milvus Lite path that is not a ``.db`` file name, a server
    URI with a path, query or fragment.
    """
    name = check_collection_name(collection)
    if not isinstance(uri, str) or not uri or len(uri) > 4096:
        raise ValueError(f"store URI {uri!r} must be a non-empty string")
    if any(ord(c) < 32 or ord(c) == 127 for c in uri):
        raise ValueError(f"store URI {uri!r} contains control characters")
    forms = "milvus://path/to/file.db (Milvus Lite) or http(s)://host:port (Milvus server)"
    if uri.startswith("milvus://"):
        raw = uri[len("milvus://") :]
        if not raw or not raw.endswith(".db") or Path(raw).name == ".db":
            raise ValueError(f"store URI {uri!r}: a Milvus Lite store is a file ending in .db")
        if "?" in raw or "#" in raw:
            raise ValueError(f"store URI {uri!r}: a Milvus Lite path takes no query or fragment")
        # Milvus Lite 3 keeps a .db *folder*; either is passed to it as is.
        return StoreLocation(str(Path(raw).absolute()), name)
    if uri.startswith(("http://", "https://")):
        parts = urlsplit(uri)
        if parts.username is not None or parts.password is not None or "@" in parts.netloc:
            raise ValueError(
                f"store URI must not carry credentials; pass the token as token= or in "
                f"${TOKEN_ENV} ({forms})"
            )
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"store URI {uri!r} has an invalid port") from None
        host = parts.hostname or ""
        if not _HOST.fullmatch(parts.netloc.rsplit(":", 1)[0] if port else parts.netloc):
            raise ValueError(f"store URI {uri!r} has no valid host ({forms})")
        if parts.path not in ("", "/") or parts.query or parts.fragment or not host:
            raise ValueError(f"store URI {uri!r}: expected {forms}, nothing after the port")
        return StoreLocation(f"{parts.scheme}://{parts.netloc}", name)
    raise ValueError(f"unsupported store URI {uri!r}; expected {forms}")


def location_from_manifest(
    folder: Path, entry: object, uri: str | None = None
) -> tuple[StoreLocation, dict[str, Any]]:
    """The location recorded in an index folder's manifest (``uri`` overrides its URI)."""
    where = folder / "manifest.json"
    if (
        not isinstance(entry, dict)
        or entry.get("kind") != "milvus"
        or not isinstance(entry.get("uri"), str)
        or not isinstance(entry.get("collection"), str)
        or not isinstance(entry.get("build_id"), str)
    ):
        raise IndexCorruptError(
            f"{where}: 'store' must name kind 'milvus', a uri, a collection and a build_id; "
            f"rebuild the index"
        )
    recorded = entry["uri"]
    given = uri if uri is not None else (recorded if "://" in recorded else f"milvus://{recorded}")
    try:
        return parse_store_uri(given, entry["collection"]), entry
    except ValueError as exc:
        raise IndexCorruptError(f"{where}: {exc}") from None


def open_from_manifest(
    folder: Path, manifest: Mapping[str, Any], *, uri: str | None, token: str | None
) -> tuple[MilvusDenseIndex, MilvusPassages | None]:
    """Open the store an index folder's manifest names, checked against that manifest.

    An index folder may come from anywhere, so what its manifest names is not trusted on
    its own: a Milvus *server* named only by the manifest is never contacted (that would
    send ``$LOGIC_RAG_MILVUS_TOKEN`` to whatever host the file names); the caller must name
    it (``store_uri=`` / ``logic-rag search --store-uri``). A Milvus Lite file named by the
    manifest must already exist: opening an index never creates a file elsewhere.
    """
    location, entry = location_from_manifest(folder, manifest.get("store"), uri)
    if uri is None and location.uri.startswith(("http://", "https://")):
        raise StoreError(
            f"{folder / 'manifest.json'} keeps its vectors on the Milvus server "
            f"{location.uri}; a server named only by an index folder is not contacted. "
            f"If you trust it, pass store_uri={location.uri!r} (CLI: --store-uri "
            f"{location.uri})"
        )
    if uri is None and not Path(location.uri).exists():
        raise StoreError(
            f"{folder / 'manifest.json'} keeps its vectors in the Milvus Lite store "
            f"{location.uri}, which does not exist; pass store_uri= (CLI: --store-uri) if it "
            f"moved, or rebuild the index"
        )
    model = manifest.get("model") or {}
    expected = {
        "build_id": entry["build_id"],
        "dimension": manifest.get("dimension"),
        "document_count": manifest.get("document_count"),
        "sentence_count": entry.get("sentence_count"),
        "model": {"name": model.get("name"), "weights_sha256": model.get("weights_sha256")},
    }
    if bool(manifest.get("passages")) != (entry.get("sentence_count") is not None):
        raise IndexCorruptError(
            f"{folder / 'manifest.json'}: 'passages' and the store's sentence count disagree; "
            f"rebuild the index"
        )
    return MilvusStore(location, token=token).open(expected)


def _token(token: str | None) -> str:
    return token if token is not None else os.environ.get(TOKEN_ENV, "")


# ---------------------------------------------------------------------------------- store
class MilvusStore:
    """A connection to one store location, with the index's two collections."""

    def __init__(
        self,
        location: StoreLocation,
        *,
        token: str | None = None,
        cache_mb: float | None = None,
        vector_source: str | None = None,
    ) -> None:
        """``vector_source`` says where the candidates' vectors are read from (one of
        :data:`~logic_rag.index.milvus_local.VECTOR_SOURCES`; default
        ``$LOGIC_RAG_MILVUS_VECTORS``, else ``auto``):

        * ``auto``: a Milvus Lite store's local copy when it has one, else Milvus;
        * ``local``: the local copy, or :class:`StoreError` on open when it is absent or
          damaged;
        * ``milvus``: Milvus, by primary key, through the client cache (what a client of
          a remote Milvus server does; writes then make no local copy either).
        """
        self.location = location
        self.vector_source = milvus_local.vector_source(vector_source)
        self._token = token
        self._client: Any = None
        #: The manifest of the collections written or opened through this object.
        self.stored: dict[str, Any] | None = None
        #: The local copy the opened store reads from (``None``: reads from Milvus).
        self.local: LocalCopy | None = None
        #: Document and sentence vectors already read (``cache_mb``, else
        #: ``$LOGIC_RAG_MILVUS_CACHE_MB``, else 512 MiB; see logic_rag.index.milvus_local).
        self.cache = VectorCache(cache_bytes(cache_mb))

    def record(self) -> dict[str, Any]:
        """The index folder's ``store`` entry: where the vectors are and which build.

        The token is never part of it.
        """
        if self.stored is None:
            raise StoreError("nothing was written to or opened from this Milvus store yet")
        return {
            "kind": "milvus",
            "uri": self.location.uri,
            "collection": self.location.collection,
            "build_id": self.stored["build_id"],
            "sentence_count": self.stored.get("sentence_count"),
        }

    @property
    def client(self) -> Any:
        """The ``MilvusClient`` (connects on first use)."""
        if self._client is None:
            pymilvus = _pymilvus()
            if self.location.is_lite:
                Path(self.location.uri).parent.mkdir(parents=True, exist_ok=True)
            try:
                with _quiet_lite_startup():
                    self._client = pymilvus.MilvusClient(
                        uri=self.location.uri, token=_token(self._token)
                    )
            except Exception as exc:  # pymilvus raises its own types, or OSError, or gRPC's
                if self.location.is_lite and _lite_locked(self.location.uri):
                    raise StoreError(
                        f"the Milvus Lite store {self.location.display()} is open in another "
                        f"process (Milvus Lite lets one process use a file at a time); stop "
                        f"that process, wait for it, or serve the collection from a Milvus "
                        f"server (http://HOST:PORT) to share it"
                    ) from None
                raise StoreError(
                    f"cannot open the Milvus store {self.location.display()}: "
                    f"{_first_line(exc)}; check the URI (and the token in ${TOKEN_ENV})"
                ) from None
        return self._client

    def exists(self) -> bool:
        return bool(self.client.has_collection(self.location.collection))

    # ------------------------------------------------------------------ write
    def write(
        self,
        doc_vectors: np.ndarray,
        sentences: tuple[np.ndarray, np.ndarray] | None,
        manifest: Mapping[str, Any],
        *,
        overwrite: bool = False,
        batch_size: int = INSERT_BATCH,
    ) -> dict[str, Any]:
        """Write document (and sentence) vectors into fresh collections, then swap them in.

        ``sentences`` is ``(vectors, offsets)`` in :class:`~logic_rag.index.passages.
        PassageVectors`'s CSR layout. Returns the stored manifest (with a new build id).
        Rows go in ``batch_size`` at a time, so one request never holds the corpus.

        A Milvus Lite store (unless ``vector_source`` is ``milvus``) also gets the local
        copy of both tables (:class:`~logic_rag.index.milvus_local.LocalCopy`), written
        before the collections are swapped in and recorded in the manifest
        (``local_copy``: each table's dtype); the copies of the builds it replaces are
        deleted after the swap.
        """
        self.recover_leftovers()
        if not overwrite:
            self.refuse_existing()
        client = self.client
        build_id = uuid.uuid4().hex
        full = {
            "format": STORE_FORMAT,
            "format_version": STORE_FORMAT_VERSION,
            **dict(manifest),
            "dimension": int(doc_vectors.shape[1]),
            "document_count": int(len(doc_vectors)),
            "sentence_count": None if sentences is None else int(len(sentences[0])),
            "build_id": build_id,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        suffix = f"__tmp_{_host_tag()}_{os.getpid()}_{build_id[:8]}"
        tmp_docs = self.location.collection + suffix
        tmp_sents = self.location.sentences + suffix
        made: list[str] = []
        copy = None
        if self.location.is_lite and self.vector_source != "milvus":
            copy = LocalCopy(
                LocalCopy.folder_of(self.location.uri), self.location.collection, build_id
            )
        swapped = False
        try:
            if copy is not None:
                full["local_copy"] = {"documents": copy.write("documents", doc_vectors)}
                if sentences is not None:
                    full["local_copy"]["sentences"] = copy.write("sentences", sentences[0])
            self._create(tmp_docs, doc_vectors.shape[1], with_doc=False)
            made.append(tmp_docs)
            self._insert(tmp_docs, _doc_rows(doc_vectors, batch_size))
            if sentences is not None:
                self._create(tmp_sents, doc_vectors.shape[1], with_doc=True)
                made.append(tmp_sents)
                self._insert(tmp_sents, _sentence_rows(*sentences, batch_size))
                counts = encode_counts(sentences[1])
                if len(counts) <= _MAX_COUNTS_PROPERTY:
                    client.alter_collection_properties(
                        tmp_sents, properties={_COUNTS_PROPERTY: counts}
                    )
            client.alter_collection_properties(
                tmp_docs, properties={_MANIFEST_PROPERTY: json.dumps(full)}
            )
            if not overwrite:
                self.refuse_existing()  # someone else may have written it meanwhile
            self.drop()
            client.rename_collection(tmp_docs, self.location.collection)
            made.remove(tmp_docs)
            if sentences is not None:
                client.rename_collection(tmp_sents, self.location.sentences)
                made.remove(tmp_sents)
            swapped = True
        finally:
            for name in made:
                try:
                    client.drop_collection(name)
                except Exception:  # cleanup must not hide the original error
                    pass
            if copy is not None and not swapped:
                copy.remove()
        if copy is not None:
            copy.remove_others()
        self.stored = full
        return full

    def recover_leftovers(self) -> list[str]:
        """Drop the temporary collections of this index's writes that were killed.

        Only collections named after this index (``<collection>__tmp_…`` and
        ``<collection>__sentences__tmp_…``), written from this machine, by a process that
        is gone; a running writer's, another machine's or another index's are left alone.
        Names from before the host was recorded count as this machine's on a Milvus Lite
        file (a local file) and are left alone on a server. Each drop is logged as a
        warning and returned.
        """
        from logic_rag.index.store import pid_alive

        host = _host_tag()
        done: list[str] = []
        for name in self.client.list_collections():
            for base in (self.location.collection, self.location.sentences):
                match = _TMP_SUFFIX.fullmatch(name[len(base) :]) if name.startswith(base) else None
                if match is not None:
                    break
            if match is None:
                continue
            local = match["host"] == host if match["host"] else self.location.is_lite
            if not local or pid_alive(int(match["pid"])):
                continue
            self.client.drop_collection(name)
            done.append(
                f"dropped {name!r} from {self.location.display()}, left by an interrupted write"
            )
        for message in done:
            log.warning("logic-rag: %s", message)
        return done

    def refuse_existing(self) -> None:
        """Raise :class:`StoreError` when the collection exists (never mix two corpora)."""
        client = self.client
        for name in (self.location.collection, self.location.sentences):
            if client.has_collection(name):
                raise StoreError(
                    f"the Milvus collection {name!r} already exists in "
                    f"{self.location.display()}; choose another collection name, or replace "
                    f"it with overwrite=True (CLI: --overwrite-store)"
                )

    def drop(self) -> None:
        """Drop the index's collections (both, if present)."""
        for name in (self.location.collection, self.location.sentences):
            if self.client.has_collection(name):
                self.client.drop_collection(name)

    def _create(self, name: str, dim: int, *, with_doc: bool) -> None:
        pymilvus = _pymilvus()
        data_type = pymilvus.DataType
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", data_type.INT64, is_primary=True)
        if with_doc:
            schema.add_field("doc", data_type.INT64)
        schema.add_field("vector", data_type.FLOAT_VECTOR, dim=int(dim))
        params = self.client.prepare_index_params()
        params.add_index("vector", index_type="FLAT", metric_type="IP")
        self.client.create_collection(name, schema=schema, index_params=params)

    def _insert(self, name: str, batches: Iterator[list[dict[str, Any]]]) -> None:
        for rows in batches:
            self.client.insert(name, rows)

    # ------------------------------------------------------------------ open
    def manifest(self) -> dict[str, Any]:
        """The manifest stored with the collection; :class:`StoreError` if it is missing."""
        name = self.location.collection
        if not self.exists():
            raise StoreError(
                f"the Milvus collection {name!r} does not exist in {self.location.display()}; "
                f"rebuild the index with `logic-rag index --store ... --collection {name}` "
                f"(or pass the store's current URI if it moved)"
            )
        info = self.client.describe_collection(name)
        raw = (info.get("properties") or {}).get(_MANIFEST_PROPERTY)
        try:
            manifest = loads_bounded(raw) if isinstance(raw, str) else None
        except ValueError:
            manifest = None
        if not isinstance(manifest, dict) or manifest.get("format") != STORE_FORMAT:
            raise IndexMismatchError(
                f"the Milvus collection {name!r} in {self.location.display()} was not written "
                f"by logic-rag (no manifest); rebuild the index with another collection name"
            )
        if manifest.get("format_version") != STORE_FORMAT_VERSION:
            raise IndexMismatchError(
                f"the Milvus collection {name!r} has store format version "
                f"{manifest.get('format_version')!r}; this logic-rag reads version "
                f"{STORE_FORMAT_VERSION}. Rebuild the index"
            )
        return manifest

    def open(self, expected: Mapping[str, Any]) -> tuple[MilvusDenseIndex, MilvusPassages | None]:
        """Open the collections, checking their manifest against ``expected``.

        ``expected`` holds what the index folder recorded: ``build_id``, ``dimension``,
        ``document_count``, ``sentence_count`` and the model fingerprint. A different
        build id means the collection was rebuilt (another corpus or model) after this
        folder was written: searching it would return rows of other documents.
        """
        manifest = self.manifest()
        name = self.location.collection
        diffs = [
            f"{key}: collection {manifest.get(key)!r}, index folder {expected.get(key)!r}"
            for key in ("build_id", "dimension", "document_count", "sentence_count", "model")
            if key in expected and manifest.get(key) != expected.get(key)
        ]
        if diffs:
            raise IndexMismatchError(
                f"the Milvus collection {name!r} in {self.location.display()} holds another "
                f"index than this folder ({'; '.join(diffs)}); rebuild the index with "
                f"`logic-rag index --store ... --collection NAME --out DIR`"
            )
        self.client.load_collection(name)
        self.stored = manifest
        count = self._count(name)
        if count != manifest["document_count"]:
            raise IndexCorruptError(
                f"the Milvus collection {name!r} holds {count} vectors, its manifest says "
                f"{manifest['document_count']}; rebuild the index"
            )
        dense = MilvusDenseIndex(self, int(manifest["dimension"]), count)
        passages = None
        if manifest.get("sentence_count") is not None:
            if not self.client.has_collection(self.location.sentences):
                raise StoreError(
                    f"the Milvus collection {self.location.sentences!r} (sentence vectors) is "
                    f"missing from {self.location.display()}; rebuild the index"
                )
            self.client.load_collection(self.location.sentences)
            passages = MilvusPassages(
                self, dense.dim, count, offsets=self._stored_offsets(manifest)
            )
        self._open_local(manifest, dense, passages)
        return dense, passages

    def _open_local(
        self, manifest: Mapping[str, Any], dense: MilvusDenseIndex, passages: MilvusPassages | None
    ) -> None:
        """Map the local copy into ``dense`` and ``passages`` as ``vector_source`` says.

        ``auto`` falls back to reads by primary key when the copy is missing or damaged
        (a warning says which file and why: the results are the same, only slower);
        ``local`` raises instead.
        """
        self.local = None
        if self.vector_source == "milvus":
            return
        recorded = manifest.get("local_copy")
        where = self.location.display()
        if not self.location.is_lite or not isinstance(recorded, dict):
            if self.vector_source == "local":
                raise StoreError(
                    f"{where} has no local copy of its vectors (a Milvus server, or a store "
                    f"written before local copies); use vector_source='auto' or 'milvus' "
                    f"(${milvus_local.VECTORS_ENV}), or rewrite the store"
                )
            return
        copy = LocalCopy(
            LocalCopy.folder_of(self.location.uri), self.location.collection, manifest["build_id"]
        )
        try:
            doc_rows = copy.open("documents", (dense.ntotal, dense.dim), recorded.get("documents"))
            sent_rows = None
            if passages is not None:
                shape = (int(manifest["sentence_count"]), dense.dim)
                sent_rows = copy.open("sentences", shape, recorded.get("sentences"))
        except (OSError, IndexCorruptError) as exc:
            reason = (
                f"{exc.filename} is missing"
                if isinstance(exc, FileNotFoundError)
                else _first_line(exc)
            )
            if self.vector_source == "local":
                raise StoreError(
                    f"the local copy of {where} cannot be used: {reason}; rewrite the store "
                    f"or open it with vector_source='auto' (reads by primary key, slower)"
                ) from None
            log.warning(
                "logic-rag: the local copy of %s cannot be used (%s); reading vectors from "
                "Milvus by primary key instead (same results, slower). Rewrite the store to "
                "restore it",
                where,
                reason,
            )
            return
        dense.local_rows = doc_rows
        if passages is not None:
            passages.local_rows = sent_rows
        self.local = copy

    def _stored_offsets(self, manifest: Mapping[str, Any]) -> np.ndarray | None:
        """The sentence offsets stored with the sentence collection (``None`` if absent)."""
        info = self.client.describe_collection(self.location.sentences)
        text = (info.get("properties") or {}).get(_COUNTS_PROPERTY)
        if text is None:
            return None
        try:
            return decode_counts(text, manifest["document_count"], manifest["sentence_count"])
        except IndexCorruptError as exc:
            raise IndexCorruptError(
                f"the Milvus collection {self.location.sentences!r}: {exc}; rebuild the index"
            ) from None

    def read_offsets(self, n_documents: int, n_sentences: int) -> np.ndarray:
        """The sentence offsets of a store that does not hold them, from its ``doc`` field.

        One pass over the sentence collection (a scalar field, ``_SCAN_BATCH`` primary keys
        per query), for stores written before the counts were stored.
        """
        owner = np.full(n_sentences, -1, dtype=np.int64)
        for start in range(0, n_sentences, _SCAN_BATCH):
            end = min(start + _SCAN_BATCH, n_sentences)
            found = self.client.query(
                self.location.sentences,
                filter=f"id >= {start} and id < {end}",
                output_fields=["doc"],
                limit=end - start,
            )
            ids = np.fromiter((r["id"] for r in found), dtype=np.int64, count=len(found))
            docs = np.fromiter((r["doc"] for r in found), dtype=np.int64, count=len(found))
            if len(ids) and (ids.min() < start or ids.max() >= end):
                raise IndexCorruptError(f"{self.location.sentences!r} returned rows out of range")
            owner[ids] = docs
        if np.any(owner < 0):
            raise IndexCorruptError(
                f"the Milvus collection {self.location.sentences!r} lacks sentence rows; "
                f"rebuild the index"
            )
        try:
            return offsets_from_owners(owner, n_documents)
        except IndexCorruptError as exc:
            raise IndexCorruptError(
                f"the Milvus collection {self.location.sentences!r}: {exc}; rebuild the index"
            ) from None

    def fetch_rows(self, collection: str, rows: np.ndarray, dim: int) -> np.ndarray:
        """The vectors of ``rows`` (distinct primary keys of ``collection``), in that order.

        ``get`` by primary key, ``_GET_BATCH`` keys per call; every row must exist.
        """
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((len(rows), dim), dtype=np.float32)
        where = {int(r): i for i, r in enumerate(rows.tolist())}
        seen = 0
        for start in range(0, len(rows), _GET_BATCH):
            found = self.client.get(
                collection, ids=rows[start : start + _GET_BATCH].tolist(), output_fields=["vector"]
            )
            if not found:
                continue
            at = [where[int(item["id"])] for item in found]
            out[at] = np.asarray([item["vector"] for item in found], dtype=np.float32)
            seen += len(found)
        if seen != len(rows):
            raise IndexCorruptError(
                f"the Milvus collection {collection!r} lacks {len(rows) - seen} of the "
                f"requested rows; rebuild the index"
            )
        return out

    def _count(self, name: str) -> int:
        rows = self.client.query(name, filter="", output_fields=["count(*)"])
        return int(rows[0]["count(*)"])


@contextlib.contextmanager
def _quiet_lite_startup() -> Iterator[None]:
    """Milvus Lite logs a full traceback when it cannot start; the caller reports the
    failure in one line instead, so its log is held back for the connection attempt."""
    logger = logging.getLogger("milvus_lite")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _lite_locked(uri: str) -> bool:
    """Whether another process holds Milvus Lite's lock (``URI/LOCK``, ``flock``). Only
    asked after a failed connection: this process's own open store would count too."""
    try:
        import fcntl
    except ImportError:  # Windows
        return False
    lock = Path(uri) / "LOCK"
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def _doc_rows(vectors: np.ndarray, batch: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(vectors), batch):
        chunk = np.asarray(vectors[start : start + batch], dtype=np.float32)
        yield [{"id": start + i, "vector": v} for i, v in enumerate(chunk.tolist())]


def _sentence_rows(
    vectors: np.ndarray, offsets: np.ndarray, batch: int
) -> Iterator[list[dict[str, Any]]]:
    owner = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    for start in range(0, len(vectors), batch):
        chunk = np.asarray(vectors[start : start + batch], dtype=np.float32).tolist()
        docs = owner[start : start + batch].tolist()
        yield [
            {"id": start + i, "doc": d, "vector": v}
            for i, (d, v) in enumerate(zip(docs, chunk, strict=True))
        ]


# --------------------------------------------------------------------------- dense index
class MilvusDenseIndex:
    """The :class:`~logic_rag.index.faiss_index.DenseIndex` interface over a collection.

    ``kind`` is ``flat``: Milvus's FLAT index is exact inner product, like FAISS's
    ``IndexFlatIP``, so the two backends rank identically. ``vectors()`` returns a
    :class:`MilvusRows` view that fetches only the rows asked for, so the pipeline's
    ``doc_vectors()[candidates]`` reads the candidates' vectors, not the corpus (and the
    store's cache keeps them: a query asks for the same candidates several times).
    """

    kind = "flat"

    def __init__(self, store: MilvusStore, dim: int, ntotal: int) -> None:
        self.store = store
        self.dim = dim
        self._ntotal = ntotal
        self.options: dict[str, Any] = {}
        #: The local copy's document vectors (memory-mapped), or ``None``: read from Milvus.
        self.local_rows: np.ndarray | None = None

    @property
    def ntotal(self) -> int:
        return self._ntotal

    def _check(self, vectors: np.ndarray, what: str) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = vectors[None, :]
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise IndexMismatchError(
                f"{what} have dimension {vectors.shape[-1]} but the index holds {self.dim}-d "
                f"vectors; encode with the model the index was built with"
            )
        return vectors

    def add(self, vectors: np.ndarray) -> None:
        raise StoreError(
            "a Milvus-backed index is written once by LogicRetriever.build(store=...) or "
            "`logic-rag index --store`; rebuild it to add documents"
        )

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` inner-product search for a batch; missing slots are ``-1`` / ``-inf``."""
        queries = self._check(queries, "query embeddings")
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        k = int(min(k, max(self.ntotal, 1)))
        if k > MAX_TOPK:
            raise ValueError(f"Milvus searches at most {MAX_TOPK} neighbours at once, got {k}")
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        ids = np.full((len(queries), k), -1, dtype=np.int64)
        if self.ntotal == 0 or len(queries) == 0:
            return scores, ids
        # output_fields=["id"], not []: Milvus Lite 3 reads an empty list as "every
        # field" and serialises each hit's vector (measured 3x the cost of the search).
        found = self.store.client.search(
            self.store.location.collection,
            data=queries.tolist(),
            limit=k,
            output_fields=["id"],
            search_params={"metric_type": "IP"},
        )
        for row, hits in enumerate(found):
            # Milvus orders by distance; ties may come in another order than FAISS's.
            n = min(len(hits), k)
            pks, distances = getattr(hits, "ids", None), getattr(hits, "distances", None)
            if pks is not None and distances is not None and min(len(pks), len(distances)) >= n:
                # pymilvus keeps each row's ids and distances as columns: read them whole
                # (per-hit dict access cost ~2 us a hit, 300 hits per atom).
                ids[row, :n] = np.asarray(pks[:n], dtype=np.int64)
                scores[row, :n] = np.asarray(distances[:n], dtype=np.float32)
                continue
            for col, hit in enumerate(hits[:k]):
                scores[row, col] = hit["distance"]
                ids[row, col] = hit["id"]
        return scores, ids

    def fetch(self, rows: np.ndarray) -> np.ndarray:
        """The stored vectors of ``rows`` (document row numbers), in that order.

        From the local copy when the store has one; else rows read before come from the
        store's cache, the others with one ``get``.
        """
        rows = np.asarray(rows, dtype=np.int64).ravel()
        if len(rows) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        if rows.min() < 0 or rows.max() >= self.ntotal:
            raise IndexError(f"document rows must lie in [0, {self.ntotal})")
        if self.local_rows is not None:
            return np.asarray(self.local_rows[rows], dtype=np.float32)
        unique, inverse = np.unique(rows, return_inverse=True)
        keys = [("doc", r) for r in unique.tolist()]
        cached = self.store.cache.get_many(keys)
        missing = [i for i, v in enumerate(cached) if v is None]
        found = np.empty((len(unique), self.dim), dtype=np.float32)
        if len(missing) < len(unique):
            have = [i for i, v in enumerate(cached) if v is not None]
            found[have] = np.stack([cached[i] for i in have])
        if missing:
            read = self.store.fetch_rows(self.store.location.collection, unique[missing], self.dim)
            found[missing] = read
            self.store.cache.put_many(
                [(keys[i], compact(v)) for i, v in zip(missing, read, strict=True)]
            )
        return found[inverse]

    def vectors(self) -> MilvusRows:
        """A row view: ``vectors()[rows]`` fetches those rows from Milvus."""
        return MilvusRows(self.fetch, self.ntotal, self.dim)

    def save(self, path: str | os.PathLike[str]) -> None:
        raise StoreError("a Milvus-backed index has no FAISS file; its vectors live in Milvus")


class MilvusRows:
    """``(n, dim)`` array-like whose rows are read on indexing (``view[rows]``).

    Only the rows asked for cross the connection; ``np.asarray(view)`` reads them all.
    """

    dtype = np.dtype(np.float32)

    def __init__(self, fetch: Callable[[np.ndarray], np.ndarray], n: int, dim: int) -> None:
        self._fetch = fetch
        self.shape = (n, dim)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: Any) -> np.ndarray:
        if isinstance(rows, slice):
            return self._fetch(np.arange(self.shape[0])[rows])
        index = np.asarray(rows)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        if index.ndim == 0:
            return self._fetch(index.reshape(1))[0]
        return self._fetch(index.astype(np.int64))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self._fetch(np.arange(self.shape[0]))
        return out if dtype is None else out.astype(dtype)


# ---------------------------------------------------------------------------- sentences
class MilvusPassages:
    """The :class:`~logic_rag.index.passages.PassageVectors` interface over a collection.

    ``offsets`` are the CSR offsets of the sentence rows (stored with the collection);
    a store written without them has them read from its ``doc`` field on first use.
    """

    def __init__(
        self,
        store: MilvusStore,
        dim: int,
        n_documents: int,
        *,
        offsets: np.ndarray | None = None,
    ) -> None:
        self.store = store
        self.dim = dim
        self._n = n_documents
        self._offsets = offsets
        self._lock = threading.Lock()
        #: The local copy's sentence vectors (memory-mapped), or ``None``: read from Milvus.
        self.local_rows: np.ndarray | None = None
        self._local: PassageVectors | None = None

    @property
    def n_documents(self) -> int:
        return self._n

    @property
    def offsets(self) -> np.ndarray:
        """CSR offsets: document ``i`` owns sentence rows ``offsets[i]:offsets[i+1]``."""
        if self._offsets is None:
            with self._lock:
                if self._offsets is None:
                    self._offsets = self._read_offsets()
        return self._offsets

    def _read_offsets(self) -> np.ndarray:
        stored = self.store.stored or {}
        n_sentences = stored.get("sentence_count")
        if not isinstance(n_sentences, int):
            raise IndexCorruptError(
                f"the manifest of {self.store.location.display()} has no sentence count; "
                f"rebuild the index"
            )
        start = time.perf_counter()
        offsets = self.store.read_offsets(self._n, n_sentences)
        log.warning(
            "logic-rag: %s stores no sentence offsets (written by an older logic-rag); read "
            "them from its %d sentence rows in %.1f s. Rewrite the store to skip this",
            self.store.location.display(),
            n_sentences,
            time.perf_counter() - start,
        )
        return offsets

    def max_sim(self, queries: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
        """Best sentence similarity of each query to each document, ``(len(q), len(ids))``.

        With a local copy, :meth:`PassageVectors.max_sim` over its memory map (the FAISS
        backend's own code). Else the candidates' sentence vectors come from the store's
        cache, the others from one ``get`` by primary key; the similarities are computed
        here, exactly as :meth:`PassageVectors.max_sim` does (same rows, same order, same
        float32 product).
        """
        if queries.shape[-1] != self.dim:
            raise IndexMismatchError(
                f"query vectors are {queries.shape[-1]}-d, passage vectors {self.dim}-d"
            )
        queries = np.asarray(queries, dtype=np.float32)
        if queries.ndim == 1:
            queries = queries[None, :]
        doc_ids = np.asarray(doc_ids, dtype=np.int64)
        if len(doc_ids) == 0:
            return np.zeros((len(queries), 0), dtype=np.float32)
        if doc_ids.min() < 0 or doc_ids.max() >= self._n:
            raise IndexError(f"document rows must lie in [0, {self._n})")
        if self.local_rows is not None:
            return self._local_passages().max_sim(queries, doc_ids)
        unique, inverse = np.unique(doc_ids, return_inverse=True)
        blocks = self._sentences(unique)
        gathered = np.concatenate([blocks[i] for i in inverse.tolist()]).astype(
            np.float32, copy=False
        )
        lengths = self.offsets[doc_ids + 1] - self.offsets[doc_ids]
        sims = queries @ gathered.T
        bounds = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        return np.maximum.reduceat(sims, bounds, axis=1)

    @property
    def source(self) -> str:
        """Where the sentence vectors are read from: ``local`` (the copy) or ``milvus``."""
        return "local" if self.local_rows is not None else "milvus"

    def _local_passages(self) -> PassageVectors:
        if self._local is None:
            from logic_rag.index.passages import PassageVectors

            self._local = PassageVectors(self.local_rows, self.offsets)  # type: ignore[arg-type]
        return self._local

    def _sentences(self, docs: np.ndarray) -> list[np.ndarray]:
        """The sentence vectors of each of ``docs`` (distinct), one block per document."""
        keys = [("sentences", d) for d in docs.tolist()]
        blocks = self.store.cache.get_many(keys)
        missing = [i for i, b in enumerate(blocks) if b is None]
        if missing:
            rows, lengths = sentence_rows(self.offsets, docs[missing])
            read = self.store.fetch_rows(self.store.location.sentences, rows, self.dim)
            parts = np.split(read, np.cumsum(lengths)[:-1])
            fresh = [(i, compact(part)) for i, part in zip(missing, parts, strict=True)]
            for i, block in fresh:
                blocks[i] = block
            self.store.cache.put_many([(keys[i], block) for i, block in fresh])
        return blocks  # type: ignore[return-value]

    def writers(self) -> dict[str, object]:
        """No files: the sentence vectors and their offsets live in Milvus."""
        return {}
