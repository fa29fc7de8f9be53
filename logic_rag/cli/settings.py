"""The verifier, quality and calibration flags as a strategy's settings.

Each flag names the settings field it sets (``--quality-pool`` ->
``QualitySettings.pool``, ``--verdict-calibration`` -> ``logic.verdict_calibration``), in
every strategy whose settings have that field; the flags are checked together here first,
before any model loads, so that a flag that cannot apply fails in a second.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

#: Each flag (its argparse name) and the settings field it sets, in every strategy whose
#: settings class has a field of that name.
FIELDS = {
    "verifier": "verifier",
    "verifier_top": "verifier_top",
    "verifier_weight": "verifier_weight",
    "verifier_atoms": "verifier_atoms",
    "quality_bounds": "bounds",
    "quality_max_calls": "max_calls",
    "quality_pool": "pool",
    "quality_delta": "delta",
    "quality_thresholds": "thresholds",
    "llm_rerank_top": "top",
}

#: Flags that set a field of a settings group: (the group, its field).
GROUP_FIELDS = {"verdict_calibration": ("logic", "verdict_calibration")}

#: Settings fields a flag leaves alone in one strategy: quality puts every atom to the LLM
#: (its certificate covers every constraint, NOT atoms too), and ``--verifier-atoms``
#: tunes the atoms verify and llm-rerank re-check, as it always has.
KEPT = {"quality": frozenset({"verifier_atoms"})}


def strategy_settings(args: argparse.Namespace, strategy: str) -> Any:
    """``strategy``'s settings with the verifier, quality and calibration flags applied
    (None when no flag was given)."""
    given = flag_values(args)
    return settings_from(given, strategy) if given else None


def settings_of(args: argparse.Namespace, strategies: Sequence[str]) -> list[Any]:
    """The settings the flags give ``strategies`` (``eval --strategy a,b``): one per
    settings class, only those the flags change (empty when no flag was given)."""
    given = flag_values(args)
    out: list[Any] = []
    for name in strategies if given else ():
        settings = settings_from(given, name)
        if settings != type(settings)() and type(settings) not in {type(s) for s in out}:
            out.append(settings)
    return out


def settings_from(given: dict[str, Any], strategy: str) -> Any:
    """``strategy``'s settings with the flag values ``given`` (see :func:`flag_values`) in
    the fields they name; a flag whose field the strategy's settings lack leaves them as
    they are (``--verifier`` with ``rerank``)."""
    from dataclasses import fields, replace

    from logic_rag.strategies import STRATEGIES

    defaults = STRATEGIES[strategy].settings()
    own = {f.name for f in fields(defaults)} - KEPT.get(strategy, frozenset())
    values: dict[str, Any] = {}
    for flag, value in given.items():
        if flag in GROUP_FIELDS:
            group, name = GROUP_FIELDS[flag]
            if group in own:
                inner = values.get(group, getattr(defaults, group))
                values[group] = replace(inner, **{name: value})
        elif FIELDS[flag] in own:
            values[FIELDS[flag]] = value
    return replace(defaults, **values)


def flag_values(args: argparse.Namespace) -> dict[str, Any]:
    """The verifier, quality and calibration flags given, by their argparse names (empty
    when none was), checked: :func:`strategy_settings` turns them into settings."""
    given = {**verifier_flags(args), **quality_flags(args)}
    calibration = getattr(args, "verdict_calibration", None)
    if calibration is not None:
        from logic_rag.inputs import check_input_file

        check_input_file(calibration, "--verdict-calibration")
        given["verdict_calibration"] = calibration
    return given


def quality_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The --quality-* and --llm-rerank-top flags given (empty when none was); ``--quality-pool
    all`` is None (every candidate)."""
    flags = {
        "quality_bounds": args.quality_bounds,
        "quality_max_calls": args.quality_max_calls,
        "quality_pool": args.quality_pool,
        "quality_delta": args.quality_delta,
        "quality_thresholds": args.quality_thresholds,
        "llm_rerank_top": args.llm_rerank_top,
    }
    given = {k: v for k, v in flags.items() if v is not None}
    if given.get("quality_pool") == "all":
        given["quality_pool"] = None  # every candidate
    if given and not {"quality", "llm-rerank"} & set((args.strategy or "").split(",")):
        raise ValueError(
            "--quality-* and --llm-rerank-top flags apply to --strategy quality or llm-rerank"
        )
    if given.get("quality_thresholds") is not None:
        from logic_rag.inputs import check_input_file

        try:
            check_input_file(given["quality_thresholds"], "--quality-thresholds")
        except FileNotFoundError as exc:
            raise FileNotFoundError(
                f"{exc}; fit one with `logic-rag fit-cascade INDEX --queries FILE --out FILE`"
            ) from None
    if given.get("quality_bounds") == "calibrated" and not given.get("quality_thresholds"):
        raise ValueError(
            "--quality-bounds calibrated needs --quality-thresholds FILE: fit one with "
            "`logic-rag fit-cascade INDEX --queries FILE --out FILE`"
        )
    return given


def verifier_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The second verifier's flags given (empty without ``--verifier``); with vLLM
    parallelism the verifier is built here, since a spec string cannot carry it."""
    from logic_rag.strategy_settings import VerifySettings

    if args.verifier is None:
        default_weight = VerifySettings().verifier_weight
        if args.verifier_top is not None or args.verifier_weight != default_weight:
            raise ValueError("--verifier-top and --verifier-weight need --verifier")
        if args.tensor_parallel_size != 1 or args.pipeline_parallel_size != 1:
            raise ValueError("--tensor/--pipeline-parallel-size need --verifier llm:vllm:MODEL")
        return {}
    if not {"verify", "quality", "llm-rerank"} & set((args.strategy or "").split(",")):
        raise ValueError("--verifier applies to --strategy verify, quality or llm-rerank")
    verifier: Any = args.verifier
    parallel = {
        "tensor_parallel_size": args.tensor_parallel_size,
        "pipeline_parallel_size": args.pipeline_parallel_size,
    }
    if any(v != 1 for v in parallel.values()):
        from logic_rag.generators.base import parallel_options
        from logic_rag.generators.factory import parse_spec
        from logic_rag.verifiers.llm import LLMVerifier

        kind, _, generator = args.verifier.strip().partition(":")
        backend = parse_spec(generator).backend if kind.lower() == "llm" and generator else kind
        verifier = LLMVerifier(
            generator=generator, generator_options=parallel_options(backend, **parallel)
        )
    atoms = {} if args.verifier_atoms is None else {"verifier_atoms": args.verifier_atoms}
    return {
        "verifier": verifier,
        "verifier_top": args.verifier_top,
        **atoms,  # unset: each strategy's own default (quality: all)
        "verifier_weight": args.verifier_weight,
    }
