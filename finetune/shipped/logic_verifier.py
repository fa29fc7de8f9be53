"""``logic-rag finetune logic-verifier``: the constraint verifier we ship, a LoRA cross-encoder.

Why: embedding cosines cannot *know* that a page is one of "1990s Italian crime films"; a
cross-encoder reads the constraint and the page together. None with weights is installable
here, so we train one on the pinned MiniLM, once, from the shared data only:

* QUEST-attr train split pairs (``quest_pairs``: members from each template's logic and
  attributions; known non-members, siblings and same-domain random pages as negatives);
* NLI pairs (SNLI dev/test, MultiNLI dev-matched: hypothesis, premise, entailment = 1);
* WordNet memberships: "is this gloss one of the dogs?" for categories of the WordNet training
  split (the demo's roots removed, as for ``logic-gemma``), with members, members of sibling
  categories and random glosses.

The artifact is a LoRA adapter plus the trained classifier head (``head.safetensors``).
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from logic_rag.errors import LogicRagError

__all__ = ["LogicVerifierArgs", "train_logic_verifier", "wordnet_membership_pairs"]


class LogicVerifierArgsError(LogicRagError, ValueError):
    """A ``finetune logic-verifier`` argument is out of range or names a missing folder."""


@dataclass
class LogicVerifierArgs:
    """The shipped ``logic-verifier``: QUEST train pairs + NLI + WordNet memberships, LoRA.

    ``data`` is the shared data folder (default ``$LOGIC_RAG_DATA`` or ``../shared/data``);
    ``install`` copies the adapter into the package and prints its SHA-256 pins.
    """

    out: str
    data: str | None = None
    base: str = "minilm"
    lora_rank: int = 32
    lora_alpha: int = 64
    lr: float = 3e-4
    epochs: float = 1.0
    max_steps: int = -1
    batch_size: int = 32
    max_length: int = 128
    nli_limit: int = 8000
    wordnet_pairs: int = 4000
    wordnet_docs: int = 3000
    seed: int = 0
    install: bool = False
    resume: bool = True

    def validate(self) -> None:
        """Raise :class:`LogicVerifierArgsError` naming the flag that is wrong."""
        from .logic_gemma import check_shipped_args

        check_shipped_args(self, LogicVerifierArgsError)
        if self.nli_limit < 0 or self.wordnet_pairs < 0 or self.wordnet_docs < 10:
            raise LogicVerifierArgsError(
                "--nli-limit and --wordnet-pairs >= 0, --wordnet-docs >= 10"
            )


def _category_name(atom: str) -> str:
    """``"Kinds of hunting dog (a dog used in hunting)"`` -> ``"hunting dogs"``."""
    from logic_rag.evals.wordnet_demo import plural

    name = atom.removeprefix("Kinds of ").split(" (", 1)[0].strip()
    return plural(name)


def wordnet_membership_pairs(
    folder: Path, limit: int, seed: int = 0
) -> list[tuple[str, str, float]]:
    """``(category, gloss, label)`` from a WordNet set folder's *train* atoms: per category up
    to 3 members (1), 2 members of categories in the same lexicographer file that are not
    members (0) and 1 random gloss (0); shuffled and cut to ``limit``."""
    texts: dict[str, str] = {}
    with (folder / "documents.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            texts[row["title"]] = row["text"]
    atoms = []
    with (folder / "atoms.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row.get("split") == "train":
                atoms.append(row)
    rng = random.Random(seed)
    ids = sorted(texts)
    by_domain: dict[str, list[dict[str, Any]]] = {}
    for row in atoms:
        by_domain.setdefault(str(row.get("domain")), []).append(row)
    pairs: list[tuple[str, str, float]] = []
    for row in atoms:
        members = set(row["docs"])
        claim = _category_name(row["atom"])
        for doc in rng.sample(sorted(members), min(3, len(members))):
            pairs.append((claim, texts[doc], 1.0))
        near = sorted(
            {d for other in by_domain[str(row.get("domain"))] for d in other["docs"]} - members
        )
        for doc in rng.sample(near, min(2, len(near))):
            pairs.append((claim, texts[doc], 0.0))
        doc = rng.choice(ids)
        if doc not in members:
            pairs.append((claim, texts[doc], 0.0))
    rng.shuffle(pairs)
    return pairs[:limit]


def train_logic_verifier(args: LogicVerifierArgs) -> Path:
    """Build the pairs, train the LoRA cross-encoder, finish its card; return the model."""
    from logic_rag.evals.wordnet_demo import ROOTS
    from logic_rag.finetune.data.quest import build_quest_set
    from logic_rag.finetune.data.wordnet import build_wordnet_set
    from logic_rag.finetune.verifier.train import VerifierArgs, train_verifier
    from logic_rag.paths import shared_data_dir

    from .logic_gemma import _commit, _finish_card, install_artifact

    args.validate()
    root = Path(args.data) if args.data is not None else shared_data_dir()
    work = Path(args.out) / "data"
    quest = build_quest_set(work / "quest", source=root / "quest" / "attr", seed=0)
    build_wordnet_set(
        work / "wordnet",
        wordnet_dir=root / "wordnet",
        max_docs=args.wordnet_docs,
        seed=args.seed,
        exclude_below=[offset for offset, _ in ROOTS],
    )
    extra = wordnet_membership_pairs(work / "wordnet", args.wordnet_pairs, args.seed)
    vargs = VerifierArgs(
        out=str(Path(args.out) / "train"),
        train=str(quest / "train.jsonl"),
        docs=str(quest / "documents.jsonl"),
        nli=str(root / "nli") if args.nli_limit else None,
        nli_limit=max(args.nli_limit, 1),
        base=args.base,
        epochs=args.epochs,
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        lr=args.lr,
        max_length=args.max_length,
        seed=args.seed,
        resume=args.resume,
        lora_rank=args.lora_rank,
        lora_alpha=args.lora_alpha,
        device="cpu",
        save_steps=100000,
    )
    model_dir = train_verifier(vargs, extra_examples=extra)
    flags = " ".join(
        f"--{k.replace('_', '-')} {v}"
        for k, v in asdict(args).items()
        if k not in ("out", "data", "install", "resume") and v != getattr(LogicVerifierArgs, k)
    )
    _finish_card(
        model_dir,
        {
            "artifact": "logic-verifier",
            "recipe_command": f"logic-rag finetune logic-verifier --out DIR {flags}".strip(),
            "commit": _commit(),
            "licence": "Apache-2.0 (base all-MiniLM-L6-v2); trained on QUEST (CC BY 4.0, "
            "Wikipedia CC BY-SA), SNLI (CC BY-SA 4.0), MultiNLI (OANC) and WordNet 3.0 "
            "(WordNet licence)",
            "training_data": {"wordnet_pairs": len(extra)},
            "shipped_args": asdict(args),
        },
        verifier=True,
    )
    if args.install:
        install_artifact(model_dir, "logic-verifier")
    return model_dir
