"""``logic-rag finetune logic-gemma``: the LoRA adapter over EmbeddingGemma-300M we ship.

Why this recipe: the set-algebra training that moves the strong encoder (SupCon with the known
hard negatives: +0.047 dev R@20 when both towers trained, docs/experiments) must reach users
who never train, so it runs once here, on the shared data only, and ships as a few-MB LoRA
delta over the pinned base. Its data:

* the QUEST-attr train split (``split_by_atom``, seed 0: the half whose atoms never occur in
  dev), each query with its known hard negatives (pages of a negated atom, pages in only some
  atoms of an intersection);
* WordNet 3.0 set algebra: noun synsets as documents, "kinds of X" categories as exact atom
  sets, their Quest+Variants compositions (``A``, ``A or B``, ``A and B``, ``A but not B``)
  as queries with exact gold sets. Everything at or below the demo's roots (birds, dogs,
  trees, edible fruits, vegetables, reptiles) is removed first, so the demo's 155 queries
  and their synsets stay out of training.

``query_only`` (the default) trains the query tower alone: documents keep the base's
embeddings, so every index built with EmbeddingGemma stays valid, and training embeds each
document with a frozen copy instead of back-propagating through it. ``--no-query-only``
trains both towers (an index must then be rebuilt with the model): larger gains were measured
that way with full fine-tuning, at several times the cost per step, which a 2-core CPU
without AMX cannot pay in one session (docs/experiments/2026-11-29-shipped-weights.md).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import uuid
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from logic_rag.errors import LogicRagError

__all__ = ["LogicGemmaArgs", "build_training_set", "install_artifact", "train_logic_gemma"]


class LogicGemmaArgsError(LogicRagError, ValueError):
    """A ``finetune logic-gemma`` argument is out of range or names a missing folder."""


@dataclass
class LogicGemmaArgs:
    """The shipped ``logic-gemma`` adapter: QUEST train split + WordNet set algebra, LoRA.

    ``data`` is the shared data folder (default ``$LOGIC_RAG_DATA`` or ``../shared/data``).
    ``install`` copies the finished adapter into the package (``logic_rag/shipped``) and
    prints the SHA-256 pins for :mod:`logic_rag.models`.
    """

    out: str
    data: str | None = None
    base: str = "embeddinggemma-300m"
    query_only: bool = True
    lora_rank: int = 16
    lora_alpha: int = 32
    lr: float = 2e-4
    max_steps: int = 60
    batch_size: int = 32
    wordnet_queries: int = 272
    wordnet_docs: int = 3000
    seed: int = 0
    install: bool = False
    resume: bool = True

    def validate(self) -> None:
        """Raise :class:`LogicGemmaArgsError` naming the flag that is wrong."""
        check_shipped_args(self, LogicGemmaArgsError)
        if self.lr <= 0 or self.max_steps < 1 or self.batch_size < 2:
            raise LogicGemmaArgsError("--lr > 0, --max-steps >= 1 and --batch-size >= 2")
        if self.wordnet_queries < 0 or self.wordnet_docs < 10:
            raise LogicGemmaArgsError("--wordnet-queries >= 0 and --wordnet-docs >= 10")


def check_shipped_args(args: Any, error: type[Exception]) -> None:
    """The checks every shipped recipe shares: ``--out``, the LoRA shape, ``--data``."""
    if not args.out:
        raise error("--out is empty; pass the folder the run should write to")
    if args.lora_rank < 1 or args.lora_alpha < 1:
        raise error("--lora-rank and --lora-alpha must be >= 1")
    if args.data is not None and not Path(args.data).is_dir():
        raise error(f"--data {args.data}: no such folder")


def _data_root(args: LogicGemmaArgs) -> Path:
    from logic_rag.paths import shared_data_dir

    return Path(args.data) if args.data is not None else shared_data_dir()


def _prefixed(ts: Any, prefix: str) -> list[Any]:
    return [
        replace(
            q,
            query_id=f"{prefix}:{q.query_id}",
            group=None if q.group is None else f"{prefix}:{q.group}",
        )
        for q in ts.queries
    ]


def build_training_set(args: LogicGemmaArgs) -> tuple[Any, dict[str, Any]]:
    """The merged training set (QUEST train split + WordNet) and a summary for the card."""
    from logic_rag.evals.quest.data import load_atom_sets
    from logic_rag.evals.wordnet_demo import ROOTS
    from logic_rag.finetune.data import (
        TrainingSet,
        known_hard_negatives,
        load_quest_training_set,
        with_hard_negatives,
    )
    from logic_rag.finetune.data.quest import build_quest_set
    from logic_rag.finetune.data.wordnet import build_wordnet_set

    root = _data_root(args)
    work = Path(args.out) / "data"
    quest = build_quest_set(work / "quest", source=root / "quest" / "attr", seed=0)
    wordnet = work / "wordnet"
    manifest = build_wordnet_set(
        wordnet,
        wordnet_dir=root / "wordnet",
        max_docs=args.wordnet_docs,
        seed=args.seed,
        exclude_below=[offset for offset, _ in ROOTS],
    )
    parts = {}
    for name, folder in (("quest", quest), ("wordnet", wordnet)):
        ts = load_quest_training_set(
            folder / "train.jsonl", folder / "documents.jsonl", atoms=folder / "atoms.jsonl"
        )
        known = known_hard_negatives(ts, load_atom_sets(folder / "atoms.jsonl"))
        parts[name] = with_hard_negatives(ts, known)
    wn = parts["wordnet"]
    if args.wordnet_queries < len(wn.queries):
        keep = random.Random(args.seed).sample(range(len(wn.queries)), args.wordnet_queries)
        wn = TrainingSet([wn.queries[i] for i in sorted(keep)], wn.documents)
    documents = {**parts["quest"].documents, **wn.documents}
    if len(documents) != len(parts["quest"].documents) + len(wn.documents):
        raise LogicGemmaArgsError("QUEST and WordNet document ids collide; cannot merge them")
    merged = TrainingSet(_prefixed(parts["quest"], "quest") + _prefixed(wn, "wordnet"), documents)
    summary = {
        "quest_train_queries": len(parts["quest"].queries),
        "quest_documents": len(parts["quest"].documents),
        "wordnet_queries": len(wn.queries),
        "wordnet_queries_available": len(parts["wordnet"].queries),
        "wordnet_documents": len(wn.documents),
        "wordnet_excluded_roots": [name for _, name in ROOTS],
        "wordnet_manifest": manifest.get("counts"),
        "with_hard_negatives": sum(bool(q.hard_negatives) for q in merged.queries),
    }
    return merged, summary


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _finish_card(model_dir: Path, extra: dict[str, Any], *, verifier: bool = False) -> None:
    """Add what the shipped artifact's card must say (recipe command, commit, licence, data)
    to the card the recipe wrote, and render it again: the JSON stays the whole record."""
    import json

    from logic_rag.atomic import atomic_write_json, atomic_write_text
    from logic_rag.finetune.recipes.card import CARD_FILE, TRAINING_JSON, render_card
    from logic_rag.finetune.verifier.card import render_verifier_card

    info = json.loads((model_dir / TRAINING_JSON).read_text(encoding="utf-8"))
    info.update(extra)
    render = render_verifier_card if verifier else render_card
    card = (
        render(info)
        + "\n## Shipped artifact\n\n"
        + "\n".join(
            f"- **{key}**: {info[key]}"
            for key in ("artifact", "recipe_command", "commit", "licence")
        )
    )
    atomic_write_json(model_dir / TRAINING_JSON, json.loads(json.dumps(info, default=str)))
    atomic_write_text(model_dir / CARD_FILE, card + "\n")


def train_logic_gemma(args: LogicGemmaArgs) -> Path:
    """Build the data, train the adapter, finish its card; return ``OUT/train/model``."""
    from logic_rag.finetune.recipes.args import ContrastiveArgs
    from logic_rag.finetune.recipes.contrastive import train_contrastive

    args.validate()
    training_set, summary = build_training_set(args)
    quest = Path(args.out) / "data" / "quest"
    cargs = ContrastiveArgs(
        train=str(quest / "train.jsonl"),
        docs=str(quest / "documents.jsonl"),
        atoms=str(quest / "atoms.jsonl"),
        out=str(Path(args.out) / "train"),
        base=args.base,
        loss="supcon",
        hard_negatives=True,
        mined_negatives=0,
        lr=args.lr,
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        seed=args.seed,
        query_only=args.query_only,
        lora_rank=args.lora_rank,
        lora_alpha=args.lora_alpha,
        save_steps=max(args.max_steps, 1),
        resume=args.resume,
    )
    model_dir = train_contrastive(cargs, training_set=training_set)
    flags = " ".join(
        f"--{k.replace('_', '-')} {v}"
        for k, v in asdict(args).items()
        if k not in ("out", "data", "install", "resume") and v != getattr(LogicGemmaArgs, k)
    )
    _finish_card(
        model_dir,
        {
            "artifact": "logic-gemma",
            "recipe_command": f"logic-rag finetune logic-gemma --out DIR {flags}".strip(),
            "commit": _commit(),
            "licence": "Gemma Terms of Use (a derivative of google/embeddinggemma-300m); "
            "trained on QUEST (CC BY 4.0, Wikipedia text CC BY-SA) and WordNet 3.0 (WordNet "
            "licence)",
            "training_data": summary,
            "shipped_args": asdict(args),
        },
    )
    if args.install:
        install_artifact(model_dir, "logic-gemma")
    return model_dir


def install_artifact(model_dir: Path, name: str) -> Path:
    """Copy an adapter folder into the package as ``logic_rag/shipped/NAME`` (replacing the
    old one in one rename) and print the pins to put in :mod:`logic_rag.models`."""
    from logic_rag.models import SHIPPED_DIR
    from logic_rag.weights import sha256_file

    target = SHIPPED_DIR / name
    tmp = SHIPPED_DIR / f".{name}.tmp-{uuid.uuid4().hex[:8]}"
    shutil.copytree(model_dir, tmp)
    if target.exists():
        old = SHIPPED_DIR / f".{name}.old-{uuid.uuid4().hex[:8]}"
        target.rename(old)
        tmp.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(target)
    for path in sorted(target.iterdir()):
        path.chmod(0o644)
        if path.suffix == ".safetensors":
            print(
                f'    "{path.name}": weights.Pinned({path.stat().st_size}, "{sha256_file(path)}"),',
                file=sys.stdout,
            )
    return target
