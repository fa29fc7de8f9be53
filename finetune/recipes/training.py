"""What the recipes share: data loading, trainer arguments, checkpoints, resume, publishing.

Why a separate module: SupCon/LogiCoL and LORE differ only in dataset layout and loss; the
checkpoint/resume logic and the "a half-written model folder never looks complete" rule must
be identical for both, so they live here once.

Layout of a run folder ``out``::

    out/checkpoints/checkpoint-N/   trainer checkpoints (every save_steps, newest kept)
    out/model/                      the final model (appears only when complete)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logic_rag.atomic import atomic_write_json
from logic_rag.encoders.query_only import ENCODER_JSON
from logic_rag.models import resolve_model

from .args import ContrastiveArgs, LoreArgs
from .card import write_card

if TYPE_CHECKING:
    from logic_rag.finetune.data import TrainingSet

__all__ = [
    "CHECKPOINTS_DIR",
    "ENCODER_JSON",
    "add_lora",
    "has_lora",
    "MODEL_DIR",
    "query_encoder_files",
    "training_prompts",
    "file_sha256",
    "latest_checkpoint",
    "load_base_model",
    "load_training_set",
    "training_arguments",
    "launched_world_size",
    "train_with_resume",
    "check_resume",
    "run_record",
    "RUN_RECORD",
    "publish_model",
    "data_files",
    "base_info",
]

CHECKPOINTS_DIR = "checkpoints"
MODEL_DIR = "model"
_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "adapter_model.safetensors")


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes (recorded in the model card for every data file)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def load_training_set(args: ContrastiveArgs | LoreArgs) -> TrainingSet:
    """Read ``--train`` / ``--docs`` (/ ``--atoms``) into a ``TrainingSet``."""
    from logic_rag.finetune.data import add_variants, load_quest_training_set

    ts = load_quest_training_set(args.train, args.docs, atoms=args.atoms, limit=args.limit)
    if getattr(args, "variants", False):
        ts = add_variants(ts, args.atoms, split="train", seed=args.seed)
    return ts


def load_base_model(args: ContrastiveArgs | LoreArgs) -> tuple[Any, str]:
    """The base ``SentenceTransformer`` (offline, no remote code) and its weights fingerprint."""
    from sentence_transformers import SentenceTransformer

    resolved = resolve_model(args.base)
    if resolved.kind != "dense":
        raise ValueError(
            f"--base {args.base!r} is a {resolved.kind} model; the recipes fine-tune a "
            "sentence-transformers bi-encoder such as 'minilm' or a folder they wrote"
        )
    kwargs: dict[str, Any] = {}
    if getattr(args, "lora_rank", 0):
        # The base is frozen under LoRA, so it can run in the dtype it searches in (bf16 for
        # EmbeddingGemma where the CPU has it: many times faster than float32); the adapter's
        # own weights stay float32 (PEFT's default) and so does the optimiser.
        import torch

        from logic_rag.encoders.dtype import choose_dtype

        kwargs["model_kwargs"] = {"dtype": getattr(torch, choose_dtype(resolved.dtype, "cpu"))}
    model = SentenceTransformer(
        str(resolved.path), device="cpu", local_files_only=True, trust_remote_code=False, **kwargs
    )
    model.max_seq_length = args.max_seq_length
    if getattr(args, "lora_rank", 0):
        add_lora(model, args.lora_rank, args.lora_alpha)
    return model, resolved.fingerprint


def add_lora(model: Any, rank: int, alpha: int, *, trainable: Sequence[str] = ()) -> None:
    """Give ``model`` a LoRA adapter on every linear layer of its transformer and freeze the
    rest, so that training changes the adapter only (plus parameters whose names contain one
    of ``trainable``, such as a cross-encoder's new classification head).

    Works for a ``SentenceTransformer`` and a ``CrossEncoder`` alike: PEFT's
    ``inject_adapter_in_model`` goes into the Hugging Face model both hold. The dense
    projection heads of a sentence-transformers model (EmbeddingGemma's two ``Dense``
    modules) stay frozen: the artifact is the adapter, and the heads are the pinned base's.
    """
    import torch
    from peft import LoraConfig, inject_adapter_in_model

    from logic_rag.encoders.adapter import hf_model

    config = LoraConfig(
        r=rank, lora_alpha=alpha, lora_dropout=0.0, target_modules="all-linear", bias="none"
    )
    inject_adapter_in_model(config, hf_model(model))
    for name, param in model.named_parameters():
        param.requires_grad = "lora_" in name or any(t in name for t in trainable)
        if param.requires_grad and param.dtype != torch.float32:
            # Trained weights stay float32 over a bf16 base: bf16 cannot hold small updates.
            param.data = param.data.float()


def has_lora(model: Any) -> bool:
    """True when ``model`` carries a LoRA adapter (see :func:`add_lora`)."""
    from logic_rag.encoders.adapter import hf_model

    try:
        return bool(getattr(hf_model(model), "peft_config", None))
    except (ValueError, TypeError, IndexError):
        return False


def _is_valid_checkpoint(path: Path) -> bool:
    """A checkpoint counts when its state names its own step and its weights exist."""
    try:
        step = int(path.name.rsplit("-", 1)[1])
        state = json.loads((path / "trainer_state.json").read_text(encoding="utf-8"))
    except (IndexError, ValueError, OSError):
        return False
    weights = any((path / w).is_file() and (path / w).stat().st_size > 0 for w in _WEIGHTS)
    return state.get("global_step") == step and weights and (path / "optimizer.pt").is_file()


def latest_checkpoint(folder: str | os.PathLike[str]) -> Path | None:
    """The newest valid ``checkpoint-N`` under ``folder`` (a half-written one is skipped)."""
    root = Path(folder)
    found = [p for p in root.glob("checkpoint-*") if p.is_dir() and _is_valid_checkpoint(p)]
    return max(found, key=lambda p: int(p.name.rsplit("-", 1)[1]), default=None)


def launched_world_size() -> int:
    """Processes started by ``torchrun`` / ``accelerate launch`` (``WORLD_SIZE``), else 1."""
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1")))
    except ValueError:
        return 1


def _is_main_process() -> bool:
    import torch.distributed as dist

    return not (dist.is_available() and dist.is_initialized()) or dist.get_rank() == 0


def _barrier() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


def training_arguments(args: ContrastiveArgs | LoreArgs, out: Path, **extra: Any) -> Any:
    """``SentenceTransformerTrainingArguments`` for CPU runs with periodic checkpoints.

    Under ``torchrun`` / ``accelerate launch`` (``WORLD_SIZE`` > 1) the trainer runs DDP on CPU
    with the gloo backend; each process reads its own batches (accelerate shards the recipe's
    batch sampler batch by batch), so one optimiser step sees ``batch_size * WORLD_SIZE``
    examples.
    """
    from sentence_transformers import SentenceTransformerTrainingArguments

    if launched_world_size() > 1:
        extra.setdefault("ddp_backend", "gloo")

    return SentenceTransformerTrainingArguments(
        output_dir=str(out / CHECKPOINTS_DIR),
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.lr,
        warmup_steps=args.warmup_ratio,  # a float < 1 is a ratio in transformers 5
        save_strategy="steps",
        save_steps=args.save_steps,
        save_total_limit=args.save_total_limit,
        logging_steps=max(1, min(10, args.save_steps)),
        seed=args.seed,
        data_seed=args.seed,
        report_to="none",
        use_cpu=True,
        dataloader_num_workers=0,
        remove_unused_columns=False,
        disable_tqdm=False,
        **extra,
    )


#: The record of what made a run's checkpoints, checked before they are resumed.
RUN_RECORD = "run_record.json"
#: Arguments that may differ between a run and its resumption: where it writes, how often
#: and how many checkpoints it keeps, whether it resumes, and the data files' paths (their
#: contents are compared through their SHA-256).
_FREE_TO_CHANGE = frozenset(
    {
        "out",
        "resume",
        "save_steps",
        "save_total_limit",
        "keep_checkpoints",
        "train",
        "docs",
        "atoms",
    }
)


def run_record(info: dict[str, Any]) -> dict[str, Any]:
    """What must match for a checkpoint to be resumed: base weights, data contents and the
    hyper-parameters (all but :data:`_FREE_TO_CHANGE`)."""
    return {
        "recipe": info.get("recipe"),
        "base_model": info.get("base_model"),
        "data": {d["role"]: d["sha256"] for d in info.get("data", [])},
        "hyperparameters": {
            k: v for k, v in info.get("hyperparameters", {}).items() if k not in _FREE_TO_CHANGE
        },
    }


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    changed: list[str] = []
    if old.get("recipe") != new.get("recipe"):
        changed.append(f"the recipe ({old.get('recipe')} -> {new.get('recipe')})")
    if old.get("base_model") != new.get("base_model"):
        changed.append("the base model's weights")
    old_data, new_data = old.get("data") or {}, new.get("data") or {}
    for role in sorted(set(old_data) | set(new_data)):
        if old_data.get(role) != new_data.get(role):
            changed.append(f"the contents of the --{role} file")
    old_hp, new_hp = old.get("hyperparameters") or {}, new.get("hyperparameters") or {}
    for key in sorted(set(old_hp) | set(new_hp)):
        if old_hp.get(key) != new_hp.get(key):
            changed.append(
                f"--{key.replace('_', '-')} ({old_hp.get(key)!r} -> {new_hp.get(key)!r})"
            )
    return changed


def check_resume(folder: Path, record: dict[str, Any]) -> None:
    """Refuse to resume checkpoints in ``folder`` that another run's inputs made."""
    from .args import RecipeArgsError

    path = folder / RUN_RECORD
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise RecipeArgsError(
            f"{folder} holds checkpoints without a readable {RUN_RECORD}, so whether they come "
            f"from these inputs and settings cannot be checked; pass --no-resume to start over"
        ) from None
    changed = _differences(old if isinstance(old, dict) else {}, record)
    if changed:
        raise RecipeArgsError(
            f"cannot resume the checkpoints in {folder}: {'; '.join(changed)} changed since "
            f"they were written. Rerun with the same inputs and settings, or pass --no-resume "
            f"to start over"
        )


def train_with_resume(
    trainer: Any,
    args: ContrastiveArgs | LoreArgs,
    out: Path,
    info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run ``trainer.train``, resuming from the newest valid checkpoint when ``args.resume``.

    With ``info`` (the card's :func:`base_info`), a checkpoint is resumed only if the
    record written beside it (:data:`RUN_RECORD`) names the same base weights, data
    contents and hyper-parameters; otherwise :class:`RecipeArgsError` says what changed. A
    fresh start (``--no-resume`` or no checkpoint) removes older checkpoints first, so they
    can never be resumed by mistake later. Returns facts for the model card: the
    checkpoint resumed from, steps, loss, wall time.
    """
    folder = out / CHECKPOINTS_DIR
    resume_from = latest_checkpoint(folder) if args.resume else None
    record = run_record(info) if info is not None else None
    if resume_from is not None and record is not None:
        check_resume(folder, record)
    if resume_from is None and folder.exists() and _is_main_process():
        if any(folder.glob("checkpoint-*")):  # a fresh --out has none: nothing to say
            print(f"starting over: removing the earlier checkpoints in {folder}", flush=True)
        _drop_checkpoints(folder)
    if record is not None and _is_main_process():
        atomic_write_json(folder / RUN_RECORD, record)
    _barrier()
    if resume_from is not None:
        print(f"resuming from {resume_from}", flush=True)
    start = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
    wall = time.perf_counter() - start
    return {
        "resumed_from": resume_from.name if resume_from else None,
        "global_step": int(trainer.state.global_step),
        "training_loss": float(result.training_loss),
        "wall_time_s": round(wall, 2),
        "processes": launched_world_size(),
    }


def _replace_dir(tmp: Path, target: Path) -> None:
    """Move the complete ``tmp`` folder to ``target``, replacing an older ``target``."""
    if target.exists():
        trash = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
        os.replace(target, trash)
        os.replace(tmp, target)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(tmp, target)


def publish_model(
    model: Any,
    out: Path,
    info: dict[str, Any],
    *,
    extra_files: Callable[[Path], None] | None = None,
    eval_fn: Callable[[Path], dict[str, Any]] | None = None,
    keep_checkpoints: bool = True,
) -> Path:
    """Save ``model`` to ``out/model`` so that the folder appears only when complete.

    The model, ``README.md`` and ``logic_rag_training.json`` are written into a temporary
    sibling that is then renamed. With ``eval_fn`` the complete folder is evaluated in place
    and the card and JSON are rewritten atomically with the metrics. Without
    ``keep_checkpoints``, ``out/checkpoints`` is removed once the model is in place (they
    only serve to resume an interrupted run). Under distributed training only the main
    process writes (and evaluates); the others wait for it.
    """
    target = out / MODEL_DIR
    if not _is_main_process():
        _barrier()
        return target
    try:
        _publish(model, out, target, info, extra_files=extra_files, eval_fn=eval_fn)
        if not keep_checkpoints:
            _drop_checkpoints(out / CHECKPOINTS_DIR)
    finally:
        _barrier()
    return target


def _drop_checkpoints(folder: Path) -> None:
    """Remove a finished run's checkpoints: renamed aside first, so a half-deleted folder is
    never mistaken for checkpoints to resume from."""
    if not folder.exists():
        return
    trash = folder.with_name(f".{folder.name}.old-{uuid.uuid4().hex[:8]}")
    os.replace(folder, trash)
    shutil.rmtree(trash, ignore_errors=True)


def _publish(
    model: Any,
    out: Path,
    target: Path,
    info: dict[str, Any],
    *,
    extra_files: Callable[[Path], None] | None,
    eval_fn: Callable[[Path], dict[str, Any]] | None,
) -> None:
    tmp = out / f".{MODEL_DIR}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        if has_lora(model):
            from logic_rag.encoders.adapter import save_adapter

            tmp.mkdir(parents=True)
            base = info.get("base_model") or {}
            save_adapter(
                model,
                tmp,
                {
                    "base": base.get("name"),
                    "base_weights_sha256": base.get("weights_sha256"),
                    "kind": info.get("adapter_kind", "dense"),
                    "query_only": bool(info.get("hyperparameters", {}).get("query_only")),
                },
                head=info.get("adapter_head", ()),
            )
        else:
            model.save(str(tmp), create_model_card=False)
        if extra_files is not None:
            extra_files(tmp)
        write_card(tmp, info)
        _replace_dir(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if eval_fn is not None:
        info["metrics"] = {k: v for k, v in dict(eval_fn(target)).items()}
        write_card(target, info)


def query_encoder_files(document_encoder: dict[str, str]) -> Callable[[Path], None]:
    """``extra_files`` for :func:`publish_model` of a query-only model: ``logic_rag_encoder.json``
    names the document encoder (base name and weights hash) whose indexes it may search."""

    def write(folder: Path) -> None:
        atomic_write_json(
            folder / ENCODER_JSON, {"role": "query", "document_encoder": document_encoder}
        )

    return write


def training_prompts(model: Any, columns: Sequence[str]) -> dict[str, str] | None:
    """The base's own ``query`` / ``document`` prompts per dataset column, or None.

    Why: a model such as EmbeddingGemma is used with its prompts at search time
    (:class:`logic_rag.encoders.dense.DenseEncoder` applies them), so it is trained with them
    too; ``anchor`` takes the query prompt, every other text column the document prompt. A
    model without prompts (MiniLM) trains as before.
    """
    prompts = getattr(model, "prompts", None) or {}
    query, document = prompts.get("query"), prompts.get("document")
    if not query and not document:
        return None
    out = {c: (query if c == "anchor" else document) or "" for c in columns if c != "label"}
    return {c: p for c, p in out.items() if p}


def data_files(args: ContrastiveArgs | LoreArgs) -> list[dict[str, str]]:
    """Name, path and SHA-256 of every data file the run read."""
    files = [("train", args.train), ("docs", args.docs), ("atoms", args.atoms)]
    return [
        {"role": role, "path": str(Path(p).resolve()), "sha256": file_sha256(p)}
        for role, p in files
        if p is not None
    ]


def base_info(args: ContrastiveArgs | LoreArgs, recipe: str, fingerprint: str) -> dict[str, Any]:
    """The parts of the card known before training."""
    import sentence_transformers
    import torch
    import transformers

    return {
        "recipe": recipe,
        "base_model": {"name": args.base, "weights_sha256": fingerprint},
        "data": data_files(args),
        "hyperparameters": asdict(args),
        "versions": {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        },
    }
