"""Combining signals, reciprocal-rank fusion, the top k and backfill."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.pipeline.ranking import RRF_K, Combine, TopK, signal
from logic_rag.pipeline.state import QueryPlan, QueryState, SearchBatch
from logic_rag.query.algebra import Atom


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
