"""What an excluded span names: from "any details about the American actor Marc Platt"
to "Marc Platt".

:mod:`logic_rag.query.exclusions` finds the exclusion clause and its span; the rules here
peel what sits around the thing so that the negated atom is the thing itself:

* mention verbs and "any information about" wrappers ("don't mention Moses" -> "Moses");
* quotes ("her role in the movie "Paradise Road"" -> "Paradise Road") and parentheses;
* a descriptor before a name ("the American ballet dancer Marc Platt" -> "Marc Platt");
* an aspect before a name ("the founding year of Mothering magazine", "his role in the
  film X") and a short aspect after a possessive ("Bart Conner's role in the academy" ->
  "Bart Conner");
* a back reference ("Ceuta or its surroundings" -> "Ceuta") and lists ("Tool, A Perfect
  Circle, and Puscifer" -> three things).

A span without a name ("the role of serum in unopened blisters") stays whole: it is the
excluded topic. Word lists and regular expressions, no parser; only lower-case wrapper
words are peeled, so titles that start with one ("On the Road") stay whole.
"""

from __future__ import annotations

import re

__all__ = ["excluded_thing", "excluded_things", "strip_mention_wrappers"]

# Verbs of mentioning that sit between a negation and the excluded thing:
# "without mentioning X", "don't include X", "refrain from discussing X".
_MENTION_VERB = (
    r"(?:mention(?:ing|s|ed)?|includ(?:e|ing|es|ed)|consider(?:ing|s|ed)?|"
    r"referenc(?:e|ing|es)|refer(?:ring|s)?\s+to|discuss(?:ing|es)?|talk(?:ing)?\s+about|"
    r"delv(?:e|ing)\s+into|go(?:ing)?\s+into|touch(?:ing)?\s+(?:on|upon)|"
    r"bring(?:ing)?\s+up|us(?:e|ing)|tak(?:e|ing)\s+into\s+account|focus(?:ing)?\s+on|"
    r"cover(?:ing)?|involv(?:e|ing|es)|address(?:ing)?|describ(?:e|ing)|provid(?:e|ing)|"
    r"list(?:ing)?|count(?:ing)?|consult(?:ing)?|relat(?:e|ing)\s+to|"
    r"(?:hav(?:e|ing)|has)\s+(?:anything\s+)?to\s+do\s+with|ask(?:ing)?\s+about|"
    r"explain(?:ing)?|highlight(?:ing)?|emphasiz(?:e|ing)|emphasis(?:e|ing)|"
    r"get(?:ting)?\s+into|elaborat(?:e|ing)\s+on|speak(?:ing)?\s+(?:of|about)|"
    r"be(?:ing)?\s+(?:about|related\s+to|from|part\s+of)|tell(?:ing)?\s+(?:me\s+)?about|"
    r"specify(?:ing)?|show(?:ing)?|(?:be(?:ing)?\s+)?interested\s+in|"
    r"overlook(?:ing)?|block(?:ing)?|giv(?:e|ing)|add(?:ing)?|say(?:ing)?\s+about|"
    r"want(?:s)?\s+to\s+(?:know|hear|see|read|learn)(?:\s+about)?|need(?:s)?|quot(?:e|ing)|"
    r"cit(?:e|ing))"
)


QUOTED = re.compile(r"[\"“”]([^\"“”]{2,})[\"“”]")


# Wrappers between the cue and the thing, in the order they are peeled off.
_LEAD_WRAPPERS = [
    re.compile(
        r"^(?:please|kindly|also|even|just|simply|so|then|really|specifically|any\s+more)\s+"
    ),
    re.compile(
        r"^(?:(?:also|even|directly|explicitly|specifically)\s+)?(?:be\s+)?"
        + _MENTION_VERB
        + r"\b\s*"
    ),
    re.compile(
        r"^(?:(?:any|anything|all|some|the|a|an|specific|further|additional|other|more|"
        r"detailed|much|particular|of|relevant|personal|related|background|biographical)\s+)*"
        r"(?:(?:information|section|parts?|info|details?|mentions?|references?|data|facts?|"
        r"content|discussions?|focus|connections?|involvement|aspects?|things?|stuff|material|"
        r"coverage|news|topics?|specifics|emphasis|context|insights?|commentary|links?|"
        r"affiliations?|association|relation(?:ship)?s?)\b)\s*"
    ),
    re.compile(r"^(?:anything|something|everything|any|those|that|things|ones)\b\s*(?=[a-z])"),
    re.compile(
        r"^(?:(?:that\s+(?:is|are|was|were)\s+)?(?:about|on|of|regarding|related\s+to|relating\s+to|"
        r"pertaining\s+to|concerning|associated\s+with|connected\s+(?:to|with)|linked\s+to|"
        r"involving|to\s+do\s+with|from|with|in|for|to|around|surrounding|tied\s+to))\s+"
    ),
]


