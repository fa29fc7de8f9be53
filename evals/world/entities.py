"""Entities of the generated world and their facets (the only source of gold membership).

Each entity is drawn from its own random stream seeded by ``(seed, index)``, so entity
``i`` is the same whether the world is built whole or streamed one document at a time.
Facets are tuples of strings keyed by facet name; derived facets (a film's setting
country, a plant's region group, an animal's continents) are stored too, so that every
atom is a plain conjunction of ``(facet, value)`` requirements.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from . import vocab
from .names import describer_pool, latin_epithet, person_name, unique_stem

__all__ = ["Entity", "DOMAINS", "entity_rng", "make_entity", "domain_of"]

DOMAINS: tuple[str, ...] = ("films", "books", "plants", "animals")


@dataclass(frozen=True)
class Entity:
    """One encyclopedia entity: title, domain, facets (gold) and non-facet details (prose)."""

    index: int
    title: str
    domain: str
    facets: dict[str, tuple[str, ...]]
    details: dict[str, str] = field(default_factory=dict)

    def has(self, facet: str, value: str) -> bool:
        """Whether the entity carries ``value`` for ``facet``."""
        return value in self.facets.get(facet, ())

    def to_json(self) -> dict[str, object]:
        """The JSON form written to ``entities.jsonl``."""
        return {
            "title": self.title,
            "domain": self.domain,
            "facets": {k: list(v) for k, v in self.facets.items()},
        }


def entity_rng(seed: int, index: int, salt: int = 0) -> random.Random:
    """The private random stream of entity ``index`` in world ``seed``."""
    return random.Random((seed * 1_000_003 + index) * 7 + salt)


def domain_of(index: int, domains: tuple[str, ...]) -> str:
    """Domains take turns, so every prefix of the world is balanced across domains."""
    return domains[index % len(domains)]


def _weighted(rng: random.Random, pairs: tuple[tuple[str, float], ...]) -> str:
    values, weights = zip(*pairs, strict=True)
    return rng.choices(values, weights=weights, k=1)[0]


def _description(rng: random.Random, domain: str) -> tuple[str, str]:
    """Year and author of a species description: a Zipf-like pool of describers, and a
    large share of species from the founding year (1753 for plants, 1758 for animals)."""
    founding, start, end = vocab.DESCRIPTION_YEARS[domain]
    if rng.random() < 0.08:
        year = founding
    else:
        year = int(start + (end - start) * rng.betavariate(1.6, 1.8))
    pool = describer_pool(domain)
    describer = rng.choices(pool, weights=[1.0 / (i + 1) for i in range(len(pool))], k=1)[0]
    return str(year), describer


def _film(rng: random.Random, index: int) -> Entity:
    country = vocab.COUNTRY_BY_NAME[_weighted(rng, vocab.FILM_COUNTRIES)]
    genres = [rng.choice(vocab.FILM_GENRES)]
    if rng.random() < 0.35:
        second = rng.choice(vocab.RELATED_FILM_GENRES[genres[0]] + vocab.FILM_GENRES[:4])
        if second not in genres and "documentary" not in (second, genres[0]):
            genres.append(second)
    # Later decades have more films, as in Wikipedia.
    decade_weights = tuple((d, 1.0 + i * 0.45) for i, d in enumerate(vocab.FILM_DECADES))
    decade = _weighted(rng, decade_weights)
    year = int(decade[:4]) + rng.randrange(10)
    if rng.random() < 0.75:
        setting_country = country
    else:
        setting_country = rng.choice(vocab.COUNTRIES)
    city = rng.choice(setting_country.cities)
    language = country.language if rng.random() < 0.85 else rng.choice(("English", "French"))
    director = country if rng.random() < 0.8 else rng.choice(vocab.COUNTRIES)
    bw_rate = {"1930s": 0.95, "1940s": 0.9, "1950s": 0.7, "1960s": 0.4}.get(decade, 0.03)
    rates = {
        "based on a novel": 0.2,
        "directorial debut": 0.12,
        "black-and-white": bw_rate,
        "remake": 0.08,
    }
    traits = tuple(t for t in vocab.FILM_TRAITS if rng.random() < rates[t])
    stem = unique_stem(index)
    pattern = rng.choice(
        (
            "The {s} Affair",
            "Return to {s}",
            "{s}",
            "The Last Days of {s}",
            "{s}'s Daughter",
            "Night over {s}",
            "The {s} Letters",
            "A Summer in {s}",
            "{s} Station",
            "The Ballad of {s}",
        )
    )
    title = (
        f"{pattern.format(s=stem)} ({year} film)" if pattern == "{s}" else pattern.format(s=stem)
    )
    facets = {
        "country": (country.name,),
        "genre": tuple(genres),
        "decade": (decade,),
        "year": (str(year),),
        "setting_city": (city,),
        "setting_country": (setting_country.name,),
        "language": (language,),
        "director_nationality": (director.name,),
        "traits": traits,
    }
    details = {"director": person_name(rng), "star": person_name(rng), "stem": stem}
    return Entity(index, title, "films", facets, details)


def _book(rng: random.Random, index: int) -> Entity:
    nationality = _weighted(rng, vocab.BOOK_NATIONALITIES)
    novel = rng.random() < 0.75
    decade = _weighted(rng, tuple((d, 1.0 + i * 0.3) for i, d in enumerate(vocab.BOOK_DECADES)))
    year = int(decade[:4]) + rng.randrange(10)
    stem = unique_stem(index)
    if novel:
        genre = rng.choice(vocab.NOVEL_GENRES)
        group = rng.choice(tuple(vocab.BOOK_SETTINGS))
        setting: tuple[str, ...] = (rng.choice(vocab.BOOK_SETTINGS[group]),)
        subject = (rng.choice(vocab.NOVEL_THEMES),)
        pattern = rng.choice(
            (
                "The {s} Inheritance",
                "A Winter at {s}",
                "{s}",
                "The House on {s} Street",
                "Letters from {s}",
                "The {s} Conspiracy",
                "Children of {s}",
                "The Keeper of {s}",
            )
        )
        title = f"{stem} (novel)" if pattern == "{s}" else pattern.format(s=stem)
        serial_rate = 0.3 if year < 1950 else 0.05
        rates = {"debut": 0.15, "adapted into film": 0.18, "serialized": serial_rate}
        traits = tuple(t for t in vocab.NOVEL_TRAITS if rng.random() < rates[t])
    else:
        genre = rng.choice(vocab.NONFICTION_GENRES)
        setting = ()
        traits = ()
        subject = (rng.choice(vocab.NONFICTION_TOPICS),)
        pattern = rng.choice(
            (
                "{s}: A Journey",
                "The {s} Papers",
                "Notes from {s}",
                "On {s}",
                "The World of {s}",
                "{s} and After",
            )
        )
        title = pattern.format(s=stem)
    facets = {
        "kind": ("novel" if novel else "non-fiction",),
        "genre": (genre,),
        "author_nationality": (nationality,),
        "setting": setting,
        "subject": subject,
        "decade": (decade,),
        "year": (str(year),),
        "traits": traits,
    }
    details = {"author": person_name(rng), "publisher": person_name(rng).split()[1], "stem": stem}
    return Entity(index, title, "books", facets, details)


def _regions(rng: random.Random, groups: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    group = rng.choice(groups)
    countries = vocab.REGION_GROUPS[group]
    k = min(len(countries), 1 + int(rng.expovariate(0.9)))
    return tuple(sorted(rng.sample(countries, k))), group


def _plant(rng: random.Random, index: int) -> Entity:
    family = rng.choice(vocab.PLANT_FAMILIES)
    habit = rng.choice(family.habits)
    regions, group = _regions(rng, family.groups)
    uses = [u for u in family.uses if rng.random() < 0.3]
    if habit != "tree":
        uses = [u for u in uses if u != "timber"]
    genus_stem = "".join(rng.choice("bdklmnprstv") + rng.choice("aeiou") for _ in range(2))
    genus = (genus_stem + rng.choice(family.genus_suffixes)).capitalize()
    title = f"{genus} {latin_epithet(index)}"
    described, describer = _description(rng, "plants")
    facets = {
        "family": (family.latin,),
        "habit": (habit,),
        "regions": regions,
        "region_group": (group,),
        "endemic": regions if len(regions) == 1 else (),
        "uses": tuple(sorted(uses)),
        "described": (described,),
        "describer": (describer,),
    }
    details = {"genus": genus}
    return Entity(index, title, "plants", facets, details)


def _animal(rng: random.Random, index: int) -> Entity:
    group = rng.choice(vocab.ANIMAL_GROUPS)
    regions, region_group = _regions(rng, group.groups)
    habitat = rng.choice(group.habitats)
    diet = rng.choice(group.diets)
    status = _weighted(rng, vocab.STATUSES)
    genus_stem = "".join(rng.choice("bdklmnprstv") + rng.choice("aeiou") for _ in range(2))
    genus = (genus_stem + rng.choice(group.genus_suffixes)).capitalize()
    title = f"{genus} {latin_epithet(index)}"
    described, describer = _description(rng, "animals")
    adjective = rng.choice(
        (
            "spotted",
            "crested",
            "lesser",
            "giant",
            "striped",
            "golden",
            "long-tailed",
            "dusky",
            "pale",
            "black-throated",
            "red-backed",
            "slender",
        )
    )
    facets = {
        "class": (group.animal_class,),
        "group": (group.category,),
        "regions": regions,
        "continent": (vocab.CONTINENT_OF_GROUP[region_group],),
        "endemic": regions if len(regions) == 1 else (),
        "habitat": (habitat,),
        "diet": (diet,),
        "status": (status,),
        "described": (described,),
        "describer": (describer,),
    }
    details = {"common_name": f"{adjective} {rng.choice(group.common_nouns)}"}
    return Entity(index, title, "animals", facets, details)


_MAKERS = {"films": _film, "books": _book, "plants": _plant, "animals": _animal}


def make_entity(seed: int, index: int, domains: tuple[str, ...] = DOMAINS) -> Entity:
    """Entity ``index`` of the world with ``seed`` (pure function of its arguments)."""
    domain = domain_of(index, domains)
    try:
        maker = _MAKERS[domain]
    except KeyError:
        raise ValueError(f"unknown domain {domain!r}; choose from {', '.join(DOMAINS)}") from None
    return maker(entity_rng(seed, index), index)
