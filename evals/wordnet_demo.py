"""Real text with known answer sets for ``logic-rag demo``: WordNet 3.0 noun glosses.

Why WordNet: the demo's first job is to show logic queries answered on text a reader can
judge, and its answer sets must be exact so that recall means something. The demo's part of
WordNet 3.0 travels with the package (``data/wordnet_demo.noun.gz``: the noun synsets below
:data:`ROOTS` and their ancestors, ~2,800 lines of ``data.noun`` verbatim, licence header
included, and WordNet's notice in ``data/WORDNET_LICENSE``; WordNet's licence allows
redistribution with it), so the demo needs no system package. ``python -m
logic_rag.evals.wordnet_demo`` rebuilds that file from the full ``data.noun`` (the shared
data's ``wordnet/data.noun.gz`` by default) and a test checks that the two agree.

Every noun synset below a few roots (birds, dogs, trees, edible fruits, vegetables,
reptiles: ~2,750 synsets) is one document, ``"hawk"`` / ``"diurnal bird of prey typically
having short rounded wings..."``; a category ("hawks") is a synset with every synset below
it (hyponym closure through ``@`` and ``@i`` pointers), so "birds of prey that are not
hawks" has an exact answer set.

Queries use QUEST's templates over those categories: a few chosen for the terminal
(:data:`SHOWCASE`) and a seeded sample of every template for the recall table. Categories
are named by their first lemma in the plural ("birds of prey"); a name shared by two
categories of the corpus is not used, so a query's words mean one set. These queries and
their synsets are an evaluation set: keep them out of training.
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logic_rag.errors import LogicRagError

__all__ = [
    "PACKAGED_WORDNET",
    "ROOTS",
    "SHOWCASE",
    "WordNetDemoSet",
    "WordNetNotInstalledError",
    "build_demo_subset",
    "load_wordnet_demo",
    "plural",
    "write_demo_subset",
]

#: The corpus: every noun synset at or below these WordNet 3.0 synsets (offset, gloss word).
ROOTS: tuple[tuple[str, str], ...] = (
    ("01503061", "bird"),
    ("02084071", "dog"),
    ("13104059", "tree"),
    ("07705931", "edible fruit"),
    ("07707451", "vegetable"),
    ("01661091", "reptile"),
)

#: Queries printed in the terminal, in QUEST's wording; each names categories of the corpus.
SHOWCASE: tuple[tuple[str, str], ...] = (
    ("birds that are not birds of prey", "_ that are not _"),
    ("birds of prey that are not hawks", "_ that are not _"),
    ("hunting dogs that are not hounds", "_ that are not _"),
    ("edible fruits that are also berries", "_ that are also _"),
    ("owls or eagles or falcons", "_ or _ or _"),
    ("reptiles that are also snakes but not vipers", "_ that are also _ but not _"),
)

#: Showcase queries with more answers than this are printed but not measured.
MAX_MEASURED = 100

_TEMPLATES = (
    "_ that are not _",
    "_ that are also _",
    "_ or _",
    "_ or _ or _",
    "_ that are also _ but not _",
)
#: The demo's part of WordNet 3.0's ``data.noun``, shipped with the package (see above).
PACKAGED_WORDNET = Path(__file__).resolve().parent / "data" / "wordnet_demo.noun.gz"

#: Irregular plurals of the corpus's category names (from WordNet's ``noun.exc``, which the
#: packaged subset does not carry); every other name takes the regular rules of :func:`plural`.
IRREGULAR_PLURALS: dict[str, str] = {
    "goose": "geese",
    "titmouse": "titmice",
    "potato": "potatoes",
    "tomato": "tomatoes",
}


class WordNetNotInstalledError(LogicRagError, FileNotFoundError):
    """The WordNet 3.0 data file given to the demo is missing."""


@dataclass(frozen=True)
class WordNetDemoSet:
    """The demo's corpus, the queries it measures recall on (QUEST records), each
    category's answer set, and the showcase queries printed in the terminal (those with at
    most :data:`MAX_MEASURED` answers are measured too; recall@20 of a larger set says
    little)."""

    documents: list[Any]
    queries: list[Any]
    categories: dict[str, frozenset[str]]
    showcase: list[Any]


def plural(name: str, irregular: Mapping[str, str] | None = None) -> str:
    """``"bird of prey"`` -> ``"birds of prey"``, ``"berry"`` -> ``"berries"``."""
    head, sep, tail = name.partition(" of ")
    words = head.split(" ")
    last = words[-1]
    if irregular and last in irregular:
        last = irregular[last].replace("_", " ")
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last += "s"
    return " ".join([*words[:-1], last]) + sep + tail


_TAXON_PREFIXES = tuple(
    f"{rank} "
    for rank in (
        "genus", "subgenus", "family", "subfamily", "superfamily", "order", "suborder",
        "superorder", "infraorder", "class", "subclass", "tribe",
    )
)  # fmt: skip


def _is_taxon(lemma: str) -> bool:
    """``"order Accipitriformes"``: a taxon's synset, whose gloss names a group rather than
    describing a kind of thing; left out so that documents read as definitions."""
    return lemma.lower().startswith(_TAXON_PREFIXES)


def _read(wordnet: Path) -> dict[str, Any]:
    from logic_rag.finetune.data.wordnet import WordNetMissingError, read_wordnet_nouns

    try:
        return read_wordnet_nouns(wordnet)
    except WordNetMissingError:
        raise WordNetNotInstalledError(
            f"WordNet 3.0 not found: no data.noun or data.noun.gz in {wordnet}; pass "
            f"--wordnet-dir a folder holding one (e.g. /usr/share/wordnet), or leave it out "
            f"to use the glosses that ship with logic-rag"
        ) from None


def _corpus(synsets: Mapping[str, Any], roots: Sequence[tuple[str, str]]) -> set[str]:
    """The roots' offsets and every synset with a root among its ancestors."""
    corpus = {o for o, _ in roots}
    for offset, syn in synsets.items():
        stack, seen = list(syn.hypernyms), set()
        while stack:
            up = stack.pop()
            if up in corpus:
                corpus.add(offset)
                break
            if up not in seen:
                seen.add(up)
                stack.extend(synsets[up].hypernyms if up in synsets else ())
    return corpus