_TRAILING_BACKREF = re.compile(
    r"\s+(?:or|and|&)\s+(?:its|his|her|their|the\s+band's|other|any|all|related|similar|"
    r"associated|the\s+rest|whatever|everything|anything)\b.*$"
)


_TRAILING_NOISE = re.compile(
    r"\s+(?:in\s+(?:your|the|this|my)\s+(?:response|answer|reply|summary|explanation)|"
    r"at\s+all|for\s+now|here|please|either|whatsoever|as\s+well|too)$",
    re.IGNORECASE,
)


# An aside after the name: ", the ...", ", who ...", ", known as ...".
_APPOSITIVE = re.compile(
    r"\s*,\s*(?=(?:the|a|an|who|whom|whose|which|that|known|commonly|also|officially|one|"
    r"formerly|born|now|then|as|where|when|[a-z]+ed)\b)"
)


# "Virginia Madsen stars in the movie "Crazy Kind of Love"": the span names the person.
_NAME_THEN_CLAUSE = re.compile(
    r"^(?:[A-Z][\w.'-]*\s+){0,4}[A-Z][\w.-]*(?<!'s)(?:,|\s+(?:[a-z]+s|[a-z]+ed|in|as|with|from|"
    r"at|who|on|for))\s"
)


# A span that opens with a possessive pronoun or a gerund describes an aspect of the
# name it ends with: "his royal residence at Iolani Palace", "starring in The Golden Girls".
_ASPECT_LEAD = re.compile(r"^(?:its|his|her|their|[a-z]+ing)\s")


# Lower-case words that may continue a name ("... national softball team"), and the
# ones that end it (prepositions, participles, pronouns, conjunctions).
_NAME_TAIL = re.compile(r"^[a-z][a-z'-]*$")


_CUT_WORD = re.compile(
    r"^(?:\w+ed|\w+ing|of|in|on|at|from|by|with|for|to|about|as|or|and|nor|that|which|who|whom|"
    r"whose|where|when|its|his|her|their|is|are|was|were|be|been|has|have|had|the|a|an|this|"
    r"than|into|during|after|before|since|while|because|if|so|but|not|no|any|all)$"
)


# "the personal background of X", "any teams X ...": a short aspect, a preposition, a name.
# Without a determiner only one aspect word: "members of the band Wilco", not
# "vehicle verification requirements in California".
_ASPECT_OF = re.compile(
    r"^(?:(?:the|a|an|any)\s+(?:(?!(?:of|for|about|between|regarding|by|from|with|in|on|at|to)\b)"
    r"[a-z'-]+\s+){1,3}|[a-z'-]+\s+)(?:of|for|about|behind|regarding|by|from|with|in|on|at|to|"
    r"associated\s+with|related\s+to|played\s+by)\s+"
)


_ASPECT_PREP = re.compile(r"\s(?:with|in|at|to|on|of|as|from|for|by|about)\s")


_NAME_START = re.compile(
    r"^(?:(?:the|a|an|any)\s+)?(?:(?!(?:of|for|about|between|by|from|with|in|on|at|to|under|"
    r"over|and|or)\b)[a-z-]+\s+){0,3}?[\"“A-Z0-9]"
)


_ELIDED = re.compile(r"^(?:d'|l'|al-|el-|de-|van-|von-)[A-Z]")  # "Ballon d'Or", "al-Bashir"


