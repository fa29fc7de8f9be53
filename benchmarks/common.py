"""What both benchmarks share: the generated corpus, its queries, vector filling, timing.

The corpus is the project's generated world (encyclopedic documents of ~60-110 words
about films, books, plants and animals). Entity ``i`` is a pure function of
``(seed, i)``, so the first ``n`` documents of a large corpus are the documents of a
small one, and queries drawn from a 3,000-entity world name atoms whose members are the
first 3,000 documents of every corpus built with the same seed.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

import numpy as np

from logic_rag.corpus import Document

__all__ = [
    "QUERY_WORLD_ENTITIES",
    "THREE_ATOM_TEMPLATES",
    "Log",
    "fill_rows",
    "fill_vectors",
    "latency_summary",
    "machine_info",
    "three_atom_queries",
    "world_documents",
    "world_queries",
]

#: Entities of the world the queries are drawn from (its atoms live in the first 3,000 docs).
QUERY_WORLD_ENTITIES = 3000
#: QUEST templates whose queries have three atoms.
THREE_ATOM_TEMPLATES = ("_ that are also _ but not _", "_ that are also both _ and _")

Log = Callable[[str], None]


def world_documents(n: int, seed: int = 0) -> list[Document]:
    """The first ``n`` documents of the generated world, ids ``"0" .. str(n-1)``.

    Kept for the run (both benchmarks ask for the same corpus): a fresh list each call.
    """
    if n < 1:
        raise ValueError(f"a corpus needs at least one document, got n={n}")
    return list(_world_documents(n, seed))


@functools.lru_cache(maxsize=1)
def _world_documents(n: int, seed: int) -> tuple[Document, ...]:
    from logic_rag.evals.world import WorldConfig, iter_documents

    config = WorldConfig(n_entities=max(n, 8), seed=seed)
    docs = []
    for i, row in enumerate(iter_documents(config)):
        if i == n:
            break
        docs.append(Document(id=str(i), text=row["text"], title=row["title"]))
    return tuple(docs)


def _query_world(seed: int, n_test: int) -> Any:
    from logic_rag.evals.world import WorldConfig, generate_world

    config = WorldConfig(
        n_entities=QUERY_WORLD_ENTITIES,
        seed=seed,
        n_queries_per_split={"train": 0, "val": 0, "test": n_test},
    )
    return generate_world(config)


def world_queries(n: int, seed: int = 0) -> list[str]:
    """``n`` natural-language queries of all seven QUEST templates (world test split)."""
    if n < 1:
        raise ValueError(f"need at least one query, got {n}")
    rows = _query_world(seed, max(n, 50)).queries["test"]
    return [str(r["query"]) for r in rows[:n]]


def three_atom_queries(n: int, seed: int = 0) -> list[str]:
    """``n`` world queries with three atoms that the default rule decomposer also reads as
    three atoms, so every logical strategy really does three atoms' work."""
    from logic_rag.query.algebra import atoms
    from logic_rag.query.rules import RuleDecomposer

    if n < 1:
        raise ValueError(f"need at least one query, got {n}")
    decomposer = RuleDecomposer()
    n_test = 700
    out: list[str] = []
    while True:
        rows = _query_world(seed, n_test).queries["test"]
        out = [
            str(r["query"])
            for r in rows
            if r["metadata"]["template"] in THREE_ATOM_TEMPLATES  # type: ignore[index]
            and len(atoms(decomposer.decompose(str(r["query"])).query)) == 3
        ]
        if len(out) >= n or n_test >= 20000:
            break
        n_test *= 4
    if len(out) < n:
        raise RuntimeError(f"the world yields only {len(out)} three-atom queries, {n} requested")
    return out[:n]


def fill_rows(n_sample: int, n_total: int) -> np.ndarray:
    """Source row of every row of a filled matrix: ``i`` for real rows, then ``i mod n``."""
    if n_sample < 1 or n_total < n_sample:
        raise ValueError(f"cannot fill {n_total} rows from a sample of {n_sample}")
    return np.arange(n_total, dtype=np.int64) % n_sample


def fill_vectors(
    sample: np.ndarray,
    n_total: int,
    *,
    noise: float = 0.3,
    seed: int = 0,
    rows: np.ndarray | None = None,
    dtype: type = np.float32,
    block: int = 65536,
) -> np.ndarray:
    """Grow ``sample`` (unit vectors) to ``n_total`` rows for timing searches.

    Rows ``0 .. len(sample)-1`` are ``sample`` itself; every later row copies sample row
    ``rows[i]`` (default ``i mod len(sample)``) plus Gaussian noise of expected norm
    ``noise`` and is re-normalised (cosine to its source about ``1 / sqrt(1 + noise^2)``).
    Search cost does not depend on where the vectors came from, only on their number.
    """
    sample = np.asarray(sample, dtype=np.float32)
    if sample.ndim != 2 or len(sample) == 0:
        raise ValueError("sample must be a non-empty (n, d) matrix")
    if rows is None:
        rows = fill_rows(len(sample), n_total)
    if len(rows) != n_total:
        raise ValueError(f"rows has {len(rows)} entries, n_total is {n_total}")
    n_real, dim = min(len(sample), n_total), sample.shape[1]
    out = np.empty((n_total, dim), dtype=dtype)
    out[:n_real] = sample[:n_real]
    rng = np.random.default_rng(seed)
    scale = noise / np.sqrt(dim)
    for start in range(n_real, n_total, block):
        stop = min(start + block, n_total)
        part = sample[rows[start:stop]] + rng.standard_normal((stop - start, dim), np.float32) * (
            np.float32(scale)
        )
        part /= np.maximum(np.linalg.norm(part, axis=1, keepdims=True), 1e-12)
        out[start:stop] = part
    return out


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / mean of per-query latencies, in milliseconds."""
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    if ms.size == 0:
        raise ValueError("no latencies to summarise")
    p50, p95 = np.percentile(ms, [50, 95])
    return {"p50_ms": float(p50), "p95_ms": float(p95), "mean_ms": float(ms.mean())}


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info() -> dict[str, Any]:
    """Cores, threads, load and library versions: what a reader needs to trust a number."""
    import faiss
    import torch

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = os.cpu_count() or 0
    return {
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable,
        "torch_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "faiss_omp_threads": faiss.omp_get_max_threads(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "environment": {
            name: os.environ.get(name)
            for name in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "MKL_NUM_THREADS")
        },
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "versions": {
            name: _version(name)
            for name in (
                "logic-rag",
                "torch",
                "sentence-transformers",
                "transformers",
                "faiss-cpu",
                "numpy",
            )
        },
    }


def llm_generator(spec: str, device: str | None = None) -> Any:
    """The LLM verifier's generator: ``spec`` itself, or built on ``device`` when named.

    Only the in-process transformers backend takes a torch device (``transformers:MODEL``);
    llama.cpp, vLLM and servers choose their own, so their specs pass through unchanged.
    """
    if device is None or not spec.startswith("transformers:"):
        return spec
    from logic_rag.generators.factory import make_generator

    return make_generator(spec, device=device)


def scaling_main(
    prog: str,
    run: Callable[..., dict[str, Any]],
    format_table: Callable[[dict[str, Any]], str],
    default_sizes: Sequence[int],
    argv: Sequence[str] | None = None,
) -> int:
    """The command line of a time-against-input-size benchmark (``--sizes``, ``--repeats``,
    ``--json``): the decomposer and JSON-extraction benchmarks share it."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--sizes", default=",".join(map(str, default_sizes)))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the JSON, not the table")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    result = run(sizes, repeats=args.repeats)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0
