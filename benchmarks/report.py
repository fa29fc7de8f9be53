"""The benchmark report: every measured ratio against its peer, as markdown and one PNG.

``python -m benchmarks.run`` writes ``bench.json``; :func:`write_report` turns it into
``bench.md`` (the ratios, each with its peer and target, then the full text table) and
``bench.png`` (one bar per ratio, on a log scale, with 1x and each target marked), beside
the JSON. ``python -m benchmarks.report runs/bench/bench.json`` re-renders an old run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Ratio", "ratios", "render_markdown", "write_report"]


@dataclass(frozen=True)
class Ratio:
    """One comparison measured in one run: ``value`` = ours / peer (lower is better
    unless ``higher_is_better``), with the target it must meet, if any."""

    section: str
    name: str
    peer: str
    value: float
    target: float | None = None
    higher_is_better: bool = False

    @property
    def meets(self) -> bool | None:
        if self.target is None:
            return None
        return self.value >= self.target if self.higher_is_better else self.value <= self.target


def ratios(result: dict[str, Any]) -> list[Ratio]:
    """Every ratio a result holds, in report order."""
    out: list[Ratio] = []
    dense = result.get("dense")
    if dense:
        for row in dense["throughput"]:
            out.append(
                Ratio(
                    "dense",
                    f"index docs/s @ {row['documents']:,}",
                    "raw sentence-transformers + FAISS",
                    row["ratio"],
                    row.get("target"),
                    higher_is_better=True,
                )
            )
        for row in dense["latency"]:
            out.append(
                Ratio(
                    "dense",
                    f"query p50 @ {row['documents']:,}",
                    "raw sentence-transformers + FAISS",
                    row["p50_ratio"],
                    row.get("target_p50_ratio"),
                )
            )
    logic = result.get("logic_latency")
    if logic:
        for row in logic["strategies"]:
            if row["strategy"] != "vanilla":
                out.append(
                    Ratio(
                        "logic",
                        f"{row['strategy']} p50 @ {logic['documents']:,}",
                        "vanilla",
                        row["p50_ratio"],
                        row.get("target_ratio"),
                    )
                )
    quality = result.get("quality")
    if quality and "skipped" not in quality:
        q, v = quality["quality"], quality["vanilla"]
        if v.get("p50_s"):
            out.append(Ratio("quality", "quality-mode p50", "vanilla", q["p50_s"] / v["p50_s"]))
        out.append(
            Ratio("quality", "LLM calls / all pairs", "all-pairs verifier", q["call_share"], 0.2)
        )
    milvus = result.get("milvus")
    if milvus:
        for row in milvus["strategies"]:
            target = 2.0 if row["strategy"] != "vanilla" else None
            out.append(
                Ratio(
                    "milvus",
                    f"{row['strategy']} p50 @ {milvus['documents']:,}",
                    "FAISS",
                    row["p50_ratio"],
                    target,
                )
            )
            if "cold_p50_ratio" in row:  # vectors not yet in the client cache
                out.append(
                    Ratio(
                        "milvus",
                        f"{row['strategy']} cold p50 @ {milvus['documents']:,}",
                        "FAISS",
                        row["cold_p50_ratio"],
                        target,
                    )
                )
    reranker = result.get("reranker")
    if reranker:
        out.append(Ratio("reranker", "cached p50", "uncached", reranker["p50_ratio"]))
    against = result.get("reranker_vs_retriever")
    if against:
        out.append(
            Ratio(
                "reranker",
                f"LlamaIndex reranker p50 ({against['candidates']} nodes, {against['strategy']})",
                "retriever, same candidates",
                against["p50_ratio"],
                1.2,
            )
        )
    loaded = result.get("loaded_indexing")
    if loaded:
        for name, row in loaded["loaded"].items():
            out.append(
                Ratio(
                    "loaded indexing",
                    f"beside {loaded['competitors']} {loaded['competitor']} "
                    f"x{loaded.get('competitor_threads', 2)} threads ({name})",
                    "quiet, same run",
                    row["ratio_to_quiet"],
                    # 2.5x of one core each; scaled when the neighbours have more threads.
                    2.5 * loaded.get("fair_share_ratio", 2.0) / 2.0,
                )
            )
    million = result.get("million")
    if million:
        docs = f"{million['documents']:,}"
        out.append(
            Ratio(
                "million",
                f"rerank p50 @ {docs}",
                "vanilla",
                million["query"]["p50_ratio"],
                million["targets"]["rerank_p50_ratio"],
            )
        )
        for stage, gib in million["peak_rss_gib"].items():
            out.append(
                Ratio(
                    "million",
                    f"{stage} peak RSS @ {docs} (fraction of the budget)",
                    f"{million['targets']['peak_rss_gib']:g} GiB",
                    gib / million["targets"]["peak_rss_gib"],
                    1.0,
                )
            )
        recall = million.get("recall")
        for dtype, row in (recall or {}).get("dtypes", {}).items():
            out.append(
                Ratio(
                    "million",
                    f"{dtype} sentences: rerank top-10 overlap @ {recall['documents']:,}",
                    "float32 sentences",
                    row["top10_overlap"],
                    higher_is_better=True,
                )
            )
    scale = result.get("scale")
    if scale:
        for row in scale.get("ratios", []):
            out.append(Ratio("scale", row["name"], row["peer"], row["value"], row.get("target")))
    return out


def render_markdown(result: dict[str, Any], text_table: str, png_name: str | None) -> str:
    """The report: the ratio table, the figure, then the full text table."""
    lines = ["# logic-rag benchmarks", ""]
    if result.get("command"):
        lines.append(f"Command: `{result['command']}`")
    machine = result.get("machine", {})
    if machine:
        lines.append(
            f"Machine: {machine.get('cpu_model')}, {machine.get('usable_cores')} cores, GPU "
            f"{machine.get('gpu') or 'none'}; load "
            f"average {result.get('load_average_start')} -> {result.get('load_average_end')}."
        )
    lines += ["", "| section | measure | peer (same run) | ratio | target | met |"]
    lines.append("|---|---|---|---:|---|---|")
    for r in ratios(result):
        target = (
            "-" if r.target is None else ("≥ " if r.higher_is_better else "≤ ") + f"{r.target:g}"
        )
        met = {True: "yes", False: "**no**", None: "-"}[r.meets]
        lines.append(f"| {r.section} | {r.name} | {r.peer} | {r.value:.3g} | {target} | {met} |")
    if png_name:
        lines += ["", f"![ratios]({png_name})"]
    if text_table.strip():
        lines += ["", "```text", text_table.rstrip(), "```"]
    lines.append("")
    return "\n".join(lines)


def as_run_result(data: dict[str, Any]) -> dict[str, Any]:
    """A ``benchmarks.run`` result from any of its benchmarks' JSON files.

    ``bench_loaded_indexing`` and ``bench_million`` run alone write their own dict; it is
    put under the key ``benchmarks.run`` would have used.
    """
    if "quiet_s" in data and "loaded" in data:
        return {"loaded_indexing": data}
    if data.get("benchmark") == "million":
        return {"million": data, **{k: data[k] for k in ("command", "machine") if k in data}}
    return data


def _png(result: dict[str, Any] | list[Ratio], path: Path) -> bool:
    rows = [r for r in (ratios(result) if isinstance(result, dict) else result) if r.value > 0]
    if not rows:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r.section}: {r.name} / {r.peer}" for r in rows]
    # Wide enough for the longest label beside a plot of ~5 inches.
    width = 5 + 0.06 * max(len(label) for label in labels)
    fig, ax = plt.subplots(figsize=(width, 0.35 * len(rows) + 1.2))
    colors = [
        "tab:gray" if r.meets is None else ("tab:green" if r.meets else "tab:red") for r in rows
    ]
    y = list(range(len(rows)))[::-1]
    ax.barh(y, [r.value for r in rows], color=colors)
    for yi, r in zip(y, rows, strict=True):
        if r.target is not None:
            ax.plot([r.target, r.target], [yi - 0.4, yi + 0.4], color="black", linewidth=1.5)
    ax.axvline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xlabel("ratio to the peer measured in the same run (log); black tick = target")
    fig.tight_layout()
    tmp = path.with_suffix(".png.tmp")
    fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    tmp.replace(path)
    return True


def write_report(result: dict[str, Any], json_path: Path, text_table: str) -> tuple[Path, Path]:
    """Write ``<json>.md`` and ``<json>.png`` beside ``json_path``; returns both paths."""
    from logic_rag.atomic import atomic_write_text

    md, png = json_path.with_suffix(".md"), json_path.with_suffix(".png")
    has_png = _png(result, png)
    atomic_write_text(md, render_markdown(result, text_table, png.name if has_png else None))
    return md, png


def write_combined(results: Sequence[tuple[str, dict[str, Any]]], md: Path) -> tuple[Path, Path]:
    """One report of several runs: each run's ratios against peers of that same run.

    ``results`` are ``(name, result)`` pairs; the figure holds every run's ratios, each
    labelled with its run's name.
    """
    from benchmarks.table import format_table
    from logic_rag.atomic import atomic_write_text

    png = md.with_suffix(".png")
    every: list[Ratio] = []
    for name, result in results:
        for r in ratios(result):
            every.append(
                Ratio(f"{name}: {r.section}", r.name, r.peer, r.value, r.target, r.higher_is_better)
            )
    has_png = _png(every, png)
    lines = ["# logic-rag benchmarks", ""]
    lines.append(f"{len(results)} runs; every ratio is against a peer measured in the same run.")
    if has_png:
        lines += ["", f"![ratios]({png.name})"]
    for name, result in results:
        block = render_markdown(result, format_table(result), None).splitlines()
        lines += ["", f"## {name}", *block[2:]]  # its own title becomes the section title
    atomic_write_text(md, "\n".join(lines) + "\n")
    return md, png


def main(argv: Sequence[str] | None = None) -> int:
    """``BENCH.json``: its report beside it; ``--out REPORT.md A.json B.json ...``: one
    report of several runs (e.g. CPU and GPU, or benchmarks run one at a time)."""
    args = list(sys.argv[1:] if argv is None else argv)
    out: Path | None = None
    if len(args) >= 2 and args[0] == "--out":
        out, args = Path(args[1]), args[2:]
    if not args or (out is None and len(args) != 1):
        print(
            "usage: python -m benchmarks.report BENCH.json | --out REPORT.md A.json [B.json ...]",
            file=sys.stderr,
        )
        return 2
    from benchmarks.table import format_table

    loaded: list[tuple[str, dict[str, Any]]] = []
    for arg in args:
        path = Path(arg)
        try:
            loaded.append((path.stem, as_run_result(json.loads(path.read_text(encoding="utf-8")))))
        except (OSError, json.JSONDecodeError) as exc:
            print(f"benchmarks.report: error: {path}: {exc}", file=sys.stderr)
            return 2
    if out is None:
        md, _ = write_report(loaded[0][1], Path(args[0]), format_table(loaded[0][1]))
    else:
        md, _ = write_combined(loaded, out)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
