"""Quality mode's cost per query at the caller's k, against its two LLM peers.

Certified top-k verification spends LLM checks on what can change the top k, so its cost
should follow k, not the candidate pool. On the real QUEST-attr pages and the first
``n_queries`` dev queries (split by atom as ``logic_rag.evals.quest.split`` does), each
query is searched alone, with a cold LLM pair cache, at k = 5 and k = 20 by

* ``vanilla`` (no LLM: the floor the ratios divide by);
* ``quality`` with hard bounds and the shipped per-query budget (``budget``), over the
  best ``pool`` candidates (``quality_pool``);
* ``llm-rerank`` at the same number of calls (``llm_rerank_top`` = quality's mean calls at
  that k, rounded): one whole-query check per page;
* on the first ``all_pairs_queries``, ``verify`` with the LLM on every positive atom of
  the same ``pool`` pages (``verifier_top = pool``): what checking every pair costs. Its
  ranking does not depend on k, so it is timed once.

Seconds are wall time per query on whatever the machine is doing (``benchmarks.run``
records the load average); calls are (constraint, page) checks the pipeline asked.
Skipped, with the reason, when the data or the LLM runtime is missing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["run", "time_pipelines"]


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=np.float64)
    return {"p50_s": float(np.percentile(arr, 50)), "p95_s": float(np.percentile(arr, 95))}


def _timed(
    retriever: Any, verifier: Any, queries: Sequence[str], k: int, strategy: str
) -> dict[str, Any]:
    """Seconds and LLM calls per query, each query searched alone with a cold cache."""
    seconds: list[float] = []
    calls: list[int] = []
    every: list[int] = []
    tokens: list[int] = []
    for query in queries:
        cache = getattr(verifier, "cache", None)
        if cache is not None:
            cache.clear()  # cold: every check of the query is paid
        lookups = 0 if cache is None else cache.hits + cache.misses
        began = time.perf_counter()
        hits = retriever.search(query, k=k, strategy=strategy)
        seconds.append(time.perf_counter() - began)
        info = (hits[0].logic.get("llm") if hits and hits[0].logic else None) or {}
        asked = 0 if cache is None else cache.hits + cache.misses - lookups
        calls.append(int(info.get("calls", asked)))  # verify reports none: count lookups
        every.append(int(info.get("all_pairs_calls", asked)))
        tokens.append(int(info.get("prompt_tokens", 0)))
    return {
        **_percentiles(seconds),
        "seconds_mean": float(np.mean(seconds)),
        "llm_calls_mean": float(np.mean(calls)),
        "llm_calls_max": int(max(calls)),
        "all_pairs_calls_mean": float(np.mean(every)),
        "call_share": float(sum(calls) / max(1, sum(every))),
        "prompt_tokens_mean": float(np.mean(tokens)),
        "seconds_per_call": float(sum(seconds) / sum(calls)) if sum(calls) else None,
    }


def time_pipelines(
    retriever: Any,
    verifier: Any,
    queries: Sequence[str],
    *,
    ks: Sequence[int] = (5, 20),
    pool: int = 40,
    budget: int | None = 60,
    all_pairs_queries: int = 2,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """``{"by_k": {k: {vanilla, quality, llm_rerank}}, "all_pairs_verify": {...}}``.

    ``pool`` must exceed every k: a pool of k pages or fewer is its own top k, certified
    with no LLM check, and would time nothing.
    """
    if not ks or pool <= max(ks):
        raise ValueError(f"pool ({pool}) must be larger than every k ({list(ks)})")
    from logic_rag.strategy_settings import LLMRerankSettings, QualitySettings, VerifySettings

    quality = retriever.with_settings(
        QualitySettings(verifier=verifier, pool=pool, bounds="hard", max_calls=budget)
    )
    by_k: dict[int, dict[str, Any]] = {}
    for k in ks:
        row = {"vanilla": _timed(retriever, None, queries, k, "vanilla")}
        row["quality"] = _timed(quality, verifier, queries, k, "quality")
        top = max(1, int(round(row["quality"]["llm_calls_mean"])))
        peer = retriever.with_settings(LLMRerankSettings(verifier=verifier, pool=pool, top=top))
        row["llm_rerank"] = {
            "llm_rerank_top": top,
            **_timed(peer, verifier, queries, k, "llm-rerank"),
        }
        q, r = row["quality"], row["llm_rerank"]
        log(
            f"quality k={k}: {q['p50_s']:.1f} s p50, {q['llm_calls_mean']:.1f} calls; "
            f"llm-rerank top {top}: {r['p50_s']:.1f} s p50"
        )
        by_k[k] = row
    out: dict[str, Any] = {"by_k": by_k}
    if all_pairs_queries:
        verify = retriever.with_settings(VerifySettings(verifier=verifier, verifier_top=pool))
        chosen = list(queries)[:all_pairs_queries]
        out["all_pairs_verify"] = {
            "queries": len(chosen),
            **_timed(verify, verifier, chosen, max(ks), "verify"),
        }
        a = out["all_pairs_verify"]
        log(
            f"all-pairs verify over {pool}: {a['seconds_mean']:.1f} s, {a['llm_calls_mean']:.0f} calls"
        )
    return out


def run(
    *,
    model: str,
    index: str | None = None,
    llm_spec: str = "qwen2.5-1.5b",
    n_queries: int = 5,
    ks: Sequence[int] = (5, 20),
    pool: int = 40,
    budget: int | None = 60,
    all_pairs_queries: int = 2,
    device: str | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    from benchmarks.common import llm_generator
    from logic_rag.corpus import load_documents
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.evals.quest.split import read_records, split_by_atom
    from logic_rag.generators.llamacpp import llamacpp_available
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.paths import shared_data_dir
    from logic_rag.verifiers.llm import LLMVerifier

    folder = shared_data_dir() / "quest" / "attr"
    if not (folder / "documents.jsonl").is_file():
        return {"skipped": f"QUEST-attr data not found in {folder}"}
    if llm_spec in ("", "none"):
        return {"skipped": "no LLM verifier (--llm-verifier none)"}
    if ":" not in llm_spec and not llamacpp_available():
        return {"skipped": "llama-cpp-python is not installed (make setup builds it)"}
    split = split_by_atom(read_records(folder / "train_dev.jsonl"))
    dev = [r["query"] for r in split.dev][:n_queries]
    started = time.perf_counter()
    if index:
        retriever = LogicRetriever.load(index)
    else:
        retriever = LogicRetriever.build(
            load_documents(folder / "documents.jsonl"), model=DenseEncoder(model, device=device)
        )
    log(f"quality: index ready ({time.perf_counter() - started:.0f} s, {len(retriever)} pages)")
    verifier = LLMVerifier(generator=llm_generator(llm_spec, device))
    verifier.warm_up()
    timed = time_pipelines(
        retriever,
        verifier,
        dev,
        ks=ks,
        pool=pool,
        budget=budget,
        all_pairs_queries=all_pairs_queries,
        log=log,
    )
    at = timed["by_k"][max(ks)]
    out: dict[str, Any] = {
        "model": retriever.dense.encoder.name,
        "llm": llm_spec,
        "queries": len(dev),
        "candidates": pool,
        "budget": budget,
        "ks": list(ks),
        # The largest k's rows under the keys benchmarks.run's table prints.
        "vanilla": at["vanilla"],
        "quality": {
            **at["quality"],
            "p50_ratio_vs_vanilla": at["quality"]["p50_s"] / max(at["vanilla"]["p50_s"], 1e-9),
        },
        "by_k": {str(k): row for k, row in timed["by_k"].items()},
    }
    if "all_pairs_verify" in timed:
        a = timed["all_pairs_verify"]
        out["all_pairs_verify"] = {
            **a,
            "quality_seconds_ratio": at["quality"]["seconds_mean"] / max(a["seconds_mean"], 1e-9),
        }
    return out