# Words that may sit inside a name ("Battle of Alnwick", "Paul v. Clinton").
_CONNECTORS = {
    "of", "the", "and", "&", "de", "van", "von", "der", "den", "da", "di", "la", "le", "du",
    "del", "des", "in", "on", "at", "for", "to", "a", "an", "y", "v.", "v", "vs.", "vs", "upon",
    "et", "al", "el", "bin", "ibn", "al-", "dos", "das", "zu", "und", "-", "–", ":",
}  # fmt: skip


# Words that make the text before a name a description rather than a descriptor.
_NOT_DESCRIPTOR = {
    "of", "in", "on", "at", "from", "by", "with", "for", "to", "about", "or", "that", "which",
    "who", "is", "are", "was", "were", "into", "than", "as", "its", "his", "her", "their",
    "where", "when", "how", "what", "not", "no",
}  # fmt: skip


# Capitalised words that describe rather than name: "American", "South Korean", "1999".
_DEMONYM = re.compile(
    r"^(?:[A-Z][a-z]+(?:an|ian|ese|ish|ch|i|ic|ean)|North|South|East|West|Northern|Southern|"
    r"Eastern|Western|Central|[0-9][0-9a-z–-]*|[A-Z][a-z]+-(?:born|based)|[A-Z]{2,4}|[A-Z][a-z]+(?:an|ian|ese|ish|ch|i)-[A-Z][a-z]+)$"
)


_PLACE_PREPOSITIONS = {"in", "on", "at", "for", "to", "upon"}
_DETERMINERS = {"the", "a", "an", "his", "her", "its", "their", "this", "that", "these"}


def strip_mention_wrappers(span: str) -> str:
    """``span`` without the leading mention verbs and "any information about" wrappers.

    Only lower-case words are peeled, so a title that starts with one ("On the Road")
    stays whole.
    """
    original = text = span.strip()
    if re.match(r"^(?:The|Any|Specific|Some|All)\s+[a-z]", text):
        text = text[0].lower() + text[1:]  # "The information of X" opens a sentence
    *wrappers, preposition = _LEAD_WRAPPERS
    for _ in range(8):
        before = text
        for pattern in wrappers:
            text = pattern.sub("", text, count=1).strip()
        if text != span.strip():  # "about X" alone is a set ("not about war"); after a
            text = preposition.sub("", text, count=1).strip()  # wrapper it is glue
        if text == before:
            break
    if text.lower() == original.lower():
        return original  # nothing peeled: keep the span as written
    return text or original


def excluded_thing(span: str) -> str:
    """The thing an excluded span names; see the module docstring for the rules."""
    text = strip_mention_wrappers(span).strip(" ,;:.?!")
    text = _LEAD_WRAPPERS[-1].sub("", text, count=1)  # in a question "not about X" is X
    text = re.sub(r"\s*\([^()]*\)", "", text)  # "(born 1975)", "(SNC)", ("Wild Bill")
    quoted = _quoted_title(text)
    if quoted and not _NAME_THEN_CLAUSE.match(text):
        return quoted
    text = _strip_punct(text)
    text = _APPOSITIVE.split(text, maxsplit=1)[0]  # "X, the Formula One race in which ..."
    head, comma, tail = text.rpartition(", ")
    if (
        comma
        and re.search(r"\b[a-z]{3,}\b", head)
        and not re.search(r"\b(?:to|with|from|by|in|on|at|for|about)\b", head)
        and len(tail.split()) >= 2
    ):
        tail_words = tail.split()
        if _is_name_word(tail_words[0]) and _leading_name(tail_words) == tail:
            return _strip_punct(tail)  # "NASA's third civilian astronaut, Walter Cunningham"
    text = _TRAILING_BACKREF.sub("", text).strip()
    text = _TRAILING_NOISE.sub("", text).strip()
    text = _STRIP_SUCH_AS(text)
    words = text.split()
    if not words:
        return _strip_punct(span)
    named = _descriptor_name(words)
    gerund = re.match(r"^[a-z]+ing\s+(?=[A-Z0-9])", text)
    if named is None and gerund:  # "winning Super Bowl XXX in ..." -> "Super Bowl XXX"
        return _strip_punct(_leading_name(text[gerund.end() :].split()))
    if named is None and _ASPECT_LEAD.match(text):
        # "his involvement with the Lahore Qalandars team in ..." -> "Lahore Qalandars"
        m = _ASPECT_PREP.search(text)
        if m and _NAME_START.match(text[m.end() :]):
            return excluded_thing(text[m.end() :])
        named = _trailing_name(words)
    if named is None:
        # "the founding year of Mothering magazine" -> "Mothering magazine"
        m = _ASPECT_OF.match(text)
        if m and _NAME_START.match(text[m.end() :]):
            return excluded_thing(text[m.end() :])
    if named:
        return _strip_punct(named)
    if _is_name_word(words[0]):
        described = _after_descriptors(words)  # "American forensic anthropologist W. M. Bass"
        return _strip_punct(_leading_name(described or words))
    if words[0].lower() in {"the", "a", "an"} and len(words) > 1 and _is_name_word(words[1]):
        described = _after_descriptors(words[1:])  # "the Indian action thriller Koyla in ..."
        if described:
            return _strip_punct(_leading_name(described))
        return _strip_punct(_leading_name(words[1:]))  # "the Oklahoma City Thunder's ..."
    return _strip_punct(text)


