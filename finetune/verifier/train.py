"""``logic-rag finetune verifier``: train a cross-encoder that checks one constraint.

The model reads ``(atom, page)`` and answers P(page satisfies atom): a
sentence-transformers ``CrossEncoder`` with one logit, trained with binary cross-entropy on
the real ``CrossEncoderTrainer``. Examples come from QUEST records
(:mod:`.pairs`: positives from each template's logic and attributions; negatives from
pages known to lie outside an atom, sibling atoms' pages and same-domain random pages),
optionally mixed with NLI pairs (hypothesis, premise; entailment = 1), or NLI alone for a
verifier that has never seen QUEST, and with a slower verifier's verdicts on the training
queries' candidates as soft labels (``--teacher``, from :mod:`.teacher`): distillation, the
way a cross-encoder learns most of an LLM's judgement at a fiftieth of its cost.

Run folder: ``OUT/checkpoints`` (resumed from the newest valid one, but only when the
inputs' SHA-256 and the arguments match ``OUT/run.json``), ``OUT/model`` (appears only
when complete, with a model card).
"""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_json
from logic_rag.errors import LogicRagError

__all__ = ["VerifierArgs", "load_nli_pairs", "training_pairs", "train_verifier"]


class VerifierArgsError(LogicRagError, ValueError):
    """A ``finetune verifier`` argument is out of range or names a missing file."""


@dataclass
class VerifierArgs:
    """Cross-encoder constraint verifier: QUEST attributions and/or NLI pairs.

    ``train`` may be left out when ``nli`` is given (a verifier that never saw QUEST).
    ``nli`` is a folder holding ``snli_dev.jsonl`` / ``snli_test.jsonl`` /
    ``mnli_dev_matched.tsv`` (the shared data's ``nli`` folder) or ``none``. ``teacher``
    is a JSONL of ``{atom, title, score}`` soft labels (:mod:`.teacher`); ``base`` may be
    a cross-encoder folder, to go on from an earlier run.
    """

    out: str
    train: str | None = None
    docs: str | None = None
    nli: str | None = None
    nli_limit: int = 20000
    teacher: str | None = None
    teacher_ratio: float = 1.0
    base: str = "minilm"
    epochs: float = 2.0
    max_steps: int = -1
    batch_size: int = 32
    lr: float = 3e-5
    warmup_ratio: float = 0.1
    max_length: int = 128
    random_per_positive: float = 1.0
    save_steps: int = 200
    seed: int = 0
    resume: bool = True
    device: str = "auto"
    #: LoRA rank; 0 fine-tunes every weight. With a rank, the transformer trains through a
    #: LoRA adapter and only the new classifier trains fully; ``OUT/model`` then holds the
    #: adapter and that head (a few MB): how the shipped ``logic-verifier`` stays small.
    lora_rank: int = 0
    lora_alpha: int = 32

    def validate(self) -> None:
        if self.train is None and self.nli is None and self.teacher is None:
            raise VerifierArgsError(
                "give --train (QUEST queries), --nli (NLI folder) and/or --teacher (scores)"
            )
        for flag, path in (("train", self.train), ("teacher", self.teacher)):
            if path is not None and self.docs is None:
                raise VerifierArgsError(f"--{flag} needs --docs (the documents the titles name)")
        if self.teacher_ratio < 0:
            raise VerifierArgsError("--teacher-ratio must be >= 0 (0 keeps every teacher pair)")
        for flag, path in (("train", self.train), ("docs", self.docs), ("teacher", self.teacher)):
            if path is not None and not Path(path).is_file():
                raise VerifierArgsError(f"--{flag} {path}: no such file")
        if self.nli is not None and not Path(self.nli).is_dir():
            raise VerifierArgsError(f"--nli {self.nli}: no such folder")
        if self.batch_size < 1 or self.max_length < 16 or self.save_steps < 1:
            raise VerifierArgsError("--batch-size, --save-steps must be >= 1, --max-length >= 16")
        if self.lr <= 0 or (self.epochs <= 0 and self.max_steps <= 0):
            raise VerifierArgsError("--lr must be > 0, and --epochs or --max-steps positive")
        if self.device not in ("auto", "cpu", "cuda"):
            raise VerifierArgsError("--device must be auto, cpu or cuda")
        if self.lora_rank < 0 or self.lora_alpha < 1:
            raise VerifierArgsError("--lora-rank must be >= 0 (0: no adapter), --lora-alpha >= 1")


