"""Hard negatives: known ones from the atoms' sets (brute force), mined ones, the dataset
column and its labels."""

from __future__ import annotations

import pytest

from logic_rag.finetune.data import (
    TrainingSet,
    TrainQuery,
    known_hard_negatives,
    to_contrastive_dataset,
    with_hard_negatives,
)
from logic_rag.query.algebra import And, Atom, Not, Or, atoms, negated_atoms

DOCS = {f"d{i}": f"document number {i}" for i in range(12)}
SETS = {
    "A": {"d0", "d1", "d2", "d3"},
    "B": {"d2", "d3", "d4", "d5"},
    "C": {"d6", "d7"},
}


def _ts() -> TrainingSet:
    a, b, c = Atom("A"), Atom("B"), Atom("C")
    queries = [
        TrainQuery("and", "A that are also B", ("d2", "d3"), "g", And((a, b))),
        TrainQuery("not", "A that are not B", ("d0", "d1"), "g", And((a, Not(b)))),
        TrainQuery("or", "A or C", ("d0", "d1", "d2", "d3", "d6", "d7"), None, Or((a, c))),
        TrainQuery("plain", "no logic", ("d9",), None, None),
    ]
    return TrainingSet(queries, dict(DOCS))


def _brute(q: TrainQuery) -> list[str]:
    if q.logical_query is None:
        return []
    negated = {x.text for x in negated_atoms(q.logical_query)}
    names = [x.text for x in atoms(q.logical_query)]
    out = []
    for doc in sorted(DOCS):
        if doc in q.gold:
            continue
        in_neg = any(doc in SETS[n] for n in names if n in negated)
        hits = sum(doc in SETS[n] for n in names if n not in negated)
        if in_neg or hits:
            out.append((-int(in_neg), -hits, doc))
    return [d for _, _, d in sorted(out)]


def test_known_hard_negatives_match_brute_force() -> None:
    ts = _ts()
    known = known_hard_negatives(ts, SETS)
    for q in ts.queries:
        assert known.get(q.query_id, []) == _brute(q), q.query_id
    # "A but not B": the pages known in B come first; "A and B": pages in only one atom.
    assert known["not"][:2] == ["d2", "d3"] and set(known["not"]) == {"d2", "d3", "d4", "d5"}
    assert set(known["and"]) == {"d0", "d1", "d4", "d5"}
    assert "or" not in known and "plain" not in known  # a complete union has no known outsider


def test_limit_and_merge_never_keep_gold() -> None:
    ts = _ts()
    assert len(known_hard_negatives(ts, SETS, limit=1)["not"]) == 1
    merged = with_hard_negatives(ts, {"not": ["d2", "d0"]}, {"not": ["d2", "d11"]})
    by_id = {q.query_id: q for q in merged.queries}
    assert by_id["not"].hard_negatives == ("d2", "d11")  # d0 is gold, d2 once
    assert by_id["and"].hard_negatives == ()


def test_dataset_negative_column_and_labels() -> None:
    ts = with_hard_negatives(_ts(), known_hard_negatives(_ts(), SETS))
    data = to_contrastive_dataset(ts, seed=3, hard_negatives=True)
    assert data.column_names == ["anchor", "positive", "negative", "label"]
    texts = list(ts.documents.values())
    ids = list(ts.documents)
    seen: dict[int, set[str]] = {}
    for _ in range(6):
        for row in data:
            qi, pos, _group, neg = row["label"]
            q = ts.queries[qi]
            assert ids[pos] in q.gold and row["positive"] == texts[pos]
            assert ids[neg] not in q.gold and row["negative"] == texts[neg]
            if q.hard_negatives:
                assert ids[neg] in q.hard_negatives
            seen.setdefault(qi, set()).add(ids[neg])
    # Every known hard negative of "not" is visited within a few passes.
    assert seen[1] == {"d2", "d3", "d4", "d5"}
    assert to_contrastive_dataset(ts, seed=3).column_names == ["anchor", "positive", "label"]


def test_mined_negatives_exclude_gold_and_known_positives() -> None:
    pytest.importorskip("sentence_transformers")
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.finetune.data import mined_hard_negatives

    docs = {
        "cat1": "Cats are small domestic felines that purr.",
        "cat2": "A kitten is a young cat.",
        "cat3": "Lions and tigers are big cats.",
        "dog1": "Dogs are loyal domestic canines.",
        "car1": "A car is a motor vehicle with four wheels.",
        "sea1": "The ocean covers most of the planet.",
    }
    ts = TrainingSet([TrainQuery("q", "small cats", ("cat1", "cat2"))], docs)
    model = DenseEncoder("minilm").model
    mined = mined_hard_negatives(ts, model, num_negatives=3, known_positives={"q": {"cat3"}})
    assert mined["q"] and not set(mined["q"]) & {"cat1", "cat2", "cat3"}
    assert len(mined["q"]) <= 3


