"""The label -> relation-matrix contract, checked against brute force."""

from __future__ import annotations

import pytest
import torch

from logic_rag.finetune.losses.relations import (
    BatchRelations,
    GoldSetRelations,
    RelationError,
    resolve_relations,
)

GOLD = {10: {1, 2, 3}, 11: {2}, 12: {4, 5}, 13: {1, 2, 3, 4, 5}}
SUBSET = [(11, 10), (10, 13), (12, 13), (11, 13)]
EXCLUSION = [(11, 12)]


def test_gold_set_relations_match_brute_force() -> None:
    provider = GoldSetRelations(GOLD, SUBSET, EXCLUSION)
    rows = [[10, 1, 0], [11, 2, 0], [12, 4, 1], [13, 5, 1], [10, 3, 0]]
    rel = provider(torch.tensor(rows))
    for i, (qi, _, _) in enumerate(rows):
        for j, (qj, dj, _) in enumerate(rows):
            assert bool(rel.positive[i, j]) == (dj in GOLD[qi])
            assert bool(rel.subset[i, j]) == ((qi, qj) in SUBSET)
            assert bool(rel.exclusion[i, j]) == ({qi, qj} == {11, 12})
    # Document 2 is the positive of row 1 and gold for queries 10 and 13 as well.
    assert rel.positive[:, 1].tolist() == [True, True, False, True, True]


def test_unknown_query_and_foreign_document_are_clear_errors() -> None:
    provider = GoldSetRelations(GOLD)
    with pytest.raises(RelationError, match="query id 99"):
        provider(torch.tensor([[99, 1, 0]]))
    with pytest.raises(RelationError, match="not in the gold set of query 11"):
        provider(torch.tensor([[11, 5, 0]]))
    with pytest.raises(RelationError, match="query_id, positive_doc_id"):
        provider(torch.tensor([1.0, 0.0]))


def test_checked_pads_hard_negatives_symmetrises_exclusion_and_drops_diagonal() -> None:
    rel = BatchRelations(
        positive=torch.eye(3, dtype=torch.bool),
        subset=torch.ones(3, 3, dtype=torch.bool),
        exclusion=torch.tensor([[1, 1, 0], [0, 0, 0], [0, 0, 0]]).bool(),
    ).checked(3, 6, "cpu")
    assert rel.positive.shape == (3, 6) and not rel.positive[:, 3:].any()
    assert not rel.subset.diagonal().any() and int(rel.subset.sum()) == 6
    assert rel.exclusion.tolist() == [[False, True, False], [True, False, False], [False] * 3]


def test_checked_rejects_bad_shapes_and_queries_without_positives() -> None:
    with pytest.raises(RelationError, match="no positive"):
        BatchRelations(positive=torch.zeros(2, 2, dtype=torch.bool)).checked(2, 2, "cpu")
    with pytest.raises(RelationError, match="expected \\(3, 3\\)"):
        BatchRelations(positive=torch.eye(3).bool(), subset=torch.zeros(2, 2)).checked(3, 3, "cpu")
    with pytest.raises(RelationError, match="one row per query"):
        BatchRelations(positive=torch.eye(2).bool()).checked(3, 3, "cpu")


def test_default_relations_are_one_positive_per_query() -> None:
    rel = resolve_relations(None, None, 4, 8, "cpu")
    assert rel.positive[:, :4].equal(torch.eye(4, dtype=torch.bool))
    assert not rel.positive[:, 4:].any()


def test_labelled_hard_negative_columns_are_positive_where_gold_brute_force() -> None:
    """A row's hard negative (4th label entry) is a column after the positives: negative for
    its own query, but positive for any query of the batch whose gold set holds it."""
    provider = GoldSetRelations(GOLD, SUBSET, EXCLUSION)
    rows = [[10, 1, 0, 4], [11, 2, 0, 3], [12, 4, 1, 1], [13, 5, 1, 6]]
    rel = provider(torch.tensor(rows)).checked(4, 8, "cpu")
    assert rel.positive.shape == (4, 8)
    for i, (qi, _, _, _) in enumerate(rows):
        for j, (_, dj, _, nj) in enumerate(rows):
            assert bool(rel.positive[i, j]) == (dj in GOLD[qi])
            assert bool(rel.positive[i, 4 + j]) == (nj in GOLD[qi])
        assert not rel.positive[i, 4 + i]  # never positive for its own query
    # Document 4 is row 0's hard negative and gold for queries 12 and 13.
    assert rel.positive[:, 4].tolist() == [False, False, True, True]


def test_hard_negative_in_its_own_gold_set_is_refused() -> None:
    with pytest.raises(RelationError, match="hard negative 2 is in the gold set of query 10"):
        GoldSetRelations(GOLD)(torch.tensor([[10, 1, 0, 2]]))
