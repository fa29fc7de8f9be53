"""Indexing beside memory-heavy neighbours: how far from a fair share is it?

A 2-core CI runner or a shared box rarely runs our indexing alone. This benchmark indexes
the first ``pages`` QUEST-attr pages (real text; the synthetic world when the data is
absent) with ``logic-rag index`` in a fresh process:

1. quiet: nothing else runs;
2. loaded: beside one competing process per core, each a torch encoder (MiniLM encoding
   long texts in a loop, ``--competitor torch``) or a llama.cpp generator (SmolLM2 in a
   loop, ``--competitor llamacpp``), each with ``--competitor-threads`` threads (default 1,
   so that there is one busy thread per core, as with the busy-loop baseline);
3. loaded, with each ``--variant`` (``NAME=VAR=VALUE,...`` environment settings of the
   indexing process, e.g. ``passive=OMP_WAIT_POLICY=PASSIVE``).

A fair share with one single-threaded neighbour per core is about 2x the quiet time: the
scheduler shares a core between threads, so our two threads get one core of two. With
``--competitor-threads 2`` (torch's default on 2 cores) there are two neighbour threads per
core and the fair share is about 3x; the JSON gives ``fair_share_ratio`` for the threads
used. Each loaded time is reported as a ratio against the quiet time measured in the same
run.

    python -m benchmarks.bench_loaded_indexing --model embeddinggemma-300m --pages 300
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["run", "main"]

_COMPETE_SECONDS = 3600  # a competitor outlives any measurement; it is killed after it


def _corpus(pages: int, folder: Path) -> tuple[Path, str]:
    """The first ``pages`` QUEST-attr pages as a JSONL file, and where they came from."""
    from logic_rag.paths import shared_data_dir

    source = shared_data_dir() / "quest" / "attr" / "documents.jsonl"
    out = folder / "docs.jsonl"
    if source.is_file():
        with source.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
            for i, line in enumerate(src):
                if i >= pages:
                    break
                dst.write(line)
        return out, f"first {pages} pages of {source}"
    from benchmarks.common import world_documents

    with out.open("w", encoding="utf-8") as dst:
        for doc in world_documents(pages):
            dst.write(json.dumps({"title": doc.title, "text": doc.text}) + "\n")
    return out, f"{pages} synthetic world documents (QUEST-attr not found)"


def _compete(kind: str, threads: int) -> None:
    """Work until killed: the neighbour process, on ``threads`` threads with spinning waits.

    torch is imported before :mod:`logic_rag` (whose import would make its OpenMP waits
    passive), so the neighbour keeps torch's defaults: the worst case for its neighbours.
    """
    deadline = time.monotonic() + _COMPETE_SECONDS
    if kind == "torch":
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(threads)

        from logic_rag.models import resolve_model

        model = SentenceTransformer(str(resolve_model("minilm").path), device="cpu")
        texts = [("a long neighbour text about many different things " * 40).strip()] * 64
        while time.monotonic() < deadline:
            model.encode(texts, batch_size=64)
    elif kind == "llamacpp":
        from logic_rag.generators.factory import make_generator

        gen = make_generator("llamacpp:smollm2-135m", n_threads=threads)
        while time.monotonic() < deadline:
            gen.generate(["Write a long story about a river."], max_tokens=256, temperature=0.8)
    else:
        raise SystemExit(f"unknown competitor {kind!r}")


def _index_seconds(docs: Path, model: str, out: Path, env: dict[str, str]) -> float:
    """Wall seconds of ``logic-rag index`` in a fresh process with ``env`` added."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "logic_rag", "index", "--docs", str(docs), "--out", str(out)]
    cmd += ["--model", model]
    started = time.perf_counter()
    done = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"indexing failed: {done.stderr[-1500:]}")
    return seconds


def _start_competitors(kind: str, n: int, threads: int) -> list[subprocess.Popen[bytes]]:
    cmd = [sys.executable, "-m", "benchmarks.bench_loaded_indexing", "--compete", kind]
    cmd += ["--competitor-threads", str(threads)]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(n)
    ]
    time.sleep(20)  # models loaded, loops running
    return procs


def _stop(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.kill()
    for proc in procs:
        proc.wait()


def run(
    *,
    model: str = "embeddinggemma-300m",
    pages: int = 300,
    competitor: str = "torch",
    n_competitors: int | None = None,
    competitor_threads: int = 1,
    variants: dict[str, dict[str, str]] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Quiet and loaded indexing times of one corpus; ratios against the warm quiet time."""
    n = n_competitors or os.cpu_count() or 1
    cores = os.cpu_count() or 1
    variants = {"default": {}, **(variants or {})}
    with tempfile.TemporaryDirectory(prefix="bench-loaded-") as tmp:
        folder = Path(tmp)
        docs, source = _corpus(pages, folder)
        log(f"quiet indexing of {source} with {model} (twice: the first warms the caches)")
        quiet_cold = _index_seconds(docs, model, folder / "index", {})
        quiet = _index_seconds(docs, model, folder / "index", {})
        rows: dict[str, Any] = {}
        for name, env in variants.items():
            procs = _start_competitors(competitor, n, competitor_threads)
            try:
                log(
                    f"loaded indexing ({name}) beside {n} {competitor} neighbours "
                    f"of {competitor_threads} thread(s)"
                )
                seconds = _index_seconds(docs, model, folder / "index", env)
            finally:
                _stop(procs)
            rows[name] = {"env": env, "seconds": seconds, "ratio_to_quiet": seconds / quiet}
        quiet_again = _index_seconds(docs, model, folder / "index", {})
    return {
        "model": model,
        "corpus": source,
        "competitor": competitor,
        "competitors": n,
        "competitor_threads": competitor_threads,
        "quiet_cold_s": quiet_cold,
        "quiet_s": quiet,
        "quiet_again_s": quiet_again,
        "loaded": rows,
        # Our process wants every core; the scheduler shares cores between runnable
        # threads, so it gets cores / (cores + neighbour threads) of its quiet speed.
        "fair_share_ratio": (cores + n * competitor_threads) / cores,
    }


def _variants(specs: Sequence[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for spec in specs:
        name, _, rest = spec.partition("=")
        env = dict(part.split("=", 1) for part in rest.split(",") if "=" in part)
        if not name or not env:
            raise SystemExit(f"--variant {spec!r}: write NAME=VAR=VALUE[,VAR=VALUE]")
        out[name] = env
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="embeddinggemma-300m")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--competitor", choices=("torch", "llamacpp"), default="torch")
    parser.add_argument("--competitors", type=int, default=None, help="default: one per core")
    parser.add_argument(
        "--competitor-threads",
        type=int,
        default=1,
        help="threads of each neighbour (default 1: one busy thread per core)",
    )
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=VAR=VALUE")
    parser.add_argument("--out", type=Path, default=Path("runs/bench/loaded-indexing.json"))
    parser.add_argument("--compete", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compete:
        _compete(args.compete, args.competitor_threads)
        return 0
    result = run(
        model=args.model,
        pages=args.pages,
        competitor=args.competitor,
        n_competitors=args.competitors,
        competitor_threads=args.competitor_threads,
        variants=_variants(args.variant),
        log=lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", file=sys.stderr, flush=True),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
