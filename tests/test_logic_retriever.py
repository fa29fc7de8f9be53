"""The logical retriever end to end on a generated world with MiniLM and SPLADE-tiny."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from logic_rag.errors import IndexCorruptError
from logic_rag.evals.quest import evaluate_run, load_atom_sets, load_quest_queries
from logic_rag.evals.quest.runner import gold_logical_query
from logic_rag.logic_retriever import STRATEGIES, LogicRetriever
from logic_rag.query import And, Atom, Not
from logic_rag.query.algebra import negated_atoms, positive_atoms
from logic_rag.strategy_settings import (
    EvidenceSettings,
    LLMRerankSettings,
    QualitySettings,
    RerankSettings,
    VerifySettings,
)


@pytest.fixture(scope="module")
def world_queries(small_world):
    return load_quest_queries(small_world / "test.jsonl"), load_atom_sets(
        small_world / "atoms.jsonl"
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_returns_explained_hits(small_logic_retriever, strategy):
    from tests.verifier_doubles import KeywordVerifier

    query = "Italian crime films that are not 1970s films"
    retriever = small_logic_retriever
    if strategy in ("quality", "llm-rerank"):  # the LLM is a test double (tests/verifiers: real)
        keyword = KeywordVerifier()
        retriever = retriever.with_settings(
            QualitySettings(verifier=keyword), LLMRerankSettings(verifier=keyword)
        )
    hits = retriever.search(query, k=7, strategy=strategy)
    assert [h.rank for h in hits] == list(range(1, 8))
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))
    assert len({h.id for h in hits}) == 7
    if strategy != "vanilla":
        for hit in hits:
            assert set(hit.constraints) == {"Italian crime films", "NOT 1970s films"}
            from logic_rag.explain import DEFAULT_VERDICTS as rule

            for name, ok in hit.constraints.items():
                assert ok == rule.verdict(hit.constraint_scores[name])  # ✓ / ✗ / ? (None)
            assert hit.logic["query"] == "Italian crime films NOT 1970s films"


def test_decomposition_and_gold_logic_agree_on_a_simple_query(small_logic_retriever):
    text = "Italian crime films that are not 1970s films"
    gold = And((Atom("Italian crime films"), Not(Atom("1970s films"))))
    assert small_logic_retriever.decompose(text).query == gold
    by_rules = small_logic_retriever.search(text, k=10, strategy="setops")
    by_gold = small_logic_retriever.search(text, k=10, strategy="setops", logical_query=gold)
    assert [h.id for h in by_rules] == [h.id for h in by_gold]


def test_logic_lowers_negation_violations_on_the_world(small_logic_retriever, world_queries):
    queries, atom_sets = world_queries
    negation = [q for q in queries if q.template and "not" in q.template]
    assert len(negation) >= 10
    rates = {}
    for strategy in ("vanilla", "setops"):
        found = small_logic_retriever.search_batch(
            [q.query for q in negation], k=100, strategy=strategy
        )
        run = {
            q.qid: [(h.id, h.score) for h in hits] for q, hits in zip(negation, found, strict=True)
        }
        rates[strategy] = evaluate_run(run, negation, atom_sets)["all"]["violation_rate"]
    assert rates["setops"] < rates["vanilla"]


def test_batch_equals_single_and_gold_logic_parses(small_logic_retriever, world_queries):
    queries, _ = world_queries
    texts = [q.query for q in queries[:6]]
    batch = small_logic_retriever.search_batch(texts, k=5, strategy="rerank")
    for text, hits in zip(texts, batch, strict=True):
        assert [h.id for h in hits] == [h.id for h in small_logic_retriever.search(text, k=5)]
    assert all(gold_logical_query(q) is not None for q in queries)


def test_deep_rankings_continue_past_the_candidates(small_logic_retriever):
    hits = small_logic_retriever.search("Flora of Malaysia but not Flora of Thailand", k=300)
    assert len(hits) == 300
    assert len({h.id for h in hits}) == 300


def test_save_load_keeps_passages_and_sparse(small_logic_retriever, tmp_path):
    out = small_logic_retriever.save(tmp_path / "idx")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["passages"] is True and manifest["sparse"]["model"] == "splade-tiny"
    loaded = LogicRetriever.load(out, model=small_logic_retriever.dense.encoder)
    query = "Novels set in Massachusetts that are not British novels"
    for strategy in ("setops", "splade-compose"):
        a = small_logic_retriever.search(query, k=5, strategy=strategy)
        b = loaded.search(query, k=5, strategy=strategy)
        assert [h.id for h in a] == [h.id for h in b]
        np.testing.assert_allclose([h.score for h in a], [h.score for h in b], rtol=1e-4)
    data = bytearray((out / "passages.npy").read_bytes())
    data[-3] ^= 0xFF
    (out / "passages.npy").write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match="passages.npy"):
        LogicRetriever.load(out, model=small_logic_retriever.dense.encoder)


def test_errors(small_logic_retriever):
    with pytest.raises(ValueError, match="unknown strategy 'magic'"):
        small_logic_retriever.search("films", strategy="magic")
    with pytest.raises(ValueError, match="empty"):
        small_logic_retriever.search("  ")
    with pytest.raises(ValueError, match="k must be positive"):
        small_logic_retriever.search("films", k=0)
    dense_only = LogicRetriever(small_logic_retriever.dense)
    with pytest.raises(ValueError, match="needs a SPLADE index"):
        dense_only.search("films", strategy="splade")
    with pytest.raises(ValueError, match="temperature"):
        EvidenceSettings(temperature=0)


def test_with_settings_changes_only_the_values_given(small_logic_retriever):
    strict = small_logic_retriever.with_settings(
        RerankSettings(truth_weight=0.0, positive_prior=0.0)
    )
    query = "Italian crime films that are not 1970s films"
    plain = small_logic_retriever.search(query, k=10, strategy="vanilla")
    assert [h.id for h in strict.search(query, k=10, strategy="rerank")] == [h.id for h in plain]
    assert strict.settings_for("rerank").truth_weight == 0.0
    assert small_logic_retriever.settings_for("rerank") == RerankSettings()


def test_positive_prior_ranks_a_negation_by_its_positive_part(small_logic_retriever):
    """With no truth weight and the whole prior from the positive part, ``rerank`` orders
    the whole query's candidates by the positive atom's cosine (computed here by hand)."""
    query = "Italian crime films that are not 1970s films"
    lr = small_logic_retriever.with_settings(RerankSettings(truth_weight=0.0, positive_prior=1.0))
    decomposed = lr.decompose(query)
    positive = [a.text for a in decomposed.query.args if not isinstance(a, Not)]
    assert positive and len(positive) < len(decomposed.query.args)
    dense = small_logic_retriever.dense
    pool = dense.search(query, 100)
    vectors = dense.encoder.encode_queries(positive)
    rows = {d.id: i for i, d in enumerate(dense.documents)}
    doc_vectors = dense.index.vectors()
    by_hand = sorted(pool, key=lambda h: -float((doc_vectors[rows[h.id]] @ vectors.T).mean()))
    got = lr.search(query, k=10, strategy="rerank")
    assert [h.id for h in got] == [h.id for h in by_hand[:10]]
    with pytest.raises(ValueError, match="positive_prior"):
        RerankSettings(positive_prior=1.5)


class _KeywordVerifier:
    """A test double: P = 0.99 when the atom's last word is in the page, else 0.01."""

    def __new__(cls):
        from logic_rag.verifiers.base import PairVerifier
        from logic_rag.verifiers.cache import PairCache

        class Keyword(PairVerifier):
            def __init__(self) -> None:
                object.__setattr__(self, "cache", PairCache(max_entries=10_000))
                object.__setattr__(self, "scored", [])

            def fingerprint(self) -> str:
                return "keyword"

            def score_texts(self, pairs):
                self.scored.extend(pairs)
                hit = [a.split()[-1].lower() in t.lower() for a, t in pairs]
                return np.where(hit, 4.6, -4.6)

        return Keyword()


