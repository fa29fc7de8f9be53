"""Drop conjuncts that another conjunct already implies: ``A and B`` is ``A`` when A ⊆ B.

Small LLMs split a single category into itself plus its head ("Dave Eggers books" becomes
``Dave Eggers books AND books``; "1946 Indian musical films" becomes ``... AND Musical
films``). The extra conjunct is not wrong, but it is redundant: every Dave Eggers book is a
book, so it changes no answer set, while it turns a single-atom query into a conjunction
that retrieval then scores as two constraints (and template-level evaluation counts as a
wrong structure).

For category names, more words mean a narrower class: when the content words of a positive
conjunct B are a subset of those of another positive conjunct A in the same ``And``, A
implies B, so ``A ∧ B = A`` and B is dropped. Words are compared lower-cased, without
punctuation or a plural ``s``; negated conjuncts and disjunctions are left alone (``A ∧ ¬B``
with B ⊂ A is a contradiction worth keeping visible, not a simplification).
"""

from __future__ import annotations

import re

from logic_rag.query.algebra import And, Atom, LogicalQuery, Not, Or

__all__ = ["content_words", "drop_implied_conjuncts"]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORDS = frozenset({"a", "an", "the", "of", "and", "or", "that", "are", "is", "also"})


def content_words(text: str) -> frozenset[str]:
    """Lower-cased words of ``text`` without stopwords, a trailing plural ``s`` stripped."""
    words = set()
    for word in _WORD.findall(text.lower()):
        if word in _STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return frozenset(words)


def drop_implied_conjuncts(query: LogicalQuery) -> LogicalQuery:
    """``query`` with every positive atom conjunct that a sibling atom implies removed.

    Of two conjuncts with the same words the first is kept; nested conjunctions are
    flattened first; an ``And`` left with one argument becomes that argument.
    """
    if isinstance(query, Atom):
        return query
    if isinstance(query, Not):
        return Not(drop_implied_conjuncts(query.arg))
    args = tuple(drop_implied_conjuncts(a) for a in query.args)
    if isinstance(query, Or):
        return Or(args)
    # And(A, And(B, C)) is And(A, B, C): siblings at any depth can imply each other.
    args = tuple(b for a in args for b in (a.args if isinstance(a, And) else (a,)))
    kept = [a for i, a in enumerate(args) if not _implied_by_sibling(i, args)]
    return kept[0] if len(kept) == 1 else And(tuple(kept))


def _implied_by_sibling(i: int, args: tuple[LogicalQuery, ...]) -> bool:
    arg = args[i]
    if not isinstance(arg, Atom):
        return False
    words = content_words(arg.text)
    if not words:
        return False
    for j, other in enumerate(args):
        if j == i or not isinstance(other, Atom):
            continue
        others = content_words(other.text)
        if words < others or (words == others and j < i):
            return True
    return False
