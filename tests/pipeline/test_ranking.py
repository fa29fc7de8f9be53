"""Combining signals, reciprocal-rank fusion, the top k and backfill."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.pipeline.ranking import RRF_K, Combine, Cutoff, TopK, signal
from logic_rag.pipeline.state import QueryPlan, QueryState, SearchBatch
from logic_rag.query.algebra import And, Atom, Not


def _state() -> QueryState:
    state = QueryState(QueryPlan("q", Atom("q")))
    state.add_candidates("a", np.array([10, 11, 12]), np.array([0.9, 0.5, 0.1]))
    state.add_candidates("b", np.array([12, 13]), np.array([5.0, 4.0]))
    return state


def test_rrf_matches_the_formula():
    state = _state()
    values = signal(state, "rrf", ctx=None)  # type: ignore[arg-type]
    expected = {
        10: 1 / (RRF_K + 1),
        11: 1 / (RRF_K + 2),
        12: 1 / (RRF_K + 3) + 1 / (RRF_K + 1),
        13: 1 / (RRF_K + 2),
    }
    assert values.tolist() == pytest.approx([expected[d] for d in state.candidates.tolist()])


def test_a_sources_score_floors_documents_it_did_not_return():
    state = _state()
    values = signal(state, "b", ctx=None)  # type: ignore[arg-type]
    assert values.tolist() == [3.0, 3.0, 5.0, 4.0]


def test_unknown_signal_says_which_exist():
    with pytest.raises(KeyError, match="truth.*SoftLogic"):
        signal(_state(), "truth", ctx=None)  # type: ignore[arg-type]


def test_combine_weights_and_single_atom_shortcut():
    state = _state()
    state.set_signal("x", np.array([1.0, 2.0, 3.0, 4.0]))
    state.set_signal("y", np.array([1.0, 0.0, 0.0, 0.0]))
    batch = SearchBatch([state], k=2)
    Combine.of(x=1.0, y=10.0).run(batch, ctx=None)  # type: ignore[arg-type]
    assert state.score.tolist() == [11.0, 2.0, 3.0, 4.0]
    Combine.of(single="x", y=10.0).run(batch, ctx=None)  # type: ignore[arg-type]
    assert state.score.tolist() == [1.0, 2.0, 3.0, 4.0]  # one atom: the single signal alone
    TopK().run(batch, ctx=None)  # type: ignore[arg-type]
    assert state.ranked.tolist() == [3, 2]


def test_topk_is_stable_on_ties():
    state = _state()
    state.set_signal("x", np.zeros(4))
    batch = SearchBatch([state], k=3)
    Combine.of(x=1.0).run(batch, ctx=None)  # type: ignore[arg-type]
    TopK().run(batch, ctx=None)  # type: ignore[arg-type]
    assert state.ranked.tolist() == [0, 1, 2]


def test_backfill_continues_below_the_candidates(small_logic_retriever):
    from logic_rag.candidates import DenseCandidates
    from logic_rag.pipeline.ranking import Backfill

    pipeline = DenseCandidates(3) >> Combine.of(dense=1.0) >> TopK() >> Backfill()
    hits = small_logic_retriever.search("rivers of the north", 8, strategy=pipeline)
    plain = small_logic_retriever.dense.search("rivers of the north", 8)
    assert [h.id for h in hits] == [h.id for h in plain]
    assert all(a.score > b.score for a, b in zip(hits, hits[1:], strict=False))


class _VectorsOnly:
    """A test double of SearchContext: fixed query vectors and document vectors."""

    def __init__(self, queries: dict[str, np.ndarray], docs: np.ndarray) -> None:
        self.queries, self.docs = queries, docs
        self.resources = self
        self.wanted: list[str] = []

    def doc_vectors(self) -> np.ndarray:
        return self.docs

    def vectors(self, texts):
        return np.stack([self.queries[t] for t in texts])

    def want(self, texts, depth: int = 0) -> None:
        self.wanted.extend(texts)


def _negation_state() -> tuple[QueryState, _VectorsOnly]:
    logic = And((Atom("a"), Not(Atom("b")), Atom("c")))
    state = QueryState(QueryPlan("a and c, not b", logic))
    state.add_candidates("dense", np.array([0, 2, 3]), np.array([0.3, 0.2, 0.1]))
    rng = np.random.default_rng(0)
    ctx = _VectorsOnly(
        {t: rng.normal(size=4) for t in ("a", "b", "c", "a and c, not b")},
        rng.normal(size=(5, 4)),
    )
    return state, ctx


def test_positive_cosine_is_the_positive_atoms_mean_under_a_negation():
    state, ctx = _negation_state()
    values = signal(state, "positive_cosine", ctx)  # type: ignore[arg-type]
    q = ctx.queries
    expected = [(ctx.docs[d] @ q["a"] + ctx.docs[d] @ q["c"]) / 2 for d in (0, 2, 3)]
    assert values.tolist() == pytest.approx(expected)
    assert not np.allclose(values, signal(state, "cosine", ctx))  # type: ignore[arg-type]
    # Combine asks for the positive atoms' vectors up front (one encoder call per batch).
    Combine.of(positive_cosine=1.0).prepare(SearchBatch([state], k=2), ctx)  # type: ignore[arg-type]
    assert ctx.wanted == ["a", "c"]


def test_positive_cosine_is_the_cosine_without_a_negation():
    state, ctx = _negation_state()
    plain = QueryState(QueryPlan("a and c, not b", Atom("a")))
    plain.add_candidates("dense", state.candidates, np.zeros(3))
    both = signal(plain, "positive_cosine", ctx)  # type: ignore[arg-type]
    assert both.tolist() == signal(plain, "cosine", ctx).tolist()  # type: ignore[arg-type]
    only_negated = QueryState(QueryPlan("a and c, not b", Not(Atom("b"))))
    only_negated.add_candidates("dense", state.candidates, np.zeros(3))
    assert signal(only_negated, "positive_cosine", ctx).tolist() == pytest.approx(  # type: ignore[arg-type]
        signal(only_negated, "cosine", ctx).tolist()  # type: ignore[arg-type]
    )


def test_cut_keeps_the_best_and_sets_the_rest_aside_consistently():
    state = _state()  # candidates 10, 11, 12, 13
    state.set_signal("x", np.array([0.1, 0.9, 0.5, 0.7]))
    state.set_probs(np.array([[0.2, 0.8, 0.4, 0.6]]), np.array([[2.0, 8.0, 4.0, 6.0]]), "emb")
    batch = SearchBatch([state], k=3)
    Combine.of(x=1.0).run(batch, ctx=None)  # type: ignore[arg-type]
    Cutoff(2).run(batch, ctx=None)  # type: ignore[arg-type]
    assert state.candidates.tolist() == [11, 13]
    assert state.signals["x"].tolist() == [0.9, 0.7]
    assert state.probs.tolist() == [[0.8, 0.6]] and state.evidence.tolist() == [[8.0, 6.0]]
    assert state.score.tolist() == [0.9, 0.7] and state.checked_by == ["emb", "emb"]
    rows, probs = state.set_aside
    assert rows.tolist() == [12, 10] and probs.tolist() == [[0.4, 0.2]]
    with pytest.raises(RuntimeError, match="after scoring began"):
        state.add_candidates("late", np.array([99]), np.array([1.0]))


def test_cutoff_needs_a_score_and_a_positive_size():
    state = _state()
    with pytest.raises(ValueError, match="Combine"):
        Cutoff(2).run(SearchBatch([state], k=2), ctx=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n >= 1"):
        Cutoff(0)
    Cutoff(10).run(SearchBatch([state], k=2), ctx=None)  # type: ignore[arg-type]  # fewer: no-op
    assert state.set_aside is None and len(state.candidates) == 4


def test_backfill_puts_the_set_aside_first_then_dense(small_logic_retriever):
    from logic_rag.candidates import DenseCandidates
    from logic_rag.pipeline.ranking import Backfill

    query = "rivers of the north"
    cascade = (
        DenseCandidates(6)
        >> Combine.of(dense=1.0)
        >> Cutoff(2)
        >> Combine.of(dense=-1.0)
        >> TopK()
        >> Backfill()
    )
    hits = small_logic_retriever.search(query, 9, strategy=cascade)
    plain = [h.id for h in small_logic_retriever.dense.search(query, 9)]
    # The best two, re-ranked (reversed), then the four set aside, then dense below them.
    assert [h.id for h in hits] == [plain[1], plain[0], *plain[2:9]]
    assert all(a.score > b.score for a, b in zip(hits, hits[1:], strict=False))
