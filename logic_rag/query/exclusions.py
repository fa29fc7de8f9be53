"""How people write exclusions in questions, and what the excluded thing is.

Set queries ("Birds of Asia but not Parrots") name the excluded set with a connective the
list rules already read. Questions people type read differently::

    "Apart from Black Brook, which other tributaries flow into the Merrimack River?"
    "Who hosted the 48th Emmy Awards, not including any details about Michael J. Fox?"
    "What is Gabry Ponte famous for? Don't mention Eiffel 65."

The cue ("apart from", "not including", "don't") is followed by the excluded span, which
carries wrappers ("any details about", "mention", "the American actor") around the thing
itself. This module holds the cue lexicon and where a clause ends:

* :func:`find_exclusions` splits a question into the need (the text without the exclusion
  clauses) and the excluded things; a leading clause ("Apart from X, what ...") ends at the
  comma before the main question, a trailing one at the end of its sentence or at a comma
  that opens an aside (", who is ...").
* :func:`~logic_rag.query.excluded.excluded_thing` (re-exported here) strips the
  wrappers so the negated atom is the thing ("don't mention Moses" -> "Moses"); see
  :mod:`logic_rag.query.excluded`.
* :func:`has_negation_cue` is the broad detector ``auto`` uses to notice a query whose
  negation the rules did not read.

Everything is word lists and regular expressions, no parser: fast, offline, predictable.
"""

from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass

from logic_rag.query.excluded import (
    QUOTED,
    excluded_thing,
    excluded_things,
    is_pronoun_only,
    strip_mention_wrappers,
)

__all__ = [
    "Exclusion",
    "excluded_thing",
    "excluded_things",
    "find_exclusions",
    "has_negation_cue",
    "is_question",
    "normalise_question",
    "strip_mention_wrappers",
]

# ---------------------------------------------------------------------------- lexicon