def test_mining_uses_the_models_own_prompts(monkeypatch) -> None:
    """A model with query / document prompts (EmbeddingGemma) mines with them; MiniLM,
    which has none, mines as before."""
    pytest.importorskip("sentence_transformers")
    import sentence_transformers.util as st_util

    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.finetune.data import mined_hard_negatives

    seen: list[dict] = []
    original = st_util.mine_hard_negatives

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(st_util, "mine_hard_negatives", spy)
    docs = {f"d{i}": f"Document {i} about cats and dogs." for i in range(6)}
    ts = TrainingSet([TrainQuery("q", "cats", ("d0",))], docs)
    model = DenseEncoder("minilm").model
    mined_hard_negatives(ts, model, num_negatives=2)
    assert "query_prompt_name" not in seen[-1] and "corpus_prompt_name" not in seen[-1]
    monkeypatch.setattr(model, "prompts", {"query": "query: ", "document": "passage: "})
    mined = mined_hard_negatives(ts, model, num_negatives=2)
    assert seen[-1]["query_prompt_name"] == "query"
    assert seen[-1]["corpus_prompt_name"] == "document"
    assert mined["q"] and "d0" not in mined["q"]


def test_ranked_hard_negatives_filters_gold_known_positives_and_duplicates() -> None:
    from logic_rag.finetune.data import ranked_hard_negatives

    docs = {d: d for d in ("a", "b", "c", "d", "e")}
    ts = TrainingSet([TrainQuery("q1", "one", ("a",)), TrainQuery("q2", "two", ("b",))], docs)
    ranked = {"q1": ["a", "c", "c", "b", "d", "e"], "q2": ["b"]}
    got = ranked_hard_negatives(ts, ranked, num_negatives=2, known_positives={"q1": {"b"}})
    # Brute force: walk the ranking, skip gold, known positives and repeats, stop at 2.
    assert got == {"q1": ["c", "d"]}  # q2 has nothing left, so it is left out


def test_mining_cache_folder_is_keyed_by_weights_and_settings(tmp_path) -> None:
    pytest.importorskip("sentence_transformers")
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.finetune.data import mining_cache_folder

    model = DenseEncoder("minilm").model
    first = mining_cache_folder(tmp_path, model, "a" * 64)
    assert first == mining_cache_folder(tmp_path, model, "a" * 64)
    assert first.parent == tmp_path
    assert mining_cache_folder(tmp_path, model, "b" * 64) != first
    old = model.max_seq_length
    model.max_seq_length = old // 2
    try:
        assert mining_cache_folder(tmp_path, model, "a" * 64) != first
    finally:
        model.max_seq_length = old
    with pytest.raises(ValueError, match="fingerprint"):
        mining_cache_folder(tmp_path, model, "")


def test_mining_reuses_its_cache_and_recovers_from_a_torn_file(tmp_path, monkeypatch) -> None:
    """The second run embeds no document; a truncated cache file (an interrupted write) is
    removed and re-encoded instead of failing every later run."""
    pytest.importorskip("sentence_transformers")
    import numpy as np

    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.finetune.data import mined_hard_negatives

    docs = {
        f"d{i}": f"Document {i} about {w}." for i, w in enumerate("cats dogs cars sea sun".split())
    }
    ts = TrainingSet([TrainQuery("q", "cats and dogs", ("d0",))], docs)
    model = DenseEncoder("minilm").model
    encoded: list[int] = []
    original = model.encode_document

    def counting(sentences, *args, **kwargs):
        encoded.append(len(sentences))
        return original(sentences, *args, **kwargs)

    monkeypatch.setattr(model, "encode_document", counting)
    folder = tmp_path / "mining-x"
    first = mined_hard_negatives(ts, model, num_negatives=2, cache_folder=folder)
    assert encoded == [5] and first["q"] and "d0" not in first["q"]
    (corpus_file,) = folder.glob("corpus_embeddings_*.npy")

    assert mined_hard_negatives(ts, model, num_negatives=2, cache_folder=folder) == first
    assert encoded == [5]  # read from the cache

    data = corpus_file.read_bytes()
    corpus_file.write_bytes(data[: len(data) // 2])
    assert mined_hard_negatives(ts, model, num_negatives=2, cache_folder=folder) == first
    assert encoded == [5, 5]
    assert np.load(corpus_file).shape[0] == 5
