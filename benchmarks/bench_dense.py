"""logic-rag's dense engine against raw sentence-transformers + ``faiss.IndexFlatIP``.

Both sides run in the same process on the same texts, batch size and threads:

* indexing throughput (documents/s): logic-rag's ``DenseRetriever.build(docs, model=encoder)``
  against ``SentenceTransformer.encode(texts, batch_size=64, normalize_embeddings=True)``
  + ``IndexFlatIP.add``. The encoded documents are cut into chunks whose edges include
  every measured size; chunks alternate which side goes first, so CPU noise from other
  processes falls on both sides alike. Throughput at size ``n`` is ``n`` over the summed
  time of the chunks below ``n``.
* query latency (p50, p95): ``DenseRetriever.search(q, k=10)`` against
  ``encode([q]) + index.search(v, 10)``, one query at a time, the two sides alternating
  per query. Sizes above ``encode_max`` hold the encoded documents plus noisy copies of
  them (see :func:`benchmarks.common.fill_vectors`): a flat search costs the same
  whatever the vectors are.

Targets from the issue: throughput >= 0.95x raw, query p50 <= 1.1x raw.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.common import Log, fill_vectors, latency_summary, world_documents, world_queries

__all__ = ["THROUGHPUT_TARGET", "P50_TARGET", "run", "chunk_edges"]

THROUGHPUT_TARGET = 0.95
P50_TARGET = 1.1
MODEL = "minilm"


def chunk_edges(n: int, chunk: int, marks: Sequence[int] = ()) -> list[int]:
    """Chunk boundaries ``0 = e0 < e1 < ... = n``, at most ``chunk`` apart, through ``marks``."""
    if n < 1 or chunk < 1:
        raise ValueError("n and chunk must be positive")
    edges = {0, n, *(m for m in marks if 0 < m < n)}
    edges.update(range(0, n, chunk))
    ordered = sorted(edges)
    out = [0]
    for edge in ordered[1:]:
        while edge - out[-1] > chunk:
            out.append(out[-1] + chunk)
        out.append(edge)
    return out


def _quiet(log: Log | None) -> Log:
    return log if log is not None else (lambda _msg: None)


def run(
    sizes: Sequence[int],
    *,
    encode_max: int | None = None,
    n_queries: int = 200,
    chunk: int = 2048,
    batch_size: int = 64,
    warmup: int = 10,
    noise: float = 0.3,
    seed: int = 0,
    model: str = MODEL,
    device: str | None = None,
    log: Log | None = None,
) -> dict[str, Any]:
    """Measure both sides at every size in ``sizes``; returns a JSON-ready dict.

    ``model`` is a registry name or model folder; ``device`` a torch device (``None``:
    sentence-transformers' choice). Both sides run the model in the dtype logic-rag picks
    for it on that device (bf16 for EmbeddingGemma where the device has it).

    ``encode_max`` caps how many documents are really encoded (default: all of the
    largest size); throughput is reported for every size up to it and for the cap.
    """
    import faiss
    from sentence_transformers import SentenceTransformer

    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.index.faiss_index import DenseIndex
    from logic_rag.models import resolve_model
    from logic_rag.retriever import DenseRetriever

    say = _quiet(log)
    sizes = sorted({int(s) for s in sizes})
    if not sizes or sizes[0] < 1:
        raise ValueError(f"sizes must be positive document counts, got {sizes}")
    n_max = sizes[-1]
    n_encode = n_max if not encode_max else min(n_max, int(encode_max))

    say(f"dense: generating {n_max} documents and {n_queries} queries")
    docs = world_documents(n_max, seed)
    queries = world_queries(n_queries, seed)
    texts = [d.content for d in docs]

    import torch

    encoder = DenseEncoder(model, batch_size=batch_size, device=device)
    raw = SentenceTransformer(
        str(resolve_model(model).path),
        device=device,
        local_files_only=True,
        model_kwargs={"dtype": getattr(torch, encoder.dtype)},
    )

    def raw_encode(batch: list[str]) -> np.ndarray:
        return raw.encode(
            batch,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    # Warm both sides up (model load, first-call allocations) before any timing.
    warm = texts[: min(batch_size, n_encode)]
    DenseRetriever.build(docs[: len(warm)], model=encoder, show_progress_bar=False)
    raw_encode(warm)

    # ---------------------------------------------------------------- throughput
    # At least ~4 chunks, so that the alternation of the two sides has something to do.
    chunk = min(chunk, max(batch_size, -(-n_encode // 4)))
    edges = chunk_edges(n_encode, chunk, [*sizes, n_encode])
    seconds = {"logic_rag": [], "raw": []}
    vectors: dict[str, list[np.ndarray]] = {"logic_rag": [], "raw": []}
    say(f"dense: encoding {n_encode} documents per side in {len(edges) - 1} chunks")
    for c, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
        for side in ("raw", "logic_rag") if c % 2 == 0 else ("logic_rag", "raw"):
            start = time.perf_counter()
            if side == "raw":
                emb = raw_encode(texts[lo:hi])
                index = faiss.IndexFlatIP(emb.shape[1])
                index.add(emb)
                elapsed = time.perf_counter() - start
            else:
                built = DenseRetriever.build(docs[lo:hi], model=encoder, show_progress_bar=False)
                elapsed = time.perf_counter() - start
                emb = built.index.vectors().copy()
            seconds[side].append(elapsed)
            vectors[side].append(np.asarray(emb, dtype=np.float32))
        say(f"dense:   {hi}/{n_encode} documents")
    real = {side: np.concatenate(v) for side, v in vectors.items()}
    max_diff = float(np.abs(real["logic_rag"] - real["raw"]).max())

    throughput = []
    # Every measured size that was really encoded, and the encoded count itself.
    for n in sorted({n for n in sizes if n <= n_encode} | {n_encode}):
        k = edges.index(n)
        per_side = {side: n / sum(s[:k]) for side, s in seconds.items()}
        ratio = per_side["logic_rag"] / per_side["raw"]
        throughput.append(
            {
                "documents": n,
                "logic_rag_docs_per_s": per_side["logic_rag"],
                "raw_docs_per_s": per_side["raw"],
                "ratio": ratio,
                "target": THROUGHPUT_TARGET,
                "meets_target": ratio >= THROUGHPUT_TARGET,
            }
        )

    # ---------------------------------------------------------------- query latency
    latency = []
    for n in sizes:
        synthetic = max(0, n - n_encode)
        filled = {
            side: fill_vectors(real[side][: min(n, n_encode)], n, noise=noise, seed=seed)
            for side in real
        }
        dense = DenseIndex(filled["logic_rag"].shape[1], "flat")
        dense.add(filled["logic_rag"])
        retriever = DenseRetriever(encoder, dense, docs[:n])
        index = faiss.IndexFlatIP(filled["raw"].shape[1])
        index.add(filled["raw"])
        del filled

        def raw_search(q: str, index: Any = index) -> np.ndarray:
            v = raw.encode([q], normalize_embeddings=True, convert_to_numpy=True)
            return index.search(v, 10)[1][0]

        for q in queries[:warmup]:
            retriever.search(q, k=10)
            raw_search(q)
        times: dict[str, list[float]] = {"logic_rag": [], "raw": []}
        same = 0
        say(f"dense: {len(queries)} queries per side over {n} documents")
        for i, q in enumerate(queries):
            result: dict[str, list[str]] = {}
            for side in ("raw", "logic_rag") if i % 2 == 0 else ("logic_rag", "raw"):
                start = time.perf_counter()
                if side == "raw":
                    ids = raw_search(q)
                    times[side].append(time.perf_counter() - start)
                    result[side] = [docs[j].id for j in ids.tolist() if j >= 0]
                else:
                    hits = retriever.search(q, k=10)
                    times[side].append(time.perf_counter() - start)
                    result[side] = [h.id for h in hits]
            same += result["raw"] == result["logic_rag"]
        ours, theirs = latency_summary(times["logic_rag"]), latency_summary(times["raw"])
        latency.append(
            {
                "documents": n,
                "synthetic_documents": synthetic,
                "queries": len(queries),
                "logic_rag": ours,
                "raw": theirs,
                "p50_ratio": ours["p50_ms"] / theirs["p50_ms"],
                "p95_ratio": ours["p95_ms"] / theirs["p95_ms"],
                "target_p50_ratio": P50_TARGET,
                "meets_target": ours["p50_ms"] / theirs["p50_ms"] <= P50_TARGET,
                "same_top10_fraction": same / len(queries),
            }
        )
        del retriever, dense, index

    return {
        "model": model,
        "device": str(encoder.model.device),
        "batch_size": batch_size,
        "encoded_documents": n_encode,
        "chunks": len(edges) - 1,
        "embedding_max_abs_diff": max_diff,
        "fill_noise": noise,
        "throughput": throughput,
        "latency": latency,
        "notes": (
            "throughput: both sides encode the same texts chunk by chunk, alternating "
            "order; latency: one query at a time, alternating order; sizes above "
            f"encoded_documents={n_encode} hold the encoded vectors plus noisy copies "
            "(search cost does not depend on where vectors came from)"
        ),
    }
