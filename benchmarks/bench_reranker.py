"""Latency of the framework rerankers with and without their candidate-embedding cache.

The LlamaIndex and LangChain ``LogicReranker`` share :class:`~logic_rag.integrations.
_rerank.CandidateReranker`, which embeds every candidate page and its sentences. The
workload is a RAG service over one store: ``n_queries`` three-atom world queries, each
reranking its top ``candidates`` pages from a pool of ``pool`` world pages (dense top-k
over the pool by the same encoder, computed before the timing), asked for ``rounds``
rounds (the same questions again: retries, follow-ups, other users). Popular pages come
back for many queries, so later calls find most candidates in the cache.

Two rerankers run every call in turn, alternating which goes first so that noise from
other processes spreads over both: ``cache_size=0`` (embeds every candidate, the
behaviour before the cache) and the default cache. Rankings are compared (they must be
the same: the cache serves the vectors an encoding would give). The ratio is cached /
uncached in the same run; the cache hit rate is over all candidate pages asked for.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from benchmarks.common import Log, latency_summary, three_atom_queries, world_documents

__all__ = ["run"]


def run(
    *,
    pool: int = 300,
    n_queries: int = 20,
    candidates: int = 20,
    rounds: int = 2,
    model: str = "minilm",
    seed: int = 0,
    device: str | None = None,
    log: Log | None = None,
) -> dict[str, Any]:
    """Time ``rerank`` calls with the cache off and on; see the module docstring."""
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.integrations._embedding_cache import CandidateEmbeddingCache
    from logic_rag.integrations._rerank import CandidateReranker
    from logic_rag.retriever import DenseRetriever

    say = log if log is not None else (lambda _msg: None)
    if min(pool, n_queries, candidates, rounds) < 1:
        raise ValueError("pool, n_queries, candidates and rounds must be positive")
    docs = world_documents(pool, seed)
    queries = three_atom_queries(n_queries, seed)
    encoder = DenseEncoder(model, device=device)
    say(f"reranker: dense top-{candidates} of {n_queries} queries over {pool} pages")
    retriever = DenseRetriever.build(docs, model=encoder, show_progress_bar=False)
    by_id = {d.id: d for d in docs}
    asked = [
        [by_id[h.id] for h in hits]
        for hits in retriever.search_batch(queries, k=min(candidates, pool))
    ]
    rerankers = {
        "uncached": CandidateReranker(encoder, cache_size=0),
        "cached": CandidateReranker(encoder),
    }
    # Load the model and the decomposer outside the timing (on a page nobody asks for).
    for r in rerankers.values():
        r.rerank("warm-up query", ["a page used only to warm up"])
    rerankers["cached"].cache = CandidateEmbeddingCache(rerankers["cached"].cache.capacity)
    times: dict[str, list[float]] = {name: [] for name in rerankers}
    ranked: dict[str, list[list[int]]] = {name: [] for name in rerankers}
    order = list(rerankers)
    say(f"reranker: {rounds} rounds x {n_queries} queries, cache off and on")
    for round_ in range(rounds):
        for i, (query, pages) in enumerate(zip(queries, asked, strict=True)):
            texts = [d.text or d.title for d in pages]
            titles = [d.title for d in pages]
            turn = order if (round_ * n_queries + i) % 2 == 0 else order[::-1]
            for name in turn:
                t0 = time.perf_counter()
                out = rerankers[name].rerank(query, texts, titles=titles)
                times[name].append(time.perf_counter() - t0)
                ranked[name].append([r.position for r in out])
    cache = rerankers["cached"].cache
    off, on = latency_summary(times["uncached"]), latency_summary(times["cached"])
    first = slice(0, n_queries)
    later = slice(n_queries, None)
    per_round: dict[str, Any] = {
        "first_round": {
            "uncached": latency_summary(times["uncached"][first]),
            "cached": latency_summary(times["cached"][first]),
        }
    }
    if rounds > 1:
        per_round["later_rounds"] = {
            "uncached": latency_summary(times["uncached"][later]),
            "cached": latency_summary(times["cached"][later]),
        }
    for part in per_round.values():
        part["p50_ratio"] = part["cached"]["p50_ms"] / part["uncached"]["p50_ms"]
    distinct = len({d.id for pages in asked for d in pages})
    return {
        "model": encoder.name,
        "pool": pool,
        "queries": n_queries,
        "candidates": min(candidates, pool),
        "rounds": rounds,
        "distinct_candidate_pages": distinct,
        "uncached": off,
        "cached": on,
        "p50_ratio": on["p50_ms"] / off["p50_ms"],
        "p95_ratio": on["p95_ms"] / off["p95_ms"],
        "by_round": per_round,
        "cache_hit_rate": cache.hits / max(1, cache.hits + cache.misses),
        "same_ranking": float(np.mean([a == b for a, b in zip(*ranked.values(), strict=True)])),
        "notes": (
            "p50/p95 per rerank call (decomposition + embedding + verification + logic); "
            "ratio = cached / uncached, both run in turn in the same process; the cache "
            "starts empty, so the first round includes its misses."
        ),
    }


def run_against_retriever(
    *,
    pool: int = 2000,
    n_queries: int = 20,
    candidates: int = 100,
    rounds: int = 2,
    strategy: str = "rerank",
    model: str = "minilm",
    seed: int = 0,
    device: str | None = None,
    log: Log | None = None,
) -> dict[str, Any]:
    """The LlamaIndex reranker over ``candidates`` nodes against the retriever's same
    strategy over the same candidates (its ``DenseCandidates(candidates)`` are the store's
    top ``candidates``), timed in turn in one process. The reranker shares the retriever's
    loaded encoder through a ``LogicEmbedding``; its page-vector cache is warm after the
    first round, which is not timed (a service sees the same pages again)."""
    from dataclasses import fields

    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.integrations.llama_index import LogicEmbedding, LogicLlamaIndexReranker
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.strategies import STRATEGIES

    say = log if log is not None else (lambda _msg: None)
    if min(pool, n_queries, candidates, rounds) < 1:
        raise ValueError("pool, n_queries, candidates and rounds must be positive")
    docs = world_documents(pool, seed)
    queries = three_atom_queries(n_queries, seed)
    encoder = DenseEncoder(model, device=device)
    own = STRATEGIES[strategy].settings  # candidates= where the strategy has them
    has_candidates = "candidates" in {f.name for f in fields(own)}
    settings = own(candidates=candidates) if has_candidates else own()
    say(f"reranker vs retriever: {strategy}, {candidates} of {pool} pages, {n_queries} queries")
    retriever = LogicRetriever.build(docs, model=encoder, settings=settings, strategy=strategy)
    embedding = LogicEmbedding(encoder)
    reranker = LogicLlamaIndexReranker(
        model=embedding, strategy=strategy, settings=settings, top_n=10
    )
    by_id = {d.id: d for d in docs}
    node_lists = []
    for hits in retriever.dense.search_batch(queries, k=min(candidates, pool)):
        node_lists.append(
            [
                NodeWithScore(node=TextNode(text=by_id[h.id].text, id_=h.id), score=h.score)
                for h in hits
            ]
        )
    times: dict[str, list[float]] = {"retriever": [], "reranker": []}
    same_top = []
    for round_ in range(rounds + 1):
        for query, nodes in zip(queries, node_lists, strict=True):
            t0 = time.perf_counter()
            want = retriever.search(query, k=10)
            t1 = time.perf_counter()
            got = reranker.postprocess_nodes(nodes, QueryBundle(query))
            t2 = time.perf_counter()
            if round_:  # the first round fills the reranker's page cache: not timed
                times["retriever"].append(t1 - t0)
                times["reranker"].append(t2 - t1)
                shared = {h.id for h in want} & {n.node.node_id for n in got}
                same_top.append(len(shared) / max(1, len(want)))
    retr, rer = latency_summary(times["retriever"]), latency_summary(times["reranker"])
    return {
        "model": encoder.name,
        "strategy": strategy,
        "pool": pool,
        "candidates": min(candidates, pool),
        "queries": n_queries,
        "rounds": rounds,
        "retriever": retr,
        "reranker": rer,
        "p50_ratio": rer["p50_ms"] / retr["p50_ms"],
        # Not identical by design: the reranker calibrates the evidence on its candidates,
        # the retriever on the corpus.
        "top10_overlap": float(np.mean(same_top)),
        "encoder_shared": reranker._core.encoder is encoder,
        "notes": (
            "reranker = LogicLlamaIndexReranker over the store's top nodes (warm page cache, "
            "its default candidate calibration); retriever = LogicRetriever.search "
            "with the same strategy and candidates; p50 per query, in turn, one process"
        ),
    }
