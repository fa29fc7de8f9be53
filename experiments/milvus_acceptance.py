"""Acceptance numbers: logic-rag's rerankers over Milvus in LlamaIndex and LangChain.

One command::

    python -m experiments.milvus_acceptance --quest-queries runs/split/dev.jsonl \\
        --out runs/milvus/acceptance.json

For each framework the corpus is indexed in a Milvus Lite file through the framework's
own Milvus integration, with logic-rag's embeddings:

* LlamaIndex: ``VectorStoreIndex`` over ``llama_index.vector_stores.milvus.MilvusVectorStore``
  with :class:`~logic_rag.integrations.llama_index.LogicEmbedding`; the retriever's top
  ``--candidates`` nodes go through the ``LogicReranker`` node postprocessor
  (``top_n=--top-n``);
* LangChain: ``langchain_milvus.Milvus`` with
  :class:`~logic_rag.integrations.langchain.LogicEmbeddings`; its retriever (``k =
  --candidates``) is wrapped in a ``ContextualCompressionRetriever`` whose compressor is the
  LangChain ``LogicReranker`` (``top_n=--top-n``).

Each is compared with the same store without logic (the plain retriever's ranking):

* MS MARCO subset (``$LOGIC_RAG_DATA/beir/msmarco``, 5,000 passages, 43 judged queries):
  nDCG@10 with ir-measures;
* QUEST-attr (``$LOGIC_RAG_DATA/quest/attr/documents.jsonl``, 6,410 pages) on the dev
  queries of ``--quest-queries`` (131 queries of ``python -m logic_rag.evals.quest.split``):
  R@20 (and P@1, R@5) with the project's QUEST metrics (:mod:`logic_rag.evals.quest.metrics`).

Both stores are exact (FLAT, inner product over normalised vectors), so "plain" is exactly
dense top-k. Data is read from ``LOGIC_RAG_DATA`` (default ``../shared/data``), never copied.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "evaluate"]

Ranker = Callable[[str], tuple[list[tuple[str, float]], list[tuple[str, float]]]]


def _say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- frameworks
def llama_index_ranker(docs: Sequence[Any], encoder: Any, db: Path, args: Any) -> Ranker:
    """Index ``docs`` in Milvus Lite through LlamaIndex; rank plain and with LogicReranker."""
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.milvus import MilvusVectorStore

    from logic_rag.integrations.llama_index import LogicEmbedding
    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker as LogicReranker

    store = MilvusVectorStore(
        uri=str(db),
        collection_name="acceptance",
        dim=encoder.dimension,
        overwrite=True,
        similarity_metric="IP",
        index_config={"index_type": "FLAT", "metric_type": "IP"},
        use_async_client=False,
        batch_size=1000,
    )
    index = VectorStoreIndex(
        [TextNode(id_=d.id, text=d.content) for d in docs],
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=LogicEmbedding(encoder, embed_batch_size=256),
        insert_batch_size=2048,
    )
    retriever = index.as_retriever(similarity_top_k=args.candidates)
    reranker = LogicReranker(model=encoder, top_n=args.top_n)

    def rank(query: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        nodes = retriever.retrieve(query)
        plain = [(n.node.node_id, float(n.score or 0.0)) for n in nodes]
        logic = reranker.postprocess_nodes(nodes, query_str=query)
        return plain, [(n.node.node_id, float(n.score or 0.0)) for n in logic]

    return rank


def langchain_ranker(docs: Sequence[Any], encoder: Any, db: Path, args: Any) -> Ranker:
    """Index ``docs`` in Milvus Lite through LangChain; rank plain and compressed."""
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.documents import Document as LCDocument

    from logic_rag.integrations.langchain import (
        LogicEmbeddings,
        LogicLangChainReranker,
        langchain_milvus_class,
    )

    store = langchain_milvus_class().from_documents(
        [LCDocument(page_content=d.content, metadata={"doc_id": d.id}) for d in docs],
        embedding=LogicEmbeddings(encoder),
        collection_name="acceptance",
        connection_args={"uri": str(db)},
        index_params={"index_type": "FLAT", "metric_type": "IP"},
        search_params={"metric_type": "IP"},
        drop_old=True,
        auto_id=True,
    )
    base = store.as_retriever(search_kwargs={"k": args.candidates})
    compressed = ContextualCompressionRetriever(
        base_compressor=LogicLangChainReranker(model=encoder, top_n=args.top_n), base_retriever=base
    )

    def rank(query: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        found = store.similarity_search_with_score(query, k=args.candidates)
        plain = [(d.metadata["doc_id"], float(s)) for d, s in found]
        logic = compressed.invoke(query)
        return plain, [(d.metadata["doc_id"], float(d.metadata["relevance_score"])) for d in logic]

    return rank


FRAMEWORKS = {"llama_index": llama_index_ranker, "langchain": langchain_ranker}


# ---------------------------------------------------------------------------- datasets
def _msmarco(data: Path, limit: int | None) -> tuple[list[Any], dict[str, str], Any]:
    from logic_rag.corpus import load_beir

    beir = load_beir(data / "beir" / "msmarco")
    qids = [q for q in sorted(beir.queries) if q in beir.qrels]
    qids = qids[:limit] if limit else qids
    qrels = {q: beir.qrels[q] for q in qids}
    return list(beir.corpus), {q: beir.queries[q] for q in qids}, qrels


def _score_msmarco(qrels: Any, run: dict[str, list[tuple[str, float]]]) -> dict[str, float]:
    import ir_measures

    measures = [ir_measures.parse_measure(m) for m in ("nDCG@10", "R@20")]
    flat = {
        q: {d: float(len(ranking) - i) for i, (d, _s) in enumerate(ranking)}
        for q, ranking in run.items()
    }
    qrel_map = {q: {d: int(r) for d, r in rel.items()} for q, rel in qrels.items()}
    scores = ir_measures.calc_aggregate(measures, qrel_map, flat)
    return {str(m): float(v) for m, v in scores.items()}


def _quest(data: Path, queries_path: Path, limit: int | None) -> tuple[list[Any], list[Any]]:
    from logic_rag.corpus import load_documents
    from logic_rag.evals.quest.data import load_quest_queries

    docs = load_documents(data / "quest" / "attr" / "documents.jsonl", "quest")
    queries = load_quest_queries(queries_path)
    return docs, queries[:limit] if limit else queries


def _score_quest(queries: Sequence[Any], run: dict[str, list[tuple[str, float]]]) -> dict[str, Any]:
    from logic_rag.evals.quest.metrics import evaluate_run

    result = evaluate_run(run, queries, ks=(5, 20), mrecall_ks=(20,), set_cutoff=20)
    keep = ("P@1", "R@5", "R@20", "MRecall@20", "n")
    return {k: result["all"][k] for k in keep if k in result["all"]}


def memoised(encoder: Any) -> Any:
    """``encoder`` with its document-side embeddings remembered by text.

    Both frameworks index the same texts and their rerankers embed the same candidates
    and sentences, so each text is encoded once per run instead of up to four times (the
    vectors are the same; this halves the CPU time of the run).
    """
    import numpy as np

    encode = encoder.encode_documents
    cache: dict[str, np.ndarray] = {}

    def encode_documents(texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in cache))
        if todo:
            cache.update(zip(todo, encode(todo, **kwargs), strict=True))
        if not texts:
            return encode([], **kwargs)
        return np.stack([cache[t] for t in texts])

    encoder.encode_documents = encode_documents
    return encoder


# ---------------------------------------------------------------------------- driver
def evaluate(
    args: argparse.Namespace, on_result: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any]:
    """Every (framework, dataset) pair: plain and logic metrics, timings.

    ``on_result`` gets the results so far after each pair (the JSON is rewritten then, so
    an interrupted run keeps what it finished).
    """
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.paths import shared_data_dir

    data = shared_data_dir()
    if not data.is_dir():
        raise SystemExit(f"shared data not found at {data}; set LOGIC_RAG_DATA")
    encoder = memoised(DenseEncoder(args.model))
    datasets: dict[str, Any] = {}
    if args.only in (None, "msmarco"):
        docs, queries, qrels = _msmarco(data, args.limit)
        datasets["msmarco"] = (docs, list(queries.items()), lambda run: _score_msmarco(qrels, run))
    if args.only in (None, "quest"):
        docs, qq = _quest(data, args.quest_queries, args.limit)
        datasets["quest_attr_dev"] = (
            docs,
            [(q.qid, q.query) for q in qq],
            lambda run, qq=qq: _score_quest(qq, run),
        )
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="milvus-acceptance-") as tmp:
        for framework in args.frameworks:
            for name, (docs, queries, score) in datasets.items():
                _say(f"{framework} / {name}: indexing {len(docs)} documents in Milvus Lite")
                t0 = time.perf_counter()
                rank = FRAMEWORKS[framework](
                    docs, encoder, Path(tmp) / f"{framework}-{name}.db", args
                )
                index_s = time.perf_counter() - t0
                plain_run: dict[str, list[tuple[str, float]]] = {}
                logic_run: dict[str, list[tuple[str, float]]] = {}
                t0 = time.perf_counter()
                for i, (qid, text) in enumerate(queries, 1):
                    plain_run[qid], logic_run[qid] = rank(text)
                    if i % 25 == 0:
                        _say(f"{framework} / {name}: {i}/{len(queries)} queries")
                query_s = time.perf_counter() - t0
                plain = score({q: r[: args.top_n] for q, r in plain_run.items()})
                logic = score(logic_run)
                results.setdefault(framework, {})[name] = {
                    "plain": plain,
                    "logic": logic,
                    "queries": len(queries),
                    "documents": len(docs),
                    "index_seconds": round(index_s, 1),
                    "seconds_per_query": round(query_s / max(len(queries), 1), 3),
                }
                _say(f"{framework} / {name}: plain {plain} | logic {logic}")
                if on_result is not None:
                    on_result(results)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.milvus_acceptance",
        description="LogicReranker over Milvus Lite in LlamaIndex and LangChain vs plain "
        "retrieval: nDCG@10 on the MS MARCO subset, R@20 on QUEST-attr dev.",
    )
    parser.add_argument("--model", default="minilm", help="dense encoder (default minilm)")
    parser.add_argument("--candidates", type=int, default=100, help="store top-k (default 100)")
    parser.add_argument("--top-n", type=int, default=20, help="reranked depth (default 20)")
    parser.add_argument(
        "--quest-queries",
        type=Path,
        default=Path("runs/split/dev.jsonl"),
        help="QUEST dev queries (python -m logic_rag.evals.quest.split writes them)",
    )
    parser.add_argument(
        "--frameworks", default="llama_index,langchain", help="llama_index, langchain or both"
    )
    parser.add_argument("--only", choices=("msmarco", "quest"), help="one dataset only")
    parser.add_argument("--limit", type=int, default=None, help="first N queries (smoke runs)")
    parser.add_argument("--out", type=Path, default=Path("runs/milvus/acceptance.json"))
    args = parser.parse_args(argv)
    args.frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    unknown = [f for f in args.frameworks if f not in FRAMEWORKS]
    if unknown or not args.frameworks:
        parser.error(f"--frameworks: unknown {unknown}; use {', '.join(FRAMEWORKS)}")
    if args.candidates < args.top_n or args.top_n < 1:
        parser.error("--candidates must be >= --top-n >= 1")
    if args.only != "msmarco" and not args.quest_queries.is_file():
        parser.error(f"--quest-queries {args.quest_queries} is not a file")
    from logic_rag.atomic import atomic_write_json

    started = time.perf_counter()
    args.out.parent.mkdir(parents=True, exist_ok=True)

    def write(results: dict[str, Any]) -> dict[str, Any]:
        payload = {
            "command": " ".join(
                ["python -m experiments.milvus_acceptance", *(argv or sys.argv[1:])]
            ),
            "model": args.model,
            "candidates": args.candidates,
            "top_n": args.top_n,
            "store": "Milvus Lite (FLAT, inner product) via each framework's Milvus integration",
            "results": results,
            "seconds": round(time.perf_counter() - started, 1),
        }
        atomic_write_json(args.out, payload)
        return payload

    results = evaluate(args, write)
    write(results)
    for framework, by_data in results.items():
        for name, row in by_data.items():
            print(f"{framework:<12} {name:<15} plain {row['plain']}  logic {row['logic']}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