def test_verify_with_a_second_verifier_ranks_by_its_evidence(small_logic_retriever):
    query = "Italian crime films that are not 1970s films"
    verifier = _KeywordVerifier()
    strict = small_logic_retriever.with_settings(
        VerifySettings(verifier=verifier, truth_weight=100.0)
    )
    hits = strict.search(query, k=5, strategy="verify")
    logic = small_logic_retriever.decompose(query).query
    positive = {a.text for a in positive_atoms(logic)}
    # Only positive atoms go to the second verifier (verifier_atoms="positive").
    checked_atoms = {a for a, _ in verifier.scored}
    assert checked_atoms and checked_atoms <= positive
    assert not checked_atoms & {a.text for a in negated_atoms(logic)}
    # With a huge weight, pages the keyword verifier accepts for every checked atom lead.
    lead = hits[0].text.lower()
    assert all(a.split()[-1].lower() in lead for a in checked_atoms)


def test_verify_top_limits_the_pairs_checked(small_logic_retriever):
    query = "Italian crime films"
    everything, top3 = _KeywordVerifier(), _KeywordVerifier()
    every = small_logic_retriever.with_settings(VerifySettings(verifier=everything))
    every.search(query, k=5, strategy="verify")
    small_logic_retriever.with_settings(VerifySettings(verifier=top3, verifier_top=3)).search(
        query, k=5, strategy="verify"
    )
    assert 0 < len(top3.scored) <= 3 * len({a for a, _ in top3.scored}) < len(everything.scored)


