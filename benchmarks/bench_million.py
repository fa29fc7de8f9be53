"""A million documents: index time, peak memory, disk size and query latency at scale.

    python -m benchmarks.bench_million --docs 1000000 --real 20000 --out runs/bench/million.json
    python -m benchmarks.run --only million --million-docs 1000000 --million-real 20000

The index is built by the library's own chunked build (:func:`logic_rag.index.streaming.
stream_index`, what ``logic-rag index --chunk-size N`` runs), so memory is bounded by the
chunk, not by the corpus. Encoding a million pages (~10M sentences) with MiniLM takes many
hours on 2 CPU cores, so most vectors are stand-ins, said plainly in the JSON:

- **real**: the first ``real`` documents of the generated world (real text) are encoded
  by the real model, documents and sentences, exactly as the build would embed them (the
  same text budget and sentence split). The time is measured and reported as documents/s
  and sentences/s, and the encode time of the whole corpus is *projected* from it;
- **generated**: every further document is a later document of the generated world (its
  own text, title and sentences), and its vectors are stand-ins: the encoder the build is
  given (:class:`StandInEncoder`) returns the real vector of any text it saw encoded, and
  for any other text a noisy re-normalised copy of a real vector picked by the text's
  hash (cosine ~0.96 to its source, as in :mod:`benchmarks.bench_logic_latency`).
  Search cost depends on the number of vectors and sentences, not on where they came from.

Each stage runs in its own child process, so each peak RSS is its own: ``encode`` (the
real subset, cached in the work folder and reused by later runs), ``build`` (the whole
index), ``query`` (load, then ``vanilla`` and ``rerank`` alternating on three-atom
queries; the real model encodes each query and its atoms inside the timed call) and
``recall`` (a ``recall_docs`` subset built with float32 sentence vectors; ``rerank``'s
top-10 / top-20 with the same vectors stored as float16 and int8, quantised exactly as a
build quantises them, compared with float32's).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import Log, latency_summary
from logic_rag.encoders.dense import DenseEncoder

__all__ = ["DEFAULT_WORK", "StandInEncoder", "main", "run"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WORK = Path("runs") / "bench" / "million-work"
MODEL = "minilm"
STRATEGIES = ("vanilla", "rerank")
#: The issue's targets: peak RSS of indexing and searching, and rerank's p50 over vanilla's.
RSS_TARGET_GIB = 20.0
RATIO_TARGET = 2.0
_REAL_FILES = ("doc_keys.npy", "doc_vectors.npy", "sent_keys.npy", "sent_vectors.npy")


# ------------------------------------------------------------------------------ helpers
def _say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def text_keys(texts: Sequence[str]) -> np.ndarray:
    """64-bit keys of texts (BLAKE2b), how the stand-in encoder recognises a text."""
    return np.fromiter(
        (
            int.from_bytes(
                hashlib.blake2b(t.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                "little",
            )
            for t in texts
        ),
        dtype=np.uint64,
        count=len(texts),
    )


def memory() -> dict[str, float]:
    """This process's resident memory now and at its peak, in MiB (``/proc/self/status``;
    ``peak_rss_mib`` is ``getrusage``'s ``ru_maxrss``)."""
    out: dict[str, float] = {}
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                    out[key.lower() + "_mib"] = int(value.split()[0]) / 1024
    except OSError:
        pass
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _sizes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file()}


def evict_page_cache(folder: Path) -> None:
    """Drop the page cache of every file in ``folder`` (``POSIX_FADV_DONTNEED``; only
    these files, nothing else on the machine), so that the next load reads them cold."""
    for path in folder.iterdir():
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# ------------------------------------------------------------------------------- corpus
def write_corpus(work: Path, docs: int, recall_docs: int, seed: int, say: Log) -> dict[str, Any]:
    """``corpus-<docs>.jsonl`` (and the first ``recall_docs`` lines as a corpus of their
    own), the generated world's documents ``0 .. docs-1``; reused when already written."""
    from logic_rag.evals.world import WorldConfig, iter_documents

    paths = {docs: work / f"corpus-{seed}-{docs}.jsonl"}
    if 0 < recall_docs < docs:
        paths[recall_docs] = work / f"corpus-{seed}-{recall_docs}.jsonl"
    missing = {n: p for n, p in paths.items() if not p.is_file()}
    start = time.perf_counter()
    if missing:
        say(f"million: writing {docs:,} generated-world documents to {paths[docs]}")
        handles = {
            n: open(p.with_suffix(".tmp"), "w", encoding="utf-8") for n, p in missing.items()
        }
        try:
            rows = iter_documents(WorldConfig(n_entities=max(docs, 8), seed=seed))
            for i, row in enumerate(rows):
                if i == docs:
                    break
                line = json.dumps(
                    {"id": str(i), "title": row["title"], "text": row["text"]}, ensure_ascii=False
                )
                for n, handle in handles.items():
                    if i < n:
                        handle.write(line + "\n")
        finally:
            for handle in handles.values():
                handle.close()
        for p in missing.values():
            p.with_suffix(".tmp").replace(p)
    return {
        "paths": {str(n): str(p) for n, p in paths.items()},
        "bytes": paths[docs].stat().st_size,
        "seconds": time.perf_counter() - start if missing else None,
        "reused": not missing,
    }


