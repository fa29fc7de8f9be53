"""``logic-rag search --queries FILE`` against one ``logic-rag search`` process per query.

    python -m benchmarks.bench_search_cli                     # 100 queries, 100 calls
    python -m benchmarks.bench_search_cli --separate 10       # time 10 calls, project 100
    python -m benchmarks.bench_search_cli --model embeddinggemma-300m --documents 500

Why: a command-line user with many questions used to pay the model load (and Python's
start) once per question. ``--queries`` loads the index and the model once and answers
every query in batches. Both sides are real processes started the same way
(``python -m logic_rag.cli``), over the same index of generated-world pages built before
the timing, asking the same world queries with the same strategy; the answers are compared
(the top-k ids of every separately asked query must equal the batch's). When
``--separate`` is below ``--queries``, the per-call mean of the calls that ran is
multiplied out and reported as a projection, never as a measurement.

Each process's CPU seconds (user + system, from the kernel's accounting of the finished
child) are reported beside its wall time: on a shared machine, where other jobs take the
cores or pause, wall time measures the neighbours as much as logic-rag, CPU time much less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import latency_summary, machine_info, world_documents, world_queries

__all__ = ["run", "main"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _search(index: Path, args: list[str], k: int, strategy: str) -> tuple[float, float, str]:
    """Run one search process: (wall seconds, CPU seconds, stdout)."""
    command = [
        sys.executable,
        "-m",
        "logic_rag.cli",
        "search",
        str(index),
        *args,
        "-k",
        str(k),
        "--strategy",
        strategy,
        "--json",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:6])} failed: {proc.stderr.strip()[-500:]}")
    return seconds, cpu, proc.stdout


def run(
    *,
    documents: int = 300,
    queries: int = 100,
    separate: int | None = None,
    k: int = 10,
    model: str = "minilm",
    strategy: str = "rerank",
    seed: int = 0,
) -> dict[str, Any]:
    """Time one ``--queries`` process against ``separate`` single-query processes."""
    from logic_rag.logic_retriever import LogicRetriever

    separate = queries if separate is None else min(separate, queries)
    asked = world_queries(queries, seed)
    load_start = list(os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        root = Path(tmp)
        retriever = LogicRetriever.build(
            world_documents(documents, seed), model=model, show_progress_bar=False
        )
        index = retriever.save(root / "index")
        qfile = root / "queries.jsonl"
        qfile.write_text(
            "".join(json.dumps({"id": str(i), "query": q}) + "\n" for i, q in enumerate(asked))
        )
        batch_s, batch_cpu, out = _search(index, ["--queries", str(qfile)], k, strategy)
        batch = {
            row["id"]: [h["id"] for h in row["hits"]] for row in map(json.loads, out.splitlines())
        }
        single_s, single_cpu, same = [], [], 0
        for i, query in enumerate(asked[:separate]):
            seconds, cpu, out = _search(index, [query], k, strategy)
            single_s.append(seconds)
            single_cpu.append(cpu)
            same += [h["id"] for h in json.loads(out)] == batch[str(i)]
    measured_total = sum(single_s)
    per_call = measured_total / len(single_s)
    separate_total = per_call * queries
    return {
        "model": model,
        "strategy": strategy,
        "documents": documents,
        "queries": queries,
        "k": k,
        "batch_seconds": batch_s,
        "batch_seconds_per_query": batch_s / queries,
        "separate_calls_timed": len(single_s),
        "separate_seconds_timed": measured_total,
        "separate_call": latency_summary(single_s),
        "separate_seconds_total": separate_total,
        "separate_total_is_projection": len(single_s) < queries,
        "speedup": separate_total / batch_s,
        "batch_cpu_seconds": batch_cpu,
        "separate_cpu_seconds_per_call": {
            "p50": float(sorted(single_cpu)[len(single_cpu) // 2]),
            "mean": sum(single_cpu) / len(single_cpu),
        },
        "separate_cpu_seconds_total": sum(single_cpu) / len(single_cpu) * queries,
        "cpu_speedup": sum(single_cpu) / len(single_cpu) * queries / batch_cpu,
        "same_answers": same / len(single_s),
        "load_average_start": load_start,
        "load_average_end": list(os.getloadavg()),
        "machine": machine_info(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_search_cli")
    parser.add_argument("--documents", type=int, default=300, help="index size (world pages)")
    parser.add_argument("--queries", type=int, default=100, help="world queries asked")
    parser.add_argument(
        "--separate", type=int, default=None, help="single-query calls timed (default: all)"
    )
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--strategy", default="rerank")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args(argv)
    for name in ("documents", "queries", "k"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1")
    if args.separate is not None and args.separate < 1:
        parser.error("--separate must be >= 1")
    result = run(
        documents=args.documents,
        queries=args.queries,
        separate=args.separate,
        k=args.k,
        model=args.model,
        strategy=args.strategy,
    )
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        from logic_rag.atomic import atomic_write_text

        atomic_write_text(args.out, text + "\n")
    projected = (
        " (projected from the timed calls)" if result["separate_total_is_projection"] else ""
    )
    print(
        f"{args.queries} queries: --queries {result['batch_seconds']:.1f} s, separate calls "
        f"{result['separate_seconds_total']:.1f} s{projected}; {result['speedup']:.1f}x wall, "
        f"{result['cpu_speedup']:.1f}x CPU ({result['batch_cpu_seconds']:.1f} against "
        f"{result['separate_cpu_seconds_total']:.1f} CPU s); same answers "
        f"{result['same_answers']:.2f}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
