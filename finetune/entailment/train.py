"""Entailment tuning of a sentence encoder: head warm-up, masked-hypothesis training, saving.

Why each step:

1. *Head warm-up.* all-MiniLM-L6-v2 ships no MLM transform head (dense + LayerNorm +
   output bias): ``AutoModelForMaskedLM`` initialises it randomly, and the decoder is tied
   to the word embeddings. Tuning the whole model through a random head would first spend
   its gradient teaching the encoder to serve noise. So the head alone is trained on plain
   BERT MLM (15 %, 80/10/10) over the same prompts with the encoder frozen; the MLM loss on
   held-out prompts is measured before and after (written to the report). Because the
   encoder is frozen, its outputs at the masked positions of ``head_warmup_steps``
   batches are computed once and the head trains ``head_warmup_epochs`` epochs on them.
2. *Entailment tuning* (Dai et al. 2024): the whole model learns to predict the masked
   hypothesis of ``The passage "<premise>" entails that <hypothesis>.`` from the visible
   premise (:class:`MaskedHypothesisCollator`), on a mix of NLI entailment pairs and
   (MS MARCO passage, query claim) pairs from the train side of the fixed query split.
   It runs under transformers ``Trainer`` so an interrupted run resumes from its last
   checkpoint.
3. *Saving.* The tuned encoder replaces the encoder of the base sentence-transformers
   model (Transformer + mean Pooling + Normalize, the base's own configuration), written to
   a hidden work folder next to ``out`` and renamed into place at the end: ``out`` either
   does not exist or is complete. The work folder keeps the warm-up and checkpoints until
   success, so re-running the same command resumes.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import resource
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "EntailmentTuningArgs",
    "run_entailment_tuning",
    "resolve_tuned_model",
    "build_training_pairs",
    "masked_lm_loss",
    "main",
]

REPORT_NAME = "entailment_tuning.json"


@dataclass
class EntailmentTuningArgs:
    """Arguments of one entailment-tuning run; every field is a ``--flag`` of :func:`main`.

    Defaults are sized for 2 CPU cores (a few minutes end to end); the paper trains BERT for
    10 epochs over SNLI+MNLI+NQ with lr 2e-5, batch 32 - raise ``max_pairs`` / ``max_steps``
    on a GPU.
    """

    out: str
    base_model: str = "minilm"
    beta: float = 0.8
    mask_scope: str = "hypothesis"
    replacement: str = "mask"
    max_steps: int = 60
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    lr_warmup_steps: int = 6
    batch_size: int = 16
    max_length: int = 128
    nli_fraction: float = 0.5
    max_pairs: int = 1200
    eval_pairs: int = 64
    seed: int = 42
    head_warmup_steps: int = 40
    head_warmup_epochs: int = 5
    head_warmup_lr: float = 1e-3
    head_mlm_probability: float = 0.15
    save_steps: int = 20
    data_dir: str | None = None
    test_fraction: float = 0.3
    overwrite: bool = False

    def validate(self) -> None:
        if not 0.0 < self.beta <= 1.0:
            raise ValueError(f"beta must be in (0, 1], got {self.beta}")
        if self.mask_scope not in ("hypothesis", "all"):
            raise ValueError(f"mask_scope must be 'hypothesis' or 'all', got {self.mask_scope}")
        if not 0.0 <= self.nli_fraction <= 1.0:
            raise ValueError(f"nli_fraction must be in [0, 1], got {self.nli_fraction}")
        for name in ("max_steps", "batch_size", "max_pairs", "save_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.head_warmup_steps < 0 or self.head_warmup_epochs < 0:
            raise ValueError("head_warmup_steps and head_warmup_epochs must be >= 0")


def build_training_pairs(args: EntailmentTuningArgs) -> tuple[list[dict], dict[str, int]]:
    """The (premise, hypothesis) mix: NLI entailment pairs and train-split claim pairs.

    Returns the shuffled pairs (``{"premise", "hypothesis", "source"}``) and counts per
    source. Retrieval pairs are capped by what the train split holds; the NLI side fills
    the rest of ``max_pairs``.
    """
    from logic_rag.finetune.entailment.data import load_mnli, load_snli, msmarco_claim_pairs
    from logic_rag.paths import shared_data_dir

    data = Path(args.data_dir) if args.data_dir else shared_data_dir()
    rng = random.Random(args.seed)
    n_ret_target = round(args.max_pairs * (1.0 - args.nli_fraction))
    retrieval = []
    if n_ret_target > 0:
        pairs = msmarco_claim_pairs(
            data / "beir" / "msmarco", split="train", test_fraction=args.test_fraction
        )
        rng.shuffle(pairs)
        retrieval = [
            {"premise": p.passage, "hypothesis": p.claim, "source": "msmarco"}
            for p in pairs[:n_ret_target]
        ]
    n_nli = args.max_pairs - len(retrieval)
    nli = []
    if n_nli > 0:
        pool = load_snli(data / "nli" / "snli_dev.jsonl") + load_mnli(
            data / "nli" / "mnli_dev_matched.tsv"
        )
        rng.shuffle(pool)
        nli = [{"premise": p.premise, "hypothesis": p.hypothesis, "source": "nli"} for p in pool]
        nli = nli[:n_nli]
    mixed = retrieval + nli
    rng.shuffle(mixed)
    return mixed, {"msmarco": len(retrieval), "nli": len(nli)}


def masked_lm_loss(model: Any, batch: dict[str, Any], *, reduction: str = "mean") -> Any:
    """Cross-entropy of a BERT MLM over the masked positions only.

    Why not ``model(**batch).loss``: that projects *every* position onto the 30k-word
    vocabulary, which costs about as much as the encoder itself; here the head runs only
    on the positions whose label is not -100 (the same loss, several times cheaper).
    """
    import torch

    inner = getattr(model, "module", model)
    labels = batch["labels"]
    hidden = inner.bert(
        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
    ).last_hidden_state
    selected = labels != -100
    logits = inner.cls(hidden[selected])
    return torch.nn.functional.cross_entropy(logits, labels[selected], reduction=reduction)


def _mean_mlm_loss(model: Any, features: list[dict], collator: Any, batch_size: int) -> float:
    """Token-weighted mean cross-entropy over the masked positions of ``features``."""
    import torch

    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(features), batch_size):
            batch = collator(features[i : i + batch_size])
            batch = {k: v.to(device) for k, v in batch.items()}
            n = int((batch["labels"] != -100).sum())
            if n:
                total += float(masked_lm_loss(model, batch, reduction="sum"))
                count += n
    return total / max(count, 1)


def _trainer_class() -> type:
    """transformers ``Trainer`` whose loss is :func:`masked_lm_loss` (defined lazily)."""
    from transformers import Trainer

    class MaskedPositionsTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # type: ignore[no-untyped-def]
            loss = masked_lm_loss(model, inputs)
            return (loss, None) if return_outputs else loss

    return MaskedPositionsTrainer


def _head_parameters(model: Any) -> list[Any]:
    """The freshly initialised MLM head: transform dense + LayerNorm and the output bias."""
    head = model.cls.predictions
    params = list(head.transform.parameters())
    params.append(head.bias)
    return params


def _warm_up_head(
    model: Any, tokenizer: Any, features: list[dict], eval_features: list[dict], args: Any
) -> dict[str, float]:
    import torch

    from logic_rag.finetune.entailment.collator import MaskedHypothesisCollator

    def mlm_collator(seed: int) -> MaskedHypothesisCollator:
        return MaskedHypothesisCollator(
            tokenizer,
            beta=args.head_mlm_probability,
            mask_scope="all",
            replacement="bert",
            generator=torch.Generator().manual_seed(seed),
        )

    before = _mean_mlm_loss(model, eval_features, mlm_collator(args.seed + 1), args.batch_size)
    # The encoder is frozen, so its output at the masked positions is a fixed input to the
    # head: compute it once per masked batch, then train the head for several epochs on
    # the cached vectors (the head is tiny, the encoder pass is what costs).
    collate = mlm_collator(args.seed + 2)
    order = random.Random(args.seed)
    device = next(model.parameters()).device
    model.eval()
    cached_h, cached_y = [], []
    with torch.no_grad():
        for _ in range(args.head_warmup_steps):
            batch = collate(order.sample(features, min(args.batch_size, len(features))))
            batch = {k: v.to(device) for k, v in batch.items()}
            hidden = model.bert(
                input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
            ).last_hidden_state
            selected = batch["labels"] != -100
            cached_h.append(hidden[selected])
            cached_y.append(batch["labels"][selected])
    losses: list[float] = []
    if cached_h:
        h_all, y_all = torch.cat(cached_h), torch.cat(cached_y)
        for p in model.parameters():
            p.requires_grad_(False)
        head = _head_parameters(model)
        for p in head:
            p.requires_grad_(True)
        optimizer = torch.optim.AdamW(head, lr=args.head_warmup_lr, weight_decay=0.0)
        gen = torch.Generator().manual_seed(args.seed + 4)
        model.cls.train()
        for _ in range(args.head_warmup_epochs):
            perm = torch.randperm(len(y_all), generator=gen).to(device)
            for i in range(0, len(perm), 512):
                idx = perm[i : i + 512]
                logits = model.cls(h_all[idx])
                loss = torch.nn.functional.cross_entropy(logits, y_all[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        for p in model.parameters():
            p.requires_grad_(True)
    after = _mean_mlm_loss(model, eval_features, mlm_collator(args.seed + 1), args.batch_size)
    return {
        "mlm_loss_before": before,
        "mlm_loss_after": after,
        "head_steps": len(losses),
        "masked_positions_cached": int(sum(len(y) for y in cached_y)),
    }


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process (what a quiet machine would need)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _latest_checkpoint(folder: Path) -> Path | None:
    checkpoints = [p for p in folder.glob("checkpoint-*") if p.name.split("-")[-1].isdigit()]
    return max(checkpoints, key=lambda p: int(p.name.split("-")[-1]), default=None)


def _save_sentence_transformer(base_path: Path, mlm_model: Any, target: Path) -> None:
    """Base sentence-transformers folder with its encoder weights replaced by the tuned ones."""
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(base_path), device="cpu")
    encoder = st[0].auto_model
    state = {k: v.detach().cpu() for k, v in mlm_model.bert.state_dict().items()}
    result = encoder.load_state_dict(state, strict=False)
    unexpected = list(result.unexpected_keys)
    missing = [k for k in result.missing_keys if not k.startswith("pooler.")]
    if unexpected or missing:
        raise RuntimeError(
            f"tuned encoder does not match the base model: missing {missing}, "
            f"unexpected {unexpected}"
        )
    st.save(str(target))


def resolve_tuned_model(tuned_model: str | None, run_tuning: bool, out: Path, **tuning: Any) -> str:
    """The entailment-tuned model folder of an experiment: ``tuned_model`` (checked to be
    a sentence-transformers folder), or, with ``run_tuning``, ``out/entailment_tuned``
    tuned here with ``EntailmentTuningArgs(**tuning)`` (a finished folder is reused, a
    partial one resumes). Why one helper: both entailment experiments take the same two
    flags and must refuse the same mistakes with the same words."""
    if tuned_model is not None and run_tuning:
        raise ValueError("pass either --tuned-model DIR or --run-tuning, not both")
    if tuned_model is not None:
        if not (Path(tuned_model) / "modules.json").is_file():
            raise ValueError(
                f"{tuned_model} is not a sentence-transformers folder (no modules.json); "
                "produce one with `logic-rag finetune entailment --out DIR` or pass --run-tuning"
            )
        return tuned_model
    if not run_tuning:
        raise ValueError(
            "no entailment-tuned model: pass --tuned-model DIR (from `logic-rag finetune "
            "entailment --out DIR`) or --run-tuning to tune one into <out>/entailment_tuned"
        )
    tuned = Path(out) / "entailment_tuned"
    if not (tuned / "modules.json").is_file():
        run_entailment_tuning(EntailmentTuningArgs(out=str(tuned), **tuning))
    return str(tuned)


def run_entailment_tuning(args: EntailmentTuningArgs) -> dict[str, Any]:
    """Run warm-up + entailment tuning and write the model folder ``args.out``.

    Returns the report (also written to ``<out>/entailment_tuning.json``). Re-running after
    an interruption resumes from the work folder ``<out parent>/.<out name>.partial``.
    """
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer, TrainingArguments

    from logic_rag.atomic import atomic_write_json
    from logic_rag.finetune.entailment.collator import MaskedHypothesisCollator
    from logic_rag.finetune.entailment.prompt import encode_prompt
    from logic_rag.models import resolve_model

    args.validate()
    started = time.monotonic()
    cpu_started = _cpu_seconds()
    out = Path(args.out).expanduser().resolve()
    if out.exists():
        if not args.overwrite:
            raise FileExistsError(f"{out} exists; pass --overwrite or choose another --out")
    work = out.parent / f".{out.name}.partial"
    work.mkdir(parents=True, exist_ok=True)
    base_path = resolve_model(args.base_model).path
    torch.manual_seed(args.seed)

    tokenizer = AutoTokenizer.from_pretrained(str(base_path))
    pairs, counts = build_training_pairs(args)
    n_eval = min(args.eval_pairs, max(1, len(pairs) // 5))
    eval_pairs, train_pairs = pairs[:n_eval], pairs[n_eval:]
    if not train_pairs:
        raise ValueError("no training pairs left after holding out evaluation pairs")

    def encode(rows: list[dict]) -> list[dict]:
        return [
            encode_prompt(tokenizer, r["premise"], r["hypothesis"], args.max_length).as_feature()
            for r in rows
        ]

    train_features, eval_features = encode(train_pairs), encode(eval_pairs)

    warm_dir = work / "head_warmup"
    warm_report_path = work / "head_warmup.json"
    if (warm_dir / "config.json").is_file() and warm_report_path.is_file():
        model = AutoModelForMaskedLM.from_pretrained(str(warm_dir))
        warm_report = json.loads(warm_report_path.read_text(encoding="utf-8"))
    else:
        model = AutoModelForMaskedLM.from_pretrained(str(base_path))
        warm_report = _warm_up_head(model, tokenizer, train_features, eval_features, args)
        tmp_warm = work / "head_warmup.tmp"
        shutil.rmtree(tmp_warm, ignore_errors=True)
        model.save_pretrained(str(tmp_warm))
        shutil.rmtree(warm_dir, ignore_errors=True)
        os.replace(tmp_warm, warm_dir)
        atomic_write_json(warm_report_path, warm_report)

    def hyp_collator(generator: Any = None) -> MaskedHypothesisCollator:
        return MaskedHypothesisCollator(
            tokenizer,
            beta=args.beta,
            mask_scope=args.mask_scope,  # type: ignore[arg-type]
            max_length=args.max_length,
            replacement=args.replacement,  # type: ignore[arg-type]
            generator=generator,
        )

    def hyp_loss() -> float:
        gen = torch.Generator().manual_seed(args.seed + 3)
        return _mean_mlm_loss(model, eval_features, hyp_collator(gen), args.batch_size)

    hyp_before = hyp_loss()
    training_args = TrainingArguments(
        output_dir=str(work / "checkpoints"),
        max_steps=args.max_steps,
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        weight_decay=args.weight_decay,
        warmup_steps=args.lr_warmup_steps,
        save_strategy="steps",
        save_steps=args.save_steps,
        save_total_limit=2,
        logging_steps=max(1, min(10, args.max_steps // 5)),
        report_to="none",
        seed=args.seed,
        data_seed=args.seed,
        remove_unused_columns=False,
        dataloader_pin_memory=False,
        disable_tqdm=True,
        use_cpu=not torch.cuda.is_available(),
    )
    trainer = _trainer_class()(
        model=model,
        args=training_args,
        train_dataset=train_features,  # a list is a map-style dataset
        data_collator=hyp_collator(),
    )
    resume = _latest_checkpoint(work / "checkpoints")
    result = trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    model = trainer.model
    hyp_after = hyp_loss()

    report = {
        "method": "entailment tuning (Dai et al., EMNLP 2024)",
        "base_model": str(args.base_model),
        "base_path": str(base_path),
        "pairs": {**counts, "train": len(train_features), "eval": len(eval_features)},
        "head_warmup": warm_report,
        "tuning": {
            "masked_hypothesis_loss_before": hyp_before,
            "masked_hypothesis_loss_after": hyp_after,
            "train_loss": float(result.training_loss),
            "steps": int(result.global_step),
            "resumed_from": str(resume) if resume else None,
            "log": [
                {k: v for k, v in row.items() if isinstance(v, (int, float))}
                for row in trainer.state.log_history
                if "loss" in row
            ],
        },
        "args": dataclasses.asdict(args),
        "seconds": round(time.monotonic() - started, 1),
        "cpu_seconds": round(_cpu_seconds() - cpu_started, 1),
    }
    final_tmp = work / "final"
    shutil.rmtree(final_tmp, ignore_errors=True)
    _save_sentence_transformer(base_path, model, final_tmp)
    atomic_write_json(final_tmp / REPORT_NAME, report)
    if out.exists():  # --overwrite: move the old folder aside, then swap
        trash = out.parent / f".{out.name}.old"
        shutil.rmtree(trash, ignore_errors=True)
        os.replace(out, trash)
        os.replace(final_tmp, out)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(final_tmp, out)
    shutil.rmtree(work, ignore_errors=True)
    return report


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="logic-rag finetune entailment",
        description="Entailment tuning (Dai et al. 2024): MLM-head warm-up, then masked-"
        "hypothesis training on NLI + MS MARCO claim pairs; writes a sentence-transformers "
        "folder.",
    )
    defaults = EntailmentTuningArgs(out="")
    for f in dataclasses.fields(EntailmentTuningArgs):
        flag = "--" + f.name.replace("_", "-")
        if f.name == "out":
            parser.add_argument(flag, required=True, help="output model folder")
        elif f.type in (bool, "bool"):
            parser.add_argument(flag, action="store_true", default=False)
        else:
            default = getattr(defaults, f.name)
            kind = {"int": int, "float": float}.get(str(f.type), str)
            parser.add_argument(flag, type=kind, default=default, help=f"default: {default}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry: ``logic-rag finetune entailment --out DIR [...]``; prints the report."""
    ns = _parser().parse_args(argv)
    args = EntailmentTuningArgs(**vars(ns))
    try:
        report = run_entailment_tuning(args)
    except (FileExistsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = {k: report[k] for k in ("pairs", "head_warmup", "seconds", "cpu_seconds")}
    summary["tuning"] = {k: v for k, v in report["tuning"].items() if k != "log"}
    print(json.dumps(summary, indent=2))
    print(f"saved {Path(args.out).resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
