"""The plain-text table of a ``benchmarks.run`` result.

Its own module, below both :mod:`benchmarks.run` (which prints it after a run) and
:mod:`benchmarks.report` (which puts it in the markdown report, also for old runs), so
that neither imports the other back.
"""

from __future__ import annotations

from typing import Any

__all__ = ["format_table"]


def _fmt(value: float) -> str:
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def format_table(result: dict[str, Any]) -> str:
    """A plain-text table of a result dict produced by :func:`benchmarks.run.main`."""
    lines = []
    dense = result.get("dense")
    if dense:
        lines.append(f"dense engine vs raw sentence-transformers + IndexFlatIP ({dense['model']})")
        lines.append(f"{'measure':<34}{'logic-rag':>12}{'raw':>12}{'ratio':>8}  target")
        for row in dense["throughput"]:
            lines.append(
                f"{'docs/s @ ' + format(row['documents'], ','):<34}"
                f"{_fmt(row['logic_rag_docs_per_s']):>12}{_fmt(row['raw_docs_per_s']):>12}"
                f"{row['ratio']:>8.3f}  >= {row['target']} "
                f"{'ok' if row['meets_target'] else 'MISSED'}"
            )
        for row in dense["latency"]:
            tag = format(row["documents"], ",")
            if row["synthetic_documents"]:
                tag += "*"
            for p in ("p50", "p95"):
                ours, theirs = row["logic_rag"][f"{p}_ms"], row["raw"][f"{p}_ms"]
                target = ""
                if p == "p50":
                    ok = "ok" if row["meets_target"] else "MISSED"
                    target = f"<= {row['target_p50_ratio']} {ok}"
                lines.append(
                    f"{'query ' + p + ' ms @ ' + tag:<34}{_fmt(ours):>12}{_fmt(theirs):>12}"
                    f"{row[p + '_ratio']:>8.3f}  {target}"
                )
        if any(r["synthetic_documents"] for r in dense["latency"]):
            lines.append(
                f"* beyond {dense['encoded_documents']:,} encoded documents, "
                "noisy copies of their vectors"
            )
        lines.append("")
    logic = result.get("logic_latency")
    if logic:
        lines.append(
            f"logical strategies, {logic['queries']} three-atom queries over "
            f"{logic['documents']:,} documents ({logic['sampled_documents']:,} encoded, "
            f"{logic['sentences']:,} sentence vectors; {logic['model']})"
        )
        lines.append(f"{'strategy':<14}{'p50 ms':>10}{'p95 ms':>10}{'p50/van':>9}{'p95/van':>9}")
        for row in logic["strategies"]:
            target = ""
            if "target_ratio" in row:
                ok = "ok" if row["meets_target"] else "MISSED"
                target = f"  <= {row['target_ratio']} {ok}"
            lines.append(
                f"{row['strategy']:<14}{_fmt(row['p50_ms']):>10}{_fmt(row['p95_ms']):>10}"
                f"{row['p50_ratio']:>9.2f}{row['p95_ratio']:>9.2f}{target}"
            )
        lines.append("")
    quality = result.get("quality")
    if quality and "skipped" in quality:
        lines.append(f"quality mode: skipped ({quality['skipped']})\n")
    elif quality:
        q, v = quality["quality"], quality["vanilla"]
        lines.append(
            f"quality mode, {quality['queries']} QUEST-attr dev queries, "
            f"{quality['candidates']} candidates ({quality['model']}, LLM {quality['llm']})"
        )
        lines.append(f"{'':<22}{'p50 s':>9}{'p95 s':>9}{'LLM calls':>11}{'of all pairs':>14}")
        lines.append(f"{'vanilla':<22}{v['p50_s']:>9.3f}{v['p95_s']:>9.3f}")
        lines.append(
            f"{'quality':<22}{q['p50_s']:>9.2f}{q['p95_s']:>9.2f}{q['llm_calls_mean']:>11.1f}"
            f"{q['call_share']:>14.1%}"
        )
        if "all_pairs_verify" in quality:
            a = quality["all_pairs_verify"]
            lines.append(
                f"{'all-pairs verify':<22}{a['seconds_mean']:>9.2f}{'':>9}"
                f"{a['llm_calls_mean']:>11.1f}   (mean of {a['queries']} queries)"
            )
        lines.append("")
    verifiers = result.get("verifiers")
    if verifiers:
        lines.append("constraint verifiers, cost per (atom, document) pair (cold cache)")
        for name, row in verifiers.items():
            if "skipped" in row:
                lines.append(f"{name:<14}skipped: {row['skipped']}")
            else:
                lines.append(
                    f"{name:<14}{_fmt(row['ms_per_pair']):>10} ms/pair "
                    f"({row['pairs']} pairs, {_fmt(row['pairs_per_s'])} pairs/s)"
                )
        lines.append("")
    reranker = result.get("reranker")
    if reranker:
        lines.append(
            f"LogicReranker candidate-embedding cache, {reranker['queries']} queries x "
            f"{reranker['rounds']} rounds, top {reranker['candidates']} of "
            f"{reranker['pool']:,} pages ({reranker['model']}); hit rate "
            f"{reranker['cache_hit_rate']:.2f}, same ranking {reranker['same_ranking']:.2f}"
        )
        lines.append(f"{'calls':<16}{'off p50':>10}{'on p50':>10}{'on/off':>8}")
        for name, part in (("all", reranker), *reranker["by_round"].items()):
            off, on = (part["uncached"], part["cached"])
            lines.append(
                f"{name:<16}{_fmt(off['p50_ms']):>10}{_fmt(on['p50_ms']):>10}"
                f"{part['p50_ratio']:>8.2f}"
            )
        lines.append("")
    milvus = result.get("milvus")
    if milvus:
        lines.append(
            f"Milvus Lite vs FAISS, {milvus['queries']} three-atom queries over "
            f"{milvus['documents']:,} documents ({milvus['sentences']:,} sentence vectors; "
            f"{milvus['model']}); write {milvus['milvus_write_seconds']:.1f} s; vectors from "
            f"{milvus.get('vector_source', 'milvus')}; warm = run once untimed first, cold = "
            f"client cache emptied first (the local copy does not use it)"
        )
        lines.append(
            f"{'strategy':<15}{'faiss p50':>10}{'warm p50':>9}{'p50 x':>7}{'p95 x':>7}"
            f"{'same':>6}{'cold p50':>9}{'cold x':>7}{'same':>6}"
        )
        for row in milvus["strategies"]:
            f, m = row["faiss"], row["milvus"]
            cold = row.get("milvus_cold")
            line = (
                f"{row['strategy']:<15}{_fmt(f['p50_ms']):>10}{_fmt(m['p50_ms']):>9}"
                f"{row['p50_ratio']:>7.2f}{row['p95_ratio']:>7.2f}{row['same_top10']:>6.2f}"
            )
            if cold is not None:  # results written before the cold runs have none
                line += (
                    f"{_fmt(cold['p50_ms']):>9}{row['cold_p50_ratio']:>7.2f}"
                    f"{row['cold_same_top10']:>6.2f}"
                )
            lines.append(line)
        lines.append("")
    if result.get("decomposer_scaling"):
        from benchmarks.bench_decomposer_scaling import format_table as decomposer_table

        lines += [decomposer_table(result["decomposer_scaling"]), ""]
    if result.get("json_extraction"):
        from benchmarks.bench_json_extraction import format_table as json_table

        lines += [json_table(result["json_extraction"]), ""]
    million = result.get("million")
    if million:
        from benchmarks.bench_million import format_table as million_table

        lines += ["a million documents (chunked build)", million_table(million), ""]
    machine = result.get("machine")
    if machine:  # a single benchmark's own JSON may have none
        device = result.get("settings", {}).get("device") or "default"
        lines.append(
            f"{machine['cpu_model']}; {machine['usable_cores']} cores; "
            f"GPU {machine.get('gpu') or 'none'} ({device}), torch "
            f"{machine['torch_threads']} threads, faiss {machine['faiss_omp_threads']} threads; "
            f"load average {result.get('load_average_start')} -> "
            f"{result.get('load_average_end')}"
        )
    return "\n".join(lines)
