"""``logic-rag adapt``: adapt the retriever to an index's corpus with an LLM as teacher (no
labels): a bi-encoder, a cross-encoder verifier and a calibration, resumable."""

from __future__ import annotations

import argparse
from typing import Any

from logic_rag.cli.common import positive_int


def add_parser(sub: Any) -> None:
    """``adapt`` on the sub-command parsers ``sub``."""
    p = sub.add_parser(
        "adapt",
        help="adapt the retriever to an index's corpus with an LLM as teacher (no labels)",
        description="Label (constraint, page) pairs with an LLM, compose AND / OR / NOT "
        "training sets by set algebra, and train a bi-encoder (OUT/model), a cross-encoder "
        "verifier (OUT/verifier) and a calibration (OUT/calibration.json). Resumable: rerun "
        "the same command after an interruption.",
    )
    p.add_argument("index_dir", help="index folder (`logic-rag index`)")
    p.add_argument("--out", required=True, help="run folder (new, or an earlier run to resume)")
    p.add_argument(
        "--queries",
        default=None,
        help="a log of questions (JSONL with 'query', or one per line); without it the "
        "teacher names categories for sampled pages",
    )
    p.add_argument(
        "--verifier",
        default="llm:qwen2.5-coder-1.5b",
        help="the teacher: a verifier spec (default llm:qwen2.5-coder-1.5b; llm:vllm:PATH, "
        "llm:openai:URL#MODEL)",
    )
    p.add_argument(
        "--max-pairs",
        type=positive_int,
        default=4000,
        help="cost bound: (atom, page) pairs the teacher labels (default 4000, about two "
        "hours of Qwen2.5-1.5B on 2 CPU cores)",
    )
    p.add_argument(
        "--yes-threshold",
        type=float,
        default=0.5,
        help="P(yes) at which a pair counts as a member (default 0.5)",
    )
    p.add_argument(
        "--teacher-device",
        default=None,
        help="device of an llm: teacher on the transformers backend (e.g. cuda; default cpu)",
    )
    p.add_argument(
        "--teacher-batch",
        type=positive_int,
        default=None,
        help="prompts per forward pass of an llm: teacher (e.g. 64 on a GPU)",
    )
    p.add_argument("--loss", choices=["supcon", "logicol"], default="supcon")
    p.add_argument(
        "--train-queries",
        choices=["composed", "questions", "both"],
        default=None,
        help="what the bi-encoder trains on: atoms composed by set algebra, the --queries "
        "questions with the sets their logic gives over the verdicts, or both (default: "
        "AdaptSettings.train_queries)",
    )
    p.add_argument(
        "--hard-negatives",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the judged pages outside each training set (the teacher's no) as known "
        "negatives (default: AdaptSettings.hard_negatives)",
    )
    p.add_argument(
        "--base", default=None, help="bi-encoder to fine-tune (default: the index's model)"
    )
    p.add_argument(
        "--query-only",
        action="store_true",
        help="train the query encoder only, so the index stays valid (EmbeddingGemma on CPU)",
    )
    p.add_argument(
        "--stop-after",
        choices=["atoms", "labels", "composed", "model", "verifier", "calibration"],
        default=None,
        help="return after this phase (e.g. labels, to read the verdicts before training)",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=-1,
        help="training steps of the bi-encoder and of the verifier (default: one epoch)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run (or resume) the adaptation into ``--out`` and say how to use what it wrote."""
    # Imported here: importing logic_rag (or the CLI) must not import finetune code.
    from logic_rag.finetune.adapt import AdaptSettings, adapt

    settings = AdaptSettings(
        max_pairs=args.max_pairs,
        yes_threshold=args.yes_threshold,
        loss=args.loss,
        base=args.base,
        query_only=args.query_only,
        max_steps=args.max_steps,
        verifier_max_steps=args.max_steps,
        seed=args.seed,
        **{
            name: value
            for name in ("train_queries", "hard_negatives")
            if (value := getattr(args, name)) is not None  # None: AdaptSettings' default
        },
    )
    result = adapt(
        args.index_dir,
        args.out,
        queries=args.queries,
        verifier=args.verifier,
        settings=settings,
        progress=not args.quiet,
        stop_after=args.stop_after,
        teacher_options={
            k: v
            for k, v in (("device", args.teacher_device), ("batch_size", args.teacher_batch))
            if v is not None
        },
    )
    if args.stop_after is not None and args.stop_after != "card":
        print(f"stopped after {args.stop_after}; rerun without --stop-after to go on ({args.out})")
        return 0
    labels = result.phases.get("labels", {})
    composed = result.phases.get("composed", {})
    print(
        f"adapted: {labels.get('pairs_planned', '?')} pairs labelled by {args.verifier}, "
        f"{composed.get('queries', '?')} training queries; wrote {result.model}, "
        f"{result.verifier}, {result.calibration} and {result.card}. Use them with "
        f"`logic-rag index --model {result.model}` and "
        f"`--verifier cross-encoder:{result.verifier}`"
    )
    return 0
