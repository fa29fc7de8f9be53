"""Encyclopedic prose for an entity: facts in varied wording, lexical traps, distractors.

A document opens with a lead sentence, then states each remaining facet in one of several
templates (synonyms: "Italian-language", "from Italy", "an Italian production"), in a
shuffled order, mixed with traps and distractor sentences:

* traps mention a value the entity lacks, always inside a negated or contrastive
  sentence ("it does not occur in Thailand", "unlike most Italian crime films of the
  1970s", "it is not a true tree"), often a near miss (neighbouring region, related
  genre, adjacent decade);
* distractors carry no facet value at all.

Gold sets come from facets only, so traps never change membership; they only make the
text harder for retrievers that match words rather than meaning.
:func:`logic_rag.evals.world.mentions.trap_violations` checks the promise.
"""

from __future__ import annotations

import random

from . import vocab
from .entities import Entity, entity_rng

__all__ = ["render_document", "MIN_WORDS", "MAX_WORDS"]

MIN_WORDS = 60
MAX_WORDS = 150
_TRAP_SALT = 1


def _a(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _join(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _the(name: str) -> str:
    """Country name as it reads in a sentence ("the United States")."""
    return f"the {name}" if name.startswith("United") else name


def _adj(country: str) -> str:
    return vocab.COUNTRY_BY_NAME[country].adjective


def _adjacent_decade(rng: random.Random, decade: str, decades: tuple[str, ...]) -> str:
    i = decades.index(decade)
    options = [decades[j] for j in (i - 1, i + 1) if 0 <= j < len(decades)]
    return rng.choice(options)


Sentences = list[str]


# --------------------------------------------------------------------------- films
def _film_genre(e: Entity) -> str:
    g = e.facets["genre"]
    return g[0] if len(g) == 1 else f"{g[0]} {g[1]}"


def _films(e: Entity, rng: random.Random) -> tuple[str, Sentences, Sentences, Sentences]:
    f, d = e.facets, e.details
    country, year, decade = f["country"][0], f["year"][0], f["decade"][0]
    adj, genre, lang = _adj(country), _film_genre(e), f["language"][0]
    city, scountry = f["setting_city"][0], f["setting_country"][0]
    dnat = _adj(f["director_nationality"][0])
    t, dr = e.title.removesuffix(f" ({year} film)"), d["director"]
    there = f"{city}, {_the(scountry)}" if scountry != country or rng.random() < 0.5 else city
    leads: list[tuple[str, set[str]]] = [
        (
            f"{t} is {_a(year)} {year} {adj} {genre} film directed by {dr}.",
            {"country", "genre", "year"},
        ),
        (f"{t} is {_a(adj)} {adj} {genre} film released in {year}.", {"country", "genre", "year"}),
        (
            f"{t} ({year}) is {_a(genre)} {genre} film from {_the(country)}.",
            {"country", "genre", "year"},
        ),
        (
            f"Released in {year}, {t} is {_a(genre)} {genre} picture produced in {_the(country)}.",
            {"country", "genre", "year"},
        ),
        (
            f"{t} is {_a(genre)} {genre} film of the {decade}, made in {_the(country)}.",
            {"country", "genre", "year", "decade"},
        ),
        (
            f"{t} is {_a(genre)} {genre} film set in {there} and shot in the {lang} language.",
            {"genre", "setting", "language"},
        ),
    ]
    lead, covered = rng.choice(leads)
    facts = {
        "country": [
            f"It was produced in {_the(country)}.",
            f"The film is {_a(adj)} {adj} production.",
            f"Production was based in {_the(country)}, with a largely {adj} crew.",
        ],
        "genre": [
            f"Critics classed it as {_a(genre)} {genre} film.",
            f"It is usually described as {_a(genre)} {genre} film.",
        ],
        "year": [
            f"It premiered in {year}.",
            f"The film was released in {year}.",
            f"It was first screened in {year}, late in the production boom of the {decade}.",
        ],
        "decade": [
            f"It is one of the {genre} films of the {decade}.",
            f"It is {_a(decade)} {decade} production.",
            f"The film belongs to the cinema of the {decade}.",
        ],
        "setting": [
            f"The story is set in {there}.",
            f"The action takes place in {there}.",
            f"Its plot unfolds in {there}.",
        ],
        "language": [
            f"The dialogue is in {lang}.",
            f"It is {_a(lang)} {lang}-language film.",
            f"It was shot in the {lang} language.",
        ],
        "director": [
            f"Its director, {dr}, is {dnat}.",
            f"The {dnat} filmmaker {dr} directed it.",
            f"{dr}, the {dnat} director, also co-wrote the screenplay.",
        ],
    }
    body = [rng.choice(v) for k, v in facts.items() if k not in covered]
    trait_sentences = {
        "based on a novel": [
            f"It is based on a novel by {d['star'].split()[0]} {d['stem']}.",
            "The screenplay adapts a novel of the same name.",
        ],
        "directorial debut": [
            f"It was the directorial debut of {dr}.",
            f"The film marked the directorial debut of {dr}.",
        ],
        "black-and-white": ["It was shot in black-and-white.", "The film is in black-and-white."],
        "remake": [
            "It is a remake of an earlier production.",
            "The film is a remake of a little-known silent picture.",
        ],
    }
    body += [rng.choice(trait_sentences[x]) for x in f["traits"]]
    traps: list[str] = []
    if "black-and-white" not in f["traits"] and decade in vocab.FILM_DECADES[:4]:
        traps.append("Unlike most films of its day, it was not shot in black-and-white.")
    if "remake" not in f["traits"]:
        traps.append("Despite persistent rumours, it is not a remake.")
    genres = f["genre"]
    near_countries = [
        n
        for n in vocab.COUNTRY_BY_NAME[country].neighbours
        if n not in (country, scountry, f["director_nationality"][0])
        and vocab.COUNTRY_BY_NAME[n].language != lang
    ]
    related = [g for g in vocab.RELATED_FILM_GENRES[genres[0]] if g not in genres]
    if near_countries:
        n = _adj(rng.choice(near_countries))
        traps.append(
            f"Although it is often mistaken for {_a(n)} {n} film, it is not {_a(n)} {n} production."
        )
    if related:
        g2 = rng.choice(related)
        ending = rng.choice(["has a small cast", "relies on long takes", "avoids spectacle"])
        traps.append(f"Unlike most {adj} {g2} films of the {decade}, it {ending}.")
        traps.append(f"Despite its marketing, it is not {_a(g2)} {g2} film.")
    others = [c for c in vocab.COUNTRY_BY_NAME[scountry].cities if c != city]
    if others:
        o = rng.choice(others)
        traps.append(f"The story takes place in {city}, not in {o} as early drafts intended.")
    if scountry != country:
        traps.append(
            f"Although set in {city}, it was filmed in {_the(country)} rather than in {_the(scountry)}."
        )
    d2 = _adjacent_decade(rng, decade, vocab.FILM_DECADES)
    traps.append(f"It is sometimes mistaken for {_a(d2)} {d2} film, but it premiered in {year}.")
    other_lang = rng.choice([x for x in ("English", "French", "Spanish", "German") if x != lang])
    traps.append(
        f"Despite its international cast, it is not {_a(other_lang)} {other_lang}-language film."
    )
    distractors = [
        f"The score was composed by {d['star'].split()[0]} {d['director'].split()[1]}.",
        f"{d['star']} plays the lead role.",
        "It received mixed reviews on its initial release but later gained a cult following.",
        "The cinematography was praised for its use of natural light.",
        "A restored version was later shown at several festivals.",
        "The screenplay went through several drafts before shooting began.",
        f"Its running time is {rng.randrange(78, 170)} minutes.",
        "Box-office returns were modest.",
    ]
    return lead, body, traps, distractors


# --------------------------------------------------------------------------- books
_BOOK_PHRASE = {
    "travel": "travel book",
    "history": "history book",
    "biography": "biography",
    "essay": "collection of essays",
    "popular science": "popular science book",
    "memoir": "memoir",
}


def _book_phrase(genre: str) -> str:
    return _BOOK_PHRASE.get(genre, f"{genre} novel")


def _books(e: Entity, rng: random.Random) -> tuple[str, Sentences, Sentences, Sentences]:
    f, d = e.facets, e.details
    nat, genre, year, decade = (
        f["author_nationality"][0],
        f["genre"][0],
        f["year"][0],
        f["decade"][0],
    )
    novel = f["kind"][0] == "novel"
    adj, phrase, t, au = (
        _adj(nat),
        _book_phrase(genre),
        e.title.removesuffix(" (novel)"),
        d["author"],
    )
    leads = [
        (f"{t} is {_a(year)} {year} {phrase} by the {adj} writer {au}.", {"nat", "genre", "year"}),
        (f"{t} is {_a(phrase)} {phrase} by {au}, first published in {year}.", {"genre", "year"}),
        (
            f"Written by the {adj} author {au}, {t} is {_a(phrase)} {phrase} published in {year}.",
            {"nat", "genre", "year"},
        ),
        (f"{t} is {_a(adj)} {adj} {phrase} written by {au}.", {"nat", "genre"}),
    ]
    lead, covered = rng.choice(leads)
    subject = f["subject"][0]
    noun = "novel" if novel else "book"
    facts: dict[str, list[str]] = {
        "nat": [
            f"Its author, {au}, is {adj}.",
            f"{au} is a writer from {_the(nat)}.",
            f"The author was born and raised in {_the(nat)}.",
        ],
        "genre": [
            f"It is usually classed as {_a(phrase)} {phrase}.",
            f"Reviewers described it as {_a(phrase)} {phrase}.",
        ],
        "year": [
            f"It was first published in {year}.",
            f"The book appeared in {year}, in the {decade}.",
        ],
        "decade": [
            f"It is one of the notable {noun}s of the {decade}.",
            f"It is {_a(decade)} {decade} {noun}.",
            f"It belongs to the literature of the {decade}.",
        ],
    }
    if novel:
        place = f["setting"][0].replace(" (U.S. state)", "")
        facts["setting"] = [
            f"The novel is set in {place}.",
            f"Its story takes place in {place}.",
            f"Most of the action unfolds in {place}.",
        ]
        facts["subject"] = [
            f"It is a novel about {subject}.",
            f"Its central subject is {subject}.",
            f"The book explores {subject}.",
        ]
    else:
        facts["subject"] = [
            f"The book is about {subject}.",
            f"It is a study of {subject}.",
            f"Its subject is {subject}.",
        ]
        facts["kind"] = ["It is a work of non-fiction.", "The book is non-fiction."]
    body = [rng.choice(v) for k, v in facts.items() if k not in covered]
    trait_sentences = {
        "debut": [f"It was the debut novel of {au}.", f"It is {au}'s debut novel."],
        "adapted into film": [
            "It was later adapted into a film.",
            "A film adaptation was released some years later.",
        ],
        "serialized": [
            "It was first serialized in a weekly magazine.",
            "Before appearing in book form it was serialized in a literary monthly.",
        ],
    }
    body += [rng.choice(trait_sentences[x]) for x in f["traits"]]
    traps: list[str] = []
    if novel and "adapted into film" not in f["traits"]:
        traps.append("Despite several attempts, it has never been adapted into a film.")
    if novel and "debut" not in f["traits"]:
        traps.append(f"It is not the debut novel of {au}, although it is often described as such.")
    if novel:
        group = next(g for g, ps in vocab.BOOK_SETTINGS.items() if f["setting"][0] in ps)
        near = [p for p in vocab.BOOK_SETTINGS[group] if p != f["setting"][0]]
        p2 = rng.choice(near).replace(" (U.S. state)", "")
        traps.append(
            rng.choice(
                [
                    f"It is set in {place}, not in neighbouring {p2}.",
                    f"Although often assumed to take place in {p2}, the story "
                    f"never leaves {place}.",
                ]
            )
        )
        themes = [x for x in vocab.NOVEL_THEMES if x != subject]
    else:
        themes = [x for x in vocab.NONFICTION_TOPICS if x != subject]
        traps.append("It is not a novel, although it reads like one.")
    traps.append(f"Despite its title, it is not about {rng.choice(themes)}.")
    related = [g for g in vocab.RELATED_BOOK_GENRES[genre]]
    g2 = rng.choice(related)
    if novel and g2 in vocab.NOVEL_GENRES:
        traps.append(f"Unlike most {adj} {g2} novels of the {decade}, it has no single narrator.")
    else:
        traps.append(f"It is not {_a(_book_phrase(g2))} {_book_phrase(g2)}, despite its title.")
    others = [n for n, _ in vocab.BOOK_NATIONALITIES if n != nat]
    n2 = _adj(rng.choice(others))
    traps.append(
        f"Although {au} is often mistaken for {_a(n2)} {n2} author, the writer was "
        f"born in {_the(nat)}."
    )
    d2 = _adjacent_decade(rng, decade, vocab.BOOK_DECADES)
    traps.append(
        f"It is sometimes mistaken for {_a(d2)} {d2} {noun}, but it was first published in {year}."
    )
    distractors = [
        f"The first edition was published by {d['publisher']} House.",
        "It was later translated into several languages.",
        f"{au} revised the text for a second edition.",
        "The book was shortlisted for a regional prize.",
        "Its cover illustration became widely known.",
        "Sales were modest at first but grew steadily.",
        "A stage adaptation followed some years later.",
    ]
    return lead, body, traps, distractors


# --------------------------------------------------------------------------- plants
_HABIT_NOUN = {
    "tree": "tree",
    "shrub": "shrub",
    "herb": "herbaceous perennial",
    "climber": "climbing plant",
    "epiphyte": "epiphyte",
}
_USE_SENTENCE = {
    "medicinal": [
        "It is used in traditional medicine.",
        "Extracts of the plant have medicinal uses.",
    ],
    "ornamental": ["It is cultivated as an ornamental.", "It is grown as an ornamental plant."],
    "edible fruit": [
        "It produces edible fruit that is sold in local markets.",
        "Its edible fruit is gathered from the wild.",
    ],
    "timber": ["Its wood is valued as timber.", "The tree is logged for timber."],
    "spice": ["The dried seeds are used as a spice.", "Its bark is ground into a spice."],
    "fibre": ["Fibre from its leaves is used for rope.", "The stems yield a coarse fibre."],
    "dye": ["Its bark yields a dye.", "The roots are used to make a dye."],
}
_USE_TRAP = {
    "medicinal": "Unlike many related species, it has no known medicinal use.",
    "ornamental": "It is not grown as an ornamental.",
    "edible fruit": "Its fruit is not edible.",
    "timber": "Its wood is not used as timber.",
    "spice": "It is not used as a spice.",
    "fibre": "It yields no useful fibre.",
    "dye": "It yields no dye.",
}
_FAMILY = {fam.latin: fam for fam in vocab.PLANT_FAMILIES}


def _plants(e: Entity, rng: random.Random) -> tuple[str, Sentences, Sentences, Sentences]:
    f, t = e.facets, e.title
    fam = _FAMILY[f["family"][0]]
    habit = _HABIT_NOUN[f["habit"][0]]
    regions = list(f["regions"])
    rng.shuffle(regions)
    where = _join(regions)
    common = "cactus" if fam.latin == "Cactaceae" else fam.common
    leads = [
        (f"{t} is a species of flowering plant in the family {fam.latin}.", {"family"}),
        (f"{t} is {_a(habit)} {habit} in the {common} family, {fam.latin}.", {"family", "habit"}),
        (f"{t} is a species of {common} native to {where}.", {"family", "regions"}),
        (f"{t} is {_a(habit)} {habit} belonging to the family {fam.latin}.", {"family", "habit"}),
    ]
    lead, covered = rng.choice(leads)
    facts: dict[str, list[str]] = {
        "family": [
            f"It belongs to the family {fam.latin}.",
            f"It is a member of the {common} family ({fam.latin}).",
        ],
        "habit": [
            f"It grows as {_a(habit)} {habit}.",
            f"The plant is {_a(habit)} {habit}.",
            f"In habit it is {_a(habit)} {habit} reaching {rng.randrange(2, 30)} m.",
        ],
        "regions": [
            f"It is native to {where}.",
            f"The species occurs naturally in {where}.",
            f"Its native range covers {where}.",
        ],
        "group": [
            f"It is part of the flora of {f['region_group'][0]}.",
            f"It is one of the characteristic plants of {f['region_group'][0]}.",
        ],
    }
    body = [rng.choice(v) for k, v in facts.items() if k not in covered]
    if f["endemic"]:
        body.append(f"It is endemic to {f['endemic'][0]}.")
    body += [rng.choice(_USE_SENTENCE[u]) for u in f["uses"]]
    who, when = f["describer"][0], f["described"][0]
    body.append(
        rng.choice(
            [
                f"The species was first described by {who} in {when}.",
                f"It was formally described in {when} by {who}.",
                f"{who} described the species in {when}.",
            ]
        )
    )

    traps: list[str] = []
    group = f["region_group"][0]
    near = [c for c in vocab.REGION_GROUPS[group] if c not in regions]
    if near:
        r2 = rng.choice(near)
        traps.append(
            rng.choice(
                [
                    f"Although often mistaken for a species from {r2}, it does not occur in {r2}.",
                    f"It is not found in {r2}, despite old herbarium labels.",
                ]
            )
        )
    traps.append(f"It is not closely related to the {fam.related}, despite a superficial likeness.")
    if f["habit"][0] != "tree":
        traps.append(
            f"It is sometimes called a tree, but it does not exceed "
            f"{rng.randrange(2, 5)} m and is not a true tree."
        )
    missing = [u for u in fam.uses if u not in f["uses"]]
    if missing:
        traps.append(_USE_TRAP[rng.choice(missing)])
    distractors = [
        "The leaves are opposite and lanceolate.",
        "Flowering takes place in the wet season.",
        "Its flowers are pollinated by bees.",
        "The specific epithet honours an early collector.",
        "Seeds are dispersed by wind.",
        "It is rarely seen in cultivation outside botanical gardens.",
    ]
    return lead, body, traps, distractors


# --------------------------------------------------------------------------- animals
_HABITAT_PHRASE = {
    "rainforest": "lowland rainforest",
    "desert": "desert scrub",
    "grassland": "open grassland",
    "wetland": "wetland",
    "freshwater": "freshwater rivers and lakes",
    "marine": "marine coastal waters",
    "montane": "montane forest",
    "cave": "limestone caves",
}
_GROUP = {g.category: g for g in vocab.ANIMAL_GROUPS}


def _animals(e: Entity, rng: random.Random) -> tuple[str, Sentences, Sentences, Sentences]:
    f, t = e.facets, e.title
    grp = _GROUP[f["group"][0]]
    regions = list(f["regions"])
    rng.shuffle(regions)
    where = _join(regions)
    common, cont = e.details["common_name"], f["continent"][0]
    diet, habitat, status = f["diet"][0], f["habitat"][0], f["status"][0]
    cls = f["class"][0]
    leads = [
        (
            f"{t}, commonly known as the {common}, is a species of {grp.singular} found in {where}.",
            {"group", "regions"},
        ),
        (
            f"{t} is {_a(grp.singular)} {grp.singular} species native to {where}.",
            {"group", "regions"},
        ),
        (
            f"The {common} ({t}) is {_a(diet)} {diet} {grp.singular} of {cont}.",
            {"group", "diet", "continent"},
        ),
        (
            f"{t} is a species of {grp.singular}, {_a(cls)} {cls} of {cont}.",
            {"group", "class", "continent"},
        ),
    ]
    lead, covered = rng.choice(leads)
    plural = grp.category[0].lower() + grp.category[1:]
    facts: dict[str, list[str]] = {
        "class": [f"It is {_a(cls)} {cls}.", f"Like other {plural}, it is {_a(cls)} {cls}."],
        "group": [
            f"It is {_a(grp.singular)} {grp.singular}.",
            f"It is classified among the {plural}.",
        ],
        "regions": [
            f"It is native to {where}.",
            f"Its range covers {where}.",
            f"It has been recorded in {where}.",
        ],
        "continent": [
            f"It is part of the fauna of {cont}.",
            f"Its range lies entirely within {cont}.",
        ],
        "habitat": [
            f"It lives in {_HABITAT_PHRASE[habitat]}.",
            f"Its typical habitat is {_HABITAT_PHRASE[habitat]}.",
        ],
        "diet": [f"It is {diet}, feeding mostly at dusk.", f"The species is {diet}."],
        "status": [
            f"It is listed as {status} on the IUCN Red List.",
            f"The IUCN classifies it as {status}.",
        ],
    }
    body = [rng.choice(v) for k, v in facts.items() if k not in covered]
    if f["endemic"]:
        body.append(f"It is endemic to {f['endemic'][0]}.")
    who, when = f["describer"][0], f["described"][0]
    body.append(
        rng.choice(
            [
                f"The species was first described by {who} in {when}.",
                f"It was formally described in {when} by {who}.",
                f"{who} described the species in {when}.",
            ]
        )
    )
    traps: list[str] = []
    region_group = vocab.REGION_GROUP_OF[regions[0]]
    near = [c for c in vocab.REGION_GROUPS[region_group] if c not in regions]
    if near:
        traps.append(f"It does not occur in {rng.choice(near)}, despite older records from there.")
    related = _GROUP[grp.related]
    traps.append(f"Despite its name, it is not a true {related.singular}.")
    other_diets = [x for x in grp.diets + ("carnivorous", "herbivorous") if x != diet]
    if other_diets:
        traps.append(f"It is not {rng.choice(other_diets)}, contrary to early accounts.")
    other_habitats = [h for h in vocab.HABITATS if h != habitat]
    traps.append(f"It is not found in {rng.choice(other_habitats)} habitats.")
    if status in ("least concern", "near threatened"):
        traps.append("It is not considered endangered.")
    distractors = [
        "Males are slightly larger than females.",
        "Little is known about its breeding behaviour.",
        "The species is mainly active at night.",
        "It is rarely seen by observers.",
        "Its name refers to the colour of its back.",
        "Several local populations have been studied in detail.",
    ]
    return lead, body, traps, distractors


_RENDERERS = {"films": _films, "books": _books, "plants": _plants, "animals": _animals}


def render_document(entity: Entity, seed: int, trap_rate: float = 0.7) -> str:
    """The document text of ``entity`` (a pure function of the entity, seed and rate).

    Each available trap is included with probability ``trap_rate`` (at most three), so
    most documents carry at least one negated mention and many carry two.
    """
    rng = entity_rng(seed, entity.index, _TRAP_SALT)
    lead, body, traps, distractors = _RENDERERS[entity.domain](entity, rng)
    rng.shuffle(traps)
    chosen = [s for s in traps if rng.random() < trap_rate][:3]
    rng.shuffle(distractors)
    middle = body + chosen
    rng.shuffle(middle)
    sentences = [lead, *middle]
    words = sum(len(s.split()) for s in sentences)
    for extra in distractors:
        if words >= MIN_WORDS + rng.randrange(0, 40):
            break
        pos = rng.randrange(1, len(sentences) + 1)
        sentences.insert(pos, extra)
        words += len(extra.split())
    while words > MAX_WORDS and len(sentences) > 1 and chosen:
        drop = chosen.pop()
        sentences.remove(drop)
        words -= len(drop.split())
    return " ".join(sentences)
