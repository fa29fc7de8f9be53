"""Rule-based decomposition of English queries into a :data:`LogicalQuery`.

Fast, deterministic and offline: the default decomposer of the retriever, and the baseline
the LLM decomposer is compared with. It reads the connectives people actually write
("and", "that are also", "both ... and", "or", "either ... or", commas in lists, "but not",
"that are not", "that do not", "excluding", "except", "other than", "apart/aside from", "besides",
"instead of", "rather than", "not including", "minus", "without", "with no", "aren't",
"non-"), strips question wrappers ("what are", "find me", "Who likes X?") and shares heads
between list items where the text leaves them implicit::

    "Orchids of Indonesia and Malaysia but not Thailand"
        -> (Orchids of Indonesia AND Orchids of Malaysia) NOT Orchids of Thailand

Questions and requests ("Which films made Owen Wilson famous, aside from Cars?", "Can
you tell me about X without mentioning Y?") take another path: their need stays one atom
(clauses joined by "and" in a question are one need, not two sets) and each exclusion
clause adds ``NOT thing``, read by :mod:`logic_rag.query.exclusions`.

Precedence, loosest first: negation markers split off what is excluded; clause markers
("that are", "and also", "also") join conjunctive clauses; inside a clause a list joined
by "or" is a disjunction, one joined by "and" a conjunction. Every guess (an implicit
head, a comma list without a connective, mixed and/or) lowers the confidence, so callers
can fall back to plain retrieval or to an LLM when it is low.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from logic_rag.query.algebra import And, Atom, LogicalQuery, Not, Or
from logic_rag.query.decompose import Decomposition, require_text
from logic_rag.query.exclusions import (
    find_exclusions,
    is_question,
    normalise_question,
    strip_mention_wrappers,
)
from logic_rag.query.heads import head_noun, head_prefix, is_proper_name, item_kind, lower_first

__all__ = [
    "DEFAULT_PROTECTED_PHRASES",
    "MAX_QUERY_ATOMS",
    "MAX_QUERY_CHARS",
    "QueryTooLargeError",
    "RuleDecomposer",
    "check_query_chars",
    "count_atoms",
]

#: Longest query text a decomposer reads, in characters (after stripping). QUEST's longest
#: query has 133 characters and long questions a few hundred; 4,000 leaves room for pasted
#: paragraphs while one decomposition stays in milliseconds (issue 42 item 2: a 89 KB query
#: took 67 s and a CLI search of it 246 s before the passes were made linear).
MAX_QUERY_CHARS = 4000
#: Most atoms one decomposed query may hold. Every atom is a search of its own (and a
#: verifier call per candidate), so a query of thousands of atoms is a denial of service,
#: not a search; QUEST's templates have at most 3.
MAX_QUERY_ATOMS = 64


class QueryTooLargeError(ValueError):
    """A query is longer than a decomposer reads or has more atoms than it searches.

    A ``ValueError``: bad input, which the CLI reports in one line with exit code 2.
    """


def check_query_chars(text: str, max_chars: int | None) -> str:
    """``text`` if it has at most ``max_chars`` characters (``None``: no cap), else
    :class:`QueryTooLargeError` saying both numbers and how to go past the cap."""
    if max_chars is not None and len(text) > max_chars:
        raise QueryTooLargeError(
            f"the query has {len(text):,} characters, over the cap of {max_chars:,} a "
            f"decomposer reads; shorten it (or raise max_query_chars)"
        )
    return text


def count_atoms(query: LogicalQuery) -> int:
    """How many atom leaves ``query`` has, repeats included (each is scored), counted
    without recursion so that no query is too deep to count."""
    count, stack = 0, [query]
    while stack:
        node = stack.pop()
        if isinstance(node, Atom):
            count += 1
        elif isinstance(node, Not):
            stack.append(node.arg)
        elif isinstance(node, And | Or):
            stack.extend(node.args)
    return count


def _check_cap(name: str, value: object) -> int | None:
    """A cap setting: a positive integer or ``None`` (no cap)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
    return value