# The cues, most specific first. Any of them may open a clause ("Apart from X, what ...")
# or trail ("..., apart from X"); :func:`_starts_clause` tells which.
_CUES = [
    r"with\s+the\s+exception\s+of",
    r"except(?:\s+for)?",
    r"excluding|excluded|exclude[sd]?",
    r"other\s+than",
    r"apart\s+from",
    r"aside\s+(?:from|of)",
    r"besides|beside",
    r"instead\s+of",
    r"rather\s+than",
    r"not\s+including|not\s+counting|not\s+considering",
    r"not\s+to\s+mention",
    r"minus",
    r"in\s+addition\s+to|beyond",
    r"on\s+top\s+of",
    r"regardless\s+of|irrespective\s+of",
    r"(?:leaving|setting|putting|leave|set|put)\s+aside",
    r"(?:leaving|leave)\s+out|left\s+out",
    r"ignor(?:e|ing)|disregard(?:ing)?|omit(?:ting)?|skip(?:ping)?|barring",
    r"(?:ruled|ruling|rule)\s+out",
    r"(?:refrain(?:ing)?|abstain(?:ing)?)\s+from",
    r"avoid(?:ing|s)?",
    r"unrelated\s+to|not\s+related\s+to",
    r"outside(?:\s+of)?",
    r"without",
    r"(?:(?:that|which|who)\s+)?(?:(?:is|are|was|were)\s+)?(?:different|distinct|separate)\s+from",
    r"(?:(?:that|which|who)\s+)?differ(?:s|ed|ing)?\s+from|unlike",
    r"(?:(?:that|which)\s+)?(?:(?:is|are)\s+)?independent\s+of",
    r"(?:(?:but|and|with|has|have)\s+)?nothing\s+(?:to\s+do\s+with|about|related\s+to|on|regarding)",
    r"(?:(?:but|and|with)\s+)?no\s+(?:information|details?|mention)\s+(?:related\s+to|about|of|on)",
    r"(?:with|having|has|have|but|and)\s+no",
    r"no\s+(?=(?:mention|information|info|details?|references?|discussion)\b)",
    # negated auxiliaries: "don't mention X", "that isn't about X", "but do not include X"
    r"(?:(?:but|and|that|which|who|please|i)\s+)?"
    r"(?:do|does|did|is|are|was|were|should|would|could|can|will|must|please\s+do)\s*"
    r"(?:n't|not)",
    r"(?:(?:but|and|that|which|who|please|i)\s+)?"
    r"(?:don't|doesn't|didn't|isn't|aren't|wasn't|weren't|shouldn't|wouldn't|won't|can't|"
    r"cannot)",
    r"(?:(?:but|and|while|whilst)\s+)?not",
]
_CUE = re.compile(
    r"(?<![\w'-])(?:" + "|".join(f"(?:{c})" for c in _CUES) + r")(?![\w'-])", re.IGNORECASE
)
# Cues that exclude only when the question asks for "other"/"else" things besides X.
_WEAK_CUES = re.compile(r"^(?:in\s+addition\s+to|on\s+top\s+of|beyond)$", re.IGNORECASE)
_OTHER = re.compile(r"\b(?:other|else|another|more|additional|further)\b", re.IGNORECASE)
# A negated auxiliary: after it a lone verb ("does not have") names nothing.
_AUX_NOT = re.compile(r".*(?:n't|\bnot)$|.*\bcannot$")
# "not" that does not exclude anything.
_NOT_IDIOM = re.compile(
    r"^\s*(?:only|just|merely|simply|necessarily|yet|sure|least|until|too|all|every|unlike|"
    r"far|long|much|many|least|quite|exactly)\b",
    re.IGNORECASE,
)
#: Anything that may express a negation or an exclusion; ``auto`` asks the LLM when the
#: rules read no NOT in a query that has one of these.
_ANY_CUE = re.compile(
    r"(?<![\w-])(?:not|no|never|neither|nor|none|nothing|without|except|excluding|exclude[sd]?|"
    r"besides|beside|instead|rather\s+than|other\s+than|apart\s+from|aside\s+from|minus|"
    r"non-\w+|\w+n't|cannot|avoid\w*|ignor\w*|omit\w*|disregard\w*|leaving\s+out|unrelated|"
    r"barring|regardless\s+of|irrespective\s+of)(?![\w-])",
    re.IGNORECASE,
)
# Words that start a question or a request: a text that starts with one is a question,
# not a set query, and its clauses joined by "and" stay one need.
_QUESTION_START = re.compile(
    r"^(?:(?:in|on|at|for|from|to|with|by|during|of|under)\s+(?:which|what|whom)\b"
    r"|who(?:m|se)?\b|what(?:'s)?\b|which\b|where\b|when\b|why\b|how\b"
    r"|(?:is|are|was|were|do|does|did|has|have|had|can|could|would|will|should|may)\s+"
    r"(?:there|it|the|a|an|any|you|he|she|they|we|i|this|that|these|those|[A-Z0-9])"
    r"|(?:can|could|would|will)\s+you\b|please\b|kindly\b|tell\s+me\b|i\s*(?:'m|am|'d|would|want)\b"
    r"|give\s+me\s+(?:some\s+)?(?:information|details|an?\s+overview)\b"
    r"|(?:describe|explain|introduce|summari[sz]e|provide|share)\b)",
    re.IGNORECASE,
)
# Openings of set queries: "what are X", "find me X", "are there any X".
_SET_WRAPPER = re.compile(
    r"^(?:(?:what|which)\s+(?:are|were)|are\s+there|(?:find|show|list|give|get|name|"
    r"recommend|suggest)(?:\s+(?:me|us))?)(?:\s*,)?(?:\s+(?:some|all|any))?(?:\s+of\s+the)?\s+",
    re.IGNORECASE,
)
# Words a set query never holds but a question often does (lower case only).
_CLAUSE_WORDS = re.compile(
    r"\b(?:did|does|has|have|had|can|could|would|should|will|he|she|his|her|him|they|"
    r"their|them|you|your|i|my|we|our|else|other|anything|information)\b"
)
# A comma followed by the main question: where a leading exclusion clause ends.
_MAIN_CLAUSE = re.compile(
    r",\s*(?=(?:(?:in|on|at|for|from|to|with|by|during|of)\s+(?:which|what|whom)\b"
    r"|who(?:m|se)?\b|what(?:'s)?\b|which\b|where\b|when\b|why\b|how\b|is\b|are\b|was\b|"
    r"were\b|do\b|does\b|did\b|has\b|have\b|can\b|could\b|would\b|will\b|should\b|"
    r"please\b|tell\b|give\b|list\b|name\b|i\b|we\b|there\b|it\b))",
    re.IGNORECASE,
)
# Where a trailing excluded span ends: a comma (or a dash) that opens an aside or another
# clause, or a relative clause ("..., who is ...").
_SPAN_END = re.compile(
    r"\s*(?:,|;|\s-\s|\s–\s|\s—\s)\s*(?=(?:while|whilst|because|since|so|but|please|focusing|"
    r"focus|instead|i|we|what|how|thank|thanks|if|although|though|rather|then|can|could|would|"
    r"(?:and|or)\s+(?:what|who|how|when|where|why|which|is|are|was|were|did|does|do|can|could|"
    r"would|please|focus|also|instead|i|we|it|he|she|they|tell|give|list|provide))\b)"
    r"|\s+(?=(?:but|while|whilst|and\s+(?:what|who|how|when|where|why|which|is|are|was|were|"
    r"did|does|do|can|could|would|please|focus|also|instead)|so\s+that|"
    r"in\s+(?:your|the|this|my)\s+(?:response|answer|reply|description|explanation|"
    r"discussion|summary)|please|focusing|instead|rather)\b)",
)
# ", who is best known for ...": an aside inside a leading clause, not the main question.
_RELATIVE_ASIDE = re.compile(
    r"\s*(?:(?:who|which)\s+(?:is|was|are|were|has|had|also|became|served|played)\b|whose\b)"
)
# The second comma of a parenthetical exclusion: "Who, other than X, wrote ...".
_PARENTHETICAL_END = re.compile(
    r",\s*(?=[a-z])(?!(?:the|a|an|who|whom|whose|which|that|known|commonly|also|officially|one|"
    r"formerly|born|now|as|where|when|and|or|nor|its|his|her|their)\b)"
)
_SENTENCE_END = re.compile(r"(?<![A-Z])(?<!\b[A-Z][a-z])(?<!\bSt)(?<!\bvs)[.?!](?=\s|$)|\?")