# ------------------------------------------------------------------------ the encoders
class StandInEncoder(DenseEncoder):
    """A MiniLM :class:`~logic_rag.encoders.dense.DenseEncoder` (same name, weights and
    configuration fingerprints, so the index records the real model and loads with it)
    whose ``encode_documents`` returns the cached real vector of any text the real model
    encoded (``real_dir``, written by the ``encode`` stage) and, for any other text, a
    noisy re-normalised copy of a real vector of the same kind (document or sentence)
    picked by the text's hash. The model itself is never loaded."""

    def __init__(self, real_dir: str | os.PathLike[str], *, noise: float = 0.3, seed: int = 0):
        super().__init__(MODEL)
        self.tables: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for kind in ("doc", "sent"):
            keys = np.load(Path(real_dir) / f"{kind}_keys.npy")
            order = np.argsort(keys, kind="stable")
            vectors = np.load(Path(real_dir) / f"{kind}_vectors.npy")
            self.tables[kind] = (keys[order], order, vectors)
        self.noise, self.seed = noise, seed
        #: Seconds spent making vectors, and how many rows were real or stand-ins.
        self.seconds = 0.0
        self.rows = {"real": 0, "stand_in": 0}

    def encode_documents(  # type: ignore[override]
        self,
        documents: Sequence[str],
        *,
        show_progress_bar: bool | None = None,
        progress_label: str = "documents",
    ) -> np.ndarray:
        start = time.perf_counter()
        keys = text_keys(list(documents))
        kind = "sent" if progress_label == "sentences" else "doc"
        sorted_keys, order, vectors = self.tables[kind]
        where = np.searchsorted(sorted_keys, keys).clip(max=len(sorted_keys) - 1)
        known = sorted_keys[where] == keys
        out = np.empty((len(keys), vectors.shape[1]), dtype=np.float32)
        out[known] = vectors[order[where[known]]]
        missing = np.flatnonzero(~known)
        if len(missing):
            # Deterministic per call: the same chunk gets the same vectors on a rerun.
            rng = np.random.default_rng([self.seed, int(keys[0] % (1 << 63)), len(keys)])
            source = (keys[missing] % np.uint64(len(vectors))).astype(np.int64)
            scale = np.float32(self.noise / np.sqrt(vectors.shape[1]))
            part = (
                vectors[source]
                + rng.standard_normal((len(missing), vectors.shape[1]), np.float32) * scale
            )
            part /= np.maximum(np.linalg.norm(part, axis=1, keepdims=True), 1e-12)
            out[missing] = part
        self.rows["real"] += int(known.sum())
        self.rows["stand_in"] += len(missing)
        self.seconds += time.perf_counter() - start
        return out


