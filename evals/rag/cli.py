"""``logic-rag eval rag``: the command-line face of :mod:`.runner`.

:func:`add_rag_parser` registers the ``rag`` sub-command on the ``eval`` sub-parsers of
the main CLI (flags map one to one onto :class:`~.runner.RagEvalConfig`);
:func:`run_from_args` runs it and returns the exit status. Only argparse is imported at
module level, so ``logic-rag --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_rag_parser", "run_from_args", "config_from_args", "generator_from_args", "main"]

_DATASETS = ("eli5", "asqa", "quest", "nq", "alce-asqa", "alce-eli5", "alce-qampari")
_JUDGE_METRICS = ("correctness", "answer_relevancy")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def add_rag_parser(eval_subparsers: Any) -> argparse.ArgumentParser:
    """Register ``rag`` on ``eval_subparsers`` (the object ``add_subparsers()`` returns)."""
    parser = eval_subparsers.add_parser(
        "rag",
        help="retrieval-augmented generation eval: retrieve, generate, judge, report",
        description=(
            "Retrieve passages, generate answers and judge them with LLM judges "
            "(LlamaIndex evaluators) plus ROUGE-L; resumable; writes OUT/results.json, "
            "report.md and report.html. With --meta-eval, measure the judge against ALCE "
            "human utility ratings instead."
        ),
    )
    parser.add_argument("--dataset", choices=_DATASETS, help="dataset to evaluate on")
    parser.add_argument("--data-path", default=None, help="dataset file (default: shared data)")
    parser.add_argument(
        "--retriever",
        default="minilm",
        help="registry encoder name, sentence-transformers model folder, or index folder",
    )
    parser.add_argument("--strategy", default="vanilla", help="LogicRetriever strategy")
    parser.add_argument(
        "--corpus", default=None, help="documents to retrieve from (default: the dataset's)"
    )
    parser.add_argument(
        "--generator",
        default=None,
        help="generator spec (default qwen2.5-coder-1.5b: llama.cpp when built, else transformers)",
    )
    parser.add_argument("--judge", default="qwen2.5-coder-1.5b", help="judge generator spec")
    parser.add_argument(
        "--judge-style",
        choices=("auto", "choices", "llamaindex"),
        default="auto",
        help="choices: 1-5 / yes-no rubrics scored from token probabilities (no parse "
        "failures); llamaindex: LlamaIndex's free-text evaluators; auto: choices when the "
        "judge model gives logprobs (all logic-rag backends do)",
    )
    parser.add_argument(
        "--judge-setup",
        choices=("llamaindex", "choices"),
        default="llamaindex",
        help="with --meta-eval: 'choices' measures every small-judge set-up (rubrics by "
        "token probability, grammar-constrained Score: N) with dev/test split and CIs",
    )
    scale = parser.add_argument_group("generation at scale")
    scale.add_argument(
        "--tensor-parallel-size",
        type=_positive_int,
        default=1,
        metavar="N",
        help="vllm: generator/judge: shard each layer over N GPUs (vLLM tensor parallelism)",
    )
    scale.add_argument(
        "--pipeline-parallel-size",
        type=_positive_int,
        default=1,
        metavar="N",
        help="vllm: generator/judge: split the layers into N stages (vLLM pipeline parallelism)",
    )
    scale.add_argument(
        "--distributed-executor-backend",
        choices=("mp", "ray"),
        default=None,
        help="vllm: generator/judge: mp (one node) or ray (several nodes); default: vLLM's",
    )
    scale.add_argument(
        "--server-url",
        action="append",
        default=None,
        metavar="URL",
        help="OpenAI-compatible server(s) of the generator (e.g. `vllm serve`); repeat or "
        "comma-separate for replicas: requests are spread and fail over. The model is "
        "--generator openai:...#MODEL's, else the one the servers serve",
    )
    parser.add_argument("--limit", type=_positive_int, default=20, help="number of questions")
    parser.add_argument("--k", type=_positive_int, default=5, help="passages per question")
    parser.add_argument(
        "--pool-limit",
        type=_positive_int,
        default=None,
        help="ELI5 without --corpus: pool passages from the answers of the first N questions "
        "of the file only (default: all, ~12 min to index on 2 cores)",
    )
    parser.add_argument(
        "--prompt",
        choices=("default", "alce"),
        default="default",
        help="generation prompt: this package's per-dataset prompt, or ALCE's (instruction, "
        "demos, 'Document [n](Title: ...)' passages; asqa, eli5, qampari)",
    )
    parser.add_argument(
        "--shots", type=int, default=2, help="--prompt alce: demos before the question"
    )
    parser.add_argument(
        "--demo-docs", type=int, default=5, help="--prompt alce: documents shown with each demo"
    )
    parser.add_argument("--max-tokens", type=_positive_int, default=200, help="answer tokens")
    parser.add_argument(
        "--judge-max-tokens", type=_positive_int, default=96, help="judge output tokens"
    )
    parser.add_argument(
        "--judges",
        nargs="+",
        choices=_JUDGE_METRICS,
        default=list(_JUDGE_METRICS),
        help="judge metrics to compute",
    )
    parser.add_argument("--no-judge", action="store_true", help="skip the LLM judges")
    parser.add_argument(
        "--compare",
        action="append",
        default=None,
        metavar="RETRIEVER[@STRATEGY]",
        help="another retriever answering the same questions (repeatable; e.g. "
        "'embeddinggemma-300m@rerank'; the strategy defaults to --strategy): paired "
        "differences with bootstrap CIs for every pair of retrievers",
    )
    parser.add_argument(
        "--no-pairwise",
        action="store_true",
        help="with --compare: skip the LLM pairwise judge (two free-text judge calls per item "
        "and comparison)",
    )
    parser.add_argument("--n-boot", type=_positive_int, default=2000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--meta-eval",
        action="store_true",
        help="score ALCE human-rated answers (--limit per dataset) with --judge; report agreement",
    )
    parser.add_argument("--out", required=True, help="output folder (resumes if it exists)")
    parser.set_defaults(func=run_from_args)
    return parser


def generator_from_args(generator: str | None, server_urls: list[str] | None) -> str:
    """The generator spec: ``--generator``, or ``openai:URL1,URL2[#MODEL]`` from
    ``--server-url`` (each flag may itself hold comma-separated URLs)."""
    if not server_urls:
        return generator or "qwen2.5-coder-1.5b"
    urls = [u.strip() for flag in server_urls for u in flag.split(",") if u.strip()]
    if generator is not None and not generator.strip().lower().startswith("openai:"):
        raise ValueError(
            f"--server-url gives the servers of an openai: generator, but --generator is "
            f"{generator!r}; leave --generator out or write --generator openai:URL#MODEL"
        )
    model = generator.partition("#")[2].strip() if generator else ""
    return "openai:" + ",".join(urls) + (f"#{model}" if model else "")


def config_from_args(args: argparse.Namespace) -> Any:
    """The :class:`RagEvalConfig` the parsed flags describe."""
    from .runner import RagEvalConfig

    if not args.dataset:
        raise ValueError("--dataset is required (or pass --meta-eval)")
    return RagEvalConfig(
        dataset=args.dataset,
        out=args.out,
        retriever=args.retriever,
        strategy=args.strategy,
        corpus=args.corpus,
        generator=generator_from_args(args.generator, args.server_url),
        tensor_parallel_size=args.tensor_parallel_size,
        pipeline_parallel_size=args.pipeline_parallel_size,
        distributed_executor_backend=args.distributed_executor_backend,
        judge=args.judge,
        limit=args.limit,
        pool_limit=args.pool_limit,
        k=args.k,
        max_tokens=args.max_tokens,
        judges=() if args.no_judge else tuple(args.judges),
        compare=tuple(args.compare or ()),
        pairwise=not args.no_pairwise,
        seed=args.seed,
        data_path=args.data_path,
        n_boot=args.n_boot,
        judge_max_tokens=args.judge_max_tokens,
        judge_style=args.judge_style,
        prompt=args.prompt,
        shots=args.shots,
        demo_docs=args.demo_docs,
    )


def _summary_line(results: dict[str, Any]) -> str:
    """One JSON line of means; with --compare, one row per retriever under ``runs``."""
    keys = (
        "n",
        "correctness",
        "answer_relevancy",
        "rougeL",
        "str_em",
        "str_em_passages",
        "gold_passage_recall",
        "answer_words",
        "parse_failures",
    )
    line = {k: results[k] for k in keys if k in results}
    if results.get("runs"):
        line["runs"] = {
            run["label"]: {
                name: block.get("mean") for name, block in run.get("metrics", {}).items()
            }
            for run in results["runs"]
        }
    return json.dumps(line)


def run_from_args(args: argparse.Namespace) -> int:
    """Run ``eval rag``; 0 on success, 2 on bad input (message on stderr)."""
    from logic_rag.errors import LogicRagError

    try:
        if args.meta_eval and args.judge_setup == "choices":
            from .judge_meta import meta_eval_judges

            results = meta_eval_judges(
                args.judge,
                args.out,
                limit=args.limit,
                ratings_path=args.data_path,
                n_boot=args.n_boot,
                seed=args.seed,
            )
            meta = results["judge_setups_meta_eval"]
            print(f"chosen on dev: {meta['chosen_on_dev']}; see {args.out}/report.md")
        elif args.meta_eval:
            from .runner import run_meta_eval

            results = run_meta_eval(
                args.judge,
                args.out,
                limit=args.limit,
                ratings_path=args.data_path,
                judge_max_tokens=args.judge_max_tokens,
            )
            print(json.dumps(results["judge_meta_eval"], indent=2))
        else:
            from .runner import run_rag_eval

            results = run_rag_eval(config_from_args(args))
            print(_summary_line(results))
            from .report import unscored_warning

            warning = unscored_warning(results)
            if warning:
                print(f"warning: {warning}", file=sys.stderr)
    except (LogicRagError, ValueError, FileNotFoundError) as exc:
        print(f"logic-rag eval rag: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}/results.json, report.md, report.html", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point (``python -m logic_rag.evals.rag.cli``) for testing."""
    parser = argparse.ArgumentParser(prog="logic-rag eval")
    add_rag_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
