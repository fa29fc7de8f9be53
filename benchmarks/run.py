"""Run logic-rag's benchmarks, print a table and write the numbers as JSON.

    python -m benchmarks.run                       # 20k and 100k documents (long)
    python -m benchmarks.run --quick               # 2k and 5k documents, a few minutes
    python -m benchmarks.run --sizes 20000,100000 --encode-max 100000 --out bench.json

See benchmarks/README.md for what every number means.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.table import format_table

__all__ = ["DEFAULT_OUT", "main", "parse_args", "format_table"]

DEFAULT_OUT = Path("runs") / "bench" / "bench.json"

_FULL = {
    "sizes": "20000,100000",
    "encode_max": 20000,
    "queries": 200,
    "logic_size": 100_000,
    "logic_sample": 5000,
    "logic_queries": 50,
}
_QUICK = {
    "sizes": "2000,5000",
    "encode_max": 1000,
    "queries": 50,
    "logic_size": 5000,
    "logic_sample": 300,
    "logic_queries": 20,
}


def _positive_ints(text: str) -> list[int]:
    try:
        values = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of document counts, e.g. 20000,100000"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: document counts must be positive integers")
    return values


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line; unset options take the full (or ``--quick``) defaults."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description="logic-rag benchmarks: dense engine vs raw sentence-transformers+FAISS, "
        "and latency of the logical strategies vs vanilla.",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (2k/5k documents)")
    parser.add_argument(
        "--sizes", type=_positive_ints, help=f"dense corpus sizes (default {_FULL['sizes']})"
    )
    parser.add_argument(
        "--encode-max",
        type=int,
        help="documents really encoded per side for throughput; larger sizes are filled with "
        f"noisy copies for the latency part (default {_FULL['encode_max']}; 0 = all)",
    )
    parser.add_argument("--queries", type=int, help="dense queries (default 200)")
    parser.add_argument("--chunk", type=int, default=2048, help="documents per timed chunk")
    parser.add_argument("--logic-size", type=int, help="logic corpus size (default 100000)")
    parser.add_argument(
        "--logic-sample", type=int, help="documents really encoded for the logic corpus"
    )
    parser.add_argument("--logic-queries", type=int, help="three-atom queries (default 50)")
    parser.add_argument(
        "--strategies",
        default="vanilla,rerank,verify,setops,fusion,orthogonal",
        help="logic strategies to time (must include vanilla)",
    )
    parser.add_argument(
        "--logic-model",
        default="minilm",
        help="dense model of the logic benchmark (embeddinggemma-300m, the default model, "
        "with a smaller --logic-sample)",
    )
    parser.add_argument(
        "--only",
        choices=(
            "dense",
            "logic",
            "verifiers",
            "reranker",
            "milvus",
            "quality",
            "loaded",
            "million",
            "decomposer",
            "json",
        ),
        help="run one benchmark only (milvus, loaded and million run only when named: milvus "
        "needs logic-rag[milvus]; loaded indexes --reranker-pool pages with --logic-model quiet "
        "and beside one torch neighbour per core; million builds --million-docs documents with "
        "the chunked build, --million-real of them really encoded by MiniLM; decomposer and "
        "json time the rule decomposer and extract_json against input length, no model)",
    )
    parser.add_argument(
        "--million-docs", type=int, default=1_000_000, help="documents of the million benchmark"
    )
    parser.add_argument(
        "--million-real",
        type=int,
        default=20_000,
        help="documents of the million benchmark really encoded (the rest: stand-in vectors)",
    )
    parser.add_argument(
        "--million-recall",
        type=int,
        default=100_000,
        help="subset on which the million benchmark compares float16/int8 with float32 (0: skip)",
    )
    parser.add_argument(
        "--milvus-size", type=int, default=20000, help="documents of the Milvus benchmark"
    )
    parser.add_argument(
        "--reranker-pool",
        type=int,
        default=300,
        help="pages the reranker benchmark's candidates come from (its queries: "
        "--logic-queries, its model: --logic-model)",
    )
    parser.add_argument(
        "--llm-verifier",
        default="qwen2.5-1.5b",
        help="generator spec whose per-pair cost the verifier benchmark measures "
        "(none: skip the LLM)",
    )
    parser.add_argument(
        "--verifier-pairs", type=int, default=512, help="pairs the cross-encoder scores"
    )
    parser.add_argument(
        "--quality-index",
        default=None,
        help="index of QUEST-attr for the quality benchmark (default: build one with "
        "--logic-model)",
    )
    parser.add_argument(
        "--quality-queries", type=int, default=10, help="dev queries the quality benchmark times"
    )
    parser.add_argument(
        "--device",
        default=None,
        help="torch device of the encoders, the cross-encoder and a transformers: LLM "
        "(e.g. cuda; default: sentence-transformers' choice for encoders, CPU for the rest)",
    )
    parser.add_argument(
        "--dense-model", default="minilm", help="model of the dense benchmark (default minilm)"
    )
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    parser.add_argument("--seed", type=int, default=0, help="world seed")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})"
    )
    args = parser.parse_args(argv)
    defaults = _QUICK if args.quick else _FULL
    if args.sizes is None:
        args.sizes = _positive_ints(str(defaults["sizes"]))
    for name in ("encode_max", "queries", "logic_size", "logic_sample", "logic_queries"):
        if getattr(args, name) is None:
            setattr(args, name, defaults[name])
    for name in (
        "queries",
        "chunk",
        "logic_size",
        "logic_sample",
        "logic_queries",
        "reranker_pool",
    ):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.encode_max < 0:
        parser.error("--encode-max must be >= 0 (0 encodes every document)")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be >= 1")
    args.strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    return args


def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the selected benchmarks; prints the table to stdout and writes ``--out``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = parse_args(argv)

    import torch

    from benchmarks import bench_dense, bench_logic_latency
    from benchmarks.common import machine_info
    from logic_rag.atomic import atomic_write_json

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    load_start = [round(x, 2) for x in os.getloadavg()]
    started = time.perf_counter()
    result: dict[str, Any] = {
        "benchmark": "logic-rag",
        "command": " ".join(["python -m benchmarks.run", *(argv or sys.argv[1:])]),
        "machine": machine_info(),
        "settings": {
            "quick": args.quick,
            "sizes": args.sizes,
            "encode_max": args.encode_max,
            "queries": args.queries,
            "chunk": args.chunk,
            "logic_size": args.logic_size,
            "logic_sample": args.logic_sample,
            "logic_queries": args.logic_queries,
            "strategies": args.strategies,
            "seed": args.seed,
            "device": args.device,
            "dense_model": args.dense_model,
            "milvus_size": args.milvus_size,
            "reranker_pool": args.reranker_pool,
        },
        "load_average_start": load_start,
    }
    if args.only in (None, "dense"):
        result["dense"] = bench_dense.run(
            args.sizes,
            encode_max=args.encode_max or None,
            n_queries=args.queries,
            chunk=args.chunk,
            seed=args.seed,
            model=args.dense_model,
            device=args.device,
            log=_log,
        )
    if args.only in (None, "logic"):
        result["logic_latency"] = bench_logic_latency.run(
            args.logic_size,
            sample=args.logic_sample,
            n_queries=args.logic_queries,
            strategies=args.strategies,
            seed=args.seed,
            model=args.logic_model,
            device=args.device,
            log=_log,
        )
    if args.only in (None, "verifiers"):
        from benchmarks import bench_verifiers

        result["verifiers"] = bench_verifiers.run(
            cross_encoder_pairs=args.verifier_pairs,
            llm_spec=args.llm_verifier,
            seed=args.seed,
            device=args.device,
            cross_encoder_base=args.dense_model,
            log=_log,
        )
    if args.only in (None, "reranker"):
        from benchmarks import bench_reranker

        result["reranker"] = bench_reranker.run(
            pool=args.reranker_pool,
            n_queries=args.logic_queries,
            seed=args.seed,
            model=args.logic_model,
            device=args.device,
            log=_log,
        )
        result["reranker_vs_retriever"] = bench_reranker.run_against_retriever(
            pool=max(args.reranker_pool, 200),
            n_queries=args.logic_queries,
            seed=args.seed,
            model=args.logic_model,
            device=args.device,
            log=_log,
        )
    if args.only == "milvus":
        from benchmarks import bench_milvus

        result["milvus"] = bench_milvus.run(
            args.milvus_size,
            sample=min(args.logic_sample, args.milvus_size),
            n_queries=args.logic_queries,
            seed=args.seed,
            model=args.logic_model,
            log=_log,
        )
    if args.only == "quality":
        from benchmarks import bench_quality

        result["quality"] = bench_quality.run(
            model=args.logic_model,
            index=args.quality_index,
            llm_spec=args.llm_verifier,
            n_queries=args.quality_queries,
            device=args.device,
            log=_log,
        )
    if args.only == "loaded":
        from benchmarks import bench_loaded_indexing

        result["loaded_indexing"] = bench_loaded_indexing.run(
            model=args.logic_model, pages=args.reranker_pool, log=_log
        )
    if args.only == "million":
        from benchmarks import bench_million

        result["million"] = bench_million.run(
            args.million_docs,
            real=args.million_real,
            recall_docs=args.million_recall,
            n_queries=args.logic_queries,
            work=args.out.with_name(f"{args.out.stem}-million-work"),
            threads=args.threads,
            seed=args.seed,
            log=_log,
        )
    if args.only == "decomposer":
        from benchmarks import bench_decomposer_scaling

        result["decomposer_scaling"] = bench_decomposer_scaling.run(log=_log)
    if args.only == "json":
        from benchmarks import bench_json_extraction

        result["json_extraction"] = bench_json_extraction.run(log=_log)
    result["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    result["seconds"] = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out, result)
    table = format_table(result)
    print(table)
    from benchmarks.report import write_report

    md, png = write_report(result, args.out, table)
    print(f"\nwrote {args.out}, {md.name} and {png.name} ({result['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
