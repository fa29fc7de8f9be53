"""Arguments checked before any model loads.

Loading a dense model takes 8-11 s (EmbeddingGemma on 2 cores); a typo'd strategy found
after that wastes the user's time. What the command line and an index folder's manifest
can tell is checked here, in a second.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from logic_rag.cli.settings import flag_values


def check_early(args: argparse.Namespace) -> None:
    """Check what needs no model before any sub-command loads one.

    Strategy names come from the registry (:data:`logic_rag.strategies.STRATEGIES`, ~0.1 s
    to import, no torch), so every sub-command with ``--strategy`` (search, eval,
    fit-cascade) fails within a second.
    """
    verifier = getattr(args, "verifier", None)
    if isinstance(verifier, str):
        from logic_rag.verifiers.spec import check_verifier_spec

        check_verifier_spec(verifier)  # a typo'd model fails now, not after the index loads
    names = getattr(args, "strategy", None)
    if not isinstance(names, str):
        return
    from logic_rag.strategies import STRATEGIES

    for name in (n.strip() for n in names.split(",")):
        if not name:
            continue  # `eval beir --strategy ""` means plain dense retrieval
        if name not in STRATEGIES:
            from logic_rag.strategies import unknown_strategy

            raise unknown_strategy(name)


def check_search_early(args: argparse.Namespace) -> None:
    """``logic-rag search``: every argument checkable from the command line and the index
    folder's manifest, checked before the model loads (see :func:`check_early`)."""
    if args.query is not None and not args.query.strip():
        raise ValueError("the query is empty; pass the text to search for")
    from logic_rag.strategies import STRATEGIES

    if args.strategy not in STRATEGIES and "," not in args.strategy:
        raise ValueError(f"--strategy is empty; choose from {', '.join(STRATEGIES)}")
    if "," in args.strategy:
        raise ValueError(
            f"--strategy {args.strategy!r}: search runs one strategy; compare several with "
            f"`logic-rag eval quest --strategy a,b`"
        )
    if args.k < 1:
        raise ValueError(f"-k must be at least 1, got {args.k}")
    if args.queries is not None and args.queries != "-":
        from logic_rag.inputs import check_input_file

        check_input_file(args.queries, "--queries", streams=True)
    flag_values(args)  # the --verifier / --quality-* flags raise their own errors here
    check_models_early(args.model, args.decomposer, args.decomposer_model)
    manifest_path = Path(args.index_dir) / "manifest.json"
    check_index_model_early(manifest_path, args.model)
    if STRATEGIES[args.strategy].needs_sparse and manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # the loader reports a damaged manifest with its own message
        if isinstance(manifest, dict) and "model" in manifest and "sparse" not in manifest:
            raise ValueError(
                f"strategy {args.strategy!r} needs a SPLADE index, and {args.index_dir} has "
                f"none; rebuild it with `logic-rag index ... --sparse-model splade-tiny` or "
                f"choose a dense strategy"
            )


def check_index_model_early(manifest_path: Path, model: str | None) -> None:
    """``--model`` naming another registered model than the one the index was built with
    fails before either loads (comparing weights needs the model: 7 s for EmbeddingGemma).
    Folders and hub ids outside the registry are left to the loader's weights check (a
    trained query encoder may serve another model's documents)."""
    if model is None or not manifest_path.is_file():
        return
    from logic_rag.models import registered_name

    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        built = manifest["model"]["name"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # the loader reports a damaged manifest with its own message
    wanted, recorded = registered_name(model), registered_name(str(built))
    if wanted and recorded and wanted != recorded:
        from logic_rag import models
        from logic_rag.encoders.query_only import document_encoder_meta

        shipped = getattr(models, "SHIPPED_DIR", None)
        if shipped is not None and (shipped / wanted).is_dir():
            return  # a shipped adapter (a query tower over a base): the loader decides
        try:
            if document_encoder_meta(models.resolve_model(model).path) is not None:
                return  # a query encoder trained for some document encoder: the loader decides
        except (ValueError, LookupError):
            return
        folder = manifest_path.parent
        raise ValueError(
            f"{folder} was built with {built!r}, not {model!r}: search it without --model "
            f"(the index names its model) or rebuild it with `logic-rag index --model {model}`"
        )


def check_models_early(model: str | None, decomposer: str, decomposer_model: str) -> None:
    """Resolve the named models (finding the weights, not loading them) before the index
    and dense model load: a typo'd ``--model`` or ``--decomposer-model`` used to fail only
    after them (5 s and 40 s on 2 busy cores)."""
    from logic_rag.models import resolve_model

    if model is not None:
        resolve_model(model, kind="dense")
    if decomposer == "rules":
        return
    from logic_rag.generators.factory import parse_spec

    spec = parse_spec(decomposer_model)
    local = spec.backend in ("transformers", "llamacpp", "vllm")
    if local and spec.model and not Path(spec.model).expanduser().is_file():
        resolve_model(spec.model, kind="generator")