#: Names that contain a connective but are one atom. Extend per corpus with
#: ``RuleDecomposer(protected_phrases=...)``.
DEFAULT_PROTECTED_PHRASES: tuple[str, ...] = (
    "fish and chips",
    "rock and roll",
    "rhythm and blues",
    "arts and crafts",
    "science and technology",
    "trinidad and tobago",
    "bosnia and herzegovina",
    "antigua and barbuda",
    "saint kitts and nevis",
    "saint vincent and the grenadines",
    "sao tome and principe",
    "são tomé and príncipe",
    "turks and caicos islands",
    "heard island and mcdonald islands",
    "dungeons and dragons",
    "pride and prejudice",
    "war and peace",
    "crime and punishment",
    "sense and sensibility",
    "law and order",
    "research and development",
    "security and surveillance",
    "sword and sorcery",
    "sword and sandal",
    "sword-and-sandal",
    "salt and pepper",
    "macaroni and cheese",
    "peanut butter and jelly",
    "bed and breakfast",
    "trial and error",
    "either or",
)

# Wrappers around the actual request; removed from the start of the text.
_WRAPPER = re.compile(
    r"^(?:(?:can|could|would)\s+you\s+|please\s+)*"
    r"(?:(?:find|show|list|give|get|tell|name|recommend|suggest)(?:\s+(?:me|us))?"
    r"(?:\s+(?:about|all|some|the|any|of))*"
    r"|what\s+(?:are|is|were)(?:\s+(?:some|the|all|any))?(?:\s+of\s+the)?"
    r"|which\s+(?:are|is|were)(?:\s+(?:some|the|all))?"
    r"|i\s+(?:want|need|would\s+like|am\s+looking\s+for|'m\s+looking\s+for)(?:\s+(?:some|all|the))?"
    r"|(?:search|look|looking)\s+for"
    r")\b[\s,:]*",
    re.IGNORECASE,
)
# "Who likes X?" / "Who does like X": the verb distributes over every item.
_WHO_VERB = re.compile(r"^(?:who|whom)\s+(?:(?:do|does|did)\s+)?([a-z]+)\b\s*", re.IGNORECASE)

_NEGATION = re.compile(
    r"\b(?:"
    r"(?:but|and)\s+(?:(?:that|which|who)\s+)?(?:are|is|were|was)\s+(?:also\s+)?not"
    r"|(?:that|which|who)\s+(?:are|is|were|was|do|does)\s+(?:also\s+)?not"
    r"|(?:(?:but|and|that|which|who)\s+)?(?:aren't|isn't|weren't|wasn't|don't|doesn't|"
    r"aren’t|isn’t|weren’t|wasn’t|don’t|doesn’t)"
    r"|(?:but|and)\s+(?:do|does)\s+not"
    r"|(?:but|and)\s+not"
    r"|(?:but\s+)?except(?:\s+for)?"
    r"|(?:but\s+)?excluding"
    r"|other\s+than"
    r"|(?:but\s+)?(?:apart|aside)\s+from"
    r"|(?:but\s+)?besides"
    r"|instead\s+of"
    r"|rather\s+than"
    r"|not\s+including"
    r"|minus"
    r"|(?:(?:but|and)\s+)?with\s+no"
    r"|(?:but|and)\s+no"
    r"|(?:(?:but|and)\s+)?without"
    r"|(?:(?:that|which|who)\s+(?:are|is|were|was)\s+)?neither"
    r"|not"
    r")\b",
    re.IGNORECASE,
)
# Markers after which the excluded text is a verb phrase ("desserts that do not contain
# chocolate"): it is rendered as a relative clause on the head noun, "desserts that contain
# chocolate", so the NOT atom reads as a noun phrase like the other exclusions do.
_VERB_NEGATION = re.compile(
    r"^(?:(?P<pronoun>that|which|who)|but|and)\s+(?P<aux>do|does)\s+(?:also\s+)?not$"
    r"|^(?:(?P<pronoun2>that|which|who)|but|and)\s+(?P<aux2>don't|doesn't)$",
)
_SIBILANT = re.compile(r"(?:s|sh|ch|x|z|o)$")


