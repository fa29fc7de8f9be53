"""Ask an LLM's yes/no checks in one batch elsewhere (a lent GPU) and replay them here.

An experiment over a whole dev split asks tens of thousands of (constraint, page) checks;
at 1.5-4 s each on 2 CPU cores that is days, on one GPU minutes. The relay splits the
work in three steps, each a plain file:

1. ``record``: run the experiment's pipelines with a :class:`RecordingGenerator` in place
   of the LLM. It keeps every (system, prompt) it is asked and answers a neutral 0, so
   only pipelines whose questions do not depend on the answers can be recorded this way
   (all-pairs checks, adapt's labelling plan, the certified stage's whole pool asked at
   once); the prompts are the project's own (``LLMVerifier.render`` and its system).
2. ``score``: ``python -m experiments.llm_relay score --model M --prompts P --out S``
   answers every prompt with :class:`~logic_rag.generators.transformers_local.TransformersGenerator`
   (its exact first-token log-probabilities of "Yes" and "No"), on whatever device it is
   given.
3. replay: :class:`ReplayGenerator` answers from the scores file, and refuses a prompt it
   holds no score for (the experiment asked something the recording did not foresee).

Its ``name`` says where the scores came from, so a verifier's fingerprint (and with it
every cache key) never mixes replayed verdicts with those of a live model.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["prompt_id", "RecordingGenerator", "ReplayGenerator", "write_prompts", "score"]

CHOICES = ("Yes", "No")


def prompt_id(system: str | None, prompt: str) -> str:
    """The key of one check: SHA-1 of its system message and its prompt."""
    digest = hashlib.sha1((system or "").encode("utf-8", "surrogatepass"))
    digest.update(b"\x00")
    digest.update(prompt.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _open(path: Path, mode: str) -> Any:
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8")
    return path.open(mode, encoding="utf-8")


class RecordingGenerator:
    """A stand-in LLM that writes down what it is asked and answers log-odds 0."""

    def __init__(self, name: str = "recording") -> None:
        self.name = name
        self.asked: dict[str, tuple[str | None, str]] = {}

    def choice_logprobs(
        self, prompts: Sequence[str], choices: Sequence[str], *, system: str | None = None
    ) -> np.ndarray:
        if tuple(choices) != CHOICES:
            raise ValueError(f"the relay records yes/no checks only, not {tuple(choices)}")
        for prompt in prompts:
            self.asked.setdefault(prompt_id(system, prompt), (system, prompt))
        return np.full((len(prompts), len(choices)), np.log(0.5))


def write_prompts(path: Path, asked: dict[str, tuple[str | None, str]]) -> int:
    """Append the prompts of ``asked`` not yet in ``path`` (JSONL, gzip when ``.gz``)."""
    seen: set[str] = set()
    if path.is_file():
        with _open(path, "r") as handle:
            seen = {json.loads(line)["id"] for line in handle if line.strip()}
    new = [(k, s, p) for k, (s, p) in sorted(asked.items()) if k not in seen]
    with _open(path, "a") as handle:
        for key, system, prompt in new:
            handle.write(json.dumps({"id": key, "system": system, "prompt": prompt}) + "\n")
    return len(new)


class ReplayGenerator:
    """Answers yes/no checks from scores files written by :func:`score`."""

    def __init__(self, paths: Iterable[str | Path], name: str) -> None:
        self.name = name
        self.scores: dict[str, tuple[float, float]] = {}
        for path in paths:
            with _open(Path(path), "r") as handle:
                for line in handle:
                    if line.strip():
                        row = json.loads(line)
                        self.scores[row["id"]] = (float(row["yes"]), float(row["no"]))
        self.counters = {"prompts": 0}

    def choice_logprobs(
        self, prompts: Sequence[str], choices: Sequence[str], *, system: str | None = None
    ) -> np.ndarray:
        if tuple(choices) != CHOICES:
            raise ValueError(f"the relay holds yes/no checks only, not {tuple(choices)}")
        keys = [prompt_id(system, p) for p in prompts]
        missing = sum(k not in self.scores for k in keys)
        if missing:
            raise LookupError(
                f"{missing} of {len(keys)} prompts were never scored: record them and run "
                f"`python -m experiments.llm_relay score` again"
            )
        self.counters["prompts"] += len(keys)
        return np.asarray([self.scores[k] for k in keys], dtype=np.float64)


def score(generator: Any, prompts: Path, out: Path, *, chunk: int = 4096) -> dict[str, Any]:
    """Answer every prompt of ``prompts`` not yet in ``out`` with ``generator`` (appended
    chunk by chunk, so a stopped run keeps what it scored)."""
    done: set[str] = set()
    if out.is_file():
        with _open(out, "r") as handle:
            done = {json.loads(line)["id"] for line in handle if line.strip()}
    todo: list[dict[str, Any]] = []
    with _open(prompts, "r") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                if row["id"] not in done:
                    todo.append(row)
                    done.add(row["id"])
    by_system: dict[str | None, list[dict[str, Any]]] = {}
    for row in todo:
        by_system.setdefault(row["system"], []).append(row)
    scored = 0
    began = time.perf_counter()
    for system, rows in by_system.items():
        for start in range(0, len(rows), chunk):
            part = rows[start : start + chunk]
            logprobs = generator.choice_logprobs(
                [r["prompt"] for r in part], CHOICES, system=system
            )
            with _open(out, "a") as handle:
                for row, (yes, no) in zip(part, logprobs.tolist(), strict=True):
                    handle.write(json.dumps({"id": row["id"], "yes": yes, "no": no}) + "\n")
            scored += len(part)
            rate = scored / max(time.perf_counter() - began, 1e-9)
            print(f"scored {scored}/{len(todo)} ({rate:.0f}/s)", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - began
    return {
        "prompts": len(todo),
        "score_seconds": round(seconds, 1),
        "pairs_per_second": round(len(todo) / seconds, 1) if seconds else None,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="llm_relay", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("score", help="answer recorded prompts with a transformers model")
    s.add_argument("--model", required=True, help="registry name or folder (a .gguf folder too)")
    s.add_argument("--prompts", required=True, type=Path, nargs="+")
    s.add_argument("--out", required=True, type=Path)
    s.add_argument("--device", default="cpu")
    s.add_argument("--dtype", default=None)
    s.add_argument("--batch-size", type=int, default=8)
    args = p.parse_args(argv)
    for path in args.prompts:
        if not path.is_file():
            print(f"llm_relay: error: no prompts file {path}", file=sys.stderr)
            return 2
    from logic_rag.generators.transformers_local import TransformersGenerator

    began = time.perf_counter()
    generator = TransformersGenerator(
        args.model,
        batch_size=args.batch_size,
        device=args.device,
        dtype=args.dtype,
        context_window=4096,
    )
    generator.load()
    settings = {k: str(v) for k, v in vars(args).items() if k != "prompts"}
    print(json.dumps({**settings, "load_seconds": round(time.perf_counter() - began, 1)}))
    for path in args.prompts:
        info = score(generator, path, args.out)
        print(json.dumps({"prompts_file": str(path), **info}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