# ------------------------------------------------------------------------------ stages
def _stage_encode(cfg: dict[str, Any]) -> dict[str, Any]:
    """Encode the first ``real`` documents and their sentences with the real model, the
    texts prepared as :func:`stream_index` prepares them; save vectors and text keys."""
    import itertools

    from logic_rag.corpus import DEFAULT_MAX_DOCUMENT_CHARS, TextBudget, iter_documents
    from logic_rag.index.passages import document_bodies, split_corpus

    out = Path(cfg["real_dir"])
    docs = list(itertools.islice(iter_documents(cfg["corpus"], "jsonl"), cfg["real"]))
    encoder = DenseEncoder(MODEL)
    encoder.encode_documents(["warm up the model"], show_progress_bar=False)
    doc_vectors, sent_vectors, doc_texts, sent_texts = [], [], [], []
    doc_seconds = sent_seconds = 0.0
    chunk = cfg["chunk_size"]
    for start in range(0, len(docs), chunk):
        part = docs[start : start + chunk]
        texts = TextBudget(DEFAULT_MAX_DOCUMENT_CHARS).apply([d.content for d in part])
        t0 = time.perf_counter()
        doc_vectors.append(encoder.encode_documents(texts, show_progress_bar=False))
        doc_seconds += time.perf_counter() - t0
        sentences, _ = split_corpus(document_bodies(part, DEFAULT_MAX_DOCUMENT_CHARS))
        t0 = time.perf_counter()
        sent_vectors.append(
            encoder.encode_documents(sentences, show_progress_bar=False, progress_label="sentences")
        )
        sent_seconds += time.perf_counter() - t0
        doc_texts += texts
        sent_texts += sentences
        _say(f"million: encoded {start + len(part):,} of {len(docs):,} real documents")
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "doc_keys.npy", text_keys(doc_texts))
    np.save(out / "doc_vectors.npy", np.concatenate(doc_vectors))
    np.save(out / "sent_keys.npy", text_keys(sent_texts))
    np.save(out / "sent_vectors.npy", np.concatenate(sent_vectors))
    import torch

    return {
        "model": encoder.name,
        "documents": len(docs),
        "sentences": len(sent_texts),
        "document_seconds": doc_seconds,
        "sentence_seconds": sent_seconds,
        "seconds": doc_seconds + sent_seconds,
        "docs_per_s": len(docs) / doc_seconds,
        "sentences_per_s": len(sent_texts) / sent_seconds,
        "torch_threads": torch.get_num_threads(),
        "load_average_end": _loadavg(),
        "encoded_at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "memory": memory(),
    }


def _stage_build(cfg: dict[str, Any]) -> dict[str, Any]:
    """The whole index through ``stream_index`` with the stand-in encoder."""
    from logic_rag.index.streaming import stream_index

    encoder = StandInEncoder(cfg["real_dir"], noise=cfg["noise"], seed=cfg["seed"])
    out = Path(cfg["index_dir"])
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    chunks = 0

    def progress(line: str) -> None:
        nonlocal chunks
        chunks += 1
        if chunks % 10 == 0 or chunks < 3:
            _say(f"million: build {line} ({time.perf_counter() - start:.0f} s)")

    options = {"nlist": cfg["nlist"]} if cfg.get("nlist") else {}
    stream_index(
        cfg["corpus"],
        out,
        model=encoder,
        format="jsonl",
        chunk_size=cfg["chunk_size"],
        sentence_dtype=cfg["sentence_dtype"],
        index=cfg["index"],
        restart=True,
        progress=progress,
        **options,
    )
    seconds = time.perf_counter() - start
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    offsets = np.load(out / "passage_offsets.npy", mmap_mode="r")
    return {
        "seconds": seconds,
        "vector_seconds": encoder.seconds,
        "other_seconds": seconds - encoder.seconds,
        "rows": encoder.rows,
        "documents": int(manifest["document_count"]),
        "sentences": int(offsets[-1]),
        "chunks": chunks,
        "memory": memory(),
    }


