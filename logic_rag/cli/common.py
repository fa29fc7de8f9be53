"""What several sub-commands share: argparse types, the flags two or more of them take,
one-line error text, quiet model loading and strict JSON.

Nothing heavy is imported at module level: ``logic-rag --help`` builds every parser from
these and must not import torch.
"""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero."""
    from logic_rag.generators.base import check_deadline

    try:
        return check_deadline(float(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def pool_size(text: str) -> int | str:
    """``all`` or a positive number of candidates."""
    if text.strip().lower() == "all":
        return "all"
    return positive_int(text)


def one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line, safe to print whatever the terminal encoding."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def quiet_model_loading() -> None:
    """No "Loading weights" bars (for a search, where the answer is the only output wanted,
    and under ``-q`` / ``--quiet``)."""
    import os

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - transformers is a dependency
        return
    hf_logging.disable_progress_bar()


def strict_json(value: object) -> object:
    """NaN and infinities as ``null``: ``--json`` output must be valid JSON."""
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    return value


def add_store_uri_flag(parser: argparse.ArgumentParser) -> None:
    """``--store-uri``: search and eval over an index whose vectors live in Milvus."""
    parser.add_argument(
        "--store-uri",
        default=None,
        metavar="URI",
        help="the Milvus store of an index built with --store: needed for a server "
        "(http(s)://HOST:PORT; a server named only by the folder is not contacted) or when "
        "the store moved",
    )


def add_decomposer_flags(p: argparse.ArgumentParser) -> None:
    """``--decomposer`` and ``--decomposer-model``: how search and eval read the queries."""
    p.add_argument(
        "--decomposer",
        choices=("rules", "llm", "auto"),
        default="rules",
        help="how queries are decomposed: rules (default), llm (--decomposer-model, "
        "grammar-constrained JSON on llama.cpp), auto (the LLM only where the rules are "
        "unsure; see logic_rag.query.auto)",
    )
    p.add_argument(
        "--decomposer-model",
        default="qwen2.5-coder-1.5b",
        help="generator spec for --decomposer llm/auto (default qwen2.5-coder-1.5b)",
    )