def _third_person(verb: str) -> str:
    """``verb`` after "does not" as it reads without it: "contain" -> "contains"."""
    irregular = {"have": "has", "be": "is"}
    if verb.lower() in irregular:
        return irregular[verb.lower()]
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + ("es" if _SIBILANT.search(verb) else "s")


_CLAUSE = re.compile(
    r"(?:,\s*)?\b(?:"
    r"(?:that|which|who)\s+(?:are|is|were|was)(?:\s+also)?"
    r"|(?:and|but)\s+(?:are\s+|is\s+)?also"
    r"|also"
    r")\b",
    re.IGNORECASE,
)
# An exclusion that opens the text: "Apart from X, which ...", "Not including X, what ...".
_LEADING_EXCLUSION = re.compile(
    r"^(?:with\s+the\s+exception\s+of|except(?:\s+for)?|excluding|other\s+than|"
    r"apart\s+from|aside\s+(?:from|of)|besides|instead\s+of|rather\s+than|not\s+including|"
    r"in\s+addition\s+to|on\s+top\s+of|beyond|regardless\s+of|irrespective\s+of|"
    r"(?:leaving|setting|putting)\s+aside|leaving\s+out|ignoring|disregarding|barring|"
    r"without)\b",
    re.IGNORECASE,
)
_WEAK = re.compile(
    r"^(?:in\s+addition\s+to|on\s+top\s+of|beyond|regardless\s+of|irrespective\s+of)$"
)
_LONG_QUERY = 16  # words; longer texts with an exclusion clause read as questions
_OR_SPLIT = re.compile(r"\s*,\s*(?:(?:or|nor|and)\s+)?|\s+n?or\s+", re.IGNORECASE)
_AND_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s+&\s+", re.IGNORECASE)
_HAS_OR = re.compile(r"\bn?or\b", re.IGNORECASE)
# "Films that are not French films but are comedies": a positive clause after an exclusion.
_RESUME = re.compile(
    r"\s*,?\s*\b(?:but|and|yet)\s+(?:(?:that|which|who)\s+)?(?:are|is|were|was)\s+(?:also\s+)?"
    r"(?!not\b|n't\b)",
    re.IGNORECASE,
)
_HAS_AND = re.compile(r"\band\b|\s&\s", re.IGNORECASE)
_LEAD = re.compile(r"^(?:either|both|neither|also|the\s+ones?)\s+", re.IGNORECASE)
_NON = re.compile(r"^non[-\s]([^\s]+)\s+(.+)$", re.IGNORECASE)
_ABBREVIATION = re.compile(r"(?:^|\s)(?:[A-Za-z]\.){2,}$|\b(?:Jr|Sr|St|Co|Inc|Ltd|Dr)\.$")
# "French films but not the silent ones": "ones" stands for the positive item's noun.
_ONES = re.compile(r"^(?:the\s+|those\s+)?(.+?)\s+ones?$", re.IGNORECASE)
# Exclusion markers that name members of the set ("novels other than Emma"): a bare name
# after them is the member itself, not a category that borrows the head ("novels by Emma").
_MEMBER_MARKERS = (
    "other than", "apart from", "aside from", "besides", "except", "except for",
    "instead of", "rather than", "minus",
)  # fmt: skip
_PROTECTED_KEY = re.compile(r"\x00\d+\x00")
_LEXICAL_NON = {"fiction", "profit", "governmental", "league", "stop", "partisan", "aligned"}

