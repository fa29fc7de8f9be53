"""Turn a question into an existence claim by hand-written rules (Dai et al., 2024, sec. 3).

Why: a passage that answers "when did the wall fall" does not entail the question, but it
does entail "There exists a known time when the wall fell". The claim puts retrieval pairs
into the same premise -> hypothesis form as NLI pairs, so one masked-prediction task can
train on both. The paper gives one rule per question type (when / where / why / who /
how / yes-no ...) without publishing the exact wording; the templates below follow its
idea: keep the question's content words, name the unknown (a time, a place, someone, a
number, ...) and assert that it exists. Rules are surface rules (no parser): word order is
turned declarative by moving the auxiliary, and a small verb lexicon inflects the main
verb after "did"/"does". Anything no rule matches becomes
"There exists information about <query>" (rule ``fallback``), which also covers the
keyword-style queries of MS MARCO.

Run ``python -m logic_rag.finetune.entailment.claims [questions.jsonl]`` for a coverage
report on NQ-open dev (default) with 15 examples.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RULES", "Claim", "question_to_claim", "coverage_report", "main"]

#: Every rule name a :class:`Claim` can carry, in the order the rules are tried.
RULES: tuple[str, ...] = (
    "how_many",
    "how_much",
    "how",
    "when",
    "where",
    "why",
    "who",
    "which",
    "what",
    "yes_no",
    "fallback",
)


@dataclass(frozen=True)
class Claim:
    """An existence claim and the name of the rule that produced it."""

    text: str
    rule: str


_DO = {"do", "does", "did"}
_COPULA = {"is", "are", "was", "were", "am", "'s"}
_MODAL = {
    "can",
    "could",
    "will",
    "would",
    "should",
    "shall",
    "may",
    "might",
    "must",
    "has",
    "have",
    "had",
}
_AUX = _DO | _COPULA | _MODAL

# base -> (past, past participle) for irregular verbs frequent in open-domain questions.
_IRREGULAR: dict[str, tuple[str, str]] = {
    "be": ("was", "been"),
    "become": ("became", "become"),
    "begin": ("began", "begun"),
    "bring": ("brought", "brought"),
    "build": ("built", "built"),
    "buy": ("bought", "bought"),
    "choose": ("chose", "chosen"),
    "come": ("came", "come"),
    "do": ("did", "done"),
    "draw": ("drew", "drawn"),
    "drink": ("drank", "drunk"),
    "drive": ("drove", "driven"),
    "eat": ("ate", "eaten"),
    "fall": ("fell", "fallen"),
    "feel": ("felt", "felt"),
    "fight": ("fought", "fought"),
    "find": ("found", "found"),
    "fly": ("flew", "flown"),
    "forget": ("forgot", "forgotten"),
    "get": ("got", "gotten"),
    "give": ("gave", "given"),
    "go": ("went", "gone"),
    "grow": ("grew", "grown"),
    "have": ("had", "had"),
    "hear": ("heard", "heard"),
    "hold": ("held", "held"),
    "keep": ("kept", "kept"),
    "know": ("knew", "known"),
    "lead": ("led", "led"),
    "leave": ("left", "left"),
    "lose": ("lost", "lost"),
    "make": ("made", "made"),
    "mean": ("meant", "meant"),
    "meet": ("met", "met"),
    "pay": ("paid", "paid"),
    "put": ("put", "put"),
    "read": ("read", "read"),
    "ride": ("rode", "ridden"),
    "ring": ("rang", "rung"),
    "rise": ("rose", "risen"),
    "run": ("ran", "run"),
    "say": ("said", "said"),
    "see": ("saw", "seen"),
    "sell": ("sold", "sold"),
    "send": ("sent", "sent"),
    "set": ("set", "set"),
    "shoot": ("shot", "shot"),
    "sing": ("sang", "sung"),
    "sink": ("sank", "sunk"),
    "sit": ("sat", "sat"),
    "speak": ("spoke", "spoken"),
    "spend": ("spent", "spent"),
    "stand": ("stood", "stood"),
    "steal": ("stole", "stolen"),
    "swim": ("swam", "swum"),
    "take": ("took", "taken"),
    "teach": ("taught", "taught"),
    "tell": ("told", "told"),
    "think": ("thought", "thought"),
    "throw": ("threw", "thrown"),
    "wear": ("wore", "worn"),
    "win": ("won", "won"),
    "write": ("wrote", "written"),
}
_REGULAR = {
    "act",
    "add",
    "border",
    "contain",
    "cover",
    "flow",
    "weigh",
    "realize",
    "reach",
    "refer",
    "score",
    "travel",
    "turn",
    "vote",
    "appear",
    "arrive",
    "ask",
    "attack",
    "belong",
    "call",
    "cause",
    "change",
    "create",
    "cross",
    "die",
    "discover",
    "end",
    "enter",
    "explode",
    "film",
    "finish",
    "form",
    "found",
    "happen",
    "help",
    "introduce",
    "invent",
    "join",
    "kill",
    "land",
    "last",
    "launch",
    "live",
    "look",
    "marry",
    "move",
    "need",
    "open",
    "occur",
    "own",
    "play",
    "produce",
    "receive",
    "release",
    "remain",
    "represent",
    "retire",
    "return",
    "sign",
    "start",
    "stop",
    "use",
    "voice",
    "want",
    "work",
}
_PARTICIPLES = {p for _, p in _IRREGULAR.values()} | {
    "born",
    "located",
    "called",
    "named",
    "based",
    "filmed",
    "played",
    "used",
    "released",
}
_PAST_TO_BASE = {past: base for base, (past, _) in _IRREGULAR.items()}
_TIME_NOUNS = {"year", "time", "date", "day", "month", "century", "decade", "era", "age"}
_PREPOSITIONS = {"in", "of", "on", "at", "for", "to", "from", "with", "by", "per", "does"}
_THERE = ("there",)


def _past(verb: str) -> str:
    if verb in _IRREGULAR:
        return _IRREGULAR[verb][0]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in set("aeiou"):
        return verb[:-1] + "ied"
    return verb + "ed"


def _third_person(verb: str) -> str:
    if verb == "have":
        return "has"
    if verb == "be":
        return "is"
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in set("aeiou"):
        return verb[:-1] + "ies"
    return verb + "s"


def _is_base_verb(word: str) -> bool:
    return word in _IRREGULAR or word in _REGULAR


def _is_verb_form(word: str) -> bool:
    """A main-verb form that can end a noun phrase ("which country *won* ...")."""
    if _is_base_verb(word) or word in _PAST_TO_BASE or word in _AUX:
        return True
    for base in _IRREGULAR.keys() | _REGULAR:
        if word in (_past(base), _third_person(base)):
            return True
    return False


def _is_participle(word: str) -> bool:
    return word in _PARTICIPLES or (len(word) > 4 and word.endswith("ed"))


def _declarative(rest: Sequence[str], aux: str) -> list[str]:
    """Undo subject-auxiliary inversion: ('the wall', 'fall') + 'did' -> 'the wall fell'."""
    words = list(rest)
    if not words:
        return []
    if aux in _DO:
        for i in range(1, len(words)):
            if _is_base_verb(words[i]):
                if aux == "did":
                    words[i] = _past(words[i])
                elif aux == "does":
                    words[i] = _third_person(words[i])
                return words
        return words  # no known verb: the tense is lost, the content words remain
    # copula / modal: put the auxiliary before the participle or verb it belongs to
    for i in range(1, len(words)):
        if _is_participle(words[i]) or (aux in _MODAL and _is_base_verb(words[i])):
            return words[:i] + [aux] + words[i:]
    if aux in _COPULA:
        return words + [aux]
    return words[:1] + [aux] + words[1:]


def _article(noun: Sequence[str]) -> str:
    head = noun[-1] if noun else ""
    if head.endswith("s") and not head.endswith("ss"):
        return "some"
    return "an" if noun and noun[0][:1] in set("aeiou") else "a"


def _exists(noun: Sequence[str]) -> str:
    """'There exists a X' / 'There exist some Xs' with the right agreement."""
    art = _article(noun)
    verb = "exist" if art == "some" else "exists"
    return f"There {verb} {art} {' '.join(noun)}"


def _split_at_aux_or_verb(words: Sequence[str]) -> int | None:
    for i in range(1, len(words)):
        if _is_verb_form(words[i]):
            return i
    return None


def _rule_quantity(words: list[str], unit: str) -> str:
    rest = words[2:]
    if len(rest) >= 2 and rest[-1] == "there" and rest[-2] in _COPULA:
        rest = rest[:-2]
    p = next((i for i, w in enumerate(rest) if w in _AUX), None)
    if p is not None and p + 1 < len(rest):
        noun, clause = rest[:p], _declarative(rest[p + 1 :], rest[p])
        of = f" of {' '.join(noun)}" if noun else ""
        return f"There exists a known {unit}{of} such that {' '.join(clause)}"
    if len(rest) >= 2 and rest[1] not in _PREPOSITIONS and _is_verb_form(rest[1]):
        return f"There exists a known {unit} of {rest[0]} that {' '.join(rest[1:])}"
    return f"There exists a known {unit} of {' '.join(rest)}".rstrip()


def _wh_clause(words: list[str]) -> list[str]:
    """The declarative clause after a wh-word: 'did the wall fall' -> 'the wall fell'."""
    rest = words[1:]
    if rest and rest[0] in _AUX and len(rest) > 1:
        return _declarative(rest[1:], rest[0])
    return rest


def _rule_noun_wh(words: list[str]) -> str | None:
    """which/what + noun phrase: 'which country won the cup' -> 'a country that won ...'."""
    rest = words[1:]
    if not rest:
        return None
    p = _split_at_aux_or_verb(rest)
    if p is None:
        if len(rest) > 1 and rest[1] not in _PREPOSITIONS:
            return f"{_exists(rest[:1])} that {' '.join(rest[1:])}"
        return _exists(rest)
    noun, verb, tail = rest[:p], rest[p], rest[p + 1 :]
    if noun[0] in _TIME_NOUNS and verb in _AUX:
        return f"There exists a known {noun[0]} when {' '.join(_declarative(tail, verb))}"
    if verb in _DO or (verb in _COPULA and any(_is_participle(w) for w in tail[1:])):
        clause = _declarative(tail, verb)
        return f"{_exists(noun)} that {' '.join(clause)}"
    return f"{_exists(noun)} that {' '.join([verb, *tail])}"


def _apply_rules(words: list[str]) -> tuple[str, str] | None:
    first = words[0]
    second = words[1] if len(words) > 1 else ""
    if first == "how" and second == "many" and len(words) > 2:
        return "how_many", _rule_quantity(words, "number")
    if first == "how" and second == "much" and len(words) > 2:
        return "how_much", _rule_quantity(words, "amount")
    if first == "how" and len(words) > 1:
        if second in _AUX:
            return "how", f"There exists a way in which {' '.join(_wh_clause(words))}"
        if second == "to":
            return "how", f"There exists a way {' '.join(words[1:])}"
        adj, tail = second, words[2:]
        if tail and tail[0] in _AUX and len(tail) > 1:
            tail = _declarative(tail[1:], tail[0])
        return "how", f"There exists a known measure of how {adj} {' '.join(tail)}".rstrip()
    if first == "when" and len(words) > 1:
        return "when", f"There exists a known time when {' '.join(_wh_clause(words))}"
    if first == "where" and len(words) > 1:
        return "where", f"There exists a place where {' '.join(_wh_clause(words))}"
    if first == "why" and len(words) > 1:
        return "why", f"There exists a reason why {' '.join(_wh_clause(words))}"
    if first in ("who", "whom") and len(words) > 1:
        rest = words[1:]
        if second in _DO and len(rest) > 1:
            return "who", f"There exists someone that {' '.join(_declarative(rest[1:], second))}"
        if second in _COPULA and rest[-1] == "by" and any(_is_participle(w) for w in rest[2:]):
            return "who", f"There exists someone that {' '.join(_declarative(rest[1:], second))}"
        return "who", f"There exists someone who {' '.join(rest)}"
    if first == "whose" and len(words) > 1:
        return "who", f"There exists someone whose {' '.join(words[1:])}"
    if first == "which" and len(words) > 1:
        claim = _rule_noun_wh(words)
        if claim is not None:
            return "which", claim
    if first == "what" and len(words) > 1:
        if second in _DO and len(words) > 2:
            return "what", f"There exists something that {' '.join(_wh_clause(words))}"
        if second in _COPULA and len(words) > 2:
            tail = words[2:]
            if any(_is_participle(w) for w in tail[1:]):
                return "what", f"There exists something that {' '.join(_wh_clause(words))}"
            return "what", f"There exists something that {second} {' '.join(tail)}"
        if second in _MODAL and len(words) > 2:
            return "what", f"There exists something that {' '.join(words[1:])}"
        claim = _rule_noun_wh(words)
        if claim is not None:
            return "what", claim
    if first in _AUX and len(words) > 1:
        clause = _declarative(words[1:], first)
        return "yes_no", f"There exists an answer to whether {' '.join(clause)}"
    return None


_SPACE = re.compile(r"\s+")


def question_to_claim(question: str) -> Claim:
    """Rewrite ``question`` as an existence claim; see the module docstring for the rules.

    The question is stripped of its question mark; its words are kept in their case except
    the question word, which the template replaces. An empty question raises ValueError.
    """
    text = _SPACE.sub(" ", question).strip().rstrip("?").strip()
    if not text:
        raise ValueError("question_to_claim needs a non-empty question")
    original = text.split(" ")
    lowered = [w.lower() for w in original]
    # match on lower case, but keep the original case of content words
    result = _apply_rules(lowered)
    if result is None:
        return Claim(f"There exists information about {text}", "fallback")
    rule, claim = result
    # the question word (position 0) is replaced by the template, so its case is not kept
    case_map = {
        low: orig for low, orig in zip(lowered[1:], original[1:], strict=True) if low != orig
    }
    restored = " ".join(case_map.get(w, w) for w in claim.split(" "))
    restored = restored[0].upper() + restored[1:]
    return Claim(restored, rule)


def coverage_report(questions: Iterable[str]) -> dict[str, object]:
    """Share of questions each rule matched, and the share that fell back.

    Returns ``{"n": int, "by_rule": {rule: share}, "fallback_share": float}``; shares are
    fractions of ``n`` and sum to 1 over ``by_rule`` (which includes ``fallback``).
    """
    counts: Counter[str] = Counter()
    n = 0
    for q in questions:
        counts[question_to_claim(q).rule] += 1
        n += 1
    shares = {rule: (counts[rule] / n if n else 0.0) for rule in RULES}
    return {"n": n, "by_rule": shares, "fallback_share": shares["fallback"]}


def _read_questions(path: Path) -> list[str]:
    from logic_rag.corpus import read_jsonl
    from logic_rag.errors import CorpusFormatError

    questions = []
    for lineno, row in read_jsonl(path):
        if not isinstance(row.get("question"), str):
            raise CorpusFormatError(path, lineno, 'expected an object with "question"')
        questions.append(row["question"])
    return questions


def main(argv: Sequence[str] | None = None) -> int:
    """Print rule coverage and 15 examples for a questions JSONL (NQ-open dev by default)."""
    import argparse

    from logic_rag.paths import shared_data_dir

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument(
        "path",
        nargs="?",
        type=Path,
        default=None,
        help='JSONL with {"question": ...} per line (default: shared NQ-open dev)',
    )
    parser.add_argument("--examples", type=int, default=15)
    args = parser.parse_args(argv)
    path = args.path or shared_data_dir() / "rag" / "nq_open" / "NQ-open.dev.jsonl"
    if not path.is_file():
        print(f"error: {path} not found; pass a questions JSONL or set LOGIC_RAG_DATA")
        return 2
    questions = _read_questions(path)
    report = coverage_report(questions)
    print(f"{path}: {report['n']} questions")
    for rule, share in report["by_rule"].items():  # type: ignore[union-attr]
        print(f"  {rule:<9} {share:6.1%}")
    step = max(1, len(questions) // max(1, args.examples))
    for q in questions[::step][: args.examples]:
        claim = question_to_claim(q)
        print(f"[{claim.rule}] {q}\n    -> {claim.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
