"""Query latency of the Milvus-backed retriever as a ratio to the FAISS one, same run.

The same corpus and vectors are indexed twice: in memory with FAISS (the default backend)
and in a Milvus Lite file (``LogicRetriever.to_store``). Every query is searched with
each strategy on both backends, backends and strategies taking turns in a rotating order
so that noise from other processes spreads over all of them. Rankings are compared too:
the two backends are both exact inner product, so the ids must agree.

As in :mod:`benchmarks.bench_logic_latency`, ``sample`` documents and their sentences are
encoded by the real model and the other rows are noisy re-normalised copies of them
(search cost depends on the number of vectors, not on where they came from); queries are
decomposed and encoded inside every timed call. The Milvus Lite server runs on the same
machine, so the numbers measure the client/server round trips (gRPC, serialisation of
the candidates' vectors), not a network.

A Milvus Lite store reads the candidates' document and sentence vectors from its local
copy (memory-mapped files written beside the ``.db``, :mod:`logic_rag.index.milvus_local`)
unless ``$LOGIC_RAG_MILVUS_VECTORS=milvus``; then it reads them from Milvus by primary key
and caches them. Milvus is timed twice per (query, strategy): ``milvus`` right after an
untimed run of the same call (a serving process whose candidates recur), and
``milvus_cold`` with the client cache emptied first (the first query over unseen
documents: with reads by primary key, every vector comes from Milvus). The local copy has
no client cache, so it is the same code path in both; its pages stay in the OS page cache
(the file was just written), as the FAISS side's arrays stay in memory: neither backend
is timed with its vectors on disk only. FAISS gets the same untimed run before its timed
one. The result's ``vector_source`` says which path was timed.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.bench_logic_latency import _passage_fill
from benchmarks.common import (
    Log,
    fill_vectors,
    latency_summary,
    three_atom_queries,
    world_documents,
)

__all__ = ["DEFAULT_STRATEGIES", "run"]

#: Every dense strategy but ``quality`` (its LLM would dominate both backends alike).
DEFAULT_STRATEGIES = (
    "vanilla",
    "rerank",
    "setops",
    "verify",
    "fusion",
    "fusion-product",
    "orthogonal",
)
MODEL = "minilm"


def _versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for dist in ("pymilvus", "milvus-lite"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def run(
    size: int = 20_000,
    *,
    sample: int = 2000,
    n_queries: int = 30,
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    warmup: int = 3,
    noise: float = 0.3,
    seed: int = 0,
    model: str = MODEL,
    log: Log | None = None,
) -> dict[str, Any]:
    """Time ``strategies`` on FAISS and on Milvus Lite over ``size`` documents."""
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.index.faiss_index import DenseIndex
    from logic_rag.index.passages import PassageVectors, split_sentences
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.retriever import DenseRetriever

    say = log if log is not None else (lambda _msg: None)
    if size < 1 or sample < 1:
        raise ValueError(f"size and sample must be positive, got size={size}, sample={sample}")
    sample = min(sample, size)
    docs = world_documents(size, seed)
    queries = three_atom_queries(n_queries, seed)
    encoder = DenseEncoder(model)

    say(f"milvus: encoding {sample} sampled documents and their sentences")
    doc_sample = encoder.encode_documents(
        [d.content for d in docs[:sample]], show_progress_bar=False
    )
    sentences: list[str] = []
    offsets = [0]
    for d in docs[:sample]:
        sentences.extend(split_sentences(d.text or d.title))
        offsets.append(len(sentences))
    sentence_sample = encoder.encode_documents(sentences, show_progress_bar=False)
    doc_vectors = fill_vectors(doc_sample, size, noise=noise, seed=seed)
    passage_vectors, passage_offsets = _passage_fill(
        sentence_sample, np.asarray(offsets, dtype=np.int64), size, noise, seed
    )
    index = DenseIndex(doc_vectors.shape[1], "flat")
    index.add(doc_vectors)
    del doc_vectors
    faiss_side = LogicRetriever(
        DenseRetriever(encoder, index, docs),
        passages=PassageVectors(passage_vectors, passage_offsets),
    )

    with tempfile.TemporaryDirectory(prefix="bench-milvus-") as tmp:
        say(f"milvus: writing {size} documents and {int(passage_offsets[-1])} sentences")
        start = time.perf_counter()
        milvus_side = faiss_side.to_store(f"milvus://{tmp}/bench.db", collection="bench")
        write_seconds = time.perf_counter() - start
        cache = milvus_side.dense.index.store.cache
        source = milvus_side.passages.source
        say(f"milvus: candidates' vectors read from {source}")
        backends = {"faiss": faiss_side, "milvus": milvus_side, "milvus_cold": milvus_side}
        for q in queries[:warmup]:
            for s in strategies:
                for r in (faiss_side, milvus_side):
                    r.search(q, k=10, strategy=s)
        turns = [(b, s) for s in strategies for b in backends]
        times: dict[tuple[str, str], list[float]] = {t: [] for t in turns}
        ranked: dict[tuple[str, str], list[list[tuple[str, float]]]] = {t: [] for t in turns}
        cached_bytes = 0  # the most the client cache held after a call
        say(f"milvus: {len(queries)} queries x {len(strategies)} strategies x 3 runs")
        for i, q in enumerate(queries):
            shift = i % len(turns)
            for b, s in (*turns[shift:], *turns[:shift]):
                if b == "milvus_cold":
                    cache.clear()
                else:
                    backends[b].search(q, k=10, strategy=s)  # untimed: the warm state
                t0 = time.perf_counter()
                hits = backends[b].search(q, k=10, strategy=s)
                times[(b, s)].append(time.perf_counter() - t0)
                ranked[(b, s)].append([(h.id, h.score) for h in hits])
                cached_bytes = max(cached_bytes, cache.nbytes)

    rows = []
    for s in strategies:
        f = latency_summary(times[("faiss", s)])
        row: dict[str, Any] = {"strategy": s, "faiss": f}
        for b, tag in (("milvus", ""), ("milvus_cold", "cold_")):
            m = latency_summary(times[(b, s)])
            pairs = list(zip(ranked[("faiss", s)], ranked[(b, s)], strict=True))
            row[b] = m
            row[f"{tag}p50_ratio"] = m["p50_ms"] / f["p50_ms"]
            row[f"{tag}p95_ratio"] = m["p95_ms"] / f["p95_ms"]
            row[f"{tag}same_top10"] = float(
                np.mean([[i for i, _ in a] == [i for i, _ in c] for a, c in pairs])
            )
            row[f"{tag}max_score_diff"] = max(
                (abs(x - y) for a, c in pairs for (_, x), (_, y) in zip(a, c, strict=False)),
                default=0.0,
            )
        rows.append(row)
    return {
        "model": encoder.name,
        "documents": size,
        "sampled_documents": sample,
        "sentences": int(passage_offsets[-1]),
        "queries": len(queries),
        "milvus_write_seconds": write_seconds,
        "milvus_cache_peak_bytes": cached_bytes,
        "vector_source": source,
        "store": "Milvus Lite (local file, server process on this machine)",
        "versions": _versions(),
        "strategies": rows,
        "notes": (
            "p50/p95 per query (decomposition + encoding + search + evidence), FAISS in "
            "memory vs Milvus Lite; ratio = Milvus / FAISS. vector_source: where the "
            "candidates' vectors were read (local: the store's memory-mapped local copy, "
            "no client cache; milvus: by primary key through the client cache). milvus: "
            "run once untimed first, as FAISS is; milvus_cold (cold_*): the client cache "
            "emptied before the call. same_top10 = share of queries "
            "whose top-10 ids are identical on both backends; max_score_diff = largest "
            "|score difference| between the backends' hits."
        ),
    }