def test_verify_top_is_a_cascade_over_the_embedding_ranking(small_logic_retriever):
    """Brute force: the first ``top`` hits are the embedding pipeline's first ``top``,
    ordered as a full re-check orders them; below them the embedding order continues."""
    query = "Italian crime films that are not 1970s films"
    top, k = 6, 15
    weighted = VerifySettings(truth_weight=5.0)
    embedding_only = small_logic_retriever.with_settings(weighted)
    first = embedding_only.search(query, k=k, strategy="verify")
    checked = replace(weighted, verifier=_KeywordVerifier())
    full = small_logic_retriever.with_settings(checked)
    cascade = small_logic_retriever.with_settings(replace(checked, verifier_top=top))
    everything = full.search(query, k=100, strategy="verify")
    hits = cascade.search(query, k=k, strategy="verify")
    head = {h.id for h in first[:top]}
    assert [h.id for h in hits[:top]] == [h.id for h in everything if h.id in head]
    assert [h.id for h in hits[top:]] == [h.id for h in first[top:]]
    assert [h.id for h in hits] != [h.id for h in first]  # the re-check changed the order
    assert all(a.score > b.score for a, b in zip(hits, hits[1:], strict=False))
    # Hits below the cut keep the constraint scores the embedding evidence gave them.
    assert all(h.constraint_scores for h in hits[top:])
    assert hits[top].constraint_scores == first[top].constraint_scores


def test_verifier_weight_blends_the_verdict_with_the_embedding_evidence(small_logic_retriever):
    """verifier_weight=0.5: each positive atom's probability is half the keyword verdict and
    half the embedding evidence; negated atoms keep the embedding evidence alone."""
    query = "Italian crime films that are not 1970s films"
    embedding = {
        h.id: h.constraint_scores
        for h in small_logic_retriever.search(query, k=100, strategy="verify")
    }
    half = small_logic_retriever.with_settings(
        VerifySettings(verifier=_KeywordVerifier(), verifier_weight=0.5)
    )
    hits = half.search(query, k=100, strategy="verify")
    positive = {a.text for a in positive_atoms(small_logic_retriever.decompose(query).query)}
    yes, no = 1 / (1 + np.exp(-4.6)), 1 / (1 + np.exp(4.6))
    blended = 0
    for hit in hits:
        for name, p in hit.constraint_scores.items():
            if name in positive:
                verdict = yes if name.split()[-1].lower() in hit.text.lower() else no
                assert p == pytest.approx(0.5 * verdict + 0.5 * embedding[hit.id][name], abs=2e-4)
                blended += 1
            else:
                assert p == pytest.approx(embedding[hit.id][name], abs=2e-4)
    assert blended >= len(hits)


def test_verify_settings_errors_are_clear():
    with pytest.raises(ValueError, match="unknown verifier 'bogus'"):
        VerifySettings(verifier="bogus")
    with pytest.raises(ValueError, match="verifier_top"):
        VerifySettings(verifier_top=0)
    with pytest.raises(ValueError, match="verifier_atoms"):
        VerifySettings(verifier_atoms="some")  # type: ignore[arg-type]
    for weight in (0.0, 1.5):
        with pytest.raises(ValueError, match="verifier_weight"):
            VerifySettings(verifier_weight=weight)