def _stage_query(cfg: dict[str, Any]) -> dict[str, Any]:
    """Load the index, then time ``vanilla`` and ``rerank`` on three-atom queries."""
    from benchmarks.common import three_atom_queries
    from logic_rag.logic_retriever import LogicRetriever

    queries = three_atom_queries(cfg["queries"] + cfg["warmup"], cfg["seed"])
    encoder = DenseEncoder(MODEL)
    encoder.encode_queries(["warm up the model"])  # the model's load is not the index's
    before = memory()
    start = time.perf_counter()
    retriever = LogicRetriever.load(cfg["index_dir"], model=encoder, verify=cfg["verify"])
    load_seconds = time.perf_counter() - start
    after_load = memory()
    for q in queries[: cfg["warmup"]]:
        for s in STRATEGIES:
            retriever.search(q, k=10, strategy=s)
    times: dict[str, list[float]] = {s: [] for s in STRATEGIES}
    evidence = 0
    example: dict[str, Any] = {}
    for i, q in enumerate(queries[cfg["warmup"] :]):
        for s in STRATEGIES if i % 2 == 0 else STRATEGIES[::-1]:
            t0 = time.perf_counter()
            hits = retriever.search(q, k=10, strategy=s)
            times[s].append(time.perf_counter() - t0)
            if len(hits) != 10:
                raise RuntimeError(f"{s} returned {len(hits)} hits for {q!r}")
            if s == "rerank":
                evidence += all(h.constraint_scores for h in hits)
                if not example:
                    example = {
                        "query": q,
                        "top_id": hits[0].id,
                        "constraint_scores": hits[0].constraint_scores,
                    }
    summary = {s: latency_summary(t) for s, t in times.items()}
    peak = memory()  # the figures below load again: the peak is taken before them
    parts = _resident_parts(retriever, cfg["index_dir"])
    del retriever, hits
    gc.collect()
    start = time.perf_counter()
    LogicRetriever.load(cfg["index_dir"], model=encoder, verify=not cfg["verify"])
    other_load = time.perf_counter() - start
    return {
        "load_seconds": load_seconds,
        "verify": cfg["verify"],
        f"load_seconds_verify_{not cfg['verify']}": other_load,
        "memory_before_load": before,
        "memory_after_load": after_load,
        "resident_parts": parts,
        "queries": len(queries) - cfg["warmup"],
        "example_queries": queries[cfg["warmup"] : cfg["warmup"] + 3],
        "latency": summary,
        "p50_ratio": summary["rerank"]["p50_ms"] / summary["vanilla"]["p50_ms"],
        "p95_ratio": summary["rerank"]["p95_ms"] / summary["vanilla"]["p95_ms"],
        "rerank_queries_with_sentence_evidence": evidence,
        "example": example,
        "memory": peak,
    }


def _resident_parts(retriever: Any, index_dir: str) -> dict[str, Any]:
    """What the loaded index holds in memory: the FAISS file (read whole), and
    ``documents.jsonl`` as Python objects (its size estimated from the first 10,000
    documents, and the time to parse the file the way the loader does)."""
    from logic_rag.retriever import _checked_rows, _document

    docs = retriever.documents
    sample = docs[:10_000]
    per_doc = sum(
        sys.getsizeof(d)
        + sys.getsizeof(d.id)
        + sys.getsizeof(d.title)
        + sys.getsizeof(d.text)
        + sys.getsizeof(d.metadata)
        for d in sample
    ) / max(len(sample), 1)
    path = Path(index_dir) / "documents.jsonl"
    start = time.perf_counter()
    with open(path, "rb") as handle:
        count = sum(
            1 for lineno, row in _checked_rows(path, handle) if _document(path, lineno, row)
        )
    index_file = Path(index_dir) / "index.faiss"
    return {
        "documents_python_bytes_estimate": int(per_doc * len(docs) + 8 * len(docs)),
        "documents_parse_seconds": time.perf_counter() - start,
        "documents_parsed": count,
        "documents_file_bytes": path.stat().st_size,
        # read whole at load: a flat index holds every document vector; IVF-PQ its codes
        # (its exact float16 vectors, doc_vectors.npy, are mapped)
        "index_file_bytes": index_file.stat().st_size,
    }


def _stage_recall(cfg: dict[str, Any]) -> dict[str, Any]:
    """Build the recall subset with float32 sentences, then compare ``rerank``'s top-k
    with the same vectors stored as float16 and int8."""
    from benchmarks.common import three_atom_queries, world_queries
    from logic_rag.index.passages import PassageVectors
    from logic_rag.logic_retriever import LogicRetriever

    build = _stage_build({**cfg, "sentence_dtype": "float32"})
    queries = three_atom_queries(cfg["queries"], cfg["seed"])
    queries += [q for q in world_queries(cfg["queries"], cfg["seed"]) if q not in queries]
    base = LogicRetriever.load(cfg["index_dir"], model=DenseEncoder(MODEL), verify=False)
    p32 = base.passages
    results: dict[str, Any] = {}
    reference: dict[int, list[list[str]]] = {}
    for k in (10, 20):
        reference[k] = [[h.id for h in base.search(q, k=k, strategy="rerank")] for q in queries]
    for dtype in ("float16", "int8"):
        vectors = np.asarray(p32.vectors)
        passages = PassageVectors.from_vectors(vectors, p32.offsets, dtype=dtype)
        other = LogicRetriever(base.dense, passages=passages)  # base: default settings
        row: dict[str, Any] = {
            "bytes": int(passages.vectors.nbytes)
            + (0 if passages.scales is None else int(passages.scales.nbytes))
        }
        for k in (10, 20):
            got = [[h.id for h in other.search(q, k=k, strategy="rerank")] for q in queries]
            overlap = [len(set(a) & set(b)) / k for a, b in zip(got, reference[k], strict=True)]
            row[f"top{k}_overlap"] = float(np.mean(overlap))
            row[f"top{k}_same_set"] = float(np.mean([x == 1.0 for x in overlap]))
            row[f"top{k}_same_order"] = float(
                np.mean([a == b for a, b in zip(got, reference[k], strict=True)])
            )
        results[dtype] = row
        del passages, other
    return {
        "documents": build["documents"],
        "sentences": build["sentences"],
        "build_seconds": build["seconds"],
        "queries": len(queries),
        "float32_bytes": int(np.asarray(p32.vectors).nbytes),
        "dtypes": results,
        "memory": memory(),
    }


