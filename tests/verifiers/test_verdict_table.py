"""Constraint verdicts never contradict the page they explain.

The cases a new user met (the strawberry shown ✓ for NOT berries, an American film ✓ for
NOT American, films by others ✓ for "directed by François Ozon", the orchid quickstart's
Thai orchid ✓ for NOT Thailand) are run with MiniLM through the reranker (evidence
calibrated on the candidates) and through a retriever over the same pages (calibrated on
the corpus). A verdict that contradicts the text must never be ✓ for a negation it
violates; ? is allowed: the embedding evidence may be unsure, it may not lie.
"""

from __future__ import annotations

import pytest

FRUITS = [
    "Apples are crisp red or green fruits grown in orchards in Washington.",
    "Oranges are sweet citrus fruits grown in Spain and Florida.",
    "Lemons are sour yellow citrus fruits used in lemonade.",
    "Bananas are long yellow tropical fruits grown in Ecuador.",
    "Strawberries are small red berries grown in California.",
    "Blueberries are small blue berries grown in Maine and Michigan.",
    "Almonds are nuts grown in California orchards.",
]
FILMS = [
    "Shrek is a 2001 American animated comedy film produced by DreamWorks.",
    "Toy Story is a 1995 American animated comedy film produced by Pixar.",
    "Amélie is a 2001 French romantic comedy film directed by Jean-Pierre Jeunet.",
    "Mr. Bean's Holiday is a 2007 British comedy film.",
    "The Intouchables is a 2011 French comedy-drama film.",
]
OZON = [
    "Beau Travail is a 1999 French film directed by Claire Denis.",
    "Amélie is a 2001 French romantic comedy film directed by Jean-Pierre Jeunet.",
    "La Haine is a 1995 French drama film directed by Mathieu Kassovitz.",
    "The Piano Teacher is a 2001 film directed by Michael Haneke.",
    "Caché is a 2005 thriller film directed by Michael Haneke.",
    "8 Women is a 2002 French musical comedy film directed by François Ozon.",
    "Swimming Pool is a 2003 thriller film directed by François Ozon.",
]
ORCHIDS = [
    "Bulbophyllum lobbii, an orchid of Thailand, Malaysia and Indonesia.",
    "The pigeon orchid grows in Indonesia, Malaysia and Thailand.",
    "A slipper orchid found only in Thailand.",
    "The moth orchid, native to Indonesia and Malaysia.",
    "The tiger orchid of Malaysia and Indonesia.",
    "An orchid of Java and Bali in Indonesia.",
]

#: (query, pages, page that must not get ✓, constraint, why)
CASES = [
    ("fruits that are not berries", FRUITS, 4, "NOT berries", "the strawberry is a berry"),
    ("fruits that are not berries", FRUITS, 5, "NOT berries", "the blueberry is a berry"),
    ("comedy films that are not American films", FILMS, 0, "NOT American films", "Shrek"),
    ("comedy films that are not American films", FILMS, 1, "NOT American films", "Toy Story"),
    ("Orchids of Malaysia but not Thailand", ORCHIDS, 2, "NOT Thailand", "Thai only"),
]
#: (query, pages, rows that must not get ✓ for the constraint, constraint)
NOT_MEMBERS = [
    ("films directed by François Ozon", OZON, [0, 1, 2, 3, 4], "films directed by François Ozon"),
]


def _hits_by_row(hits, pages):
    where = {text: i for i, text in enumerate(pages)}
    return {where[h.text]: h for h in hits}


def _constraint(hit, wanted):
    words = wanted.lower().split()
    names = [n for n in hit.constraints if all(w in n.lower().split() for w in words)]
    assert names, (wanted, hit.constraints)
    return names[0]


@pytest.fixture(scope="module")
def reranker(minilm):
    from logic_rag.integrations._rerank import CandidateReranker

    return CandidateReranker(minilm)


@pytest.mark.parametrize(("query", "pages", "row", "constraint", "why"), CASES)
def test_a_negation_the_page_violates_is_never_shown_as_held(
    minilm, reranker, query, pages, row, constraint, why
):
    from logic_rag import Document, LogicRetriever

    ranked = reranker.rerank(query, pages)
    hit = next(r.hit for r in ranked if r.position == row)
    name = _constraint(hit, constraint)
    assert hit.constraints[name] is not True, (why, "reranker", hit.constraint_scores)
    docs = [Document(id=str(i), text=t) for i, t in enumerate(pages)]
    retriever = LogicRetriever.build(docs, model=minilm)
    hits = _hits_by_row(retriever.search(query, k=len(pages)), pages)
    name = _constraint(hits[row], constraint)
    assert hits[row].constraints[name] is not True, (why, "retriever", hits[row].constraint_scores)


@pytest.mark.parametrize(("query", "pages", "rows", "constraint"), NOT_MEMBERS)
def test_a_constraint_a_page_fails_is_never_shown_as_held(reranker, query, pages, rows, constraint):
    ranked = reranker.rerank(query, pages)
    for r in ranked:
        if r.position in rows:
            name = _constraint(r.hit, constraint)
            assert r.hit.constraints.get(name) is not True, (
                pages[r.position],
                r.hit.constraint_scores,
            )