def build_demo_subset(
    wordnet: str | Path | None = None, *, roots: Sequence[tuple[str, str]] = ROOTS
) -> str:
    """The text of :data:`PACKAGED_WORDNET` from a full WordNet 3.0 ``data.noun`` (or
    ``.gz``; default: the shared data's, ``$LOGIC_RAG_DATA/wordnet``): its licence header,
    then the lines of every synset of the demo's corpus and of their ancestors, verbatim, in
    offset order."""
    from logic_rag.finetune.data.wordnet import _data_noun, default_wordnet_dir

    source = default_wordnet_dir() if wordnet is None else Path(wordnet)
    synsets = _read(source)
    keep = _corpus(synsets, roots)
    stack = [up for o in keep for up in synsets[o].hypernyms]
    while stack:
        up = stack.pop()
        if up in synsets and up not in keep:
            keep.add(up)
            stack.extend(synsets[up].hypernyms)
    path = _data_noun(source)
    opener = gzip.open if path.suffix == ".gz" else open
    header: list[str] = []
    lines: list[str] = []
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.startswith("  "):
                header.append(line)
            elif line.split(" ", 1)[0] in keep:
                lines.append(line)
    return "".join(header + sorted(lines))


def write_demo_subset(
    out: str | Path = PACKAGED_WORDNET, wordnet: str | Path | None = None
) -> Path:
    """Write :func:`build_demo_subset` gzipped (reproducible bytes: no timestamp)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = build_demo_subset(wordnet).encode("utf-8")
    out.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    return out


def _categories(
    synsets: Mapping[str, Any], corpus: set[str], irregular: Mapping[str, str]
) -> dict[str, frozenset[str]]:
    """``{plural name: doc ids}`` for every synset of the corpus with 3 or more members
    (itself and everything below it), named by its first lemma; shared names dropped."""
    below: dict[str, set[str]] = {o: {o} for o in corpus}
    for offset in corpus:
        seen: set[str] = set()
        stack = list(synsets[offset].hypernyms)
        while stack:
            up = stack.pop()
            if up in seen:
                continue
            seen.add(up)
            if up in below:
                below[up].add(offset)
            stack.extend(synsets[up].hypernyms if up in synsets else ())
    named: dict[str, list[frozenset[str]]] = {}
    for offset, members in below.items():
        lemma = synsets[offset].lemmas[0]
        if len(members) < 3 or not lemma.replace(" ", "").replace("-", "").isalpha():
            continue
        if lemma != lemma.lower():
            continue
        ids = frozenset(synsets[m].doc_id for m in members)
        named.setdefault(plural(lemma, irregular), []).append(ids)
    return {name: sets[0] for name, sets in named.items() if len(sets) == 1}


def _sample(
    categories: Mapping[str, frozenset[str]], per_template: int, rng: random.Random
) -> list[tuple[str, str, frozenset[str], tuple[str, ...]]]:
    """``(text, template, gold, atoms)`` for a seeded sample of each template."""
    names = sorted(categories)
    small = [n for n in names if len(categories[n]) <= 30]
    subsets = [
        (a, b)
        for a in names
        for b in names
        if a != b and categories[b] < categories[a] and len(categories[a]) <= 400
    ]
    out: list[tuple[str, str, frozenset[str], tuple[str, ...]]] = []

    def take(found: list[tuple[str, str, frozenset[str], tuple[str, ...]]]) -> None:
        rng.shuffle(found)
        out.extend(found[:per_template])

    take(
        [
            (f"{a} that are not {b}", _TEMPLATES[0], categories[a] - categories[b], (a, b))
            for a, b in subsets
            if 3 <= len(categories[a] - categories[b]) <= 50
        ]
    )
    take(
        [
            (f"{a} that are also {b}", _TEMPLATES[1], categories[b], (a, b))
            for a, b in subsets
            if len(categories[b]) <= 50
        ]
    )
    # Unions of related categories (both inside one category of at most 80 members:
    # "owls or eagles", never "chickadees or fox grapes").
    pairs = sorted(
        {
            (a, b)
            for parent in names
            if len(categories[parent]) <= 80
            for i, a in enumerate(small)
            if categories[a] < categories[parent]
            for b in small[i + 1 :]
            if categories[b] < categories[parent] and not categories[a] & categories[b]
        }
    )
    rng.shuffle(pairs)
    take(
        [
            (f"{a} or {b}", _TEMPLATES[2], categories[a] | categories[b], (a, b))
            for a, b in pairs[: 20 * per_template]
        ]
    )
    partners: dict[str, list[str]] = {}
    for a, b in pairs:
        partners.setdefault(a, []).append(b)
    triples = []
    for a, b in pairs[: 20 * per_template]:
        c = rng.choice(partners.get(b) or [a])
        if c not in (a, b) and not categories[c] & (categories[a] | categories[b]):
            gold = categories[a] | categories[b] | categories[c]
            triples.append((f"{a} or {b} or {c}", _TEMPLATES[3], gold, (a, b, c)))
    take(triples)
    chains = [
        (
            f"{a} that are also {b} but not {c}",
            _TEMPLATES[4],
            categories[b] - categories[c],
            (a, b, c),
        )
        for a, b in subsets
        for c in names
        if categories[c] < categories[b] and 3 <= len(categories[b] - categories[c]) <= 50
    ]
    take(chains)
    return out


def _gold(
    text: str, template: str, categories: Mapping[str, frozenset[str]]
) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """The answer set of a showcase query from its category names (None: a name is unknown)."""
    if template == "_ that are not _":
        a, b = text.split(" that are not ")
        atoms = (a, b)
    elif template == "_ that are also _":
        atoms = tuple(text.split(" that are also "))
    elif template == "_ or _ or _":
        atoms = tuple(text.split(" or "))
    elif template == "_ that are also _ but not _":
        a, rest = text.split(" that are also ")
        b, c = rest.split(" but not ")
        atoms = (a, b, c)
    else:  # pragma: no cover - SHOWCASE uses the templates above
        raise ValueError(template)
    if any(name not in categories for name in atoms):
        return None
    sets = [categories[name] for name in atoms]
    if template == "_ that are not _":
        gold = sets[0] - sets[1]
    elif template == "_ that are also _":
        gold = sets[0] & sets[1]
    elif template == "_ or _ or _":
        gold = sets[0] | sets[1] | sets[2]
    else:
        gold = (sets[0] & sets[1]) - sets[2]
    return (gold, atoms) if gold else None


def load_wordnet_demo(
    wordnet_dir: str | Path | None = None,
    *,
    roots: Sequence[tuple[str, str]] = ROOTS,
    per_template: int = 30,
    seed: int = 0,
) -> WordNetDemoSet:
    """The corpus below ``roots``, the showcase queries and ``per_template`` sampled queries
    of each QUEST template (seeded). ``wordnet_dir`` (a folder holding ``data.noun`` or
    ``data.noun.gz``, or the file) replaces the packaged glosses; a missing one raises
    :class:`WordNetNotInstalledError` with the fix."""
    from logic_rag.corpus import Document
    from logic_rag.evals.quest.data import QuestQuery

    folder = PACKAGED_WORDNET if wordnet_dir is None else Path(wordnet_dir)
    synsets = _read(folder)
    unknown = [f"{o} ({w})" for o, w in roots if o not in synsets]
    if unknown:
        raise LogicRagError(
            f"{folder}: no noun synset {', '.join(unknown)}; the demo expects WordNet 3.0"
        )
    corpus = _corpus(synsets, roots)
    taxa = {o for o, syn in synsets.items() if any(_is_taxon(lemma) for lemma in syn.lemmas)}
    documents = [
        Document(
            id=synsets[o].doc_id,
            title=", ".join(synsets[o].lemmas),
            text=synsets[o].gloss,
            metadata={"synset": o, "lexfile": synsets[o].lexfile},
        )
        for o in sorted(corpus - taxa)
    ]
    categories = _categories(synsets, corpus - taxa, IRREGULAR_PLURALS)
    rng = random.Random(seed)
    shown: list[tuple[str, str, frozenset[str], tuple[str, ...]]] = []
    for text, template in SHOWCASE:
        found = _gold(text, template, categories)
        if found is not None:
            shown.append((text, template, found[0], found[1]))
    rows = [r for r in shown if len(r[2]) <= MAX_MEASURED]
    seen = {r[0] for r in shown}
    rows += [r for r in _sample(categories, per_template, rng) if r[0] not in seen and r[2]]

    def record(i: int, row: tuple[str, str, frozenset[str], tuple[str, ...]]) -> Any:
        text, template, gold, atoms = row
        return QuestQuery(
            qid=f"wordnet:{i}",
            query=text,
            docs=gold,
            template=template,
            domain="wordnet",
            atoms=atoms,
            metadata={"atoms": list(atoms)},
        )

    queries = [record(i, row) for i, row in enumerate(rows)]
    by_text = {q.query: q for q in queries}
    showcase = [by_text.get(row[0]) or record(len(queries) + i, row) for i, row in enumerate(shown)]
    return WordNetDemoSet(documents, queries, categories, showcase)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m logic_rag.evals.wordnet_demo [--wordnet DIR] [--out FILE]``: rebuild the
    packaged subset from a full WordNet 3.0 (default: the shared data's)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--wordnet", default=None, help="folder holding data.noun or data.noun.gz")
    parser.add_argument("--out", default=str(PACKAGED_WORDNET))
    args = parser.parse_args(argv)
    try:
        out = write_demo_subset(args.out, args.wordnet)
    except WordNetNotInstalledError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