_STAGES = {
    "encode": _stage_encode,
    "build": _stage_build,
    "query": _stage_query,
    "recall": _stage_recall,
}


def _child(stage: str, cfg: dict[str, Any], work: Path, say: Log) -> dict[str, Any]:
    """Run ``stage`` in a fresh Python process (its own peak RSS) and return its result."""
    cfg_path = work / f"{stage}.config.json"
    out_path = work / f"{stage}.result.json"
    out_path.unlink(missing_ok=True)
    cfg_path.write_text(json.dumps(cfg), encoding="utf-8")
    say(f"million: stage {stage} (child process)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_million", "--stage", stage, str(cfg_path)],
        check=True,
        cwd=ROOT,
        env=env,
    )
    result = json.loads(out_path.read_text(encoding="utf-8"))
    result["process_seconds"] = time.perf_counter() - start
    return result


# --------------------------------------------------------------------------------- run
def run(
    docs: int = 1_000_000,
    *,
    real: int = 20_000,
    recall_docs: int = 100_000,
    n_queries: int = 50,
    chunk_size: int = 10_000,
    index: str = "flat",
    nlist: int | None = None,
    sentence_dtype: str = "float16",
    verify: bool = True,
    cold: bool = True,
    work: str | os.PathLike[str] = DEFAULT_WORK,
    keep: bool = False,
    threads: int | None = None,
    seed: int = 0,
    noise: float = 0.3,
    log: Log | None = None,
) -> dict[str, Any]:
    """Build, load and search a ``docs``-document index (see the module docstring)."""
    say = log if log is not None else (lambda _msg: None)
    if docs < 1 or not 1 <= real <= docs or n_queries < 1 or chunk_size < 1:
        raise ValueError(
            f"need docs >= real >= 1, queries >= 1 and chunk_size >= 1; got docs={docs}, "
            f"real={real}, queries={n_queries}, chunk_size={chunk_size}"
        )
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    recall_docs = min(max(recall_docs, 0), docs)
    load_start = _loadavg()
    started = time.perf_counter()
    corpus = write_corpus(work, docs, recall_docs, seed, say)
    base = {"seed": seed, "noise": noise, "chunk_size": chunk_size, "threads": threads}

    # The real subset: encoded once per (seed, size), then reused.
    real_dir = work / f"real-{MODEL}-{seed}-{real}"
    record = real_dir / "encode.json"
    if record.is_file() and all((real_dir / f).is_file() for f in _REAL_FILES):
        encode = json.loads(record.read_text(encoding="utf-8"))
        encode["reused"] = True
        say(f"million: reusing the real vectors of {real:,} documents in {real_dir}")
    else:
        cfg = {**base, "corpus": corpus["paths"][str(docs)], "real": real}
        encode = _child("encode", {**cfg, "real_dir": str(real_dir)}, work, say)
        record.write_text(json.dumps(encode, indent=1), encoding="utf-8")
        encode["reused"] = False

    index_dir = work / f"index-{docs}"
    cfg = {
        **base,
        "real_dir": str(real_dir),
        "corpus": corpus["paths"][str(docs)],
        "index_dir": str(index_dir),
        "index": index,
        "nlist": nlist,
        "sentence_dtype": sentence_dtype,
        "queries": n_queries,
        "warmup": 3,
        "verify": verify,
    }
    build = _child("build", cfg, work, say)
    disk = _sizes(index_dir)
    # Warm: right after the build, its files are in the page cache (as a serving process
    # started after indexing sees them); mapped sentence vectors then join the RSS whole
    # page-cache folios at a time. Cold: the same, the index's files evicted first.
    query = _child("query", cfg, work, say)
    query_cold = None
    if cold:
        evict_page_cache(index_dir)
        query_cold = _child("query", cfg, work, say)
    if not keep:
        shutil.rmtree(index_dir, ignore_errors=True)

    recall = None
    if recall_docs:
        recall_dir = work / f"index-recall-{recall_docs}"
        recall = _child(
            "recall",
            {
                **cfg,
                "corpus": corpus["paths"][str(recall_docs)],
                "index_dir": str(recall_dir),
                "queries": max(n_queries, 50),
            },
            work,
            say,
        )
        shutil.rmtree(recall_dir, ignore_errors=True)

    sentences = build["sentences"]
    projected = docs / encode["docs_per_s"] + sentences / encode["sentences_per_s"]
    peak_gib = {
        "build": build["memory"]["peak_rss_mib"] / 1024,
        "query": query["memory"]["peak_rss_mib"] / 1024,
    }
    if query_cold is not None:
        peak_gib["query_cold"] = query_cold["memory"]["peak_rss_mib"] / 1024
    disk_total = sum(disk.values())
    return {
        "benchmark": "million",
        "model": MODEL,
        "documents": docs,
        "real_documents": real,
        "generated_documents": docs - real,
        "sentences": sentences,
        "sentences_per_document": sentences / docs,
        "index": index,
        "sentence_dtype": sentence_dtype,
        "chunk_size": chunk_size,
        "fill_noise": noise,
        "corpus": corpus,
        "real_encode": encode,
        "projected_real_encode_seconds": projected,
        "build": build,
        "disk_bytes": disk,
        "disk_total_bytes": disk_total,
        "query": query,
        "query_cold": query_cold,
        "recall": recall,
        "peak_rss_gib": peak_gib,
        "targets": {
            "peak_rss_gib": RSS_TARGET_GIB,
            "peak_rss_met": max(peak_gib.values()) <= RSS_TARGET_GIB,
            "rerank_p50_ratio": RATIO_TARGET,
            "rerank_p50_met": query["p50_ratio"] <= RATIO_TARGET,
        },
        "load_average_start": load_start,
        "load_average_end": _loadavg(),
        "seconds": time.perf_counter() - started,
        "notes": (
            f"{real} documents (generated-world text) and their sentences were encoded by "
            f"the real model ({MODEL}); the other {docs - real} documents are later "
            "generated-world documents whose document and sentence vectors are noisy "
            "re-normalised copies of real ones (cosine ~0.96), picked by the text's hash. "
            "projected_real_encode_seconds extrapolates the measured real throughput to "
            "every document and sentence. Queries are decomposed and encoded by the real "
            "model inside every timed call."
        ),
    }