def excluded_things(span: str) -> list[str]:
    """The things a span excludes: one, or each item of a list ("Tool, A Perfect Circle,
    and Puscifer"; "the pillow cactus or the foxtail cactus").

    Lists are split on commas only when they end with ", and"/", or"/"and"/"or" over three
    or more items, and on a lone "or"/"nor" between short items; a lone "and" stays inside
    (titles hold it: "Tars and Spars", "Leo & Liz").
    """
    text = strip_mention_wrappers(span).strip(" ,;:.?!")
    if QUOTED.search(text):
        return [excluded_thing(span)]
    text = _TRAILING_BACKREF.sub("", text).strip()  # "Ceuta or its surroundings"
    items = re.split(r"\s*,\s*(?:(?:and|or|nor)\s+)?|\s+(?:and|or|nor)\s+(?=[^,]*$)", text)
    if len(items) >= 3 and re.search(r",\s*(?:and|or|nor)\s+|,[^,]*\s(?:and|or|nor)\s", text):
        return _dedupe(excluded_thing(i) for i in items if i.strip())
    parts = re.split(r"\s+(?:or|nor)\s+", text)
    if len(parts) == 2 and all(0 < len(p.split()) <= 5 for p in parts):
        return _dedupe(excluded_thing(p) for p in parts)
    return [excluded_thing(span)]


def _dedupe(things: object) -> list[str]:
    out: list[str] = []
    for thing in things:  # type: ignore[attr-defined]
        if thing and thing.lower() not in {t.lower() for t in out}:
            out.append(thing)
    return out


def _strip_punct(text: str) -> str:
    return text.strip(" ,;:.?!'\"“”()[]").strip()


def _quoted_title(text: str) -> str | None:
    """A quoted title in the span, unless the quotes hold a nickname inside a name."""
    m = QUOTED.search(text)
    if m is None:
        return None
    before, after = text[: m.start()].rstrip(), text[m.end() :].lstrip()
    inner = m.group(1).strip(" ,.")
    if before.endswith("(") or (
        before and after and before.split()[-1][:1].isupper() and after[:1].isupper()
    ):
        return None  # William Joseph ("Wild Bill") Donovan, Samuel "Rob" Walton
    return inner or None


def _STRIP_SUCH_AS(text: str) -> str:  # noqa: N802 - reads as a rule name
    m = re.search(r"\b(?:such\s+as|like|namely|including|especially)\s+(?=[A-Z\"])", text)
    return text[m.end() :] if m else text


def _is_name_word(word: str) -> bool:
    w = word.strip("\"“”()[],.;:'")
    return bool(w) and (w[0].isupper() or w[0].isdigit() or bool(_ELIDED.match(w)))


