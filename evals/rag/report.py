"""``report.md`` and a self-contained ``report.html`` for a RAG evaluation.

The markdown report is for reading in a terminal or a pull request: configuration, a
table of means with counts and parse failures, paired differences for ``--compare``,
the judge meta-evaluation, and a few example answers. The HTML report holds the same
tables plus plots embedded as base64 PNG (one file to send around): a histogram of each
metric's per-item scores and, for ``--compare``, the paired differences with their
bootstrap confidence intervals (B - A) as an error-bar plot. matplotlib is imported only here,
drawing on a bare :class:`~matplotlib.figure.Figure` (no pyplot global state).
"""

from __future__ import annotations

import base64
import html
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_text

__all__ = [
    "write_reports",
    "render_markdown",
    "render_html",
    "histogram_png",
    "differences_png",
]

_EXAMPLES = 3
_ANSWER_CHARS = 500


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _metric_rows(results: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for name, block in results.get("metrics", {}).items():
        scale = block.get("scale")
        rows.append(
            [
                name,
                _fmt(block.get("mean")),
                _fmt(block.get("std")),
                _fmt(block.get("count")),
                _fmt(block.get("parse_failures")) if "parse_failures" in block else "n/a",
                f"{scale[0]:g}-{scale[1]:g}" if scale else UNITS.get(name, "0-1"),
            ]
        )
    return rows


_METRIC_HEAD = ["metric", "mean", "std", "scored", "parse failures", "scale"]

#: Metrics that are counts, not scores in [0, 1]: their unit instead of a scale.
UNITS: dict[str, str] = {"answer_words": "words"}


def unscored_judges(results: Mapping[str, Any]) -> list[str]:
    """Judge metrics for which no output parsed at all (every item a parse failure)."""
    return [
        name
        for name, block in results.get("metrics", {}).items()
        if block.get("parse_failures") and not block.get("count")
    ]


def unscored_warning(results: Mapping[str, Any]) -> str | None:
    """What to tell the user when a judge never produced a usable score, else ``None``."""
    names = unscored_judges(results)
    if not names:
        return None
    judge = results.get("config", {}).get("judge", "the judge")
    return (
        f"no {' or '.join(names)} score could be parsed from {judge}'s output (every item is "
        "a parse failure, see judge_raw in items.jsonl): the judge model is too weak to follow "
        "the rating format; pass a stronger one with --judge (e.g. qwen2.5-0.5b, a vllm: model "
        "or an openai: server)"
    )


def _compare_rows(compare: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for name, d in compare.get("paired", {}).items():
        low, high = d.get("low"), d.get("high")
        ci = f"[{_fmt(low)}, {_fmt(high)}]" if low is not None else "-"
        rows.append(
            [
                name,
                _fmt(d.get("mean_a")),
                _fmt(d.get("mean_b")),
                _fmt(d.get("diff")),
                ci,
                _fmt(d.get("p_value")),
                _fmt(d.get("n")),
                _significance(low, high),
            ]
        )
    return rows


def _significance(low: float | None, high: float | None) -> str:
    """'yes' when the paired interval excludes 0 (the difference is significant)."""
    if low is None or high is None:
        return "-"
    return "yes" if low > 0 or high < 0 else "no"


_COMPARE_HEAD = ["metric", "A", "B", "B - A", "95% CI", "p", "pairs", "significant"]


def _corpus_lines(results: Mapping[str, Any]) -> list[str]:
    """The default corpus's size and what it is, in prose."""
    corpus = results.get("corpus")
    if not corpus:
        return []
    line = (
        f"{corpus['documents']} documents: {corpus['gold_of_evaluated_questions']} shipped with "
        f"the evaluated questions (their gold), {corpus['distractors']} with other questions "
        f"(distractors); {corpus['questions_without_gold']} evaluated questions ship none."
    )
    return [line, *([corpus["note"]] if corpus.get("note") else [])]


def comparisons_of(results: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every comparison block: ``comparisons`` (several ``--compare``) or the one ``compare``."""
    blocks = results.get("comparisons")
    if blocks:
        return list(blocks)
    return [results["compare"]] if results.get("compare") else []


def _run_rows(results: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The retrievers side by side: metric means, failures, reused answers, seconds."""
    runs = results.get("runs") or []
    names: list[str] = []
    for run in runs:
        for name in run.get("metrics", {}):
            if name not in names:
                names.append(name)
    head = ["retriever", "n", *names, "parse failures", "reused", "generate s", "judge s"]
    rows = []
    for run in runs:
        timings = run.get("timings", {})
        rows.append(
            [
                str(run.get("label")),
                _fmt(run.get("n")),
                *(_fmt(run.get("metrics", {}).get(n, {}).get("mean")) for n in names),
                _fmt(run.get("parse_failures")),
                _fmt(run.get("reused")),
                _fmt(timings.get("generate_s"), 0),
                _fmt(timings.get("judge_s"), 0),
            ]
        )
    return head, rows


def _meta_rows(meta: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    keys: list[str] = []
    for block in meta.get("per_dataset", {}).values():
        for key, value in block.items():
            if key not in keys and (value is None or isinstance(value, (int, float))):
                keys.append(key)
    rows = [[ds, *(_fmt(block.get(k)) for k in keys)] for ds, block in meta["per_dataset"].items()]
    return ["dataset", *keys], rows


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _config_rows(results: Mapping[str, Any]) -> list[list[str]]:
    config = results.get("config", {})
    return [
        [k, _fmt(v) if not isinstance(v, list) else ", ".join(map(str, v))]
        for k, v in config.items()
    ]


def _timing_rows(results: Mapping[str, Any]) -> list[list[str]]:
    return [[k, _fmt(v, 1)] for k, v in results.get("timings", {}).items()]


def _examples(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return list(records[:_EXAMPLES])


def _clip(text: str, limit: int = _ANSWER_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def render_markdown(results: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str:
    """The markdown report as a string."""
    config = results.get("config", {})
    title = config.get("dataset") or config.get("mode") or "rag"
    out = [f"# RAG evaluation: {title}", ""]
    out += ["## Configuration", "", *_md_table(["setting", "value"], _config_rows(results)), ""]
    corpus = _corpus_lines(results)
    if corpus:
        out += ["## Corpus", "", *[x for line in corpus for x in (line, "")]]
    if results.get("metrics"):
        out += [
            f"## Results (n = {results.get('n')})",
            "",
            "Judge scores that could not be parsed are counted as parse failures and left out "
            "of the mean (never scored as 0). Correctness is LlamaIndex's 1-5 scale; answer "
            "relevancy is its 0-2 points divided by 2 (0-1); rougeL is ROUGE-Lsum F1 with "
            "stemming against the best reference answer; str_em is ALCE's STR-EM (share of "
            "the disambiguated questions whose short answer appears in the answer); "
            "str_em_passages is the same over the retrieved passages (ALCE's retrieval "
            "recall); gold_passage_recall is the share of the question's own passages "
            "retrieved; answer_words is the answer's length.",
            "",
            *_md_table(_METRIC_HEAD, _metric_rows(results)),
            "",
        ]
        warning = unscored_warning(results)
        if warning:
            out += [f"**Warning:** {warning[0].upper()}{warning[1:]}.", ""]
    if results.get("runs"):
        head, rows = _run_rows(results)
        out += [
            "## Retrievers",
            "",
            "Each retriever answered the same questions. Where two retrievers gave the same "
            "prompt (same passages), the answer and scores were reused, not regenerated "
            "(`reused`); seconds are generation and judging actually spent.",
            "",
            *_md_table(head, rows),
            "",
        ]
    for compare in comparisons_of(results):
        out += [
            f"## Paired comparison: A = {compare.get('a')}, B = {compare.get('b')}",
            "",
            *_md_table(_COMPARE_HEAD, _compare_rows(compare)),
            "",
        ]
        pairwise = compare.get("pairwise")
        if pairwise:
            c = pairwise["counts"]
            out += [
                "Pairwise judge (both orders, consensus): "
                f"A wins {c['a']}, B wins {c['b']}, ties {c['tie']}, "
                f"order-dependent {c['inconsistent']}, parse failures {c['failed']}; "
                f"win rate of A {_fmt(pairwise.get('win_rate_a'))}.",
                "",
            ]
    meta = results.get("judge_meta_eval")
    if meta:
        head, rows = _meta_rows(meta)
        out += [
            f"## Judge meta-evaluation ({meta.get('judge')}, {meta.get('metric')})",
            "",
            "Rank correlation between the judge's score and ALCE human utility ratings.",
            "",
            *_md_table(head, rows),
            "",
        ]
    if results.get("timings"):
        out += ["## Timings (seconds)", "", *_md_table(["stage", "s"], _timing_rows(results)), ""]
    if records:
        out += ["## Example answers", ""]
        for record in _examples(records):
            scores = ", ".join(f"{k} {_fmt(v)}" for k, v in record.get("metrics", {}).items())
            out += [
                f"**Q ({record['id']}):** {_clip(record.get('question', ''))}",
                "",
                f"**A:** {_clip(record.get('answer', '')) or '(empty)'}",
                "",
                f"Scores: {scores}",
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- plots
def _new_figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=90, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def histogram_png(
    name: str, values: Sequence[float], scale: Sequence[float] | None = None
) -> bytes:
    """PNG bytes of a histogram of one metric's per-item scores."""
    fig = _new_figure(4.0, 2.8)
    ax = fig.add_subplot()
    low, high = (scale[0], scale[1]) if scale else (0.0, 1.0)
    if scale is not None and tuple(scale) == (1.0, 5.0):  # half-point bins, centred
        bins: Any = [x - 0.25 for x in (1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5)]
    else:
        bins = 10
    fixed = not isinstance(bins, list) and name not in UNITS
    ax.hist(list(values), bins=bins, range=(low, high) if fixed else None)
    ax.set_title(f"{name} (n={len(values)})")
    ax.set_xlabel("score")
    ax.set_ylabel("items")
    return _png(fig)


def differences_png(paired: Mapping[str, Mapping[str, Any]]) -> bytes | None:
    """PNG bytes of paired differences B - A with confidence intervals, one row per metric."""
    rows = [(m, d) for m, d in paired.items() if d.get("diff") is not None]
    if not rows:
        return None
    fig = _new_figure(5.0, 0.6 + 0.5 * len(rows))
    axes = fig.subplots(len(rows), 1, squeeze=False)[:, 0]
    for ax, (metric, d) in zip(axes, rows, strict=True):
        diff = float(d["diff"])
        low = float(d["low"]) if d.get("low") is not None else diff
        high = float(d["high"]) if d.get("high") is not None else diff
        ax.errorbar([diff], [0], xerr=[[diff - low], [high - diff]], fmt="o", capsize=4)
        ax.axvline(0.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_yticks([0], [metric])
        span = max(abs(low), abs(high), 1e-6) * 1.2
        ax.set_xlim(-span, span)
    axes[-1].set_xlabel("B - A (bootstrap CI)")
    return _png(fig)


def _img(data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{encoded}">'


def _html_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def render_html(
    results: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    compare_records: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The self-contained HTML report (inline CSS, plots as base64 PNG)."""
    config = results.get("config", {})
    title = f"RAG evaluation: {config.get('dataset') or config.get('mode') or 'rag'}"
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;}"
        "table{border-collapse:collapse;margin:1em 0;}td,th{border:1px solid #ccc;"
        "padding:0.2em 0.6em;text-align:left;}img{margin:0.5em;}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        "<h2>Configuration</h2>",
        _html_table(["setting", "value"], _config_rows(results)),
    ]
    corpus = _corpus_lines(results)
    if corpus:
        parts += ["<h2>Corpus</h2>", *(f"<p>{html.escape(line)}</p>" for line in corpus)]
    if results.get("metrics"):
        parts += [
            f"<h2>Results (n = {html.escape(str(results.get('n')))})</h2>",
            "<p>Unparseable judge outputs are parse failures, left out of the means.</p>",
            _html_table(_METRIC_HEAD, _metric_rows(results)),
        ]
        figures = []
        for name, block in results["metrics"].items():
            values = [
                float(r["metrics"][name])
                for r in records
                if r.get("metrics", {}).get(name) is not None
            ]
            if values:
                figures.append(_img(histogram_png(name, values, block.get("scale")), name))
        parts.append("<div>" + "".join(figures) + "</div>")
    if results.get("runs"):
        head, rows = _run_rows(results)
        parts += ["<h2>Retrievers</h2>", _html_table(head, rows)]
    for compare in comparisons_of(results):
        parts += [
            f"<h2>Paired comparison: A = {html.escape(str(compare.get('a')))}, "
            f"B = {html.escape(str(compare.get('b')))}</h2>",
            _html_table(_COMPARE_HEAD, _compare_rows(compare)),
        ]
        png = differences_png(compare.get("paired", {}))
        if png is not None:
            parts.append(_img(png, "paired differences"))
        pairwise = compare.get("pairwise")
        if pairwise:
            parts.append(
                _html_table(
                    ["A wins", "B wins", "ties", "order-dependent", "parse failures", "win rate A"],
                    [
                        [
                            *(
                                str(pairwise["counts"][k])
                                for k in ("a", "b", "tie", "inconsistent", "failed")
                            ),
                            _fmt(pairwise.get("win_rate_a")),
                        ]
                    ],
                )
            )
    meta = results.get("judge_meta_eval")
    if meta:
        head, rows = _meta_rows(meta)
        parts += [
            f"<h2>Judge meta-evaluation ({html.escape(str(meta.get('judge')))})</h2>",
            _html_table(head, rows),
        ]
    if results.get("timings"):
        parts += ["<h2>Timings (seconds)</h2>", _html_table(["stage", "s"], _timing_rows(results))]
    if records:
        parts.append("<h2>Example answers</h2>")
        for record in _examples(records):
            scores = ", ".join(f"{k} {_fmt(v)}" for k, v in record.get("metrics", {}).items())
            parts.append(
                f"<p><b>Q ({html.escape(str(record['id']))}):</b> "
                f"{html.escape(_clip(record.get('question', '')))}<br>"
                f"<b>A:</b> {html.escape(_clip(record.get('answer', '')) or '(empty)')}<br>"
                f"<i>{html.escape(scores)}</i></p>"
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_reports(
    out: str | os.PathLike[str],
    results: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    compare_records: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[Path, Path]:
    """Write ``OUT/report.md`` and ``OUT/report.html`` atomically; returns their paths."""
    folder = Path(out)
    md, page = folder / "report.md", folder / "report.html"
    atomic_write_text(md, render_markdown(results, records))
    atomic_write_text(page, render_html(results, records, compare_records))
    return md, page
