"""Implicit heads in English list queries: "Orchids of Indonesia and Malaysia".

People leave the head noun implicit when they list items: "Orchids of Indonesia and
Malaysia" means "Orchids of Malaysia", "Holarctic and North American desert fauna" means
"Holarctic fauna", "Novels by X that are not set in Y" means "Novels set in Y". These
heuristics classify an item as a *tail* (it starts with a post-modifier: "set in Y"), *full*
(it has its own head noun) or *bare* (a name or a modifier without a head), and find the
head noun or the prefix ("Orchids of") that a tail or a bare item borrows. They use word
lists, not a parser, so the rule decomposer lowers its confidence whenever it uses them.
"""

from __future__ import annotations

__all__ = ["item_kind", "head_noun", "head_prefix", "is_proper_name", "lower_first"]

# Words that start a post-modifier of a noun ("Novels *by* Robert B. Parker",
# "Films *set* in England"): the noun before them is the item's head.
_RELATIONAL = {
    "of", "from", "in", "about", "by", "set", "shot", "filmed", "released", "published",
    "written", "directed", "produced", "found", "native", "endemic", "originating",
    "originally", "based", "located", "made", "on", "for", "to", "featuring", "starring",
    "at", "during", "depicting", "named", "established", "discovered", "described", "with",
    "within", "inhabiting", "living", "occurring", "introduced", "extinct", "associated",
    "related", "recorded", "composed", "performed", "developed", "designed", "built",
    "manufactured", "won", "nominated", "adapted", "first", "into",
}  # fmt: skip
# Relational words that are also ordinary adjectives before a noun ("Endemic flora",
# "Extinct birds"); they start a post-modifier only when a preposition follows.
_ADJECTIVAL = {
    "endemic", "native", "extinct", "first", "introduced", "associated", "related",
    "originally", "living", "named", "recorded", "won",
}  # fmt: skip
_PREPOSITIONS = {"of", "from", "in", "about", "by", "on", "for", "to", "at", "with", "into"}
# Nouns that head a category without a plural -s.
_COLLECTIVE = {
    "fauna", "flora", "biota", "fish", "people", "media", "music", "literature", "software",
    "cinema", "cuisine", "art", "poetry", "fiction", "data", "species", "series", "taxa",
    "genera", "children", "men", "women", "aircraft", "equipment", "clothing", "wildlife",
    "megafauna", "algae", "fungi", "cacti", "bacteria", "film", "novel", "book", "plant",
    "animal", "bird", "tree", "mammal", "reptile", "insect", "album", "song", "game", "show",
}  # fmt: skip
_SMALL = {"of", "the", "and", "a", "an", "in", "de", "la", "du", "von", "van", "da", "y"}


def _words(text: str) -> list[str]:
    return text.split()


def _rel_index(words: list[str]) -> int | None:
    for i, w in enumerate(words):
        word = w.lower().strip("(),")
        if word not in _RELATIONAL:
            continue
        if word in _ADJECTIVAL:  # "Endemic flora" vs "endemic to Asia"
            following = words[i + 1].lower() if i + 1 < len(words) else ""
            if following not in _PREPOSITIONS:
                continue
        return i
    return None


def _looks_plural(word: str) -> bool:
    w = word.lower().strip("(),'\"")
    if w in _COLLECTIVE:
        return True
    return len(w) > 3 and w.isalpha() and w.endswith("s") and not w.endswith(("ss", "us", "is"))


def item_kind(text: str) -> str:
    """Kind of item: "tail" (starts with a post-modifier), "full" (has a head noun) or "bare"."""
    words = _words(text)
    if not words:
        return "bare"
    idx = _rel_index(words)
    if idx == 0:
        return "tail"
    if idx is not None:
        return "full"
    return "full" if _looks_plural(words[-1]) else "bare"


def head_noun(text: str) -> str:
    words = _words(text)
    idx = _rel_index(words)
    return words[idx - 1] if idx else words[-1]


def head_prefix(text: str | None) -> str | None:
    """Head plus post-modifier words of a full item: "Orchids of" for "Orchids of Indonesia"."""
    if text is None:
        return None
    words = _words(text)
    idx = _rel_index(words)
    if not idx:
        return None
    j = idx
    while j + 1 < len(words) and words[j + 1].lower() in _RELATIONAL:
        j += 1
    if j + 1 >= len(words):
        return None
    return " ".join(words[: j + 1])


def is_proper_name(text: str) -> bool:
    """Every content word capitalised ("South America", "Malaysia"): a name, not a modifier."""
    content = [w for w in _words(text) if w.lower() not in _SMALL]
    return bool(content) and all(w[:1].isupper() or w[:1] == "(" for w in content)


def lower_first(text: str) -> str:
    words = _words(text)
    if words and words[0].lower() in _RELATIONAL:
        words[0] = words[0].lower()
    return " ".join(words)
