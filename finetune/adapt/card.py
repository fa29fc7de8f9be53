"""Phase 7: ``README.md``, the model card of an adapted folder.

It says what a reader needs to trust (or distrust) the products: the teacher, where the
atoms came from and how many, how many pairs were labelled and at what rate, the composed
sets by shape, the seconds of every phase, the calibration's held-out check, and dev
numbers when the caller measured some (otherwise it says that none were measured).
"""

from __future__ import annotations

from typing import Any

__all__ = ["render_card"]


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def render_card(
    fingerprint: dict[str, Any],
    phases: dict[str, dict[str, Any]],
    *,
    dev: dict[str, Any] | None = None,
) -> str:
    """The card's Markdown from the run's fingerprint and finished phases."""
    settings = fingerprint.get("settings", {})
    atoms = phases.get("atoms", {})
    labels = phases.get("labels", {})
    composed = phases.get("composed", {})
    calibration = phases.get("calibration", {})
    lines = [
        "# logic-rag adapt: a retriever taught by an LLM",
        "",
        "Made by `logic-rag adapt` from an index and, optionally, a log of questions; no "
        "gold labels were used. Products in this folder:",
        "",
        "- `model/`: the bi-encoder fine-tuned with "
        f"{settings.get('loss', '?')} on {_trained_on(settings)} "
        "(`logic-rag index --model DIR/model`);",
        "- `verifier/`: a cross-encoder distilled from the teacher's verdicts "
        "(`--verifier cross-encoder:DIR/verifier`);",
        "- `calibration.json`: a monotone map from the embedding verifier's p to P(the "
        "teacher says yes), for the index it was fitted on "
        "(`logic-rag search INDEX ... --verdict-calibration DIR/calibration.json`, or "
        "`LogicSettings(verdict_calibration=...)` as a strategy's `logic`: the ✓ / ✗ / ? "
        "of embedding verdicts).",
        "",
        "## Teacher",
        "",
        f"`{fingerprint.get('verifier', '?')}` (fingerprint `{fingerprint.get('teacher', '?')}`); "
        f"a pair is a member when P(yes) >= {settings.get('yes_threshold', '?')}.",
        "",
        "## Atoms",
        "",
        f"{len(atoms.get('atoms', []) or [])} atoms in {atoms.get('groups', '?')} groups, "
        f"from {atoms.get('source', '?')}: {atoms.get('how', '')}.",
        "",
        "## Pairs",
        "",
        f"{labels.get('pairs_planned', '?')} (atom, page) pairs labelled (bound "
        f"--max-pairs {settings.get('max_pairs', '?')}; per atom its top "
        f"{settings.get('top_k', '?')} pages plus {settings.get('random_pages', '?')} random "
        f"ones, shared within a group); {labels.get('yes', '?')} said yes "
        f"({labels.get('yes_rate', '?')}). Teacher rate in the last session: "
        f"{labels.get('pairs_per_second', '?')} pairs/s over the "
        f"{labels.get('pairs_labelled_now', '?')} pairs it labelled in "
        f"{labels.get('teacher_seconds', '?')} s (answers from the verifier's cache or a "
        "replay count as labelled, so a fast rate there is not the LLM's).",
        "",
        "## Composed training sets",
        "",
        f"{composed.get('queries', '?')} queries over {composed.get('pages', '?')} labelled "
        f"pages{_questions_kept(composed)}; {composed.get('dropped_unreadable', 0)} composed "
        "texts dropped because the rules "
        f"decomposer would read them otherwise, {composed.get('dropped_size', 0)} for their "
        "set size.",
        "",
        _row("shape", "queries"),
        _row("---", "---:"),
    ]
    for shape, count in sorted((composed.get("by_shape") or {}).items()):
        lines.append(_row(shape.replace("|", "\\|"), count))  # a bare | splits the cell
    lines += ["", "## Seconds per phase", "", _row("phase", "seconds"), _row("---", "---:")]
    for phase, facts in phases.items():
        lines.append(_row(phase, facts.get("seconds", "?")))
    held = calibration.get("held_out") or {}
    lines += ["", "## Calibration", ""]
    if "brier_raw" in held:
        lines.append(
            f"On {held['held_out_pairs']} pairs of {held['held_out_atoms']} held-out atoms: "
            f"Brier {held['brier_raw']} -> {held['brier_calibrated']}, ECE {held['ece_raw']} "
            f"-> {held['ece_calibrated']} (raw embedding p -> calibrated)."
        )
    else:
        lines.append("Too few atoms for a held-out check.")
    lines += ["", "## Dev numbers", ""]
    if dev:
        lines += [_row("metric", "value"), _row("---", "---:")]
        lines += [_row(k, v) for k, v in sorted(dev.items())]
    else:
        lines.append("None measured by this run.")
    lines += ["", "## Settings", "", "```"]
    lines += [f"{k} = {v!r}" for k, v in sorted(settings.items())]
    lines += ["```", ""]
    return "\n".join(lines)


def _trained_on(settings: dict[str, Any]) -> str:
    what = {
        "composed": "the composed sets",
        "questions": "the questions with their sets",
        "both": "the questions and the composed sets",
    }.get(str(settings.get("train_queries", "composed")), "?")
    if settings.get("hard_negatives"):
        what += " (the judged non-members as known negatives)"
    return what


def _questions_kept(composed: dict[str, Any]) -> str:
    asked = composed.get("from_questions")
    if not isinstance(asked, dict):
        return ""
    return (
        f" ({asked.get('questions', '?')} of them the questions themselves; "
        f"{asked.get('unlabelled', 0)} questions had an unlabelled atom, "
        f"{asked.get('dropped_size', 0)} a set outside the size bounds)"
    )
