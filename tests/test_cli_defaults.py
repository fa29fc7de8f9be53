"""The CLI's help quotes the defaults from the one place they live (the strategies'
settings, ``logic_rag.strategy_settings``), the flags default to them, and the flags
become a strategy's settings: the help and the library cannot disagree."""

from __future__ import annotations

import re

from logic_rag.cli import build_parser
from logic_rag.strategy_settings import (
    LLMRerankSettings,
    LogicSettings,
    QualitySettings,
    VerifySettings,
)


def _help(command: str) -> str:
    import argparse

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return " ".join(sub.choices[command].format_help().split())


def test_search_help_quotes_the_settings_defaults():
    text = _help("search")
    quality, verify = QualitySettings(), VerifySettings()
    assert f"(default {quality.bounds})" in text
    assert f"(default {quality.max_calls})" in text
    assert f"(default {quality.delta})" in text
    assert f"default {quality.pool})" in text
    assert f"(default {LLMRerankSettings().top})" in text
    assert f"(default: {verify.verifier_atoms}; {quality.verifier_atoms} for quality" in text
    assert f"(default: {verify.verifier_weight:g})" in text
    assert not re.search(r"default 0\.9\)", text)  # the old disagreeing cascade targets


def test_flags_default_to_the_settings():
    args = build_parser().parse_args(["search", "IDX", "q"])
    assert args.verifier_atoms is None  # each strategy's own default applies
    assert args.verifier_weight == VerifySettings().verifier_weight


def test_flags_become_the_strategys_settings(tmp_path):
    from logic_rag.cli.settings import strategy_settings

    parser = build_parser()
    calibration = tmp_path / "calibration.json"
    calibration.write_text("{}")
    args = parser.parse_args(
        ["search", "IDX", "q", "--strategy", "quality", "--verifier", "llm:qwen2.5-1.5b",
         "--quality-pool", "all", "--quality-max-calls", "9", "--verdict-calibration",
         str(calibration)]
    )  # fmt: skip
    assert strategy_settings(args, "quality") == QualitySettings(
        verifier="llm:qwen2.5-1.5b",
        pool=None,
        max_calls=9,
        logic=LogicSettings(verdict_calibration=str(calibration)),
    )
    args = parser.parse_args(
        ["search", "IDX", "q", "--strategy", "verify", "--verifier", "llm:qwen2.5-1.5b",
         "--verifier-top", "40", "--verifier-weight", "0.5", "--verifier-atoms", "all"]
    )  # fmt: skip
    assert strategy_settings(args, "verify") == VerifySettings(
        verifier="llm:qwen2.5-1.5b", verifier_top=40, verifier_weight=0.5, verifier_atoms="all"
    )
    assert strategy_settings(parser.parse_args(["search", "IDX", "q"]), "rerank") is None


def test_quality_pool_all_and_llm_rerank_top_reach_the_settings():
    from logic_rag.cli.settings import quality_flags, strategy_settings

    parser = build_parser()
    args = parser.parse_args(
        ["search", "IDX", "q", "--strategy", "llm-rerank", "--quality-pool", "all"]
    )
    assert quality_flags(args) == {"quality_pool": None}  # every candidate
    assert strategy_settings(args, "llm-rerank") == LLMRerankSettings(pool=None)
    args = parser.parse_args(
        ["search", "IDX", "q", "--strategy", "llm-rerank", "--llm-rerank-top", "7"]
    )
    assert quality_flags(args) == {"llm_rerank_top": 7}
    assert strategy_settings(args, "llm-rerank") == LLMRerankSettings(top=7)
    assert quality_flags(parser.parse_args(["search", "IDX", "q"])) == {}


def test_verifier_atoms_leaves_qualitys_certificate_whole():
    """``--verifier-atoms`` tunes the atoms verify and llm-rerank re-check; quality puts
    every atom to the LLM (its certificate covers every constraint), as it always has."""
    from logic_rag.cli.settings import strategy_settings

    argv = ["search", "IDX", "q", "--strategy", "quality,verify,llm-rerank"]
    args = build_parser().parse_args(
        argv + ["--verifier", "llm:qwen2.5-1.5b", "--verifier-atoms", "negated"]
    )
    assert strategy_settings(args, "verify").verifier_atoms == "negated"
    assert strategy_settings(args, "llm-rerank").verifier_atoms == "negated"
    assert strategy_settings(args, "quality").verifier_atoms == QualitySettings().verifier_atoms


def test_eval_gets_one_settings_per_class_and_only_those_changed():
    from logic_rag.cli.settings import settings_of
    from logic_rag.strategy_settings import FusionSettings

    parser = build_parser()
    argv = ["eval", "quest", "--queries", "q.jsonl", "--out", "o"]
    names = ["vanilla", "rerank", "verify", "fusion", "fusion-product", "quality"]
    args = parser.parse_args(
        argv + ["--strategy", ",".join(names), "--verifier", "llm:qwen2.5-1.5b"]
    )
    assert settings_of(args, names) == [
        VerifySettings(verifier="llm:qwen2.5-1.5b"),
        QualitySettings(verifier="llm:qwen2.5-1.5b"),
    ]
    assert settings_of(parser.parse_args(argv + ["--strategy", "verify"]), ["verify"]) == []
    assert FusionSettings not in {type(s) for s in settings_of(args, names)}
