"""SupCon / LogiCoL recipe: fine-tune a bi-encoder on QUEST-format queries with gold sets.

Why this shape: the paper's comparison (SupCon vs LogiCoL without constraints vs LogiCoL)
differs only in the loss and in the batching, so one recipe covers all three with
:class:`~logic_rag.finetune.recipes.args.ContrastiveArgs` ``loss`` / ``batching``. Training
runs on the real ``SentenceTransformerTrainer`` so checkpoints, resume, schedulers and the
progress bar are the library's own; the model lands in ``out/model`` with a model card.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .args import ContrastiveArgs
from .training import (
    base_info,
    load_base_model,
    load_training_set,
    publish_model,
    query_encoder_files,
    train_with_resume,
    training_arguments,
    training_prompts,
)

if TYPE_CHECKING:
    from logic_rag.finetune.data import TrainingSet

__all__ = ["add_hard_negatives", "build_contrastive_loss", "train_contrastive"]


def build_contrastive_loss(args: ContrastiveArgs, model: Any, relations: Any) -> Any:
    """The loss named by ``args.loss`` (cached GradCache variant with ``args.cached``)."""
    from logic_rag.finetune import losses

    if args.loss == "logicol":
        cls = losses.CachedLogiCoLLoss if args.cached else losses.LogiCoLLoss
        kwargs: dict[str, Any] = {
            "exclusion_weight": args.lambda_exclusion,
            "subset_weight": args.lambda_subset,
            "exclusion_margin": args.gamma_exclusion,
            "subset_margin": args.gamma_subset,
            "exclusion_temperature": args.exclusion_temperature,
        }
    else:  # supcon and logicol-noconstraints: the same loss, different batching
        cls = (
            losses.CachedMultiPositiveSupConLoss if args.cached else losses.MultiPositiveSupConLoss
        )
        kwargs = {}
    if args.cached:
        kwargs["mini_batch_size"] = args.mini_batch_size
    if args.query_only:
        kwargs["frozen_documents"] = True
    return cls(
        model,
        relations=relations,
        temperature=args.temperature,
        gather_across_devices=args.gather_across_devices,
        **kwargs,
    )


def add_hard_negatives(
    ts: TrainingSet, args: ContrastiveArgs, model: Any, fingerprint: str | None = None
) -> TrainingSet:
    """Known hard negatives from ``--atoms`` (when given) then ``--mined-negatives`` mined
    with ``model`` (the base, before training).

    With the base's weights ``fingerprint``, the mining embeddings are kept in the logic-rag
    cache (``$LOGIC_RAG_CACHE/mining``) in a folder keyed by those weights, so the next run
    on the same base and documents does not re-encode them (about 50 min for EmbeddingGemma
    over 6,410 pages on 2 cores).
    """
    from logic_rag.finetune.data import (
        known_hard_negatives,
        mined_hard_negatives,
        mining_cache_folder,
        with_hard_negatives,
    )
    from logic_rag.paths import cache_dir

    known: dict[str, list[str]] = {}
    if args.atoms is not None:
        from logic_rag.evals.quest.data import load_atom_sets

        known = known_hard_negatives(ts, load_atom_sets(args.atoms))
    mined: dict[str, list[str]] = {}
    if args.mined_negatives > 0:
        folder = (
            mining_cache_folder(cache_dir() / "mining", model, fingerprint) if fingerprint else None
        )
        mined = mined_hard_negatives(
            ts, model, num_negatives=args.mined_negatives, cache_folder=folder
        )
    return with_hard_negatives(ts, known, mined)


def _batch_sampler(args: ContrastiveArgs) -> Any:
    if args.effective_batching == "groups":
        from logic_rag.finetune.sampler import LogicalGroupBatchSampler

        return functools.partial(LogicalGroupBatchSampler, alpha=args.alpha)
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers

    return BatchSamplers.BATCH_SAMPLER


def train_contrastive(
    args: ContrastiveArgs,
    training_set: TrainingSet | None = None,
    *,
    eval_fn: Callable[[Path], dict[str, Any]] | None = None,
    callbacks: Sequence[Any] = (),
) -> Path:
    """Train, checkpoint (resuming when ``args.resume``), save ``out/model``; return its path.

    ``training_set`` overrides reading ``args.train`` / ``args.docs`` (the files are still
    hashed into the card). ``eval_fn(model_dir)`` returns metrics recorded in the card.
    ``callbacks`` are ``transformers.TrainerCallback`` objects handed to the trainer.
    """
    from sentence_transformers import SentenceTransformerTrainer

    from logic_rag.finetune.data import to_contrastive_dataset

    args.validate()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ts = training_set if training_set is not None else load_training_set(args)
    model, fingerprint = load_base_model(args)
    if args.hard_negatives and not any(q.hard_negatives for q in ts.queries):
        ts = add_hard_negatives(ts, args, model, fingerprint)
    relations = ts.relations()
    dataset = to_contrastive_dataset(ts, seed=args.seed, hard_negatives=args.hard_negatives)
    info = base_info(args, args.loss, fingerprint)
    loss = build_contrastive_loss(args, model, relations)
    subset_pairs, exclusion_pairs = ts.relation_pairs()
    info["dataset"] = {
        "queries": len(ts),
        "documents": len(ts.documents),
        "groups": len(ts.group_index()),
        "subset_pairs": len(subset_pairs),
        "exclusion_pairs": len(exclusion_pairs),
    }
    info["loss"] = {"class": type(loss).__name__, "config": loss.get_config_dict()}
    info["batching"] = {"kind": args.effective_batching, "alpha": args.alpha}
    if args.hard_negatives:
        info["hard_negatives"] = {
            "queries_with_some": sum(bool(q.hard_negatives) for q in ts.queries),
            "total": sum(len(q.hard_negatives) for q in ts.queries),
            "mined_per_query": args.mined_negatives,
        }
    extra: dict[str, Any] = {"batch_sampler": _batch_sampler(args)}
    prompts = training_prompts(model, dataset.column_names)
    if prompts:
        extra["prompts"] = prompts
        info["prompts"] = prompts
    extra_files = None
    if args.query_only:
        info["document_encoder"] = {"name": args.base, "weights_sha256": fingerprint}
        extra_files = query_encoder_files(info["document_encoder"])
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training_arguments(args, out, **extra),
        train_dataset=dataset,
        loss=loss,
        callbacks=list(callbacks) or None,
    )
    info["training"] = train_with_resume(trainer, args, out, info)
    return publish_model(
        model,
        out,
        info,
        eval_fn=eval_fn,
        extra_files=extra_files,
        keep_checkpoints=args.keep_checkpoints,
    )