@dataclass(frozen=True)
class Exclusion:
    """One exclusion clause: its cue, the raw span and the thing it excludes."""

    cue: str
    span: str
    thing: str
    leading: bool


# ------------------------------------------------------------------------- public API


def normalise_question(text: str) -> str:
    """Typographic variants to ASCII, HTML entities decoded, spaces collapsed."""
    text = html.unescape(text)
    text = re.sub(r"</?nowiki>", "", text)
    for a, b in (("’", "'"), ("‘", "'"), ("？", "?"), ("，", ","), ("：", ":"), ("＂", '"')):
        text = text.replace(a, b)
    text = re.sub(r",(?=[A-Za-z\"“])", ", ", text)  # "Angeles,except" -> "Angeles, except"
    text = re.sub(r"([a-z][?!])(?=[A-Z])", r"\1 ", text)  # "League?Please exclude"
    return " ".join(text.split())


def is_question(text: str) -> bool:
    """Whether ``text`` reads as a question or a request rather than a set query.

    Set queries ("Novels by X that are not set in Y", "what are Jazz albums or live
    albums", "Who likes A and B") keep the list rules; questions ("Which films made Owen
    Wilson famous", "Can you tell me about ...") keep their clauses as one need.
    """
    body = text.strip()
    m = _SET_WRAPPER.match(body)
    if m:
        rest = body[m.end() :]
        # "what are Novels by X" and "find me 1960 novels" are set queries; "what are the
        # noteworthy works of X, without ..." and "What is the name of ..." are questions.
        return bool(
            re.match(r"^(?:the|a|an)\b", rest, re.IGNORECASE)
            or _CLAUSE_WORDS.search(rest)
            or _SENTENCE_END.search(rest.rstrip("?. "))
        )
    if re.match(r"^(?:who|whom)\s+(?:(?:do|does|did)\s+)?likes?\b", body, re.IGNORECASE):
        return False  # LIMIT's "Who likes A and B": one verb over a list of sets
    if _QUESTION_START.match(body):
        return True
    return bool(_SENTENCE_END.search(body.rstrip("?. ")))


