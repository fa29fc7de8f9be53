"""What a strategy cost per query: wall seconds, and for ``quality`` the LLM's share.

:func:`summarise_costs` turns per-query records (the seconds a search took, and the
``llm`` block that ``quality``'s certified stage and ``llm-rerank`` write into every hit's
``logic``, or the ``cascade`` block of a ``CascadeVerify`` stage) into the figures
an evaluation reports: p50 / p95 seconds per query, costly-verifier calls per query
against what checking every pair would have made, prompt tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["query_cost", "summarise_costs"]


def query_cost(seconds: float, logic: Mapping[str, Any] | None) -> dict[str, Any]:
    """One query's record: its wall seconds and, when present, its cascade figures."""
    record: dict[str, Any] = {"seconds": float(seconds)}
    llm = (logic or {}).get("llm")
    if isinstance(llm, Mapping):  # quality (certified top k) and llm-rerank
        record["expensive_calls"] = int(llm.get("calls", 0))
        record["all_pairs_calls"] = int(llm.get("all_pairs_calls", 0))
        record["prompt_tokens"] = int(llm.get("prompt_tokens", 0))
        return record
    cascade = (logic or {}).get("cascade")
    if isinstance(cascade, Mapping):
        keys = ("expensive_calls", "all_pairs_calls", "uncut_pairs_calls", "prompt_tokens")
        for key in (*keys, "fit_calls"):
            record[key] = int(cascade.get(key, 0))
    return record


def _percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else 0.0


def summarise_costs(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """p50 / p95 / mean seconds per query; calls and tokens per query where recorded."""
    seconds = [float(r["seconds"]) for r in records]
    out: dict[str, Any] = {
        "queries": len(records),
        "seconds_p50": round(_percentile(seconds, 50), 4),
        "seconds_p95": round(_percentile(seconds, 95), 4),
        "seconds_mean": round(float(np.mean(seconds)) if seconds else 0.0, 4),
    }
    cascaded = [r for r in records if "expensive_calls" in r]
    if cascaded:
        calls = [r["expensive_calls"] for r in cascaded]
        every = [r["all_pairs_calls"] for r in cascaded]
        out.update(
            {
                "cascade_queries": len(cascaded),
                "llm_calls_mean": round(float(np.mean(calls)), 2),
                "llm_calls_p50": _percentile(calls, 50),
                "all_pairs_calls_mean": round(float(np.mean(every)), 2),
                "llm_call_share": round(sum(calls) / sum(every), 4) if sum(every) else 0.0,
                "uncut_pairs_calls_mean": round(
                    float(np.mean([r.get("uncut_pairs_calls", 0) for r in cascaded])), 2
                ),
                "prompt_tokens_mean": round(
                    float(np.mean([r["prompt_tokens"] for r in cascaded])), 1
                ),
                "fit_calls": int(sum(r.get("fit_calls", 0) for r in cascaded[:1])),
            }
        )
    return out
