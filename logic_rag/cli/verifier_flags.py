"""The verifier, quality and calibration flags of ``search``, ``eval`` and ``fit-cascade``.

Their defaults live in one place, the strategies' settings
(:mod:`logic_rag.strategy_settings`): the help quotes them, and a flag left unset is
``None`` so that each strategy keeps its own default. :mod:`logic_rag.cli.settings` turns
the values given into a strategy's settings.
"""

from __future__ import annotations

import argparse

from logic_rag.cli.common import pool_size, positive_int


def add_verifier_flags(p: argparse.ArgumentParser) -> None:
    """Add ``--verifier`` and the flags that tune it, the quality and llm-rerank bounds and
    ``--verdict-calibration`` to ``p``."""
    p.add_argument(
        "--verifier",
        default=None,
        metavar="SPEC",
        help="with --strategy verify, a second constraint verifier on top of the embedding "
        "evidence: cross-encoder:FOLDER (from `logic-rag finetune verifier`) or "
        "llm:GENERATOR (e.g. llm:qwen2.5-coder-1.5b; slow on CPU, see README)",
    )
    p.add_argument(
        "--verifier-top",
        type=int,
        default=None,
        metavar="N",
        help="a cascade: --verifier re-checks and re-ranks only each query's N best "
        "candidates by the embedding evidence; the rest follow in that order (default: all)",
    )
    from logic_rag.strategy_settings import LLMRerankSettings, QualitySettings, VerifySettings

    # The one place of defaults is the strategies' settings: the help below reads them.
    verify, quality, llm_rerank = VerifySettings(), QualitySettings(), LLMRerankSettings()
    p.add_argument(
        "--verifier-atoms",
        choices=("positive", "negated", "all"),
        default=None,
        help=f"which atoms --verifier re-checks (default: {verify.verifier_atoms}; "
        f"{quality.verifier_atoms} for quality, whose certificate covers every constraint)",
    )
    p.add_argument(
        "--verifier-weight",
        type=float,
        default=verify.verifier_weight,
        metavar="W",
        help="share of --verifier's verdict in each re-checked atom's probability; the rest "
        f"stays the embedding evidence (default: {verify.verifier_weight:g})",
    )
    p.add_argument(
        "--quality-bounds",
        choices=("hard", "calibrated"),
        default=None,
        help="with --strategy quality, how an unchecked constraint is bounded: hard (the top k "
        "is exactly what checking every pair gives) or calibrated (from --quality-thresholds; "
        f"the same with probability 1 - delta) (default {quality.bounds})",
    )
    p.add_argument(
        "--quality-max-calls",
        type=int,
        default=None,
        metavar="N",
        help="with --strategy quality, the most LLM checks per query "
        f"(default {quality.max_calls})",
    )
    p.add_argument(
        "--quality-pool",
        type=pool_size,
        default=None,
        metavar="N",
        help="with --strategy quality or llm-rerank, only the best N candidates by the "
        f"embedding evidence are considered ('all': every candidate; default "
        f"{quality.pool})",
    )
    p.add_argument(
        "--llm-rerank-top",
        type=positive_int,
        default=None,
        metavar="N",
        help="with --strategy llm-rerank, the pages the LLM checks with the whole query "
        f"(default {llm_rerank.top})",
    )
    p.add_argument(
        "--quality-delta",
        type=float,
        default=None,
        metavar="D",
        help="with --quality-bounds calibrated, the stated failure probability "
        f"(default {quality.delta})",
    )
    p.add_argument(
        "--verdict-calibration",
        default=None,
        metavar="FILE",
        help="map the embedding evidence to P(holds) for the ✓ / ✗ / ? verdicts: "
        "calibration.json from `logic-rag adapt` (fitted on this index) or a fit-cascade file",
    )
    p.add_argument(
        "--quality-thresholds",
        default=None,
        metavar="FILE",
        help="with --quality-bounds calibrated, a labelled sample from `logic-rag "
        "fit-cascade` for this index and LLM",
    )
    for size in ("tensor", "pipeline"):
        p.add_argument(
            f"--{size}-parallel-size",
            type=int,
            default=1,
            metavar="N",
            help=f"with --verifier llm:vllm:MODEL, vLLM {size} parallelism over N GPUs"
            + (" (each layer sharded)" if size == "tensor" else " (stages of layers)"),
        )