def has_negation_cue(text: str) -> bool:
    """Whether ``text`` holds any word that may express a negation or an exclusion."""
    return _ANY_CUE.search(normalise_question(text)) is not None


def find_exclusions(text: str) -> tuple[str, list[Exclusion]]:
    """(need, exclusions) of a question; ``need`` is the text without the exclusion clauses.

    Returns ``(text, [])`` when no cue excludes anything.
    """
    text = normalise_question(text)
    exclusions: list[Exclusion] = []
    removed: list[tuple[int, int]] = []
    # Computed once per text, not once per cue: the quoted titles masked and where the
    # sentences end. Per cue, every look is bounded (a window before the cue, the span
    # after it up to its word limit), so the whole pass is linear in the text (issue 42
    # item 2: 2,000 "except" clauses took 13.6 s when each cue rescanned the text).
    masked = _Masked(text)
    has_other = _OTHER.search(text) is not None
    pos = 0
    while True:
        m = _CUE.search(text, pos)
        if m is None:
            break
        pos = m.end()
        cue = " ".join(m.group(0).lower().split())
        if m.group(0)[:1].isupper() and not _starts_clause(text, m.start()):
            continue  # "films about Not Another Teen Movie": a title, not a cue
        if cue == "apart from" and _compares(text, m.start()):
            continue  # "what sets X apart from Y" compares, it does not exclude
        leading = _starts_clause(text, m.start())
        if _WEAK_CUES.match(cue) and not (leading or has_other):
            continue  # "tell me about A, in addition to B" includes B
        if cue.endswith("not") and _NOT_IDIOM.match(text[m.end() : m.end() + 40]):
            continue
        end = _span_end(text, m.end(), leading, m.start(), masked)
        if end is None:
            continue  # the span runs past its word limit: no exclusion reads that long
        span = text[m.end() : end].strip(" ,;:")
        if not span or len(span.split()) > 40:
            continue
        if _AUX_NOT.match(cue) and re.fullmatch(r"[a-z]+(?<!ing)", span):
            continue  # "... that Barbara Jordan does not have": the object came before
        things = [t for t in excluded_things(span) if t and not is_pronoun_only(t)]
        if not things:
            continue
        exclusions.extend(Exclusion(cue, span, thing, leading) for thing in things)
        start, before = m.start(), _before(text, m.start())
        if before.endswith(","):  # ", other than X," goes with both its commas
            start = m.start() - (len(_before(text, m.start(), strip=False)) - len(before)) - 1
            if text[end:].lstrip().startswith(","):
                end = text.index(",", end) + 1
        removed.append((start, end))
        pos = end
    if not exclusions:
        return text, []
    need = _remove(text, removed)
    return need, exclusions


# ---------------------------------------------------------------------------- helpers


#: Characters before a cue that decide whether it opens a clause or follows "sets X":
#: the texts are normalised (single spaces), so the cues' context fits in this window.
_LOOK_BACK = 120
#: Words an excluded span may hold (longer spans are not read as exclusions); the span's
#: end is looked for this far and no farther, which keeps each cue's work bounded.
_MAX_SPAN_WORDS = 40
_WORDS_AFTER = re.compile(rf"(?:\s*\S+){{1,{_MAX_SPAN_WORDS + 2}}}")
_CLAUSE_OPENER = re.compile(r"(?:^|[.?!]\s*)(?:but|and|so|also|now|well|ok|okay)\s*,?$", re.I)
_COMPARES = re.compile(r"\bsets?\b[^,.?!]{0,80}$")


