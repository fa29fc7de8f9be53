"""Find facet values mentioned in a document, and check that traps never assert them.

The generator promises that prose never states a facet value the entity lacks, except
inside a negated or contrastive sentence (a trap). This module checks that promise
independently of the prose templates: it knows only the vocabularies. Every surface form
of every facet value is searched for (longest first, whole words, optional plural), each
sentence is tested for a negation cue, and a mention of a value the entity lacks in a
sentence without a cue is a violation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from . import vocab
from .entities import Entity

__all__ = [
    "NEGATION_CUE",
    "surface_forms",
    "split_sentences",
    "find_mentions",
    "trap_violations",
    "unstated_facts",
]

NEGATION_CUE = re.compile(
    r"\b(?:not|never|no|unlike|rather than|instead of|mistaken|neither|nor|despite)\b|n't\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(1[7-9]\d\d|20\d\d)\b")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

FacetValue = tuple[str, str]


def _country_forms(name: str) -> list[str]:
    c = vocab.COUNTRY_BY_NAME[name]
    return [c.name, c.adjective]


def _region_forms(name: str) -> list[str]:
    return [name, name.removeprefix("the ")]


_FILM_GENRE_FORMS = {
    "comedy": ["comedy", "comedic"],
    "drama": ["drama", "dramatic"],
    "science fiction": ["science fiction", "science-fiction", "sci-fi"],
    "romance": ["romance", "romantic"],
    "animated": ["animated", "animation"],
}
_BOOK_GENRE_FORMS = {
    "travel": ["travel book", "travel writing", "travelogue"],
    "history": ["history book", "work of history"],
    "biography": ["biography", "biographies", "biographical"],
    "essay": ["essay"],
    "popular science": ["popular science"],
    "memoir": ["memoir"],
    "romance": ["romance", "romantic"],
    "science fiction": ["science fiction", "science-fiction"],
}
_THEME_FORMS = {
    "families": ["family", "families"],
    "immigration": ["immigration", "immigrant"],
    "religion": ["religion", "religious"],
}
_FAMILY_FORMS = {"Cactaceae": ["cactus", "cacti"]}
_HABIT_FORMS = {
    "tree": ["tree"],
    "shrub": ["shrub"],
    "herb": ["herbaceous"],
    "climber": ["climber", "climbing plant", "vine", "liana"],
    "epiphyte": ["epiphyte", "epiphytic"],
}
_USE_FORMS = {
    "medicinal": ["medicinal", "traditional medicine"],
    "ornamental": ["ornamental"],
    "edible fruit": ["edible fruit"],
    "timber": ["timber"],
    "spice": ["spice"],
    "fibre": ["fibre", "fiber"],
    "dye": ["dye"],
}
_HABITAT_FORMS = {
    "rainforest": ["rainforest"],
    "desert": ["desert"],
    "grassland": ["grassland", "savanna"],
    "wetland": ["wetland", "marsh"],
    "freshwater": ["freshwater"],
    "marine": ["marine"],
    "montane": ["montane", "mountain"],
    "cave": ["cave"],
}
_DIET_NOUNS = {d: [d, d.replace("ous", "e")] for d in vocab.DIETS}


def surface_forms(domain: str) -> dict[str, set[FacetValue]]:
    """Map each lower-cased surface form of the domain to the facet values it expresses."""
    return {k: set(v) for k, v in _surface_forms(domain).items()}


@lru_cache(maxsize=8)
def _surface_forms(domain: str) -> dict[str, frozenset[FacetValue]]:
    forms: dict[str, set[FacetValue]] = {}

    def add(facet: str, value: str, words: Iterable[str]) -> None:
        for w in words:
            forms.setdefault(w.lower(), set()).add((facet, value))

    if domain == "films":
        for c in vocab.COUNTRIES:
            for facet in ("country", "setting_country", "director_nationality"):
                add(facet, c.name, _country_forms(c.name))
            for city in c.cities:
                add("setting_city", city, [city])
            add("language", c.language, [c.language, f"{c.language}-language"])
        for lang in ("English", "French"):
            add("language", lang, [lang, f"{lang}-language"])
        for g in vocab.FILM_GENRES:
            add("genre", g, _FILM_GENRE_FORMS.get(g, [g]))
        for d in vocab.FILM_DECADES:
            add("decade", d, [d])
        add("traits", "based on a novel", ["based on a novel", "adapts a novel"])
        add("traits", "directorial debut", ["directorial debut"])
        add("traits", "black-and-white", ["black-and-white"])
        add("traits", "remake", ["remake"])
    elif domain == "books":
        for name, _ in vocab.BOOK_NATIONALITIES:
            add("author_nationality", name, _country_forms(name))
        for g in vocab.NOVEL_GENRES + vocab.NONFICTION_GENRES:
            add("genre", g, _BOOK_GENRE_FORMS.get(g, [g]))
        for places in vocab.BOOK_SETTINGS.values():
            for p in places:
                add("setting", p, [p.replace(" (U.S. state)", "")])
        for t in vocab.NOVEL_THEMES:
            add("subject", t, _THEME_FORMS.get(t, [t]))
        for t in vocab.NONFICTION_TOPICS:
            add("subject", t, [t, t.removeprefix("the ")])
        for d in vocab.BOOK_DECADES:
            add("decade", d, [d])
        add("kind", "novel", ["novel"])
        add("kind", "non-fiction", ["non-fiction", "nonfiction"])
        add("traits", "debut", ["debut novel"])
        add("traits", "adapted into film", ["adapted into a film", "film adaptation"])
        add("traits", "serialized", ["serialized", "serialised"])
    elif domain == "plants":
        for fam in vocab.PLANT_FAMILIES:
            add("family", fam.latin, [fam.latin, *_FAMILY_FORMS.get(fam.latin, [fam.common])])
        for h in vocab.HABITS:
            add("habit", h, _HABIT_FORMS[h])
        for group, countries in vocab.REGION_GROUPS.items():
            add("region_group", group, [group])
            for c in countries:
                add("regions", c, _region_forms(c))
                add("endemic", c, _region_forms(c))
        for u in vocab.PLANT_USES:
            add("uses", u, _USE_FORMS[u])
    elif domain == "animals":
        for cls, plural in vocab.ANIMAL_CLASSES.items():
            add("class", cls, [cls, plural])
        for grp in vocab.ANIMAL_GROUPS:
            add("group", grp.category, [grp.singular, grp.category])
        for group, countries in vocab.REGION_GROUPS.items():
            add("continent", vocab.CONTINENT_OF_GROUP[group], [group])
            for c in countries:
                add("regions", c, _region_forms(c))
                add("endemic", c, _region_forms(c))
        for cont in set(vocab.CONTINENT_OF_GROUP.values()):
            add("continent", cont, [cont])
        for h in vocab.HABITATS:
            add("habitat", h, _HABITAT_FORMS[h])
        for d in vocab.DIETS:
            add("diet", d, _DIET_NOUNS[d])
        for s, _ in vocab.STATUSES:
            add("status", s, [s])
    else:
        raise ValueError(f"unknown domain {domain!r}")
    return {k: frozenset(v) for k, v in forms.items()}


@lru_cache(maxsize=8)
def _pattern(domain: str) -> re.Pattern[str]:
    words = sorted(_surface_forms(domain), key=len, reverse=True)
    alternation = "|".join(re.escape(w) for w in words)
    return re.compile(rf"(?<![\w-])({alternation})(?:s|es)?(?![\w-])", re.IGNORECASE)


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences (the generator never puts a period inside a sentence)."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def find_mentions(domain: str, sentence: str) -> list[tuple[str, frozenset[FacetValue]]]:
    """Every vocabulary mention in ``sentence``: (surface text, facet values it expresses)."""
    forms = _surface_forms(domain)
    out = [(m.group(0), forms[m.group(1).lower()]) for m in _pattern(domain).finditer(sentence)]
    for m in _YEAR.finditer(sentence):
        if domain in ("films", "books"):
            value: FacetValue = ("decade", vocab.decade_of(int(m.group(1))))
        else:
            value = ("described", m.group(1))
        out.append((m.group(0), frozenset({value})))
    return out


def _supported(entity: Entity, values: frozenset[FacetValue]) -> bool:
    return any(entity.has(f, v) for f, v in values)


def trap_violations(entity: Entity, text: str) -> list[str]:
    """Mentions of values the entity lacks, made in a sentence with no negation cue.

    An empty list means the document never asserts a facet value the entity lacks.
    """
    problems = []
    for sentence in split_sentences(text):
        if NEGATION_CUE.search(sentence):
            continue
        for surface, values in find_mentions(entity.domain, sentence):
            if not _supported(entity, values):
                problems.append(f"{entity.title}: {surface!r} asserted in {sentence!r}")
    return problems


def unstated_facts(entity: Entity, text: str, facets: Iterable[str]) -> list[FacetValue]:
    """Facet values of ``entity`` (among ``facets``) never mentioned outside a negated sentence."""
    stated: set[FacetValue] = set()
    for sentence in split_sentences(text):
        if NEGATION_CUE.search(sentence):
            continue
        for _, values in find_mentions(entity.domain, sentence):
            stated.update(values)
    return [(f, v) for f in facets for v in entity.facets.get(f, ()) if (f, v) not in stated]
