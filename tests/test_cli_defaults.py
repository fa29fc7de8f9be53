"""The CLI's help quotes the defaults from the one place they live (``LogicConfig``), and
the flags default to them: the help and the library cannot disagree."""

from __future__ import annotations

import re

from logic_rag.cli import build_parser
from logic_rag.strategies import LogicConfig


def _help(command: str) -> str:
    import argparse

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return " ".join(sub.choices[command].format_help().split())


def test_search_help_quotes_logic_config_defaults():
    text = _help("search")
    config = LogicConfig()
    assert f"(default {config.quality_bounds})" in text
    assert f"(default {config.quality_max_calls})" in text
    assert f"(default {config.quality_delta})" in text
    assert f"default {config.quality_pool})" in text
    assert f"(default {config.llm_rerank_top})" in text
    assert f"(default: {config.verifier_atoms})" in text
    assert f"(default: {config.verifier_weight:g})" in text
    assert not re.search(r"default 0\.9\)", text)  # the old disagreeing cascade targets


def test_flags_default_to_logic_config():
    args = build_parser().parse_args(["search", "IDX", "q"])
    config = LogicConfig()
    assert args.verifier_atoms == config.verifier_atoms
    assert args.verifier_weight == config.verifier_weight


def test_quality_pool_all_and_llm_rerank_top_reach_the_config():
    from logic_rag.cli import _quality_config

    parser = build_parser()
    args = parser.parse_args(
        ["search", "IDX", "q", "--strategy", "llm-rerank", "--quality-pool", "all"]
    )
    assert _quality_config(args) == {"quality_pool": None}  # every candidate
    args = parser.parse_args(
        ["search", "IDX", "q", "--strategy", "llm-rerank", "--llm-rerank-top", "7"]
    )
    assert _quality_config(args) == {"llm_rerank_top": 7}
    assert _quality_config(parser.parse_args(["search", "IDX", "q"])) == {}