class _Masked:
    """A text with quoted titles masked (``"x" * len``: positions kept) and its sentence
    ends, computed once for all the cues of :func:`find_exclusions`."""

    def __init__(self, text: str) -> None:
        self.text = QUOTED.sub(lambda q: "x" * len(q.group(0)), text)  # "Uptown... It's Hot!"
        self.sentence_ends = [m.start() for m in _SENTENCE_END.finditer(self.text)]

    def sentence_end(self, start: int) -> int:
        """Where the sentence holding ``start`` ends (the text's end for the last one)."""
        i = bisect.bisect_left(self.sentence_ends, start)
        return self.sentence_ends[i] if i < len(self.sentence_ends) else len(self.text)


def _before(text: str, start: int, *, strip: bool = True) -> str:
    """At most :data:`_LOOK_BACK` characters before ``start`` (right-stripped)."""
    window = text[max(0, start - _LOOK_BACK) : start]
    return window.rstrip() if strip else window


def _starts_clause(text: str, start: int) -> bool:
    """Whether the cue at ``start`` opens a sentence or a clause ("Apart from X, what")."""
    before = _before(text, start)
    if not before:
        return start <= _LOOK_BACK or not text[:start].strip()
    if before[-1] in ".?!:;":
        return True
    m = _CLAUSE_OPENER.search(before)
    # "^" of the window is the text's start only when the window reaches back to it
    return m is not None and (m.start() > 0 or start <= _LOOK_BACK or before[0] in ".?!")


def _compares(text: str, start: int) -> bool:
    """ "what sets X apart from Y": the "apart from" at ``start`` compares."""
    window_start = max(0, start - _LOOK_BACK)
    m = _COMPARES.search(text, window_start, start)
    return m is not None and (m.start() > window_start or window_start == 0)


def _span_end(
    text: str, start: int, leading: bool, cue_start: int, masked: _Masked | None = None
) -> int | None:
    """Where the excluded span that starts at ``start`` ends; ``None`` when it would hold
    more than :data:`_MAX_SPAN_WORDS` words (such a span is not read as an exclusion)."""
    masked = masked if masked is not None else _Masked(text)
    limit = masked.sentence_end(start)
    # the span's end is looked for within its word limit (and the sentence)
    words = _WORDS_AFTER.match(text, start, limit)
    window = words.end() if words else start
    if leading:
        found = _MAIN_CLAUSE.finditer(text, start, window)
        m = next(found, None)
        while m is not None:
            after = next(found, None)
            if _RELATIVE_ASIDE.match(text, m.end()) is None or after is None:
                return m.start()
            m = after
        comma = text.find(",", start, window)
        if comma != -1:
            return comma
        return limit if window >= limit else None
    # quotes protect commas inside titles; the span holds at least its first word
    first = re.compile(r"\s*\S+").match(masked.text, start, window)
    from_ = first.end() if first else start
    ends = [m.start() for m in (_SPAN_END.search(masked.text, from_, window),) if m]
    if _before(text, cue_start).endswith(tuple(",(")):
        paren = _PARENTHETICAL_END.search(masked.text, from_, window)
        if paren:
            ends.append(paren.start())
    if ends:
        return min(ends)
    return limit if window >= limit else None


def _remove(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without ``spans``, and without the commas and conjunctions they leave."""
    out, last = [], 0
    for a, b in sorted(spans):
        out.append(text[last:a])
        last = max(last, b)
    out.append(text[last:])
    need = " ".join("".join(out).split())
    need = re.sub(r"\s+([,.?!;:])", r"\1", need)
    need = re.sub(r"(?:[,;:]\s*)+([.?!]|$)", r"\1", need)
    for _ in range(3):
        need = re.sub(
            r"(?:,\s*|\s+)(?:and|but|while|whilst|so|please|or|however|also)\s*([.?!,]|$)",
            r"\1",
            need,
            flags=re.IGNORECASE,
        )
        need = re.sub(r"(?:[,;:]\s*)+([.?!,]|$)", r"\1", need)
    need = re.sub(r"^[\s,;:]*(?:and|but|so|please)?[\s,;:]+", "", need, flags=re.I)
    return need.strip(" ,;:")