def load_nli_pairs(folder: str | Path, limit: int, seed: int = 0) -> list[tuple[str, str, float]]:
    """``(hypothesis, premise, 1 if entailment else 0)`` from SNLI and MultiNLI files."""
    folder = Path(folder)
    rows: list[tuple[str, str, float]] = []
    for name in ("snli_dev.jsonl", "snli_test.jsonl"):
        path = folder / name
        if path.is_file():
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    obj = json.loads(line)
                    if obj.get("label") in ("entailment", "neutral", "contradiction"):
                        label = 1.0 if obj["label"] == "entailment" else 0.0
                        rows.append((obj["hypothesis"], obj["premise"], label))
    mnli = folder / "mnli_dev_matched.tsv"
    if mnli.is_file():
        with mnli.open(encoding="utf-8") as handle:
            for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
                if len(row) >= 4 and row[3] in ("entailment", "neutral", "contradiction"):
                    rows.append((row[2], row[1], 1.0 if row[3] == "entailment" else 0.0))
    if not rows:
        raise VerifierArgsError(f"{folder} holds no SNLI/MultiNLI pairs")
    random.Random(seed).shuffle(rows)
    return rows[:limit]


def _documents(path: str | Path) -> dict[str, str]:
    from logic_rag.corpus import load_documents

    return {d.title or d.id: d.content for d in load_documents(path)}


def training_pairs(
    args: VerifierArgs, extra: Sequence[tuple[str, str, float]] = ()
) -> tuple[list[tuple[str, str, float]], dict[str, int]]:
    """All ``(claim, evidence, label)`` examples of the run and counts by kind; ``extra``
    examples (e.g. WordNet memberships) are mixed in and counted as ``extra``."""
    from logic_rag.evals.quest.split import read_records

    from .pairs import quest_pairs

    examples: list[tuple[str, str, float]] = []
    counts: Counter[str] = Counter()
    documents = _documents(args.docs) if args.docs is not None else {}
    if args.train is not None:
        records = read_records(args.train)
        _check_gold_in_documents(args, records, documents)
        for pair in quest_pairs(
            records,
            documents,
            random_per_positive=args.random_per_positive,
            seed=args.seed,
        ):
            examples.append((pair.atom, documents[pair.title], pair.label))
            counts[pair.kind] += 1
    if args.nli is not None:
        nli = load_nli_pairs(args.nli, args.nli_limit, args.seed)
        examples += nli
        counts["nli"] = len(nli)
    if extra:
        examples += list(extra)
        counts["extra"] = len(extra)
    random.Random(args.seed).shuffle(examples)
    if args.teacher is not None:
        from .teacher import read_teacher_examples

        taught = read_teacher_examples(
            args.teacher, documents, ratio=args.teacher_ratio, seed=args.seed
        )
        examples += taught
        counts["teacher"] = len(taught)
        random.Random(args.seed).shuffle(examples)
    if not examples:
        raise VerifierArgsError(
            "the inputs give no training example; check that --train's gold pages are in "
            "--docs, or add --nli FOLDER / --teacher FILE"
        )
    return examples, dict(counts)


def _check_gold_in_documents(
    args: VerifierArgs, records: list[dict[str, Any]], documents: dict[str, str]
) -> None:
    """Refuse QUEST records none of whose gold pages is in the documents: they would give
    no positive pair, and training would fail deep in torch ("num_samples=0")."""
    gold = sorted({t for r in records for t in r.get("docs") or () if isinstance(t, str)})
    if not gold:
        raise VerifierArgsError(f"--train {args.train}: no record lists gold pages under 'docs'")
    if not any(title in documents for title in gold):
        raise VerifierArgsError(
            f"--train {args.train}: none of its {len(gold)} gold pages (e.g. {gold[0]!r}) is "
            f"a document of --docs {args.docs} (pages are matched on the documents' "
            f"'title', or 'id' where there is no title); pass as --docs the documents file "
            f"the gold pages come from"
        )


def _fingerprint(args: VerifierArgs) -> dict[str, Any]:
    from logic_rag.finetune.recipes.training import file_sha256
    from logic_rag.models import resolve_model

    files = {
        flag: file_sha256(path)
        for flag, path in (("train", args.train), ("docs", args.docs), ("teacher", args.teacher))
        if path is not None
    }
    if args.nli is not None:
        folder = Path(args.nli)
        files.update(
            {f"nli/{p.name}": file_sha256(p) for p in sorted(folder.glob("*")) if p.is_file()}
        )
    settings = {k: v for k, v in asdict(args).items() if k not in ("out", "resume", "device")}
    for flag in ("train", "docs", "nli", "teacher"):
        settings.pop(flag)
    return {
        "inputs": files,
        "base_weights": resolve_model(args.base).fingerprint,
        "settings": settings,
    }