_PENALTY_NO_CONNECTIVE = 0.8  # an atom: fine, but an implicit conjunction may hide in it
_PENALTY_HEAD = 0.85  # a head noun or a prefix was borrowed from another item
_PENALTY_COMMA_ONLY = 0.7  # a comma list without "and"/"or"
_PENALTY_MIXED = 0.7  # "and" and "or" in one list: precedence was guessed
_PENALTY_BARE_NOT = 0.9  # a lone "not" can be part of a name
_PENALTY_NO_POSITIVE = 0.6  # only exclusions: the universe is implied
_PENALTY_NON = 0.8  # "non-X Y" read as "Y NOT X Y"
_PENALTY_WEAK_CUE = 0.9  # "in addition to X, what other ...": the exclusion is implied
_BASE = 0.95


@dataclass
class _State:
    """Mutable bookkeeping for one decomposition."""

    confidence: float = _BASE
    connective: bool = False
    verbs: tuple[str, ...] = ()
    protected: dict[str, str] = field(default_factory=dict)


@dataclass
class _Item:
    """One list item; its text is rewritten in place when it borrows a head."""

    text: str


class RuleDecomposer:
    """Decompose English queries with connective rules; see the module docstring.

    ``share_heads`` turns head sharing on (default) or off; ``protected_phrases`` are
    names that contain "and"/"or" but stand for one atom (case-insensitive).
    ``max_query_chars`` (default :data:`MAX_QUERY_CHARS`) and ``max_atoms`` (default
    :data:`MAX_QUERY_ATOMS`) bound what one query may cost; past them
    :class:`QueryTooLargeError`. ``None`` lifts a cap (every pass is linear in the text,
    so the cost then grows with the query, not faster).
    """

    source = "rules"

    def __init__(
        self,
        *,
        share_heads: bool = True,
        protected_phrases: Iterable[str] = DEFAULT_PROTECTED_PHRASES,
        max_query_chars: int | None = MAX_QUERY_CHARS,
        max_atoms: int | None = MAX_QUERY_ATOMS,
    ) -> None:
        self.share_heads = share_heads
        self.max_query_chars = _check_cap("max_query_chars", max_query_chars)
        self.max_atoms = _check_cap("max_atoms", max_atoms)
        phrases = {" ".join(p.lower().split()) for p in protected_phrases}
        phrases |= {p.replace(" and ", " & ") for p in phrases}  # "Dungeons & Dragons"
        self.protected_phrases = tuple(sorted(phrases, key=len, reverse=True))

    def __repr__(self) -> str:
        return f"RuleDecomposer(share_heads={self.share_heads})"

    # ------------------------------------------------------------------ public entry point

    def decompose(self, text: str) -> Decomposition:
        """Decompose ``text``; empty or whitespace-only text raises ``ValueError``, and so
        does a query over the caps (:class:`QueryTooLargeError`)."""
        original = check_query_chars(require_text(text), self.max_query_chars)
        result = self._decompose(original)
        if self.max_atoms is not None:
            count = count_atoms(result.query)
            if count > self.max_atoms:
                raise QueryTooLargeError(
                    f"the query reads as {count:,} atoms, over the cap of {self.max_atoms:,} "
                    f"searched per query; split it into several queries (or raise max_atoms)"
                )
        return result

    def _decompose(self, original: str) -> Decomposition:
        state = _State()
        normal = self._normalise(normalise_question(original))
        if _reads_as_question(normal):
            return self._decompose_question(normal, original, state)
        body, share = self._strip_wrappers(normal, state)
        body = self._protect(body, state)
        if not body:
            return Decomposition(Atom(original), 0.2, self.source)

        parts = self._split_negation(body, state)
        positive_text, negatives, cancelled = _cancel_double_negation(parts)
        resumed = list(cancelled)  # "not not X" is X: a positive clause
        for i, (marker, seg) in enumerate(negatives):
            head, *rest = _RESUME.split(seg, maxsplit=1)
            if rest:
                negatives[i] = (marker, _clean(head))
                resumed.append(_clean(rest[0]))
        if resumed:  # join as conjunctive clauses: "A that are also C"
            joined = [t for t in (positive_text[1], *resumed) if t]
            positive_text = ("", " that are also ".join(joined))
        clauses = self._split_clauses(positive_text, state)
        pos_lists = [self._split_list(c, state) for c in clauses]
        neg_lists = [
            (marker, self._split_list(seg, state)) for marker, seg in negatives if seg.strip()
        ]
        if len(neg_lists) != len(negatives):
            state.confidence *= _PENALTY_NO_POSITIVE  # a dangling "but not"

        if share and self.share_heads:
            self._share_heads(pos_lists, neg_lists, state)
        self._relative_verb_phrases(pos_lists, neg_lists, state)

        pos_nodes = [self._list_node(op, items, state) for op, items in pos_lists if items]
        neg_nodes = [
            Not(self._list_node("or", items, state)) for _, (_, items) in neg_lists if items
        ]
        if not pos_nodes and not neg_nodes:
            return Decomposition(Atom(original), 0.2, self.source)
        if not pos_nodes:
            state.confidence *= _PENALTY_NO_POSITIVE
        query = _make(And, pos_nodes + neg_nodes)
        if not state.connective:
            state.confidence *= _PENALTY_NO_CONNECTIVE
        return Decomposition(query, round(min(max(state.confidence, 0.0), 1.0), 4), self.source)

    def _decompose_question(self, text: str, original: str, state: _State) -> Decomposition:
        """A question or request: its need stays one atom, each exclusion adds NOT thing.

        "Who directed X and when was it released?" is one need, not two sets; the excluded
        thing is read by :func:`~logic_rag.query.exclusions.find_exclusions`.
        """
        need, exclusions = find_exclusions(text)
        m = _WRAPPER.match(need)
        body = _clean(need[m.end() :] if m and m.end() < len(need) else need)
        nodes: list[LogicalQuery] = [Atom(body)] if body else []
        seen: set[str] = set()
        for exclusion in exclusions:
            key = exclusion.thing.lower()
            if key in seen or key == body.lower():
                continue
            seen.add(key)
            nodes.append(Not(Atom(exclusion.thing)))
            if _WEAK.match(exclusion.cue):
                state.confidence *= _PENALTY_WEAK_CUE
        if not nodes:
            return Decomposition(Atom(original), 0.2, self.source)
        if not body:
            state.confidence *= _PENALTY_NO_POSITIVE
        if len(nodes) == 1:
            state.confidence *= _PENALTY_NO_CONNECTIVE
        return Decomposition(
            _make(And, nodes), round(min(max(state.confidence, 0.0), 1.0), 4), self.source
        )

    # ------------------------------------------------------------------------- stages

    @staticmethod
    def _normalise(text: str) -> str:
        text = text.replace("’", "'")
        text = re.sub(r"\s*,\s*", ", ", text)  # "Malaysia,and Fiji" -> "Malaysia, and Fiji"
        text = re.sub(r"(\w)\(", r"\1 (", text)  # "Victoria(Australia)"
        text = " ".join(text.split())
        return _clean(text)

    def _strip_wrappers(self, text: str, state: _State) -> tuple[str, bool]:
        """Remove "what are"/"find me"/"Who likes"; returns (body, whether heads may be shared)."""
        share = True
        m = _WHO_VERB.match(text)
        if m and m.end() < len(text):
            verb = m.group(1).lower()
            forms = {verb}
            if verb.endswith("s"):
                forms.add(verb[:-1])
            state.verbs = tuple(sorted(forms, key=len, reverse=True))
            text = text[m.end() :]
            share = False  # "Who likes Sewing or Granola Bars": every item is complete
        else:
            m = _WRAPPER.match(text)
            if m and m.end() < len(text):
                text = text[m.end() :]
        return text.strip(" ,:;"), share

    def _protect(self, text: str, state: _State) -> str:
        """Replace each protected phrase by a key (NUL, number, NUL) that no rule splits.

        One pass over the text per phrase, the text rebuilt once per phrase: a query made
        of thousands of "fish and chips" stays linear.
        """
        for phrase in self.protected_phrases:
            lower = text.lower()
            start = lower.find(phrase)
            if start == -1:
                continue
            pieces: list[str] = []
            last = 0
            while start != -1:
                end = start + len(phrase)
                before_ok = start == 0 or not lower[start - 1].isalnum()
                after_ok = end == len(lower) or not lower[end].isalnum()
                if before_ok and after_ok:
                    key = f"\x00{len(state.protected)}\x00"
                    state.protected[key] = text[start:end]
                    pieces.append(text[last:start])
                    pieces.append(key)
                    last = end
                start = lower.find(phrase, end)
            pieces.append(text[last:])
            text = "".join(pieces)
        return text

    def _restore(self, text: str, state: _State) -> str:
        if not state.protected or "\x00" not in text:
            return text
        return _PROTECTED_KEY.sub(lambda m: state.protected.get(m.group(0), m.group(0)), text)

    def _split_negation(self, body: str, state: _State) -> list[tuple[str, str]]:
        """[(marker, positive text), (marker, excluded text), ...]; first marker is ""."""
        pieces: list[tuple[str, str]] = []
        last, marker = 0, ""
        for m in _NEGATION.finditer(body):
            if m.group(0)[:1].isupper() and m.start() > 0:
                continue  # "Films about Not Another Teen Movie": part of a title
            pieces.append((marker, body[last : m.start()]))
            marker = " ".join(m.group(0).lower().split())
            last = m.end()
            state.connective = True
            if marker == "not":
                state.confidence *= _PENALTY_BARE_NOT
        pieces.append((marker, body[last:]))
        out = []
        for mk, seg in pieces:
            seg = _clean(seg)
            if mk.endswith(" no"):  # "films with no songs" reads like "films without songs"
                mk = "without" if mk.endswith("with no") else "excluding"
            if mk:
                # "excluding any information about X", "don't mention X": the thing is X
                bare = strip_mention_wrappers(seg)
                if bare != seg:
                    seg, mk = bare, "excluding"
            out.append((mk, seg))
        return out

    def _split_clauses(self, positive: tuple[str, str], state: _State) -> list[str]:
        text = positive[1]
        if not text:
            return []
        clauses = [_clean(c) for c in _CLAUSE.split(text)]
        if len(clauses) > 1:
            state.connective = True
        return [c for c in clauses if c]

    def _split_list(self, segment: str, state: _State) -> tuple[str, list[_Item]]:
        """("or"|"and", items) for one clause or one excluded segment."""
        segment = _clean(segment)
        has_or, has_and = bool(_HAS_OR.search(segment)), bool(_HAS_AND.search(segment))
        if has_or:
            state.connective = True
            groups = [g for g in (_clean(x) for x in _OR_SPLIT.split(segment)) if g]
            if has_and:
                state.confidence *= _PENALTY_MIXED
                # "A or B and C": keep each or-item whole here; _list_node splits on "and".
            return "or", [_Item(self._finish(g, state)) for g in groups]
        if has_and:
            state.connective = True
            parts = _AND_SPLIT.split(segment)
        elif "," in segment:
            state.connective = True
            state.confidence *= _PENALTY_COMMA_ONLY
            parts = segment.split(",")
        else:
            parts = [segment]
        return "and", [_Item(self._finish(p, state)) for p in parts if _clean(p)]

    def _finish(self, text: str, state: _State) -> str:
        """Strip list-leading words ("both", "either") and a repeated question verb."""
        text = _clean(text)
        for _ in range(3):
            before = text
            text = _LEAD.sub("", text)
            for verb in state.verbs:
                text = re.sub(rf"^(?:also\s+)?{re.escape(verb)}\s+", "", text, flags=re.I)
            if text == before:
                break
        return text

    def _list_node(self, op: str, items: list[_Item], state: _State) -> LogicalQuery:
        nodes: list[LogicalQuery] = []
        for item in items:
            text = item.text
            if op == "or" and _HAS_AND.search(text):
                sub = [p for p in (_clean(x) for x in _AND_SPLIT.split(text)) if p]
                nodes.append(_make(And, [self._atom(p, state) for p in sub]))
            else:
                nodes.append(self._atom(text, state))
        return _make(Or if op == "or" else And, nodes)

    def _atom(self, text: str, state: _State) -> LogicalQuery:
        text = _clean(self._restore(text, state))
        m = _NON.match(text)
        if m and m.group(1).lower().strip("-") not in _LEXICAL_NON:
            state.connective = True
            state.confidence *= _PENALTY_NON
            rest = m.group(2)
            return And((Atom(rest), Not(Atom(f"{m.group(1)} {rest}"))))
        return Atom(text)

    # --------------------------------------------------------------------- shared heads

    def _share_heads(
        self,
        pos_lists: list[tuple[str, list[_Item]]],
        neg_lists: list[tuple[str, tuple[str, list[_Item]]]],
        state: _State,
    ) -> None:
        """Complete items whose head noun the text leaves implicit, in place."""
        sequences = [items for _, items in pos_lists] + [items for _, (_, items) in neg_lists]
        markers = [""] * len(pos_lists) + [marker for marker, _ in neg_lists]
        flat = [it for items in sequences for it in items]
        ref = next((it.text for it in flat if item_kind(it.text) == "full"), None)
        first = flat[0] if flat else None
        for items, marker in zip(sequences, markers, strict=True):
            if _VERB_NEGATION.match(marker):
                continue  # a verb phrase: see _relative_verb_phrases
            # Each item's kind once, and the nearest full item after each position from
            # one backward pass (items after the current one are not rewritten yet); the
            # nearest full one before it is carried forward over the rewritten texts. The
            # pairwise scans this replaces made long lists quadratic (issue 42 item 2).
            kinds = [item_kind(it.text) for it in items]
            next_fulls: list[str | None] = [None] * len(items)
            following: str | None = None
            for j in range(len(items) - 1, -1, -1):
                next_fulls[j] = following
                if kinds[j] == "full":
                    following = items[j].text
            last_full: str | None = None
            for i, item in enumerate(items):
                kind = kinds[i]
                new = item.text
                ones = _ONES.match(item.text)
                if marker in _MEMBER_MARKERS and kind == "bare":
                    continue  # "novels other than Emma": Emma, not "novels by Emma"
                prev_full, next_full = last_full, next_fulls[i]
                if ones and ref is not None and item.text != ref:
                    # "French films but not the silent ones" -> "silent French films"
                    first = ref.split()[0]
                    common = first.lower().endswith("s") and first[1:].islower()
                    head = first.lower() + ref[len(first) :] if common else ref
                    new = f"{ones.group(1)} {head}"
                elif marker.endswith("without") and ref is not None and kind == "full":
                    new = f"{head_noun(ref)} with {item.text}"
                elif kind == "tail" and ref is not None:
                    new = f"{head_noun(ref)} {lower_first(item.text)}"
                elif kind == "bare":
                    if marker.endswith("without") and ref is not None and item.text != ref:
                        new = f"{head_noun(ref)} with {item.text}"
                    elif (
                        is_proper_name(item.text)
                        and (prev_full or ref)
                        and head_prefix(prev_full or ref)
                    ):
                        if prev_full is None and item is first:
                            continue  # a bare first item stays bare, and is no full one
                        new = f"{head_prefix(prev_full or ref)} {item.text}"
                    elif prev_full is None and next_full is not None:
                        new = f"{item.text} {head_noun(next_full).lower()}"
                    elif item is not first and ref is not None:
                        new = f"{item.text} {head_noun(ref).lower()}"
                if new != item.text:
                    item.text = new
                    state.confidence *= _PENALTY_HEAD
                    if item_kind(new) == "full":
                        last_full = new
                elif kind == "full":
                    last_full = item.text

    def _relative_verb_phrases(
        self,
        pos_lists: list[tuple[str, list[_Item]]],
        neg_lists: list[tuple[str, tuple[str, list[_Item]]]],
        state: _State,
    ) -> None:
        """Excluded verb phrases as noun phrases on the head noun, in place.

        "desserts that do not contain chocolate" excludes ``desserts that contain
        chocolate`` (as "salads without cheese" excludes ``salads with cheese``); "a
        dessert that doesn't contain nuts or chocolate" excludes ``dessert that contains
        nuts`` OR ``dessert that contains chocolate``: the first item's verb carries over
        to the items after it.
        """
        positive = [it for _, items in pos_lists for it in items]
        if not positive:
            return
        ref = next((it.text for it in positive if item_kind(it.text) == "full"), None)
        head = head_noun(ref) if ref is not None else positive[0].text
        head = re.sub(r"^(?:a|an|the)\s+", "", head, flags=re.IGNORECASE)  # "a dessert"
        for marker, (_, items) in neg_lists:
            m = _VERB_NEGATION.match(marker)
            if m is None or not items:
                continue
            pronoun = m.group("pronoun") or m.group("pronoun2") or "that"
            third = (m.group("aux") or m.group("aux2") or "").startswith("does")
            verb = items[0].text.split()[0]
            for i, item in enumerate(items):
                words = item.text.split()
                if i > 0 and words[0].lower() != verb.lower():
                    words = [verb, *words]  # "contain nuts or chocolate"
                if third:
                    words[0] = _third_person(words[0])
                item.text = f"{head} {pronoun} {' '.join(words)}"
                state.confidence *= _PENALTY_HEAD


