"""LORE recipe: train the query encoder to rank distractors below evidence, documents frozen.

Why: LORE's promise is that an index built with the base model keeps serving the tuned
query encoder (no re-indexing). :class:`~logic_rag.finetune.losses.LoreLoss` embeds
candidates with a frozen copy of the base; this recipe saves only the query encoder and
writes ``logic_rag_encoder.json`` naming the base's weights fingerprint, which
:meth:`logic_rag.retriever.DenseRetriever.load` accepts in place of an exact weights match.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .args import LoreArgs
from .training import (
    ENCODER_JSON,
    base_info,
    load_base_model,
    load_training_set,
    publish_model,
    query_encoder_files,
    train_with_resume,
    training_arguments,
)

if TYPE_CHECKING:
    from logic_rag.finetune.data import TrainingSet

__all__ = ["ENCODER_JSON", "train_lore"]


def train_lore(
    args: LoreArgs,
    training_set: TrainingSet | None = None,
    *,
    callbacks: Sequence[Any] = (),
) -> Path:
    """Train a LORE query encoder; return ``out/model`` (queries only, documents on the base).

    Distractors come from ``args.atoms`` (documents matching some but not all atoms); with
    none, every candidate but the positive is a plain negative.
    """
    from sentence_transformers import SentenceTransformerTrainer

    from logic_rag.finetune.data import to_lore_dataset
    from logic_rag.finetune.losses import LoreLoss

    args.validate()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ts = training_set if training_set is not None else load_training_set(args)
    dataset = to_lore_dataset(
        ts,
        num_distractors=args.num_distractors,
        num_negatives=args.num_negatives,
        seed=args.seed,
    )
    model, fingerprint = load_base_model(args)
    # The frozen document encoder is a copy of the base taken now, before any training step
    # (and before a resumed checkpoint is loaded into ``model``).
    loss = LoreLoss(
        model,
        temperature=args.temperature,
        beta=args.beta,
        alpha=args.alpha,
        gather_across_devices=args.gather_across_devices,
    )
    info: dict[str, Any] = base_info(args, "lore", fingerprint)
    info["dataset"] = {
        "queries": len(ts),
        "documents": len(ts.documents),
        "queries_with_distractors": sum(1 for q in ts.queries if q.distractors),
    }
    info["loss"] = {"class": type(loss).__name__, "config": loss.get_config_dict()}
    document_encoder = {"name": args.base, "weights_sha256": fingerprint}
    info["document_encoder"] = document_encoder
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training_arguments(args, out),
        train_dataset=dataset,
        loss=loss,
        callbacks=list(callbacks) or None,
    )
    info["training"] = train_with_resume(trainer, args, out, info)
    return publish_model(
        model,
        out,
        info,
        extra_files=query_encoder_files(document_encoder),
        keep_checkpoints=args.keep_checkpoints,
    )
