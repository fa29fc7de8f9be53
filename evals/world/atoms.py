"""Atoms: Wikipedia-style categories with exact member sets, defined over entity facets.

An atom is a conjunction of ``(facet, value)`` requirements with a QUEST-like name
("Italian crime films", "Flora of Malaysia", "Mammals of South America"). Its gold set is
whatever entities satisfy the requirements; nothing in the prose can change it.
``clause`` is a short restrictive phrase used by query paraphrases ("set in Rome").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from . import vocab
from .entities import Entity
from .names import describer_pool

__all__ = ["AtomSpec", "atom_catalogue", "atom_members", "book_genre_noun"]


@dataclass(frozen=True)
class AtomSpec:
    """One category: its name, domain, facet label and the requirements it checks."""

    name: str
    domain: str
    facet: str
    requires: tuple[tuple[str, str], ...]
    clause: str | None = None

    def matches(self, entity: Entity) -> bool:
        """Whether ``entity`` belongs to the category."""
        return entity.domain == self.domain and all(entity.has(f, v) for f, v in self.requires)


def book_genre_noun(genre: str) -> str:
    """Category name of a book genre ("Crime novels", "Travel books", "Biographies")."""
    special = {
        "biography": "Biographies",
        "essay": "Essay collections",
        "memoir": "Memoirs",
        "history": "History books",
        "travel": "Travel books",
        "popular science": "Popular science books",
    }
    return special.get(genre, f"{genre.capitalize()} novels")


def _the(name: str) -> str:
    return f"the {name}" if name.startswith("United") else name


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def _films() -> Iterable[AtomSpec]:
    for c in vocab.COUNTRIES:
        adj = c.adjective
        yield AtomSpec(
            f"{adj} films", "films", "country", (("country", c.name),), f"from {_the(c.name)}"
        )
        for g in vocab.FILM_GENRES:
            yield AtomSpec(
                f"{adj} {g} films",
                "films",
                "country+genre",
                (("country", c.name), ("genre", g)),
            )
        yield AtomSpec(
            f"Films set in {c.name}",
            "films",
            "setting_country",
            (("setting_country", c.name),),
            f"set in {c.name}",
        )
        for city in c.cities:
            yield AtomSpec(
                f"Films set in {city}",
                "films",
                "setting_city",
                (("setting_city", city),),
                f"set in {city}",
            )
        yield AtomSpec(
            f"Films by {adj} directors",
            "films",
            "director_nationality",
            (("director_nationality", c.name),),
            f"directed by {adj} filmmakers",
        )
    for lang in sorted({c.language for c in vocab.COUNTRIES}):
        yield AtomSpec(
            f"{lang}-language films", "films", "language", (("language", lang),), f"in {lang}"
        )
    for g in vocab.FILM_GENRES:
        yield AtomSpec(f"{_cap(g)} films", "films", "genre", (("genre", g),))
    for trait, name in vocab.FILM_TRAITS.items():
        yield AtomSpec(name, "films", "traits", (("traits", trait),))
    for d in vocab.FILM_DECADES:
        yield AtomSpec(f"{d} films", "films", "decade", (("decade", d),), f"from the {d}")
        for g in vocab.FILM_GENRES:
            yield AtomSpec(f"{d} {g} films", "films", "decade+genre", (("decade", d), ("genre", g)))


def _books() -> Iterable[AtomSpec]:
    for g in vocab.NOVEL_GENRES + vocab.NONFICTION_GENRES:
        yield AtomSpec(book_genre_noun(g), "books", "genre", (("genre", g),))
    for name in sorted({n for n, _ in vocab.BOOK_NATIONALITIES}):
        c = vocab.COUNTRY_BY_NAME[name]
        yield AtomSpec(
            f"Books by {c.adjective} authors",
            "books",
            "author_nationality",
            (("author_nationality", name),),
            f"by {c.adjective} writers",
        )
        for g in vocab.NOVEL_GENRES + vocab.NONFICTION_GENRES:
            noun = book_genre_noun(g)
            yield AtomSpec(
                f"{c.adjective} {noun[0].lower() + noun[1:]}",
                "books",
                "author_nationality+genre",
                (("author_nationality", name), ("genre", g)),
            )
    for places in vocab.BOOK_SETTINGS.values():
        for place in places:
            shown = place.replace(" (U.S. state)", "")
            yield AtomSpec(
                f"Novels set in {place}",
                "books",
                "setting",
                (("setting", place),),
                f"set in {shown}",
            )
    for trait, name in vocab.NOVEL_TRAITS.items():
        yield AtomSpec(name, "books", "traits", (("traits", trait),))
    for theme in vocab.NOVEL_THEMES:
        yield AtomSpec(f"Novels about {theme}", "books", "subject", (("subject", theme),))
    for topic in vocab.NONFICTION_TOPICS:
        yield AtomSpec(
            f"Books about {topic}", "books", "subject", (("subject", topic),), f"about {topic}"
        )
    for d in vocab.BOOK_DECADES:
        yield AtomSpec(
            f"{d} novels",
            "books",
            "decade",
            (("kind", "novel"), ("decade", d)),
        )
        yield AtomSpec(
            f"{d} non-fiction books",
            "books",
            "decade",
            (("kind", "non-fiction"), ("decade", d)),
        )


_USE_NAMES = {
    "medicinal": "Medicinal plants",
    "ornamental": "Ornamental plants",
    "edible fruit": "Edible fruits",
    "timber": "Timber trees",
    "spice": "Spices",
    "fibre": "Fibre plants",
    "dye": "Dye plants",
}
_HABIT_NAMES = {
    "tree": "Trees",
    "shrub": "Shrubs",
    "herb": "Herbaceous plants",
    "climber": "Climbing plants",
    "epiphyte": "Epiphytes",
}


def _taxonomy(domain: str, noun: str) -> Iterable[AtomSpec]:
    """ "Plants described in 1753" and "Taxa named by ..." (QUEST has both kinds).

    Only the founding year gets a "described in" atom: an atom per year (hundreds of
    tiny categories that differ by one number) is beyond what a sentence encoder can
    match from prose, which would make the world unfair rather than hard.
    """
    founding = vocab.DESCRIPTION_YEARS[domain][0]
    yield AtomSpec(
        f"{noun} described in {founding}",
        domain,
        "described",
        (("described", str(founding)),),
        f"described in {founding}",
    )
    for name in describer_pool(domain):
        yield AtomSpec(
            f"Taxa named by {name}",
            domain,
            "describer",
            (("describer", name),),
            f"named by {name}",
        )


def _plants() -> Iterable[AtomSpec]:
    yield from _taxonomy("plants", "Plants")
    for fam in vocab.PLANT_FAMILIES:
        yield AtomSpec(fam.category, "plants", "family", (("family", fam.latin),))
        if not fam.category.endswith("aceae"):
            for country in (c for g in fam.groups for c in vocab.REGION_GROUPS[g]):
                yield AtomSpec(
                    f"{fam.category} of {country}",
                    "plants",
                    "family+regions",
                    (("family", fam.latin), ("regions", country)),
                )
    for group, countries in vocab.REGION_GROUPS.items():
        yield AtomSpec(
            f"Flora of {group}",
            "plants",
            "region_group",
            (("region_group", group),),
            f"native to {group}",
        )
        for country in countries:
            yield AtomSpec(
                f"Flora of {country}",
                "plants",
                "regions",
                (("regions", country),),
                f"native to {country}",
            )
            yield AtomSpec(
                f"Endemic flora of {country}",
                "plants",
                "endemic",
                (("endemic", country),),
                f"endemic to {country}",
            )
            yield AtomSpec(
                f"Trees of {country}",
                "plants",
                "habit+regions",
                (("habit", "tree"), ("regions", country)),
            )
    for habit, name in _HABIT_NAMES.items():
        yield AtomSpec(name, "plants", "habit", (("habit", habit),))
    for use, name in _USE_NAMES.items():
        yield AtomSpec(name, "plants", "uses", (("uses", use),))


_HABITAT_NAMES = {
    "rainforest": "Rainforest fauna",
    "desert": "Desert fauna",
    "grassland": "Grassland fauna",
    "wetland": "Wetland fauna",
    "freshwater": "Freshwater fauna",
    "marine": "Marine fauna",
    "montane": "Montane fauna",
    "cave": "Cave fauna",
}
_DIET_NAMES = {
    "herbivorous": "Herbivorous animals",
    "carnivorous": "Carnivorous animals",
    "insectivorous": "Insectivorous animals",
    "omnivorous": "Omnivorous animals",
    "piscivorous": "Piscivorous animals",
    "frugivorous": "Frugivorous animals",
    "nectarivorous": "Nectarivorous animals",
}
_STATUS_NAMES = {
    "vulnerable": "Vulnerable animals",
    "endangered": "Endangered animals",
    "critically endangered": "Critically endangered animals",
}


def _animals() -> Iterable[AtomSpec]:
    yield from _taxonomy("animals", "Animals")
    continents = sorted(set(vocab.CONTINENT_OF_GROUP.values()))
    for cls, plural in vocab.ANIMAL_CLASSES.items():
        for cont in continents:
            yield AtomSpec(
                f"{plural} of {cont}",
                "animals",
                "class+continent",
                (("class", cls), ("continent", cont)),
            )
        for countries in vocab.REGION_GROUPS.values():
            for country in countries:
                yield AtomSpec(
                    f"{plural} of {country}",
                    "animals",
                    "class+regions",
                    (("class", cls), ("regions", country)),
                )
    for grp in vocab.ANIMAL_GROUPS:
        yield AtomSpec(grp.category, "animals", "group", (("group", grp.category),))
        for cont in continents:
            yield AtomSpec(
                f"{grp.category} of {cont}",
                "animals",
                "group+continent",
                (("group", grp.category), ("continent", cont)),
            )
    for cont in continents:
        yield AtomSpec(
            f"Fauna of {cont}", "animals", "continent", (("continent", cont),), f"from {cont}"
        )
    for countries in vocab.REGION_GROUPS.values():
        for country in countries:
            yield AtomSpec(
                f"Fauna of {country}",
                "animals",
                "regions",
                (("regions", country),),
                f"found in {country}",
            )
            yield AtomSpec(
                f"Endemic fauna of {country}",
                "animals",
                "endemic",
                (("endemic", country),),
                f"endemic to {country}",
            )
    for habitat, name in _HABITAT_NAMES.items():
        yield AtomSpec(name, "animals", "habitat", (("habitat", habitat),))
    for diet, name in _DIET_NAMES.items():
        yield AtomSpec(name, "animals", "diet", (("diet", diet),))
    for status, name in _STATUS_NAMES.items():
        yield AtomSpec(name, "animals", "status", (("status", status),))


_BUILDERS = {"films": _films, "books": _books, "plants": _plants, "animals": _animals}


def atom_catalogue(domains: Iterable[str]) -> list[AtomSpec]:
    """Every candidate atom of the given domains (names unique), before any size filter."""
    out: list[AtomSpec] = []
    seen: set[str] = set()
    for domain in domains:
        for spec in _BUILDERS[domain]():
            if spec.name in seen:
                raise AssertionError(f"duplicate atom name {spec.name!r}")
            seen.add(spec.name)
            out.append(spec)
    return out


def atom_members(
    specs: Iterable[AtomSpec], entities: Iterable[Entity]
) -> dict[str, frozenset[int]]:
    """Gold member sets (entity indices) of every atom, by one pass over the entities."""
    by_requirement: dict[tuple[str, str, str], set[int]] = {}
    for e in entities:
        for f, values in e.facets.items():
            for v in values:
                by_requirement.setdefault((e.domain, f, v), set()).add(e.index)
    out: dict[str, frozenset[int]] = {}
    for spec in specs:
        sets = [by_requirement.get((spec.domain, f, v), set()) for f, v in spec.requires]
        out[spec.name] = frozenset(set.intersection(*sets)) if sets else frozenset()
    return out
