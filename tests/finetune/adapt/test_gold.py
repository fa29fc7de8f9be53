"""The gold control: the same plan labelled from known atom sets instead of an LLM."""

from __future__ import annotations

import json

import pytest

MEMBERS = {
    "Italian crime films": ["Gomorrah (film)", "Suburra (film)"],
    "films set in Rome": ["Suburra (film)", "La dolce vita"],
    "French novels": ["Nana (novel)", "Les Miserables", "The Stranger"],
    "novels set in Paris": ["Nana (novel)", "Les Miserables"],
    "Orchids of Malaysia": ["Vanda", "Bulbophyllum"],
    "orchids of Thailand": ["Vanda"],
}


def test_known_sets_label_exactly_the_members(tiny_index, tmp_path):
    from logic_rag.finetune.adapt import AdaptSettings, adapt
    from logic_rag.finetune.adapt.gold import KnownSetsVerifier

    index, queries = tiny_index
    sets = tmp_path / "atoms.jsonl"
    sets.write_text("".join(json.dumps({"atom": a, "docs": d}) + "\n" for a, d in MEMBERS.items()))
    teacher = KnownSetsVerifier.from_file(sets)
    settings = AdaptSettings(max_pairs=200, top_k=12, random_pages=0)
    adapt(
        index,
        tmp_path / "run",
        queries=queries,
        verifier=teacher,
        settings=settings,
        progress=False,
        stop_after="composed",
    )
    rows = [json.loads(x) for x in (tmp_path / "run" / "labels.jsonl").open()]
    yes = {(r["atom"].casefold(), r["doc"]) for r in rows if r["score"] >= 0.5}
    assert yes == {(a.casefold(), d) for a, docs in MEMBERS.items() for d in docs}
    composed = [json.loads(x) for x in (tmp_path / "run" / "composed.jsonl").open()]
    differences = {
        tuple(r["metadata"]["atoms"]): set(r["docs"])
        for r in composed
        if r["metadata"]["template"] == "_ that are not _"
    }
    assert differences[("French novels", "novels set in Paris")] == {"The Stranger"}


def test_an_atom_without_a_known_set_is_an_error(tiny_index, tmp_path):
    from logic_rag.finetune.adapt import AdaptError, AdaptSettings, adapt
    from logic_rag.finetune.adapt.gold import KnownSetsVerifier

    index, queries = tiny_index
    sets = tmp_path / "atoms.jsonl"
    sets.write_text(json.dumps({"atom": "French novels", "docs": ["Nana (novel)"]}) + "\n")
    with pytest.raises(AdaptError, match="not in the known sets"):
        adapt(
            index,
            tmp_path / "run",
            queries=queries,
            verifier=KnownSetsVerifier.from_file(sets),
            settings=AdaptSettings(max_pairs=50),
            progress=False,
            stop_after="labels",
        )
