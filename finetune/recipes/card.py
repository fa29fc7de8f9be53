"""Model card of a fine-tuned model: ``README.md`` for people, JSON for programs.

Why our own card rather than sentence-transformers' generated one: ours must name what an
auditor needs to reproduce or trust the run (data files with SHA-256, the loss and its exact
config, every hyper-parameter, the base model's weights fingerprint, wall time, metrics) and
the same facts must be machine-readable (``logic_rag_training.json``) for the ablation runner.
Both files are written atomically.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_json, atomic_write_text

__all__ = ["CARD_FILE", "TRAINING_JSON", "render_card", "write_card"]

CARD_FILE = "README.md"
TRAINING_JSON = "logic_rag_training.json"


def _json_block(obj: Any) -> str:
    return "```json\n" + json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n```"


def render_card(info: dict[str, Any]) -> str:
    """Markdown card from the run facts gathered by the recipe."""
    base = info.get("base_model", {})
    train = info.get("training", {})
    lines = [
        "---",
        "library_name: sentence-transformers",
        "tags: [logic-rag, sentence-similarity]",
        "---",
        "",
        f"# logic-rag fine-tuned model ({info.get('recipe', '?')})",
        "",
        f"Fine-tuned from `{base.get('name')}` (weights sha256 `{base.get('weights_sha256')}`) "
        "with the logic-rag recipe named above.",
        "",
        "## Data",
        "",
        "| role | file | sha256 |",
        "|---|---|---|",
    ]
    lines += [f"| {d['role']} | `{d['path']}` | `{d['sha256']}` |" for d in info.get("data", [])]
    stats = info.get("dataset")
    if stats:
        lines += ["", "Training set: " + ", ".join(f"{k} = {v}" for k, v in stats.items())]
    loss = info.get("loss", {})
    lines += [
        "",
        "## Loss",
        "",
        f"`{loss.get('class')}`",
        "",
        _json_block(loss.get("config", {})),
        "",
        "## Hyper-parameters",
        "",
        _json_block(info.get("hyperparameters", {})),
        "",
        "## Training",
        "",
        f"- steps: {train.get('global_step')}",
        f"- final mean training loss: {train.get('training_loss')}",
        f"- wall time: {train.get('wall_time_s')} s (this run; resumed from "
        f"{train.get('resumed_from') or 'nothing'})",
    ]
    if info.get("document_encoder"):
        doc = info["document_encoder"]
        lines += [
            "",
            "## Document encoder",
            "",
            "Only the query encoder was trained. Documents must be embedded with "
            f"`{doc.get('name')}` (weights sha256 `{doc.get('weights_sha256')}`); indexes built "
            "with it stay valid for this query encoder (see `logic_rag_encoder.json`).",
        ]
    lines += ["", "## Metrics", ""]
    metrics = info.get("metrics")
    lines.append(_json_block(metrics) if metrics else "No evaluation was run with this training.")
    versions = info.get("versions")
    if versions:
        lines += ["", "## Software", ""] + [f"- {k} {v}" for k, v in versions.items()]
    return "\n".join(lines) + "\n"


def write_card(folder: str | os.PathLike[str], info: dict[str, Any]) -> None:
    """Write ``README.md`` and ``logic_rag_training.json`` into ``folder`` (atomically)."""
    root = Path(folder)
    atomic_write_json(root / TRAINING_JSON, json.loads(json.dumps(info, default=str)))
    atomic_write_text(root / CARD_FILE, render_card(info))


def record_metrics(folder: str | os.PathLike[str], metrics: dict[str, Any]) -> None:
    """Put ``metrics`` (measured after training, e.g. by an experiment) into the card of the
    model in ``folder``; the training record is kept, only its ``metrics`` change."""
    root = Path(folder)
    path = root / TRAINING_JSON
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: {root} is not a model this package trained")
    info = json.loads(path.read_text(encoding="utf-8"))
    info["metrics"] = metrics
    write_card(root, info)