def train_verifier(
    args: VerifierArgs, extra_examples: Sequence[tuple[str, str, float]] = ()
) -> Path:
    """Train (or resume) the verifier; return ``OUT/model``. ``extra_examples`` are
    ``(claim, evidence, label)`` rows mixed into the training pairs."""
    from datasets import Dataset
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    from logic_rag.finetune.recipes.training import (
        CHECKPOINTS_DIR,
        MODEL_DIR,
        latest_checkpoint,
    )
    from logic_rag.models import resolve_model

    args.validate()
    # The data first: a run whose inputs give no example fails here with what to fix,
    # before a folder is made or a model loaded.
    examples, counts = training_pairs(args, extra_examples)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run_file = out / "run.json"
    fingerprint = _fingerprint(args)
    if extra_examples:
        import hashlib

        digest = hashlib.sha256(json.dumps(list(extra_examples)).encode("utf-8")).hexdigest()
        fingerprint["inputs"]["extra_examples"] = digest
    resume_from = None
    if args.resume and run_file.is_file():
        previous = json.loads(run_file.read_text(encoding="utf-8"))
        if previous != fingerprint:
            changed = sorted(k for k in fingerprint if previous.get(k) != fingerprint[k])
            raise VerifierArgsError(
                f"{out} holds a run with other {', '.join(changed)}; its checkpoints do not "
                f"belong to these inputs. Use another --out or pass --no-resume"
            )
        resume_from = latest_checkpoint(out / CHECKPOINTS_DIR)
    atomic_write_json(run_file, fingerprint)

    dataset = Dataset.from_dict(
        {
            "claim": [e[0] for e in examples],
            "evidence": [e[1] for e in examples],
            "label": [e[2] for e in examples],
        }
    )
    import torch

    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    base = resolve_model(args.base)
    import transformers

    # The base is a bi-encoder: its classifier head is new by design, so transformers'
    # "LOAD REPORT ... classifier.weight MISSING" block would only alarm the user.
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        model = CrossEncoder(
            str(base.path),
            num_labels=1,
            max_length=args.max_length,
            device=device,
            local_files_only=True,
            trust_remote_code=False,
        )
    finally:
        transformers.logging.set_verbosity(verbosity)
    if args.lora_rank:
        from logic_rag.finetune.recipes.training import add_lora

        add_lora(model, args.lora_rank, args.lora_alpha, trainable=("classifier",))
    training_args = CrossEncoderTrainingArguments(
        output_dir=str(out / CHECKPOINTS_DIR),
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.lr,
        warmup_steps=args.warmup_ratio,
        save_strategy="steps",
        save_steps=args.save_steps,
        save_total_limit=2,
        logging_steps=20,
        seed=args.seed,
        data_seed=args.seed,
        report_to="none",
        use_cpu=device == "cpu",
        dataloader_num_workers=0,
    )
    trainer = CrossEncoderTrainer(
        model=model,
        args=training_args,
        train_dataset=dataset,
        loss=BinaryCrossEntropyLoss(model),
    )
    import time

    start = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
    info = {
        "recipe": "verifier",
        "base_model": {"name": args.base, "weights_sha256": fingerprint["base_weights"]},
        "data": fingerprint["inputs"],
        "examples": counts,
        "hyperparameters": asdict(args),
        "resumed_from": resume_from.name if resume_from else None,
        "global_step": int(trainer.state.global_step),
        "training_loss": float(result.training_loss),
        "wall_time_s": round(time.perf_counter() - start, 1),
    }
    return _publish(model, out / MODEL_DIR, info)


def _publish(model: Any, target: Path, info: dict[str, Any]) -> Path:
    """Save the model and its card into a temporary sibling, then rename it into place."""
    import shutil
    import uuid

    from .card import render_verifier_card

    tmp = target.with_name(f".{target.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        lora = info.get("hyperparameters", {}).get("lora_rank")
        if lora:
            from logic_rag.encoders.adapter import save_adapter

            tmp.mkdir(parents=True)
            base = info["base_model"]
            save_adapter(
                model,
                tmp,
                {
                    "base": base["name"],
                    "base_weights_sha256": base["weights_sha256"],
                    "kind": "cross-encoder",
                    "query_only": False,
                },
                head=("classifier",),
            )
        else:
            model.save_pretrained(str(tmp))
        (tmp / "README.md").write_text(render_verifier_card(info), encoding="utf-8")
        atomic_write_json(tmp / "logic_rag_training.json", info)
        if target.exists():
            old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