def format_table(result: dict[str, Any]) -> str:
    """The plain-text table of a result of :func:`run`."""
    b, q, e = result["build"], result["query"], result["real_encode"]
    gib = 1024**3
    lines = [
        f"{result['documents']:,} documents ({result['real_documents']:,} really encoded, "
        f"{result['generated_documents']:,} generated with stand-in vectors), "
        f"{result['sentences']:,} sentences; {result['model']}, {result['index']} index, "
        f"{result['sentence_dtype']} sentences, chunks of {result['chunk_size']:,}",
        f"real encode: {e['docs_per_s']:.1f} docs/s, {e['sentences_per_s']:.1f} sentences/s"
        f"{' (cached)' if e.get('reused') else ''}; projected for all: "
        f"{result['projected_real_encode_seconds'] / 3600:.1f} h",
        f"build (no real encoding): {b['seconds']:.0f} s, of which stand-in vectors "
        f"{b['vector_seconds']:.0f} s; peak RSS {result['peak_rss_gib']['build']:.2f} GiB",
        f"disk: {result['disk_total_bytes'] / gib:.2f} GiB ("
        + ", ".join(f"{k} {v / gib:.2f}" for k, v in result["disk_bytes"].items() if v > 2**20)
        + ")",
        f"load: {q['load_seconds']:.1f} s (verify={q['verify']}), RSS after load "
        f"{q['memory_after_load']['vmrss_mib'] / 1024:.2f} GiB; query peak RSS "
        f"{result['peak_rss_gib']['query']:.2f} GiB (anon {q['memory']['rssanon_mib'] / 1024:.2f}, "
        f"file {q['memory']['rssfile_mib'] / 1024:.2f})",
    ]
    parts = q["resident_parts"]
    lines.append(
        f"resident: documents.jsonl as Python objects ~"
        f"{parts['documents_python_bytes_estimate'] / gib:.2f} GiB (parsed in "
        f"{parts['documents_parse_seconds']:.1f} s), index.faiss read whole "
        f"{parts.get('index_file_bytes', parts.get('document_index_vector_bytes', 0)) / gib:.2f} GiB"
    )
    for s in STRATEGIES:
        lat = q["latency"][s]
        lines.append(f"{s:<8} p50 {lat['p50_ms']:8.1f} ms   p95 {lat['p95_ms']:8.1f} ms")
    ok = "ok" if result["targets"]["rerank_p50_met"] else "MISSED"
    lines.append(f"rerank/vanilla p50 {q['p50_ratio']:.2f} (<= {RATIO_TARGET} {ok})")
    cold = result.get("query_cold")
    if cold:
        mem = cold["memory"]
        lines.append(
            f"cold (index files evicted from the page cache first): load "
            f"{cold['load_seconds']:.1f} s, peak RSS {mem['peak_rss_mib'] / 1024:.2f} GiB (anon "
            f"{mem['rssanon_mib'] / 1024:.2f}, file {mem['rssfile_mib'] / 1024:.2f} at the end), "
            f"vanilla p50 {cold['latency']['vanilla']['p50_ms']:.1f} ms, rerank p50 "
            f"{cold['latency']['rerank']['p50_ms']:.1f} ms ({cold['p50_ratio']:.2f}x)"
        )
    recall = result.get("recall")
    if recall:
        for dtype, row in recall["dtypes"].items():
            lines.append(
                f"{dtype} vs float32 @ {recall['documents']:,} docs, {recall['queries']} "
                f"queries: top-10 overlap {row['top10_overlap']:.4f} (same set "
                f"{row['top10_same_set']:.2f}), top-20 overlap {row['top20_overlap']:.4f}"
            )
    lines.append(f"load average {result['load_average_start']} -> {result['load_average_end']}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_million", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--real", type=int, default=20_000, help="documents really encoded")
    parser.add_argument(
        "--recall-docs", type=int, default=100_000, help="subset for the float16/int8 recall"
    )
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--chunk-size", type=int, default=10_000)
    parser.add_argument("--index", default="flat", choices=("flat", "hnsw", "ivfpq"))
    parser.add_argument("--nlist", type=int, default=None, help="IVF-PQ lists")
    parser.add_argument("--no-verify", action="store_true", help="load without checksums")
    parser.add_argument(
        "--no-cold", action="store_true", help="skip the second, cold-page-cache query stage"
    )
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--keep", action="store_true", help="keep the index folder")
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs") / "bench" / "million.json")
    parser.add_argument("--stage", nargs=2, metavar=("STAGE", "CONFIG"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _run_stage(stage: str, config: Path) -> int:
    cfg = json.loads(config.read_text(encoding="utf-8"))
    if cfg.get("threads"):
        import torch

        torch.set_num_threads(cfg["threads"])
    result = _STAGES[stage](cfg)
    from logic_rag.atomic import atomic_write_json

    atomic_write_json(config.with_name(f"{stage}.result.json"), result)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = parse_args(argv)
    if args.stage:
        return _run_stage(args.stage[0], Path(args.stage[1]))
    from benchmarks.common import machine_info
    from logic_rag.atomic import atomic_write_json

    result = run(
        args.docs,
        real=args.real,
        recall_docs=args.recall_docs,
        n_queries=args.queries,
        chunk_size=args.chunk_size,
        index=args.index,
        nlist=args.nlist,
        verify=not args.no_verify,
        cold=not args.no_cold,
        work=args.work,
        keep=args.keep,
        threads=args.threads,
        seed=args.seed,
        log=_say,
    )
    result["command"] = " ".join(["python -m benchmarks.bench_million", *(argv or sys.argv[1:])])
    result["machine"] = machine_info()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out, result)
    print(format_table(result))
    print(f"\nwrote {args.out} ({result['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
