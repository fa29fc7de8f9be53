"""Documents: facts stated, traps never assert a value the entity lacks, names unique."""

from __future__ import annotations

import dataclasses

import pytest

from logic_rag.evals.world import (
    WorldConfig,
    generate_world,
    make_entity,
    render_document,
    trap_violations,
    unstated_facts,
)
from logic_rag.evals.world.mentions import NEGATION_CUE, split_sentences
from logic_rag.evals.world.names import code_word, unique_stem

FACETS = {
    "films": [
        "country",
        "genre",
        "decade",
        "setting_city",
        "setting_country",
        "language",
        "director_nationality",
        "traits",
    ],
    "books": ["kind", "genre", "author_nationality", "setting", "subject", "decade", "traits"],
    "plants": ["family", "habit", "regions", "region_group", "endemic", "uses", "described"],
    "animals": [
        "class",
        "group",
        "regions",
        "continent",
        "endemic",
        "habitat",
        "diet",
        "status",
        "described",
    ],
}


@pytest.fixture(scope="module")
def world():
    return generate_world(WorldConfig(n_entities=400, n_queries_per_split={"test": 10}))


def test_no_document_asserts_a_value_its_entity_lacks(world):
    problems = [p for e in world.entities for p in trap_violations(e, world.document(e)["text"])]
    assert problems == []


def test_every_facet_value_is_stated_positively(world):
    missing = {
        e.title: unstated_facts(e, world.document(e)["text"], FACETS[e.domain])
        for e in world.entities
    }
    assert {t: m for t, m in missing.items() if m} == {}


def test_traps_are_common_and_negated(world):
    """Most documents mention, under negation, a value their entity lacks (a real trap)."""
    with_trap = 0
    for e in world.entities:
        text = world.document(e)["text"]
        stripped = " ".join(s for s in split_sentences(text) if not NEGATION_CUE.search(s))
        if NEGATION_CUE.search(text) and stripped != text:
            # the negated sentences really mention a lacked value: dropping the cue flags it
            uncued = NEGATION_CUE.sub("", text)
            if trap_violations(e, uncued):
                with_trap += 1
    assert with_trap / len(world.entities) > 0.5


def test_checker_catches_a_planted_positive_mention():
    plant = next(make_entity(0, i) for i in range(40) if make_entity(0, i).domain == "plants")
    lacked = "Thailand" if not plant.has("regions", "Thailand") else "Peru"
    text = render_document(plant, 0) + f" It is a common species in {lacked}."
    assert trap_violations(plant, text)
    negated = render_document(plant, 0) + f" It does not occur in {lacked}."
    assert trap_violations(plant, negated) == []


def test_checker_catches_a_wrong_decade_year():
    film = make_entity(0, 0)
    assert film.domain == "films"
    year = int(film.facets["year"][0])
    wrong = dataclasses.replace(
        film, facets={**film.facets, "decade": (f"{year // 10 * 10 + 20}s",)}
    )
    assert trap_violations(wrong, render_document(film, 0))


def test_document_length_and_title_uniqueness(world):
    lengths = [len(world.document(e)["text"].split()) for e in world.entities]
    assert min(lengths) >= 60 and max(lengths) <= 150
    titles = [e.title for e in world.entities]
    assert len(set(titles)) == len(titles)


def test_code_words_are_a_bijection():
    words = [code_word(i, 2) for i in range(80**2)]
    assert len(set(words)) == 80**2
    stems = {unique_stem(i) for i in range(0, 2_000_000, 97)}
    assert len(stems) == len(range(0, 2_000_000, 97))
    with pytest.raises(ValueError):
        code_word(80**2, 2)


def test_entity_is_a_pure_function_of_seed_and_index():
    assert make_entity(5, 1234) == make_entity(5, 1234)
    assert render_document(make_entity(5, 1234), 5) == render_document(make_entity(5, 1234), 5)
    assert make_entity(5, 1234).title != make_entity(5, 1235).title


def test_checked_facets_cover_every_facet(world):
    """A new facet must be added to FACETS (or here, with a reason) to stay checked."""
    unchecked = {"year", "describer"}  # year: its decade is checked; describer: a name
    for e in world.entities:
        assert set(e.facets) == set(FACETS[e.domain]) | (unchecked & set(e.facets)), e.domain


def test_describer_is_named_in_the_text(world):
    for e in world.entities:
        if "describer" in e.facets:
            assert e.facets["describer"][0] in world.document(e)["text"]
