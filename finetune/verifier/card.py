"""The model card of a trained constraint verifier (what it learned from, how it scores)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["render_verifier_card"]


def render_verifier_card(info: dict[str, Any]) -> str:
    """Markdown card: intended use, data with hashes, example counts, settings, metrics."""
    metrics = info.get("metrics")
    lines = [
        "---",
        "library_name: sentence-transformers",
        "pipeline_tag: text-classification",
        "tags: [cross-encoder, logic-rag, constraint-verifier]",
        "---",
        "# logic-rag constraint verifier",
        "",
        "A sentence-transformers `CrossEncoder` with one logit: P(page satisfies constraint) "
        "after a sigmoid. Input pairs are `(constraint, page text)`, e.g. "
        "`('1990s Italian crime films', 'Title\\nText…')`. Use it with "
        "`logic_rag.verifiers.CrossEncoderVerifier(model=FOLDER)` or "
        "`logic-rag search … --verifier cross-encoder:FOLDER`.",
        "",
        f"Base model: `{info['base_model']['name']}` "
        f"(weights SHA-256 `{info['base_model']['weights_sha256'][:16]}…`).",
        "",
        "## Training data",
        "",
        "| file | SHA-256 |",
        "|---|---|",
        *(f"| {name} | `{sha[:16]}…` |" for name, sha in sorted(info["data"].items())),
        "",
        "Examples by kind: " + ", ".join(f"{k} {v:,}" for k, v in sorted(info["examples"].items())),
        "",
        "## Settings",
        "",
        "```json",
        json.dumps(info["hyperparameters"], indent=2),
        "```",
        "",
        f"Steps: {info['global_step']}, final training loss {info['training_loss']:.4f}, "
        f"wall time {info['wall_time_s']} s"
        + (f" (resumed from {info['resumed_from']})" if info.get("resumed_from") else "")
        + ".",
    ]
    if metrics:
        lines += ["", "## Evaluation", "", "```json", json.dumps(metrics, indent=2), "```"]
    return "\n".join(lines) + "\n"
