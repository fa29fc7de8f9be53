"""Invented names: unique proper nouns, person names and binomial Latin names.

Titles must be unique across a world of any size without remembering the titles already
issued (the streaming writer keeps no set of 1M titles). Each entity's index is therefore
mapped bijectively to a fixed-length syllable code: ``(index * multiplier + offset) mod 80**k`` is a
permutation of ``range(80**k)`` because the multiplier is coprime with 80, and a string of
fixed-length consonant-vowel syllables decodes uniquely. Neighbouring indices get
unrelated-looking names.
"""

from __future__ import annotations

import random

__all__ = [
    "CONSONANTS",
    "VOWELS",
    "code_word",
    "unique_stem",
    "person_name",
    "latin_epithet",
    "describer_pool",
]

CONSONANTS = "bdfgklmnprstvzch"  # 16 letters ("c" and "h" kept single-letter on purpose)
VOWELS = "aeiou"
_SYLLABLES = tuple(c + v for c in CONSONANTS for v in VOWELS)  # 80 syllables
_MULTIPLIER = 7_919  # prime, coprime with 80
_OFFSET = 1_234_567  # shifts index 0 away from "bababa"
_FINALS = "rnl"


def code_word(index: int, n_syllables: int = 3) -> str:
    """A lower-case pseudo-word that is a bijective function of ``index``.

    Raises ``ValueError`` when ``index`` does not fit ``n_syllables`` (80**n - 1 at most).
    """
    space = len(_SYLLABLES) ** n_syllables
    if not 0 <= index < space:
        raise ValueError(f"index {index} does not fit {n_syllables} syllables (max {space - 1})")
    value = (index * _MULTIPLIER + _OFFSET) % space
    parts = []
    for _ in range(n_syllables):
        value, digit = divmod(value, len(_SYLLABLES))
        parts.append(_SYLLABLES[digit])
    return "".join(parts)


def unique_stem(index: int) -> str:
    """A capitalised invented proper noun unique to ``index`` (e.g. "Vorekasin").

    Four syllables plus a final consonant give 40,960,000 distinct names; the final
    consonant keeps the names from coinciding with real place names in the vocabularies.
    """
    word = code_word(index, 4)
    return (word + _FINALS[index % len(_FINALS)]).capitalize()


def _vocabulary_words() -> frozenset[str]:
    from . import vocab

    words: set[str] = set()
    for c in vocab.COUNTRIES:
        for text in (c.name, c.adjective, c.language, *c.cities):
            words.update(text.lower().split())
    for places in vocab.BOOK_SETTINGS.values():
        for p in places:
            words.update(p.lower().split())
    for countries in vocab.REGION_GROUPS.values():
        for c in countries:
            words.update(c.lower().split())
    return frozenset(words)


_FORBIDDEN = _vocabulary_words()


def person_name(rng: random.Random) -> str:
    """A random invented person name ("Talen Moravik"); not unique, never a vocabulary word
    (a director called "Milan" would read as a mention of the city)."""
    while True:
        given = "".join(rng.choice(_SYLLABLES) for _ in range(2)) + rng.choice(_FINALS)
        family = "".join(rng.choice(_SYLLABLES) for _ in range(3)) + rng.choice("kvs")
        if given not in _FORBIDDEN and family not in _FORBIDDEN:
            return f"{given.capitalize()} {family.capitalize()}"


_EPITHET_ENDINGS = ("ensis", "ii", "ata", "oides", "ina", "icus", "ella", "osa")


def latin_epithet(index: int) -> str:
    """A unique species epithet for ``index`` ("kamorelensis")."""
    return code_word(index, 4) + _EPITHET_ENDINGS[index % len(_EPITHET_ENDINGS)]


def describer_pool(domain: str, size: int = 24) -> tuple[str, ...]:
    """A fixed list of invented naturalists who describe species of ``domain``.

    The pools are drawn from a stream seeded by the domain name, so they are the same in
    every world and different between plants and animals ("Taxa named by ..." atoms stay
    unique per domain).
    """
    rng = random.Random(f"describers:{domain}")
    names: list[str] = []
    while len(names) < size:
        name = person_name(rng)
        if name not in names:
            names.append(name)
    return tuple(names)
