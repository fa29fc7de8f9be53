"""Is an LLM's decomposition made of the query's own words?

A decomposer may reword ("Orchids of Thailand" for "... but not Thailand") but must not
invent: a small model that copies its few-shot example, or a prompt-injected query
("ignore the above and ..."), returns atoms that have nothing to do with the text, and
retrieval would then search for the example's orchids with confidence 0.9. An atom is
grounded when at least ``min_share`` of its content words occur in the query, compared
after normalisation (lower case, accents and punctuation dropped, stopwords dropped, words
of five letters or more cut to their first five so "America"/"American" and
"Film"/"Films" meet).
"""

from __future__ import annotations

import re
import unicodedata

from logic_rag.query.algebra import LogicalQuery, atoms

__all__ = ["DEFAULT_MIN_SHARE", "content_words", "grounding_share", "ungrounded_atoms"]

#: Share of an atom's content words that must occur in the query.
DEFAULT_MIN_SHARE = 0.5

_STOPWORDS = frozenset(
    "a an the of and or in on at to for from by with about that are is were was be been also "
    "both not but which who whom what when where why how this these those it its their his her "
    "any all some no nor as than into".split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STEM = 5


def content_words(text: str) -> frozenset[str]:
    """Normalised content words of ``text`` (see the module docstring)."""
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    words = set()
    for word in _WORD.findall(folded):
        if word in _STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]
        words.add(word[:_STEM] if len(word) >= _STEM else word)
    return frozenset(words)


def grounding_share(atom_text: str, query_words: frozenset[str]) -> float:
    """Share of ``atom_text``'s content words found in ``query_words`` (1.0 if it has none)."""
    words = content_words(atom_text)
    if not words:
        return 1.0
    return len(words & query_words) / len(words)


def ungrounded_atoms(
    query: LogicalQuery, text: str, min_share: float = DEFAULT_MIN_SHARE
) -> list[str]:
    """Texts of the atoms of ``query`` whose share of words from ``text`` is under ``min_share``."""
    if not 0.0 <= min_share <= 1.0:
        raise ValueError(f"min_share must be in [0, 1], got {min_share}")
    query_words = content_words(text)
    return [a.text for a in atoms(query) if grounding_share(a.text, query_words) < min_share]
