"""Phases 4 and 5: the bi-encoder and the cross-encoder verifier, by the existing recipes.

Nothing here trains by itself: the composed sets become a
:class:`~logic_rag.finetune.data.TrainingSet` for
:func:`~logic_rag.finetune.recipes.contrastive.train_contrastive` (SupCon or LogiCoL on the
sentence-transformers trainer, checkpoints and resume included), and the verdicts become a
teacher file for :func:`~logic_rag.finetune.verifier.train.train_verifier` (the
``--teacher`` distillation path). The files those recipes read are written into the run
folder: ``pages.jsonl`` (only the pages that were labelled), ``composed.jsonl`` (QUEST
format) and ``teacher.jsonl`` (``atom``, ``title``, ``score``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_jsonl

from .composed import ComposedQuery
from .state import AdaptError, AdaptSettings

__all__ = ["write_training_files", "training_set", "train_biencoder", "train_cross_encoder"]


def _title(doc: Any) -> str:
    return doc.title or doc.id


def write_training_files(
    folder: Path,
    documents: Sequence[Any],
    labels: Sequence[dict[str, Any]],
    queries: Sequence[ComposedQuery],
) -> dict[str, int]:
    """``pages.jsonl``, ``composed.jsonl`` and ``teacher.jsonl`` (atomically)."""
    from logic_rag.finetune.data.variants import write_quest_format

    by_id = {d.id: d for d in documents}
    labelled = sorted({row["doc"] for row in labels if row["doc"] in by_id})
    titles = [_title(by_id[d]) for d in labelled]
    if len(set(titles)) != len(titles):
        # The verifier recipe matches teacher rows to pages by title: keep it unambiguous.
        raise AdaptError(
            "two labelled pages share a title; the verifier's teacher file names pages by "
            "title, so give the documents distinct titles (or ids without titles)"
        )
    n_pages = atomic_write_jsonl(folder / "pages.jsonl", (by_id[d].to_json() for d in labelled))
    write_quest_format(training_set(documents, labels, queries).queries, folder / "composed.jsonl")
    n_teacher = atomic_write_jsonl(
        folder / "teacher.jsonl",
        (
            {"atom": row["atom"], "title": _title(by_id[row["doc"]]), "score": row["score"]}
            for row in labels
            if row["doc"] in by_id
        ),
    )
    return {"pages": n_pages, "teacher_rows": n_teacher}


def training_set(
    documents: Sequence[Any],
    labels: Sequence[dict[str, Any]],
    queries: Sequence[ComposedQuery],
    *,
    hard_negatives: bool = False,
) -> Any:
    """The composed queries as a ``TrainingSet`` over the labelled pages.

    Queries built from the same atoms share a logical group (LogiCoL's batches keep groups
    together; its subset / exclusion terms act inside a group); single atoms are ungrouped.
    With ``hard_negatives`` each query's judged pages outside its set are its known
    negatives (:attr:`ComposedQuery.universe` minus the set).
    """
    from logic_rag.finetune.data import TrainingSet, TrainQuery
    from logic_rag.finetune.data.examples import compute_distractors
    from logic_rag.query.templates import to_template

    by_id = {d.id: d for d in documents}
    pages = {row["doc"]: by_id[row["doc"]].content for row in labels if row["doc"] in by_id}
    groups: dict[frozenset[str], str] = {}
    out = []
    atom_sets = {q.atoms[0]: q.gold for q in queries if q.shape == "A"}
    for i, q in enumerate(queries):
        group = None
        if q.shape != "A":
            group = groups.setdefault(frozenset(q.atoms), f"g{len(groups)}")
        sets = {a: atom_sets.get(a, frozenset()) for a in q.atoms}
        out.append(
            TrainQuery(
                query_id=f"q{i}",
                text=q.text,
                gold=tuple(sorted(q.gold)),
                group=group,
                logical_query=q.logic,
                template=to_template(q.logic),
                distractors=compute_distractors(q.logic, q.gold, sets),
                hard_negatives=tuple(sorted(q.universe - q.gold)) if hard_negatives else (),
            )
        )
    return TrainingSet(out, pages)


def train_biencoder(
    folder: Path,
    ts: Any,
    settings: AdaptSettings,
    base: str,
) -> Path:
    """SupCon / LogiCoL on the composed sets; the model lands in ``folder/model``."""
    from logic_rag.finetune.recipes.args import ContrastiveArgs
    from logic_rag.finetune.recipes.contrastive import train_contrastive

    args = ContrastiveArgs(
        train=str(folder / "composed.jsonl"),
        docs=str(folder / "pages.jsonl"),
        out=str(folder),
        base=base,
        loss=settings.loss,
        epochs=settings.epochs,
        max_steps=settings.max_steps,
        batch_size=settings.batch_size,
        lr=settings.lr,
        max_seq_length=settings.max_seq_length,
        query_only=settings.query_only,
        # The known negatives come with the training set; nothing is mined.
        hard_negatives=settings.hard_negatives,
        mined_negatives=0,
        seed=settings.seed,
    )
    return train_contrastive(args, training_set=ts)


def train_cross_encoder(folder: Path, settings: AdaptSettings) -> Path:
    """The cross-encoder distilled from the verdicts; it lands in ``folder/verifier``.

    The recipe writes its run folder (checkpoints, ``model``) under ``folder/.verifier-run``;
    the finished model is then renamed to ``folder/verifier`` (atomic on one file system).
    """
    from logic_rag.finetune.verifier.train import VerifierArgs, train_verifier

    run = folder / ".verifier-run"
    model = train_verifier(
        VerifierArgs(
            out=str(run),
            teacher=str(folder / "teacher.jsonl"),
            # Every verdict, as its soft P(yes): the candidates already mix hard and random
            # pages, and a teacher whose P(yes) stays below 0.5 would otherwise leave none.
            teacher_ratio=0.0,
            docs=str(folder / "pages.jsonl"),
            base=settings.verifier_base,
            epochs=settings.verifier_epochs,
            max_steps=settings.verifier_max_steps,
            batch_size=settings.verifier_batch_size,
            seed=settings.seed,
        )
    )
    target = folder / "verifier"
    if target.exists():
        shutil.rmtree(target)
    os.replace(model, target)
    shutil.rmtree(run, ignore_errors=True)
    return target