def _leading_name(words: list[str]) -> str:
    """The name a span starts with: "War Machine directed by ..." -> "War Machine"."""
    end = 0
    i = 0
    while i < len(words):
        w = words[i]
        if _is_name_word(w):
            end = i + 1
            if _possessive(w) and not (i + 1 < len(words) and _is_name_word(words[i + 1])):
                # "Bart Conner's role in the academy": the possessor is the thing
                return _depossess(" ".join(words[:end]))
            i += 1
            continue
        if w.lower() in _CONNECTORS and i + 1 < len(words):
            j = i
            while j < len(words) and words[j].lower() in _CONNECTORS:
                j += 1
            bridged = words[i].lower() not in _PLACE_PREPOSITIONS or not (
                j < len(words) and (_DEMONYM.match(words[j]) or words[j][:1].isdigit())
            )  # "Museum of Anthropology in Mexico City", not "Tony Shalhoub in the American"
            if j < len(words) and _is_name_word(words[j]) and bridged:
                i = j
                continue
        if end and _NAME_TAIL.match(w) and not _CUT_WORD.match(w):
            # "Mexico women's junior national softball team": lower-case nouns that go on
            # naming the thing; a preposition or a participle ends it
            j = i
            while j < len(words) and _NAME_TAIL.match(words[j]) and not _CUT_WORD.match(words[j]):
                j += 1
            if j == len(words):
                return " ".join(words)
        break
    name = " ".join(words[:end]) if end else " ".join(words)
    return _depossess(name) if end < len(words) else name


def _descriptor_name(words: list[str]) -> str | None:
    """The name after a descriptor: "the American ballet dancer Marc Platt" -> "Marc Platt".

    Only a span of determiner + modifiers + one final name qualifies: a preposition or a
    verb before the name makes the span a description, which is kept whole.
    """
    # the last run of name words (connectors allowed inside), running to the end
    i = len(words)
    while i > 0 and (_is_name_word(words[i - 1]) or words[i - 1].lower() in _CONNECTORS):
        i -= 1
    while i < len(words) and words[i] in _CONNECTORS:  # "A Perfect Circle" keeps its "A"
        i += 1
    if i >= len(words) or i == 0:
        return None
    head = [w.lower().strip(",") for w in words[:i]]
    if words[0].lower() not in _DETERMINERS and not all(
        _DEMONYM.match(w.strip(",")) for w in words[:i] if _is_name_word(w)
    ):
        return None  # "Neil Patrick Harris plays Batman": a clause, not a descriptor
    if any(w in _NOT_DESCRIPTOR for w in head) or any(
        _possessive(w) and w[:1].isupper() for w in words[:i]
    ):
        return None
    name = " ".join(words[i:])
    if len(head) > 12:
        return None
    return name


def _after_descriptors(words: list[str]) -> list[str] | None:
    """The words from the name on, after demonyms and lower-case descriptor nouns.

    "American football coach and former player Vance Joseph, head coach of ..." ->
    "Vance Joseph, ..."; None unless demonyms come first and at least one lower-case
    descriptor follows them.
    """
    i = 0
    while i < len(words) and _DEMONYM.match(words[i].strip(",")):
        i += 1
    if i == 0:
        return None
    j = i
    while j < len(words) and (
        words[j] == "and"
        or (_NAME_TAIL.match(words[j]) and not _CUT_WORD.match(words[j]))
        or _DEMONYM.match(words[j].strip(","))
    ):
        j += 1
    if j == i or j >= len(words) or not _is_name_word(words[j]):
        return None
    return words[j:]


def _trailing_name(words: list[str]) -> str | None:
    """The name run a span ends with, possessive "Oliver Stone's Wall Street" included."""
    i = len(words)
    while i > 0 and (_is_name_word(words[i - 1]) or words[i - 1].lower() in _CONNECTORS):
        i -= 1
    while i < len(words) and words[i] in _CONNECTORS:  # "A Perfect Circle" keeps its "A"
        i += 1
    if i >= len(words) or i == 0:
        return None
    run = words[i:]
    for j in range(len(run) - 1, -1, -1):  # after a possessive, the possessed name
        if _possessive(run[j]) and j + 1 < len(run):
            run = run[j + 1 :]
            break
    return " ".join(run)


def _possessive(word: str) -> bool:
    return word.endswith(("'s", "s'"))


def _depossess(name: str) -> str:
    return re.sub(r"(?:'s|')$", "", name.strip())


def is_pronoun_only(text: str) -> bool:
    return text.lower() in {
        "it",
        "them",
        "him",
        "her",
        "this",
        "that",
        "these",
        "those",
        "those ones",
    }
