"""The logic-aware retriever: decompose a query, score every constraint, rank by the logic.

A search is a pipeline of stages (:mod:`logic_rag.pipeline`): candidate sources ->
constraint verifiers -> logic -> ranking. Each named strategy is one composition in
:mod:`logic_rag.strategies`:

=================  ===================================================================
``vanilla``        whole-query dense retrieval, no logic
``rerank``         whole-query candidates: cosine prior + ``truth_weight`` × soft truth
                   of the logic (under a negation the prior is half the positive part's)
``setops``         soft set algebra over calibrated atom scores; candidates from the
                   whole query and every positive atom
``fusion``         score fusion of raw atom similarities (AND +, OR max, NOT −)
``fusion-product`` the same with AND as a product
``orthogonal``     dense orthogonal negation: the whole-query vector projected away
                   from each negated atom
``splade*``        learned-sparse strategies (see :mod:`logic_rag.sparse_retriever`)
=================  ===================================================================

Each named strategy is built from its own typed settings
(:mod:`logic_rag.strategy_settings`): ``LogicRetriever.build(docs, strategy="verify",
settings=VerifySettings(verifier_top=40))``; settings are kept by class, so
:meth:`LogicRetriever.with_settings` can hold those of several strategies and
``search(strategy=...)`` picks the right ones (the defaults otherwise).

``strategy=`` also takes a :class:`~logic_rag.pipeline.stage.Stage` (any composition), so
a new pipeline needs no change here. All atoms of all queries in a batch are encoded in one
encoder call and searched in one index call. Every hit says which constraints it
satisfied (``Hit.constraints``) and how strongly (``Hit.constraint_scores``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from logic_rag.atomic import atomic_write_json
from logic_rag.corpus import DEFAULT_MAX_DOCUMENT_CHARS, Document
from logic_rag.encoders.dense import DenseEncoder, check_texts
from logic_rag.errors import IndexMismatchError
from logic_rag.explain import explained_hits
from logic_rag.index.build import check_new_store, embed_corpus, move_to_store, open_store
from logic_rag.index.faiss_index import IndexKind
from logic_rag.index.passages import (
    DEFAULT_SENTENCE_DTYPE,
    PassageVectors,
    SentenceDtype,
    check_sentence_dtype,
)
from logic_rag.index.snapshot import open_snapshot
from logic_rag.pipeline.context import Resources, SearchContext
from logic_rag.pipeline.stage import Pipeline, Stage
from logic_rag.pipeline.state import QueryPlan, QueryState, SearchBatch
from logic_rag.planning import plan_queries
from logic_rag.query.algebra import LogicalQuery
from logic_rag.query.decompose import Decomposer, Decomposition
from logic_rag.query.rules import RuleDecomposer
from logic_rag.retriever import DenseRetriever, Hit, check_k
from logic_rag.saved_strategy import (
    STRATEGY_FILE,
    SavedStrategy,
    is_default,
    read_saved,
    saved_record,
)
from logic_rag.strategies import (
    DENSE_STRATEGIES,
    STRATEGIES,
    pipeline_of,
    settings_of,
)
from logic_rag.strategy_settings import CheckedSettings, StrategySettings

if TYPE_CHECKING:
    from logic_rag.encoders.ray_encoding import RayEncoding
    from logic_rag.index.milvus_store import MilvusPassages

__all__ = ["DENSE_STRATEGIES", "STRATEGIES", "LogicRetriever"]

StrategyLike = str | Stage


def _check_strategy(strategy: StrategyLike, has_sparse: bool) -> StrategyLike:
    if isinstance(strategy, Stage):
        return strategy
    if strategy not in STRATEGIES:
        from logic_rag.strategies import unknown_strategy

        raise unknown_strategy(strategy)
    if STRATEGIES[strategy].needs_sparse and not has_sparse:
        raise ValueError(
            f"strategy {strategy!r} needs a SPLADE index: build with sparse_model='splade-tiny'"
        )
    return strategy


class LogicRetriever:
    """Dense (and optionally SPLADE) retrieval that respects AND / OR / NOT.

    Build with :meth:`build`, persist with :meth:`save`, reopen with :meth:`load`::

        retriever = LogicRetriever.build(docs, model="minilm")
        hits = retriever.search("Orchids of Indonesia and Malaysia but not Thailand", k=10)
        hits[0].constraints  # {"Orchids of Indonesia": True, ..., "NOT Orchids of Thailand": True}
    """

    def __init__(
        self,
        dense: DenseRetriever,
        *,
        passages: PassageVectors | MilvusPassages | None = None,
        sparse: Any | None = None,
        decomposer: Decomposer | None = None,
        strategy: StrategyLike = "rerank",
        settings: StrategySettings | None = None,
    ) -> None:
        """``settings`` are the settings of ``strategy`` (its class from
        :data:`~logic_rag.strategies.STRATEGIES`, e.g. ``VerifySettings`` for ``verify``;
        any settings for a custom ``Stage``, whose ``logic`` and ``evidence`` groups then
        set the decomposition fallback and the verdicts); other strategies searched by
        name use their defaults (:meth:`with_settings` keeps several)."""
        if passages is not None and passages.n_documents != len(dense):
            raise IndexMismatchError(
                f"passage vectors cover {passages.n_documents} documents, the index {len(dense)}"
            )
        self.dense = dense
        self.passages = passages
        self.sparse = sparse
        self.decomposer: Decomposer = decomposer or RuleDecomposer()
        self.strategy = _check_strategy(strategy, sparse is not None)
        self._settings: dict[type[StrategySettings], StrategySettings] = {}
        self._stage_settings: StrategySettings | None = None
        if settings is not None:
            self._keep(settings, self.strategy)
        self.resources = Resources(dense, passages=passages, sparse=sparse)

    def _keep(self, settings: StrategySettings, strategy: StrategyLike) -> None:
        if not isinstance(settings, StrategySettings):
            raise TypeError(
                f"settings must be a strategy's settings (logic_rag.strategy_settings), got "
                f"{type(settings).__name__}"
            )
        if isinstance(strategy, str):
            settings_of(strategy, settings)  # of the strategy's class, or a clear TypeError
            self._settings[type(settings)] = settings
        else:
            self._stage_settings = settings

    def settings_for(self, strategy: str) -> StrategySettings:
        """The settings a search with named ``strategy`` builds its pipeline from: those
        given for its settings class, else the defaults."""
        if not isinstance(strategy, str):
            raise TypeError(f"strategy must be a strategy name, got {type(strategy).__name__}")
        cls = STRATEGIES[_check_strategy(strategy, True)].settings  # type: ignore[index]
        return self._settings[cls] if cls in self._settings else cls()

    def _settings_of(self, chosen: StrategyLike) -> CheckedSettings:
        """The settings whose ``logic`` and ``evidence`` apply to a search with ``chosen``:
        its own; for a custom stage those given with it, else the retriever strategy's
        (``rerank``'s when that one checks no constraints)."""
        if isinstance(chosen, str):
            own = self.settings_for(chosen)
        elif self._stage_settings is not None:
            own = self._stage_settings
        else:
            own = self.settings_for(self.strategy if isinstance(self.strategy, str) else "rerank")
        if isinstance(own, CheckedSettings):
            return own
        return self.settings_for("rerank")  # type: ignore[return-value]

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
        settings: StrategySettings | None = None,
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

        ``settings`` are ``strategy``'s (see :class:`LogicRetriever`).
        """
        check_sentence_dtype(sentence_dtype)
        milvus = None
        if store is not None:
            milvus = open_store(store, collection=collection, token=store_token)
            check_new_store(milvus, overwrite=overwrite_store, index=index)
        docs = list(documents)
        embedded = embed_corpus(
            docs,
            model=model,
            passages=passages,
            index=index,
            index_options=index_options,
            show_progress_bar=show_progress_bar,
            encode_with=encode_with,
            max_document_chars=max_document_chars,
            sentence_dtype=sentence_dtype,
        )
        dense = DenseRetriever(embedded.encoder, embedded.index, docs)
        dense.text_budget = embedded.budget
        passage_vectors = embedded.passages
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
            settings=settings,
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
        SPLADE index, decomposer, strategy and settings are shared with this one.
        """
        milvus = open_store(store, collection=collection, token=token)
        return self._moved_to(milvus, overwrite=overwrite)

    def _moved_to(self, milvus: Any, *, overwrite: bool) -> LogicRetriever:
        encoder = self.dense.encoder
        index, passages = move_to_store(
            milvus, encoder, self.dense.index, self.passages, overwrite=overwrite
        )
        moved = DenseRetriever(encoder, index, self.documents)
        moved.text_budget = self.dense.text_budget  # the manifest still reports the cut
        return self._clone(moved, passages)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        model: str | os.PathLike[str] | DenseEncoder | None = None,
        strategy: StrategyLike | None = None,
        decomposer: Decomposer | None = None,
        settings: StrategySettings | None = None,
        verify: bool = True,
        allow_model_mismatch: bool = False,
        store_uri: str | None = None,
        store_token: str | None = None,
    ) -> LogicRetriever:
        """Open an index folder written by :meth:`save` (or by ``logic-rag index``).

        A folder whose vectors live in Milvus opens its collections (checked against the
        folder's manifest); ``store_uri`` points at the store if it moved, ``store_token``
        (default ``$LOGIC_RAG_MILVUS_TOKEN``) authenticates to a server. ``settings`` are
        ``strategy``'s (see :class:`LogicRetriever`).

        The strategy and settings the index was saved with (:meth:`save`,
        :mod:`logic_rag.saved_strategy`) come back: ``strategy`` (default: the saved one,
        else ``"rerank"``) and ``settings`` replace them. An index saved without them loads
        with the defaults.
        """
        if isinstance(strategy, str) and strategy not in STRATEGIES:
            _check_strategy(strategy, True)  # a typo fails now, not after loading a model
        if settings is not None and isinstance(strategy, str):
            settings_of(strategy, settings)  # wrong settings fail before loading a model
        # One opened version of the folder for every part (dense, passages, SPLADE), so a
        # concurrent save can never mix two indexes (see logic_rag.index.snapshot).
        with open_snapshot(path, verify=verify) as snapshot:
            saved = read_saved(snapshot)
            chosen = strategy if strategy is not None else saved.strategy if saved else "rerank"
            if settings is not None and isinstance(chosen, str):
                settings_of(chosen, settings)  # wrong settings fail before loading a model
            dense, manifest = DenseRetriever.load_snapshot(
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
        made = cls(
            dense,
            passages=passages,
            sparse=sparse,
            decomposer=decomposer,
            strategy=chosen,
            settings=settings,
        )
        if saved is not None:
            made._restore(saved, own_stage=strategy is None)
        return made

    def _restore(self, saved: SavedStrategy, *, own_stage: bool) -> None:
        """Keep the saved settings (those given to :meth:`load` win); the settings of a
        saved custom stage only when that stage is the strategy (``own_stage``)."""
        for name, one in saved.settings.items():
            if type(one) not in self._settings:
                self._keep(one, name)
        if own_stage and saved.stage_settings is not None and self._stage_settings is None:
            self._stage_settings = saved.stage_settings

    def _clone(
        self, dense: DenseRetriever | None = None, passages: Any = None, **changes: Any
    ) -> LogicRetriever:
        """A retriever like this one (``changes``: ``_settings``, ``_stage_settings``),
        over other indexes when ``dense`` is given."""
        clone = LogicRetriever(
            dense if dense is not None else self.dense,
            passages=passages if dense is not None else self.passages,
            sparse=self.sparse,
            decomposer=self.decomposer,
            strategy=self.strategy,
        )
        clone._settings = dict(changes.get("_settings", self._settings))
        clone._stage_settings = changes.get("_stage_settings", self._stage_settings)
        if dense is None:
            clone.resources = self.resources
        return clone

    def save(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write the dense index, documents, passage vectors and SPLADE index to one folder,
        with the strategy and its settings in ``strategy.json`` (:meth:`load` restores them;
        see :mod:`logic_rag.saved_strategy`)."""
        record = saved_record(self.strategy, self._settings.values(), self._stage_settings)
        files: dict[str, Any] = {}
        manifest: dict[str, Any] = {"passages": self.passages is not None}
        if not is_default(record):  # the default search needs no file: folders as before
            files[STRATEGY_FILE] = lambda p: atomic_write_json(p, record)
            manifest["strategy_file"] = STRATEGY_FILE
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

    def with_settings(
        self, *settings: StrategySettings, strategy: StrategyLike | None = None
    ) -> LogicRetriever:
        """A retriever sharing this one's indexes that searches with ``settings``: each
        replaces the settings of its class (``VerifySettings`` -> ``verify``;
        ``FusionSettings`` -> ``fusion`` and ``fusion-product``). With ``strategy`` the
        retriever's strategy changes too (one settings object, of that strategy).

        ``retriever.with_settings(replace(retriever.settings_for("verify"), verifier_top=40))``
        changes one value.
        """
        if strategy is not None and len(settings) != 1:
            raise ValueError("with strategy=, give that strategy's one settings object")
        clone = self._clone()
        if strategy is not None:
            clone.strategy = _check_strategy(strategy, self.sparse is not None)
        for one in settings:
            target = clone.strategy if strategy is not None else _strategy_of(one)
            clone._keep(one, target)
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
        strategy: StrategyLike | None = None,
    ) -> list[QueryPlan]:
        """Each query's logic: given, decomposed, or (``decompose=False``) the whole text.

        A decomposition less confident than ``strategy``'s (default: the retriever's)
        ``logic.min_confidence`` falls back to the whole text."""
        min_confidence = self._settings_of(strategy or self.strategy).logic.min_confidence
        return plan_queries(
            texts,
            logical_queries,
            self.decompose if decompose else None,
            min_confidence=min_confidence,
        )

    def pipeline(self, strategy: StrategyLike | None = None) -> Pipeline:
        """The stages a search with ``strategy`` (default: the retriever's) runs."""
        chosen = _check_strategy(strategy or self.strategy, self.sparse is not None)
        if isinstance(chosen, Stage):
            return chosen if isinstance(chosen, Pipeline) else Pipeline((chosen,))
        # Built once per strategy and settings for these indexes: the verifiers it holds
        # (an LLM, a cross-encoder) load their models once and keep their pair caches.
        settings = self.settings_for(chosen)
        return self.resources.loaded(
            ("pipeline", chosen, repr(settings)), lambda: pipeline_of(chosen, settings)
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
        plans = self.plan(texts, logical_queries, decompose=decompose, strategy=chosen)
        batch = SearchBatch([QueryState(p) for p in plans], k)
        self.pipeline(chosen)(batch, SearchContext(self.resources))
        settings = self._settings_of(chosen)
        return [explained_hits(state, self.resources, settings) for state in batch]

    def describe(self) -> dict[str, Any]:
        """Model names, strategy, its settings and pipeline, for reports and manifests."""
        settings = (
            self.settings_for(self.strategy)
            if isinstance(self.strategy, str)
            else self._settings_of(self.strategy)
        )
        try:
            written: Any = settings.to_dict()
        except TypeError:  # a verifier given as an object has no JSON form
            written = repr(settings)
        return {
            "model": self.dense.encoder.name,
            "sparse_model": None if self.sparse is None else self.sparse.encoder.name,
            "strategy": self.strategy if isinstance(self.strategy, str) else "custom",
            "pipeline": self.pipeline().describe(),
            "settings": written,
            "documents": len(self),
        }


def _strategy_of(settings: StrategySettings) -> str:
    """The first strategy whose settings class ``settings`` is (a clear error for none)."""
    for name, strategy in STRATEGIES.items():
        if type(settings) is strategy.settings:
            return name
    raise TypeError(
        f"{type(settings).__name__} is no named strategy's settings "
        f"(see logic_rag.strategy_settings)"
    )
