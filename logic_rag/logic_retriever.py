"""The logic-aware retriever: decompose a query, score every constraint, rank by the logic.

A search is a pipeline of stages (:mod:`logic_rag.pipeline`): candidate sources ->
constraint verifiers -> logic -> ranking. Each named strategy is one composition in
:mod:`logic_rag.strategies`:

=================  ===================================================================
``vanilla``        whole-query dense retrieval, no logic
``rerank``         whole-query candidates: cosine prior + ``rerank_weight`` × soft truth
                   of the logic (under a negation the prior is half the positive part's)
``setops``         soft set algebra over calibrated atom scores; candidates from the
                   whole query and every positive atom
``fusion``         score fusion of raw atom similarities (AND +, OR max, NOT −)
``fusion-product`` the same with AND as a product
``orthogonal``     dense orthogonal negation: the whole-query vector projected away
                   from each negated atom
``splade*``        learned-sparse strategies (see :mod:`logic_rag.sparse_retriever`)
=================  ===================================================================

``strategy=`` also takes a :class:`~logic_rag.pipeline.stage.Stage` (any composition), so
a new pipeline needs no change here. All atoms of all queries in a batch are encoded in one
encoder call and searched in one index call. Every hit says which constraints it
satisfied (``Hit.constraints``) and how strongly (``Hit.constraint_scores``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from logic_rag.corpus import DEFAULT_MAX_DOCUMENT_CHARS, Document, TextBudget
from logic_rag.encoders.dense import DenseEncoder, check_texts
from logic_rag.errors import IndexMismatchError
from logic_rag.index.faiss_index import IndexKind
from logic_rag.index.passages import (
    DEFAULT_SENTENCE_DTYPE,
    PassageVectors,
    SentenceDtype,
    check_sentence_dtype,
    document_bodies,
    split_corpus,
)
from logic_rag.index.snapshot import open_snapshot
from logic_rag.pipeline.context import Resources, SearchContext
from logic_rag.pipeline.stage import Pipeline, Stage
from logic_rag.pipeline.state import QueryPlan, QueryState, SearchBatch
from logic_rag.query.algebra import Atom, LogicalQuery, render, to_json
from logic_rag.query.decompose import Decomposer, Decomposition
from logic_rag.query.rules import RuleDecomposer
from logic_rag.retriever import Hit, Retriever, check_k, make_hits
from logic_rag.strategies import (
    DENSE_STRATEGIES,
    STRATEGIES,
    LogicConfig,
    pipeline_of,
)
from logic_rag.verifiers.verdicts import VerdictRule

if TYPE_CHECKING:
    from logic_rag.encoders.ray_encoding import RayEncoding
    from logic_rag.index.milvus_store import MilvusPassages

__all__ = ["DENSE_STRATEGIES", "STRATEGIES", "LogicConfig", "LogicRetriever"]

StrategyLike = str | Stage


#: Where a constraint's degree becomes ✓ / ✗ / ? (the ranking ignores it).
DEFAULT_VERDICTS = VerdictRule()

#: A corpus smaller than this many times ``threshold_rank`` gives relative evidence only.
SMALL_CORPUS_RANKS = 5


def _constraint_name(atom: Atom, negated: bool) -> str:
    return f"NOT {atom.text}" if negated else atom.text


def _check_strategy(strategy: StrategyLike, has_sparse: bool) -> StrategyLike:
    if isinstance(strategy, Stage):
        return strategy
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if STRATEGIES[strategy].needs_sparse and not has_sparse:
        raise ValueError(
            f"strategy {strategy!r} needs a SPLADE index: build with sparse_model='splade-tiny'"
        )
    return strategy


def _build_with(
    encode_with: RayEncoding,
    docs: list[Document],
    model: str | os.PathLike[str] | DenseEncoder | None,
    passages: bool,
    index: IndexKind,
    index_options: dict[str, Any],
    max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS,
    sentence_dtype: SentenceDtype = DEFAULT_SENTENCE_DTYPE,
) -> tuple[Retriever, PassageVectors | None]:
    """Dense index and sentence vectors from one Ray pass over documents then sentences.

    One pass (not two) because each pass starts a pool of actors that load the model.
    """
    if not docs:
        raise ValueError("cannot build an index over zero documents")
    encoder = model if isinstance(model, DenseEncoder) else DenseEncoder(model)
    budget = TextBudget(max_document_chars)
    texts = budget.apply([d.content for d in docs])
    sentences: list[str] = []
    offsets = None
    if passages:
        sentences, offsets = split_corpus(document_bodies(docs, max_document_chars))
    vectors = encode_with.encode(
        encoder, itertools.chain(texts, sentences), total=len(texts) + len(sentences)
    )
    del texts, sentences
    dense = Retriever.from_embeddings(
        encoder, vectors[: len(docs)], docs, index=index, **index_options
    )
    dense.text_budget = budget
    passage_vectors = None
    if offsets is not None:
        passage_vectors = PassageVectors.from_vectors(
            vectors[len(docs) :], offsets, dtype=sentence_dtype
        )
    return dense, passage_vectors


class LogicRetriever:
    """Dense (and optionally SPLADE) retrieval that respects AND / OR / NOT.

    Build with :meth:`build`, persist with :meth:`save`, reopen with :meth:`load`::

        retriever = LogicRetriever.build(docs, model="minilm")
        hits = retriever.search("Orchids of Indonesia and Malaysia but not Thailand", k=10)
        hits[0].constraints  # {"Orchids of Indonesia": True, ..., "NOT Orchids of Thailand": True}
    """

    def __init__(
        self,
        dense: Retriever,
        *,
        passages: PassageVectors | MilvusPassages | None = None,
        sparse: Any | None = None,
        decomposer: Decomposer | None = None,
        strategy: StrategyLike = "rerank",
        config: LogicConfig | None = None,
    ) -> None:
        if passages is not None and passages.n_documents != len(dense):
            raise IndexMismatchError(
                f"passage vectors cover {passages.n_documents} documents, the index {len(dense)}"
            )
        self.dense = dense
        self.passages = passages
        self.sparse = sparse
        self.decomposer: Decomposer = decomposer or RuleDecomposer()
        self.config = config or LogicConfig()
        self.strategy = _check_strategy(strategy, sparse is not None)
        self.resources = Resources(dense, passages=passages, sparse=sparse)

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        *,
        model: str | os.PathLike[str] | DenseEncoder | None = None,
        passages: bool = True,
        sparse_model: str | os.PathLike[str] | None = None,
        strategy: StrategyLike = "rerank",
        decomposer: Decomposer | None = None,
        config: LogicConfig | None = None,
        index: IndexKind = "flat",
        show_progress_bar: bool | None = None,
        encode_with: RayEncoding | None = None,
        store: str | None = None,
        collection: str = "logic_rag",
        store_token: str | None = None,
        overwrite_store: bool = False,
        max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS,
        sentence_dtype: SentenceDtype = DEFAULT_SENTENCE_DTYPE,
        **index_options: Any,
    ) -> LogicRetriever:
        """Embed and index ``documents``.

        Every encoder (dense, sentences, SPLADE) sees at most ``max_document_chars``
        characters of each document; the stored documents keep their whole text, and a
        cut is logged and recorded in the manifest's ``text_budget``.

        ``passages`` also embeds every sentence (about twice the indexing time) so that
        constraints are checked against the best-matching sentence; ``sparse_model``
        adds a SPLADE inverted index for the ``splade*`` strategies. ``encode_with``
        (a :class:`~logic_rag.encoders.ray_encoding.RayEncoding`) embeds documents and
        sentences on a Ray cluster instead of in this process; the index is the same.
        ``sentence_dtype`` stores the sentence vectors as ``float16`` (default), ``int8``
        (half the size; per-vector scale) or ``float32`` (see
        :mod:`logic_rag.index.passages`). ``index`` picks the FAISS document index
        (``flat``, exact, default; ``hnsw``; ``ivfpq`` for corpora whose float32 vectors do
        not fit in memory); ``index_options`` go to
        :class:`~logic_rag.index.faiss_index.DenseIndex`.

        ``store`` keeps the document and sentence vectors in Milvus instead of FAISS
        (``milvus://file.db`` for Milvus Lite, ``http(s)://host:port`` for a server; see
        :mod:`logic_rag.index.milvus_store`) under ``collection``. An existing collection
        is refused before anything is embedded unless ``overwrite_store`` is set.
        """
        check_sentence_dtype(sentence_dtype)
        milvus = None
        if store is not None:
            from logic_rag.index.milvus_store import MilvusStore, parse_store_uri

            milvus = MilvusStore(parse_store_uri(store, collection), token=store_token)
            if not overwrite_store:
                milvus.refuse_existing()  # before minutes of embedding, not after
            if index != "flat":
                raise ValueError(
                    f"index={index!r}: a Milvus store uses Milvus's exact FLAT index; "
                    f"leave index='flat'"
                )
        docs = list(documents)
        if encode_with is not None:
            dense, passage_vectors = _build_with(
                encode_with,
                docs,
                model,
                passages,
                index,
                index_options,
                max_document_chars,
                sentence_dtype,
            )
        else:
            dense = Retriever.build(
                docs,
                model=model,
                index=index,
                show_progress_bar=show_progress_bar,
                max_document_chars=max_document_chars,
                **index_options,
            )
            passage_vectors = None
        if passages and passage_vectors is None:
            passage_vectors = PassageVectors.build(
                dense.encoder,
                document_bodies(docs, max_document_chars),
                show_progress_bar=show_progress_bar,
                dtype=sentence_dtype,
            )
        sparse = None
        if sparse_model is not None:
            from logic_rag.sparse_retriever import SparseSide

            bounded = [
                replace(d, text=d.text[:max_document_chars])
                if len(d.text) > max_document_chars
                else d
                for d in docs
            ]
            sparse = SparseSide.build(
                bounded, model=sparse_model, show_progress_bar=show_progress_bar
            )
            sparse.documents = dense.documents  # hits show the whole stored documents
        built = cls(
            dense,
            passages=passage_vectors,
            sparse=sparse,
            decomposer=decomposer,
            strategy=strategy,
            config=config,
        )
        if milvus is None:
            return built
        return built._moved_to(milvus, overwrite=overwrite_store)

    def to_store(
        self,
        store: str,
        *,
        collection: str = "logic_rag",
        token: str | None = None,
        overwrite: bool = False,
    ) -> LogicRetriever:
        """A copy of this (FAISS-backed) retriever whose vectors live in Milvus.

        Document and sentence vectors are written to ``collection`` at ``store`` in
        bounded batches, into temporary collections swapped in at the end; the documents,
        SPLADE index, decomposer, strategy and config are shared with this one.
        """
        from logic_rag.index.milvus_store import MilvusStore, parse_store_uri

        return self._moved_to(
            MilvusStore(parse_store_uri(store, collection), token=token), overwrite=overwrite
        )

    def _moved_to(self, milvus: Any, *, overwrite: bool) -> LogicRetriever:
        if getattr(self.dense.index, "store", None) is not None:
            raise ValueError("this retriever's vectors already live in a vector store")
        encoder = self.dense.encoder
        model = {"name": encoder.name, "weights_sha256": encoder.fingerprint}
        sentences = None
        if self.passages is not None:
            sentences = (self.passages.float_rows(), self.passages.offsets)
        stored = milvus.write(
            np.asarray(self.dense.index.vectors()), sentences, {"model": model}, overwrite=overwrite
        )
        index, passages = milvus.open(
            {k: stored[k] for k in ("build_id", "document_count", "sentence_count", "model")}
        )
        moved = Retriever(encoder, index, self.documents)
        moved.text_budget = self.dense.text_budget  # the manifest still reports the cut
        return LogicRetriever(
            moved,
            passages=passages,
            sparse=self.sparse,
            decomposer=self.decomposer,
            strategy=self.strategy,
            config=self.config,
        )

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        model: str | os.PathLike[str] | DenseEncoder | None = None,
        strategy: StrategyLike = "rerank",
        decomposer: Decomposer | None = None,
        config: LogicConfig | None = None,
        verify: bool = True,
        allow_model_mismatch: bool = False,
        store_uri: str | None = None,
        store_token: str | None = None,
    ) -> LogicRetriever:
        """Open an index folder written by :meth:`save` (or by ``logic-rag index``).

        A folder whose vectors live in Milvus opens its collections (checked against the
        folder's manifest); ``store_uri`` points at the store if it moved, ``store_token``
        (default ``$LOGIC_RAG_MILVUS_TOKEN``) authenticates to a server.
        """
        if isinstance(strategy, str) and strategy not in STRATEGIES:
            _check_strategy(strategy, True)  # a typo fails now, not after loading a model
        # One opened version of the folder for every part (dense, passages, SPLADE), so a
        # concurrent save can never mix two indexes (see logic_rag.index.snapshot).
        with open_snapshot(path, verify=verify) as snapshot:
            dense, manifest = Retriever.load_snapshot(
                snapshot,
                model=model,
                allow_model_mismatch=allow_model_mismatch,
                store_uri=store_uri,
                store_token=store_token,
            )
            passages: Any = None
            if "store" in manifest:
                passages = manifest.pop("_store_passages", None)
            elif manifest.get("passages"):
                passages = PassageVectors.load(
                    snapshot, len(dense), dtype=manifest.get("sentence_dtype")
                )
            sparse = None
            if "sparse" in manifest:
                from logic_rag.sparse_retriever import SparseSide

                sparse = SparseSide.load(snapshot.view(""), manifest["sparse"], dense.documents)
        return cls(
            dense,
            passages=passages,
            sparse=sparse,
            decomposer=decomposer,
            strategy=strategy,
            config=config,
        )

    def save(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write the dense index, documents, passage vectors and SPLADE index to one folder."""
        files: dict[str, Any] = {}
        manifest: dict[str, Any] = {"passages": self.passages is not None}
        if self.passages is not None:
            files.update(self.passages.writers())
            if isinstance(self.passages, PassageVectors):
                manifest.update(self.passages.manifest())
        if self.sparse is not None:
            sparse_files, manifest["sparse"] = self.sparse.writers()
            files.update(sparse_files)
        return self.dense.save(out_dir, extra_files=files, extra_manifest=manifest)

    # ------------------------------------------------------------------ properties
    @property
    def documents(self) -> list[Document]:
        return self.dense.documents

    def __len__(self) -> int:
        return len(self.dense)

    def with_config(self, **changes: Any) -> LogicRetriever:
        """A retriever sharing this one's indexes with some config values changed."""
        clone = LogicRetriever(
            self.dense,
            passages=self.passages,
            sparse=self.sparse,
            decomposer=self.decomposer,
            strategy=self.strategy,
            config=replace(self.config, **changes),
        )
        clone.resources = self.resources
        return clone

    def _doc_vectors(self) -> np.ndarray:
        return self.resources.doc_vectors()

    def _rows_by_id(self) -> dict[str, int]:
        return self.resources.rows_by_id()

    # ------------------------------------------------------------------ decomposition
    def decompose(self, query: str) -> Decomposition:
        """The decomposer's reading of ``query``."""
        return self.decomposer.decompose(query)

    def plan(
        self,
        texts: Sequence[str],
        logical_queries: Sequence[LogicalQuery | None] | None = None,
        *,
        decompose: bool = True,
    ) -> list[QueryPlan]:
        """Each query's logic: given, decomposed, or (``decompose=False``) the whole text."""
        if logical_queries is not None and len(logical_queries) != len(texts):
            raise ValueError(
                f"got {len(logical_queries)} logical queries for {len(texts)} query texts"
            )
        plans = []
        for i, text in enumerate(texts):
            given = logical_queries[i] if logical_queries is not None else None
            if given is not None:
                plans.append(QueryPlan(text, given))
            elif not decompose:
                plans.append(QueryPlan(text, Atom(text)))
            else:
                decomposition = self.decompose(text)
                logic: LogicalQuery = decomposition.query
                if decomposition.confidence < self.config.min_confidence:
                    logic = Atom(text)
                plans.append(QueryPlan(text, logic, decomposition))
        return plans

    def pipeline(self, strategy: StrategyLike | None = None) -> Pipeline:
        """The stages a search with ``strategy`` (default: the retriever's) runs."""
        chosen = _check_strategy(strategy or self.strategy, self.sparse is not None)
        if isinstance(chosen, Stage):
            return chosen if isinstance(chosen, Pipeline) else Pipeline((chosen,))
        # Built once per strategy and config for these indexes: the verifiers it holds
        # (an LLM, a cross-encoder) load their models once and keep their pair caches.
        return self.resources.loaded(
            ("pipeline", chosen, repr(self.config)), lambda: pipeline_of(chosen, self.config)
        )

    # ------------------------------------------------------------------ search
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        strategy: StrategyLike | None = None,
        logical_query: LogicalQuery | None = None,
    ) -> list[Hit]:
        """Top-``k`` documents for ``query`` under ``strategy`` (default: the retriever's).

        ``logical_query`` bypasses the decomposer (for example QUEST's gold structure).
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        given = [logical_query] if logical_query is not None else None
        return self.search_batch([query], k, strategy=strategy, logical_queries=given)[0]

    def search_batch(
        self,
        queries: Sequence[str],
        k: int = 10,
        *,
        strategy: StrategyLike | None = None,
        logical_queries: Sequence[LogicalQuery | None] | None = None,
    ) -> list[list[Hit]]:
        """Search many queries: one encoder call and one index call for all their atoms."""
        texts = check_texts(queries, "query")
        k = min(check_k(k), max(len(self), 1))  # capped at the corpus size before allocating
        chosen = _check_strategy(strategy or self.strategy, self.sparse is not None)
        decompose = not (isinstance(chosen, str) and not STRATEGIES[chosen].decompose)
        plans = self.plan(texts, logical_queries, decompose=decompose)
        batch = SearchBatch([QueryState(p) for p in plans], k)
        self.pipeline(chosen)(batch, SearchContext(self.resources))
        return [self._hits(state) for state in batch]

    # ------------------------------------------------------------------ explanations
    def _hits(self, state: QueryState) -> list[Hit]:
        order = state.ranked if state.ranked is not None else np.zeros(0, np.int64)
        ids = state.candidates[order]
        scores = state.score[order] if state.score is not None else np.zeros(len(order))
        if state.tail is not None:
            ids = np.concatenate([ids, state.tail[0]])
            scores = np.concatenate([scores, state.tail[1]])
        hits = make_hits(self.documents, scores.astype(np.float32), ids)
        # Evidence calibrated on a handful of pages (a reranker's candidates, or a corpus
        # not much larger than the calibration's neighbour rank) is relative: it says
        # where a page stands among them, not whether it holds, so its band is wider.
        relative = (
            state.info.get("calibration") == "candidates"
            or len(self) < SMALL_CORPUS_RANKS * self.config.threshold_rank
        )
        calibrate = None if relative else self._verdict_calibration()
        if state.probs is not None:
            sources = state.pair_source
            for hit, j in zip(hits, order.tolist(), strict=False):
                by = None if sources is None else sources[:, j]
                self._annotate(hit, state.plan, state.probs[:, j], by, relative, calibrate)
        if state.set_aside is not None and state.set_aside[1] is not None:
            # Candidates a Cutoff set aside keep the evidence they had before the cut.
            aside_rows, aside_probs = state.set_aside
            where = {row: j for j, row in enumerate(aside_rows.tolist())}
            for hit, row in zip(hits[len(order) :], ids[len(order) :].tolist(), strict=False):
                if row in where:
                    self._annotate(
                        hit, state.plan, aside_probs[:, where[row]], None, relative, calibrate
                    )
        return self._finish(state, hits)

    def _annotate(
        self,
        hit: Hit,
        plan: QueryPlan,
        probs: np.ndarray,
        sources: np.ndarray | None,
        relative: bool,
        calibrate: Any = None,
    ) -> None:
        rule = DEFAULT_VERDICTS
        for i, (atom, p) in enumerate(zip(plan.atoms, probs.tolist(), strict=True)):
            is_neg = atom in plan.negated
            source = str(sources[i]) if sources is not None and sources[i] else "embedding"
            if calibrate is not None and source == "embedding":
                p = float(calibrate(np.array([p]))[0])
            degree = 1.0 - p if is_neg else p
            name = _constraint_name(atom, is_neg)
            hit.constraints[name] = rule.verdict(
                degree, relative=relative and source == "embedding"
            )
            hit.constraint_scores[name] = round(float(degree), 4)
            hit.constraint_sources[name] = source

    def _verdict_calibration(self) -> Any:
        """The config's verdict calibration, loaded once per retriever (None: none)."""
        path = self.config.verdict_calibration
        if path is None:
            return None
        from logic_rag.verifiers.verdicts import EvidenceCalibration

        def load() -> EvidenceCalibration:
            calibration = EvidenceCalibration.load(path)
            calibration.check_encoder(self.dense.encoder.fingerprint)
            return calibration

        stamp = str(Path(path).stat().st_mtime_ns) if Path(path).is_file() else "missing"
        return self.resources.loaded(("verdict-calibration", str(path), stamp), load)

    def _finish(self, state: QueryState, hits: list[Hit]) -> list[Hit]:
        plan = state.plan
        if len(plan.atoms) > 1 or plan.decomposition is not None:
            info: dict[str, Any] = {"query": render(plan.logic), "json": to_json(plan.logic)}
            if plan.decomposition is not None:
                info["confidence"] = plan.decomposition.confidence
                info["source"] = plan.decomposition.source
            info.update(state.info)
            for hit in hits:
                hit.logic = {**info, **hit.logic}
        return hits

    def describe(self) -> dict[str, Any]:
        """Model names, strategy, config and pipeline, for reports and manifests."""
        return {
            "model": self.dense.encoder.name,
            "sparse_model": None if self.sparse is None else self.sparse.encoder.name,
            "strategy": self.strategy if isinstance(self.strategy, str) else "custom",
            "pipeline": self.pipeline().describe(),
            "config": asdict(self.config),
            "documents": len(self),
        }
