"""Writing evaluation results: ``results.json``, markdown tables and figures.

Every file is written atomically (temporary file in the same folder, then
:func:`os.replace`) so an interrupted run never leaves half a report. Figures use
matplotlib's Agg canvas on a bare :class:`~matplotlib.figure.Figure` (no pyplot, so no
global backend state and no display needed); matplotlib is imported only when a figure
is drawn.

``results.json`` has exactly this shape (``extra`` only when given)::

    {"strategy": str, "model": str,
     "metrics": {"all": {metric: number|null, ...},
                 "by_template": {template: {metric: number|null, ...}, ...}},
     "extra": {...}}
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_open, atomic_write_json, atomic_write_text
from logic_rag.evals.quest.data import QUEST_TEMPLATES

__all__ = [
    "RESULTS_SCHEMA",
    "RESULTS_FILENAME",
    "write_results",
    "load_results",
    "format_overall_table",
    "format_table",
    "fillable_metrics",
    "write_report_md",
    "plot_recall_by_template",
    "plot_similarity_scatter",
]

RESULTS_FILENAME = "results.json"

_METRIC_BLOCK: dict[str, Any] = {
    "type": "object",
    "additionalProperties": {"type": ["number", "null"]},
}

#: JSON Schema of ``results.json`` (draft 2020-12).
RESULTS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["strategy", "model", "metrics"],
    "additionalProperties": False,
    "properties": {
        "strategy": {"type": "string", "minLength": 1},
        "model": {"type": "string", "minLength": 1},
        "metrics": {
            "type": "object",
            "required": ["all", "by_template"],
            "additionalProperties": False,
            "properties": {
                "all": _METRIC_BLOCK,
                "by_template": {"type": "object", "additionalProperties": _METRIC_BLOCK},
            },
        },
        "extra": {"type": "object"},
        # Seconds per query and, for a cascade, LLM calls (logic_rag.evals.quest.costs).
        "costs": {"type": "object"},
    },
}

DEFAULT_TABLE_METRICS: tuple[str, ...] = ("R@20", "MRecall@100")
DEFAULT_OVERALL_METRICS: tuple[str, ...] = (
    "P@1",
    "R@5",
    "R@20",
    "R@100",
    "R@1000",
    "MRecall@100",
    "set_F1",
    "violation_rate",
    "pairwise_order",
)


def _clean_block(block: Any, where: str) -> dict[str, float | int | None]:
    """Copy a metric block with plain Python numbers; reject what JSON cannot hold."""
    if not isinstance(block, Mapping):
        raise TypeError(f"{where} must be a mapping of metric -> number, got {type(block)}")
    out: dict[str, float | int | None] = {}
    for name, value in block.items():
        if value is None:
            out[str(name)] = None
            continue
        if isinstance(value, bool):
            raise TypeError(f"{where}[{name!r}] is a bool, expected a number or None")
        try:
            number = value.item() if hasattr(value, "item") else value  # numpy scalars
        except (TypeError, ValueError):
            number = value
        if isinstance(number, int):
            out[str(name)] = number
        elif isinstance(number, float) and math.isfinite(number):
            out[str(name)] = number
        else:
            raise ValueError(
                f"{where}[{name!r}] = {value!r} is not a finite number; use None for "
                "'not applicable'"
            )
    return out


def _metrics_payload(metrics: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(metrics, Mapping) or "all" not in metrics or "by_template" not in metrics:
        raise ValueError(
            "metrics must have 'all' and 'by_template' (the dict evaluate_run returns)"
        )
    by_template = metrics["by_template"]
    if not isinstance(by_template, Mapping):
        raise TypeError("metrics['by_template'] must be a mapping of template -> metrics")
    return {
        "all": _clean_block(metrics["all"], "metrics['all']"),
        "by_template": {
            str(t): _clean_block(b, f"metrics['by_template'][{t!r}]")
            for t, b in by_template.items()
        },
    }


def write_results(
    out_dir: str | os.PathLike[str],
    *,
    strategy: str,
    model: str,
    metrics: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``out_dir/results.json`` atomically and return its path.

    ``metrics`` is what :func:`~logic_rag.evals.quest.metrics.evaluate_run` returns;
    only ``all`` and ``by_template`` are kept (per-query rows belong elsewhere).
    ``extra`` (JSON-serialisable) is stored under ``"extra"`` when given.
    """
    for name, value in (("strategy", strategy), ("model", model)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    payload: dict[str, Any] = {
        "strategy": strategy,
        "model": model,
        "metrics": _metrics_payload(metrics),
    }
    if isinstance(metrics.get("costs"), Mapping):
        # Seconds per query and, for a cascade, LLM calls (evals.quest.costs).
        payload["costs"] = json.loads(json.dumps(dict(metrics["costs"]), allow_nan=False))
    if extra is not None:
        if not isinstance(extra, Mapping):
            raise TypeError(f"extra must be a mapping, got {type(extra).__name__}")
        payload["extra"] = json.loads(json.dumps(dict(extra), allow_nan=False))
    path = Path(out_dir) / RESULTS_FILENAME
    atomic_write_json(path, payload)
    return path


def load_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a ``results.json`` (or the folder holding one) and check its shape."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILENAME
    with path.open("r", encoding="utf-8") as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or set(data) - {"strategy", "model", "metrics", "extra", "costs"}:
        raise ValueError(f"{path}: not a results.json (unexpected top-level keys)")
    for key in ("strategy", "model"):
        if not isinstance(data.get(key), str):
            raise ValueError(f"{path}: '{key}' must be a string")
    data["metrics"] = _metrics_payload(data.get("metrics"))
    return data


def _metrics_of(result: Mapping[str, Any]) -> Mapping[str, Any]:
    """Accept a results.json dict or an evaluate_run dict; return the metrics part."""
    if "metrics" in result:
        return result["metrics"]
    if "all" in result and "by_template" in result:
        return result
    raise ValueError("expected a results.json dict or an evaluate_run dict")


def _ordered_templates(results_by_strategy: Mapping[str, Mapping[str, Any]]) -> list[str]:
    found: set[str] = set()
    for result in results_by_strategy.values():
        found.update(_metrics_of(result)["by_template"])
    known = [t for t in QUEST_TEMPLATES if t in found]
    return known + sorted(found - set(QUEST_TEMPLATES))


_NOT_COMPUTED = "(not computed for these queries)\n"

#: Why a metric can be missing from every strategy's results.
_WHY_MISSING = {
    "violation_rate": "needs atom gold sets for the negated atoms (atoms.jsonl beside the "
    "queries, or --atoms) and queries with a NOT",
    "pairwise_order": "needs atom gold sets (atoms.jsonl or --atoms)",
}


def fillable_metrics(parts: Mapping[str, Mapping[str, Any]], metrics: Sequence[str]) -> list[str]:
    """The ``metrics`` that at least one strategy has a value for (overall or in some
    template): a column of dashes says nothing, so the tables leave such metrics out."""
    kept = []
    for metric in metrics:
        for part in parts.values():
            blocks = [part.get("all") or {}, *(part.get("by_template") or {}).values()]
            if any(isinstance(b, Mapping) and b.get(metric) is not None for b in blocks):
                kept.append(metric)
                break
    return kept


def _missing_note(metrics: Sequence[str]) -> str:
    reasons = "; ".join(f"`{m}` {_WHY_MISSING.get(m, 'could not be computed')}" for m in metrics)
    return f"Not computed, so not shown: {reasons}."


def _model_beside(report: Path, strategy: str) -> str | None:
    """The model recorded in ``STRATEGY/results.json`` next to the report, if any."""
    try:
        data = json.loads((report.parent / strategy / RESULTS_FILENAME).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) and model else None


def _fmt(value: Any, digits: int) -> str:
    if value is None:
        return "–"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{float(value):.{digits}f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _template_label(template: str) -> str:
    # QUEST templates are made of underscores, which markdown would read as emphasis.
    return f"`{template}`"


def format_table(
    results_by_strategy: Mapping[str, Mapping[str, Any]],
    /,
    metrics: Sequence[str] = DEFAULT_TABLE_METRICS,
    *,
    templates: Sequence[str] | None = None,
    include_all: bool = True,
    digits: int = 3,
) -> str:
    """Markdown table: one row per template, one column per (strategy, metric).

    ``results_by_strategy`` maps a strategy name to its ``results.json`` dict (or the
    ``evaluate_run`` dict). Templates come in QUEST's order, unknown ones after, then an
    ``all`` row. ``n`` is taken from the first strategy that has the template. Missing or
    not-applicable values print as ``–``.
    """
    if not results_by_strategy:
        raise ValueError("no strategies to tabulate")
    if not metrics:
        raise ValueError("no metrics to tabulate")
    parts = {name: _metrics_of(result) for name, result in results_by_strategy.items()}
    rows_for = list(templates) if templates is not None else _ordered_templates(parts)
    metrics = fillable_metrics(parts, metrics)
    if not metrics:
        return _NOT_COMPUTED
    header = ["template", "n"] + [
        _cell(f"{strategy} {metric}") for strategy in parts for metric in metrics
    ]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]

    def row(label: str, blocks: list[Mapping[str, Any] | None]) -> str:
        n = next((b.get("n") for b in blocks if b is not None and "n" in b), None)
        cells = [label, _fmt(n, digits)]
        for block in blocks:
            for metric in metrics:
                cells.append(_fmt(None if block is None else block.get(metric), digits))
        return "| " + " | ".join(cells) + " |"

    for template in rows_for:
        blocks = [p["by_template"].get(template) for p in parts.values()]
        lines.append(row(_cell(_template_label(template)), blocks))
    if include_all:
        lines.append(row("**all**", [p["all"] for p in parts.values()]))
    return "\n".join(lines) + "\n"


def format_overall_table(
    results_by_strategy: Mapping[str, Mapping[str, Any]],
    /,
    metrics: Sequence[str] = DEFAULT_OVERALL_METRICS,
    *,
    digits: int = 3,
    models: Mapping[str, str] | None = None,
) -> str:
    """Markdown table: one row per strategy (with its model), one column per metric (all).

    The model comes from the result (a ``results.json`` dict), else from ``models``
    (strategy -> model); metrics no strategy could compute are left out (see
    :func:`fillable_metrics`).
    """
    if not results_by_strategy:
        raise ValueError("no strategies to tabulate")
    parts = {name: _metrics_of(result) for name, result in results_by_strategy.items()}
    metrics = fillable_metrics(parts, metrics)
    lines = [
        "| strategy | model | n | " + " | ".join(_cell(m) for m in metrics) + " |",
        "|---|---|---:|" + "---:|" * len(metrics),
    ]
    for name, result in results_by_strategy.items():
        block = _metrics_of(result)["all"]
        model = result.get("model") if "metrics" in result else None
        model = model or (models or {}).get(name) or "not recorded"
        cells = [_cell(name), _cell(str(model)), _fmt(block.get("n"), digits)]
        cells += [_fmt(block.get(m), digits) for m in metrics]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_report_md(
    path: str | os.PathLike[str],
    results_by_strategy: Mapping[str, Mapping[str, Any]],
    *,
    title: str = "QUEST evaluation",
    overall_metrics: Sequence[str] = DEFAULT_OVERALL_METRICS,
    template_metrics: Sequence[str] = DEFAULT_TABLE_METRICS,
    figures: Iterable[str | os.PathLike[str]] = (),
    notes: str | None = None,
    model: str | None = None,
) -> Path:
    """Write a markdown report: overall table, one per-template table per metric, figures.

    Figure links are made relative to the report's folder when possible. Each strategy's
    model comes from its result, else ``model``, else the ``results.json`` written beside
    the report (``STRATEGY/results.json``). A metric that no strategy could compute (for
    example ``violation_rate`` without atom gold sets) gets no table, and the report says
    why it is missing instead of printing a column of dashes.
    """
    path = Path(path)
    out = [f"# {title}", ""]
    if notes:
        out += [notes.strip(), ""]
    models = {
        name: model or _model_beside(path, name) or "not recorded" for name in results_by_strategy
    }
    out += [
        "## Overall",
        "",
        format_overall_table(results_by_strategy, overall_metrics, models=models),
    ]
    parts = {name: _metrics_of(result) for name, result in results_by_strategy.items()}
    missing = [
        m for m in (*overall_metrics, *template_metrics) if not fillable_metrics(parts, (m,))
    ]
    if missing:
        out += [_missing_note(sorted(set(missing), key=list(missing).index)), ""]
    for metric in template_metrics:
        if metric in missing:
            continue
        out += [f"## {metric} by template", ""]
        out.append(format_table(results_by_strategy, (metric,)))
    figure_list = list(figures)
    if figure_list:
        out += ["## Figures", ""]
        for figure in figure_list:
            fig_path = Path(figure)
            try:
                link = os.path.relpath(fig_path.resolve(), path.parent.resolve())
            except ValueError:  # different drive (Windows)
                link = str(fig_path)
            out += [f"![{fig_path.stem}]({Path(link).as_posix()})", ""]
    atomic_write_text(path, "\n".join(out).rstrip() + "\n")
    return path


def _new_figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save_png(fig: Any, path: str | os.PathLike[str]) -> Path:
    target = Path(path)
    with atomic_open(target, "wb") as handle:
        fig.savefig(handle, format="png")
    return target


def plot_recall_by_template(
    results_by_strategy: Mapping[str, Mapping[str, Any]],
    path: str | os.PathLike[str],
    *,
    metric: str = "R@20",
    templates: Sequence[str] | None = None,
    title: str | None = None,
) -> Path:
    """Grouped bar chart of ``metric`` (default R@20) per template, one bar per strategy.

    Missing values are drawn as empty slots (no bar), never as 0. Returns the PNG path.
    """
    if not results_by_strategy:
        raise ValueError("no strategies to plot")
    parts = {name: _metrics_of(result) for name, result in results_by_strategy.items()}
    rows = list(templates) if templates is not None else _ordered_templates(parts)
    if not rows:
        raise ValueError("no templates to plot")
    n_strat = len(parts)
    width = 0.8 / n_strat
    fig = _new_figure(max(6.0, 1.1 * len(rows) + 2.0), 4.5)
    ax = fig.add_subplot(1, 1, 1)
    for s_idx, (name, part) in enumerate(parts.items()):
        xs, heights = [], []
        for t_idx, template in enumerate(rows):
            value = part["by_template"].get(template, {}).get(metric)
            if value is not None:
                xs.append(t_idx - 0.4 + width * (s_idx + 0.5))
                heights.append(float(value))
        ax.bar(xs, heights, width=width, label=name)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(rows, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(metric)
    ax.set_ylim(0.0, 1.0)
    ax.set_title(title or f"{metric} by QUEST template")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _save_png(fig, path)


def plot_similarity_scatter(
    x: Sequence[float],
    y: Sequence[float],
    labels: Sequence[str],
    path: str | os.PathLike[str],
    *,
    xlabel: str = 'similarity to "A and B"',
    ylabel: str = 'similarity to "A but not B"',
    title: str | None = None,
) -> Path:
    """Scatter of document similarities to two queries, coloured by document group.

    The picture of LogiCoL's Figure 2: each point is a document, ``x`` its similarity to
    the query "A and B", ``y`` to "A but not B", and ``labels`` its group (e.g.
    ``"A∩B"``, ``"A∖B"``, ``"other"``). A logic-aware encoder separates the groups on
    either side of the diagonal, which is drawn for reference. Returns the PNG path.
    """
    if not (len(x) == len(y) == len(labels)):
        raise ValueError(f"x, y, labels differ in length: {len(x)}, {len(y)}, {len(labels)}")
    if len(x) == 0:
        raise ValueError("nothing to plot: x is empty")
    xs = [float(v) for v in x]
    ys = [float(v) for v in y]
    if not all(math.isfinite(v) for v in xs + ys):
        raise ValueError("x and y must be finite numbers")
    groups: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(str(label), []).append(i)
    fig = _new_figure(5.5, 5.0)
    ax = fig.add_subplot(1, 1, 1)
    for label, idx in groups.items():
        ax.scatter([xs[i] for i in idx], [ys[i] for i in idx], s=12, alpha=0.7, label=label)
    low, high = min(xs + ys), max(xs + ys)
    ax.plot([low, high], [low, high], linestyle="--", color="grey", linewidth=0.8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8, markerscale=1.5)
    return _save_png(fig, path)