# ------------------------------------------------------------------------------ helpers


def _clean(text: str) -> str:
    """Trim spaces and list punctuation; keep "!" ("Chips Ahoy!") and abbreviations ("D.C.")."""
    text = text.strip(" ,;:?")
    while text.endswith("?") or (text.endswith(".") and not _ABBREVIATION.search(text)):
        text = text[:-1].rstrip(" ,;:?")
    return text.lstrip(" ,;:.!?")


def _reads_as_question(text: str) -> bool:
    """Questions and requests take the question path; set queries the list rules.

    A question by its opening (:func:`~logic_rag.query.exclusions.is_question`), one that
    opens with an exclusion ("Apart from X, ..."), or a long text with an exclusion clause
    (set queries are short: 95% of QUEST's have at most 14 words).
    """
    if is_question(text) or _LEADING_EXCLUSION.match(text):
        return True
    if _WHO_VERB.match(text) or len(text.split()) <= _LONG_QUERY:
        return False
    return bool(find_exclusions(text)[1])


def _cancel_double_negation(
    parts: list[tuple[str, str]],
) -> tuple[tuple[str, str], list[tuple[str, str]], list[str]]:
    """Stacked negation markers ("not not X", "that are not not X") cancel in pairs.

    ``parts`` is :meth:`RuleDecomposer._split_negation`'s output: a marker followed by an
    empty segment is stacked onto the next marker. An odd stack is one negation (the
    first marker is kept); an even stack cancels and its segment is returned as a
    positive clause. Returns (positive part, negated parts, cancelled segments).
    """
    negatives: list[tuple[str, str]] = []
    cancelled: list[str] = []
    stack: list[str] = []
    rest = parts[1:]
    for i, (marker, seg) in enumerate(rest):
        stack.append(marker)
        if not seg and i + 1 < len(rest):
            continue
        if len(stack) % 2:
            negatives.append((stack[0], seg))
        elif seg:
            cancelled.append(seg)
        stack = []
    return parts[0], negatives, cancelled


def _make(kind: type[And] | type[Or], nodes: list[LogicalQuery]) -> LogicalQuery:
    """``kind`` of ``nodes``, flattening nested nodes of the same kind, keeping text order."""
    flat: list[LogicalQuery] = []
    for node in nodes:
        flat.extend(node.args if isinstance(node, kind) else [node])
    return flat[0] if len(flat) == 1 else kind(tuple(flat))
