"""Quality mode's cost per query: seconds and LLM calls at 100 candidates, against its peers.

On the real QUEST-attr pages and queries (``$LOGIC_RAG_DATA/quest/attr``, split by atom
as ``logic_rag.evals.quest.split`` does): the cascade is fitted once on train queries
(``fit_queries``; its LLM labels are a one-off cost, reported apart), then each of
``n_queries`` dev queries is searched alone with

* ``vanilla`` (the peer whose latency the ratios divide by),
* ``quality`` over exactly ``candidates`` whole-query candidates (no per-atom candidates),

and, on the first ``all_pairs_queries`` of them, the all-pairs verifier (``verify`` with
the LLM on every candidate's positive atoms) for the calls and seconds the cascade saves.
Skipped, with the reason, when the data or the LLM runtime is missing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["run"]


def _percentiles(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=np.float64)
    return {"p50_s": float(np.percentile(arr, 50)), "p95_s": float(np.percentile(arr, 95))}


def run(
    *,
    model: str,
    index: str | None = None,
    llm_spec: str = "qwen2.5-1.5b",
    n_queries: int = 10,
    fit_queries: int = 60,
    sample: int = 300,
    candidates: int = 100,
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
    from logic_rag.verifiers.cascade import fit_cascade, forget_thresholds
    from logic_rag.verifiers.llm import LLMVerifier

    folder = shared_data_dir() / "quest" / "attr"
    if not (folder / "documents.jsonl").is_file():
        return {"skipped": f"QUEST-attr data not found in {folder}"}
    if llm_spec in ("", "none"):
        return {"skipped": "no LLM verifier (--llm-verifier none)"}
    if ":" not in llm_spec and not llamacpp_available():
        return {"skipped": "llama-cpp-python is not installed (make setup builds it)"}
    split = split_by_atom(read_records(folder / "train_dev.jsonl"))
    train = [r["query"] for r in split.train][:fit_queries]
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
    forget_thresholds()
    quality = retriever.with_config(
        verifier=verifier, candidates=candidates, verify_atom_candidates=0, quality_sample=sample
    )
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        fitted = fit_cascade(quality, train, Path(tmp) / "cascade.json")
        fit_seconds = time.perf_counter() - began
    log(f"quality: fitted on {len(fitted.sample)} labelled pairs in {fit_seconds:.0f} s")
    rows: dict[str, list[float]] = {"vanilla": [], "quality": []}
    calls, every, tokens = [], [], []
    for i, query in enumerate(dev):
        began = time.perf_counter()
        retriever.search(query, k=20, strategy="vanilla")
        rows["vanilla"].append(time.perf_counter() - began)
        verifier.cache.clear()  # cold: every LLM call of the query is paid
        began = time.perf_counter()
        hits = quality.search(query, k=20, strategy="quality")
        rows["quality"].append(time.perf_counter() - began)
        info = hits[0].logic.get("cascade", {}) if hits else {}
        calls.append(info.get("expensive_calls", 0))
        every.append(info.get("all_pairs_calls", 0))
        tokens.append(info.get("prompt_tokens", 0))
        log(f"quality: query {i + 1}/{len(dev)} {rows['quality'][-1]:.1f} s, {calls[-1]} calls")
    all_pairs: list[float] = []
    all_calls: list[int] = []
    verify = retriever.with_config(
        verifier=verifier, candidates=candidates, verify_atom_candidates=0
    )
    for query in dev[:all_pairs_queries]:
        verifier.cache.clear()
        before = verifier.stats().get("pairs", 0)
        began = time.perf_counter()
        verify.search(query, k=20, strategy="verify")
        all_pairs.append(time.perf_counter() - began)
        all_calls.append(verifier.stats().get("pairs", 0) - before)
    vanilla = _percentiles(rows["vanilla"])
    cascade = _percentiles(rows["quality"])
    out: dict[str, Any] = {
        "model": retriever.dense.encoder.name,
        "llm": llm_spec,
        "queries": len(dev),
        "candidates": candidates,
        "fit": {"queries": len(train), "pairs": len(fitted.sample), "seconds": fit_seconds},
        "vanilla": vanilla,
        "quality": {
            **cascade,
            "llm_calls_mean": float(np.mean(calls)),
            "llm_calls_p50": float(np.percentile(calls, 50)),
            "all_pairs_calls_mean": float(np.mean(every)),
            "call_share": float(sum(calls) / max(1, sum(every))),
            "prompt_tokens_mean": float(np.mean(tokens)),
            "p50_ratio_vs_vanilla": cascade["p50_s"] / max(vanilla["p50_s"], 1e-9),
        },
    }
    if all_pairs:
        out["all_pairs_verify"] = {
            "queries": len(all_pairs),
            "seconds_mean": float(np.mean(all_pairs)),
            "llm_calls_mean": float(np.mean(all_calls)),
            "quality_seconds_ratio": float(np.mean(rows["quality"][: len(all_pairs)]))
            / max(float(np.mean(all_pairs)), 1e-9),
        }
    return out
