"""A real-prose, category-labelled training set from WordNet 3.0 noun glosses.

The generated world is synthetic prose; to train on real text with exact gold sets we use
WordNet: every noun synset of a few lexicographer files (animals, plants, food, artifacts) is
a document (``"lemma1, lemma2: gloss"``), and categories are hyponym closures ("kinds of
dog" = every synset below dog.n.01, via ``@`` hypernym and ``@i`` instance-hypernym pointers)
restricted to the documents in the set. Gold sets are therefore exact for this corpus. Atoms
are split disjointly into train / val / test, and each split's queries are Quest+Variants
compositions of its own atoms, written in the generated world's layout so that
``load_quest_training_set`` and ``logic-rag eval quest`` read it.

WordNet is read from the shared data (``$LOGIC_RAG_DATA/wordnet/data.noun.gz``, default
``../shared/data``) or from any folder holding ``data.noun`` or ``data.noun.gz`` (Debian's
``wordnet-base`` installs ``/usr/share/wordnet``); the demo's few thousand glosses travel with
the package instead (:mod:`logic_rag.evals.wordnet_demo`).

Data file format (WordNet 3.0 ``wndb(5)``): ``offset lex_filenum ss_type w_cnt word lex_id
... p_cnt [pointer_symbol offset pos source/target]... | gloss``; ``w_cnt`` is hex, ``p_cnt``
decimal; lines starting with spaces are the licence header.
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from logic_rag.atomic import atomic_write_json, atomic_write_jsonl
from logic_rag.errors import CorpusFormatError, LogicRagError

from .variants import build_variants, write_quest_format

__all__ = [
    "LEXFILES",
    "Synset",
    "WordNetMissingError",
    "default_wordnet_dir",
    "read_wordnet_nouns",
    "hyponym_closures",
    "build_wordnet_set",
    "main",
]

LEXFILES: tuple[str, ...] = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather",
    "adj.ppl",
)  # fmt: skip
"""Lexicographer file names by number (WordNet 3.0 ``lexnames``)."""

DEFAULT_LEXFILES = ("noun.animal", "noun.plant", "noun.food", "noun.artifact")
SPLIT_SHARES = {"train": 0.6, "val": 0.15, "test": 0.25}


class WordNetMissingError(LogicRagError, FileNotFoundError):
    """The WordNet 3.0 database files are not installed."""


@dataclass(frozen=True)
class Synset:
    """One noun synset: ``offset`` (8 digits), lexicographer file, lemmas, hypernym offsets
    (``@`` and ``@i``) and gloss."""

    offset: str
    lexfile: str
    lemmas: tuple[str, ...]
    hypernyms: tuple[str, ...]
    gloss: str

    @property
    def doc_id(self) -> str:
        """First lemma plus sense offset, e.g. ``dog.02084071`` (unique)."""
        return f"{self.lemmas[0]}.{self.offset}"

    @property
    def text(self) -> str:
        """``"lemma1, lemma2: gloss"`` with underscores as spaces."""
        return f"{', '.join(self.lemmas)}: {self.gloss}"


def default_wordnet_dir() -> Path:
    """``$LOGIC_RAG_DATA/wordnet`` (default ``../shared/data/wordnet`` beside a checkout)."""
    from logic_rag.paths import shared_data_dir

    return shared_data_dir() / "wordnet"


def _data_noun(wordnet: str | Path) -> Path:
    """``data.noun`` or ``data.noun.gz`` in the folder ``wordnet``, or ``wordnet`` itself
    when it is such a file."""
    path = Path(wordnet)
    if path.is_file():
        return path
    for name in ("data.noun", "data.noun.gz"):
        if (path / name).is_file():
            return path / name
    raise WordNetMissingError(
        f"WordNet 3.0 noun data not found: no data.noun or data.noun.gz in {path}; set "
        "LOGIC_RAG_DATA to the shared data folder (it holds wordnet/data.noun.gz) or pass "
        "the folder holding data.noun (Debian's wordnet-base: /usr/share/wordnet)"
    )


def read_wordnet_nouns(wordnet_dir: str | Path | None = None) -> dict[str, Synset]:
    """Every noun synset of ``data.noun`` (or ``data.noun.gz``) in ``wordnet_dir`` (default
    :func:`default_wordnet_dir`; a path to the file itself works too), by offset; a
    malformed line raises :class:`~logic_rag.errors.CorpusFormatError` with ``file:line``."""
    path = _data_noun(default_wordnet_dir() if wordnet_dir is None else wordnet_dir)
    synsets: dict[str, Synset] = {}
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        for lineno, line in enumerate(handle, start=1):
            if line.startswith("  ") or not line.strip():
                continue
            head, sep, gloss = line.partition(" | ")
            fields = head.split()
            try:
                offset, lexnum, pos, w_cnt = (
                    fields[0],
                    int(fields[1]),
                    fields[2],
                    int(fields[3], 16),
                )
                lemmas = tuple(fields[4 + 2 * i].replace("_", " ") for i in range(w_cnt))
                k = 4 + 2 * w_cnt
                p_cnt = int(fields[k])
                hypernyms = []
                for i in range(p_cnt):
                    symbol, target, target_pos = fields[k + 1 + 4 * i : k + 4 + 4 * i]
                    if symbol in ("@", "@i") and target_pos == "n":
                        hypernyms.append(target)
                lexfile = LEXFILES[lexnum]
            except (IndexError, ValueError) as exc:
                raise CorpusFormatError(path, lineno, f"not a WordNet data line ({exc})") from None
            if pos != "n" or not lemmas:
                raise CorpusFormatError(path, lineno, f"expected a noun synset, got pos {pos!r}")
            # Lemmas may carry a syntactic marker such as "(p)"; drop it.
            lemmas = tuple(
                lemma.split("(")[0] if lemma.endswith(")") else lemma for lemma in lemmas
            )
            synsets[offset] = Synset(
                offset, lexfile, lemmas, tuple(hypernyms), gloss.strip() if sep else ""
            )
    return synsets


def hyponym_closures(
    synsets: Mapping[str, Synset], members: Iterable[str]
) -> dict[str, frozenset[str]]:
    """For every synset, the ``members`` (offsets) strictly below it in the hypernym graph."""
    member_set = set(members)
    closures: dict[str, set[str]] = {}
    for offset in member_set:
        seen: set[str] = set()
        stack = list(synsets[offset].hypernyms)
        while stack:
            up = stack.pop()
            if up in seen or up not in synsets:
                continue
            seen.add(up)
            closures.setdefault(up, set()).add(offset)
            stack.extend(synsets[up].hypernyms)
    return {k: frozenset(v) for k, v in closures.items()}


def _below(synsets: Mapping[str, Synset], roots: Iterable[str]) -> set[str]:
    """``roots`` and every synset below any of them (hyponyms and instances)."""
    children: dict[str, list[str]] = {}
    for offset, syn in synsets.items():
        for up in syn.hypernyms:
            children.setdefault(up, []).append(offset)
    found: set[str] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in found:
            continue
        found.add(node)
        stack.extend(children.get(node, ()))
    return found


def _pick_documents(
    synsets: Mapping[str, Synset], lexfiles: Sequence[str], max_docs: int, rng: random.Random
) -> list[str]:
    """Documents = unions of whole mid-sized categories (20..150 members), balanced over the
    lexicographer files, until ``max_docs``; whole categories keep the atoms dense."""
    pools = {lf: [o for o, s in synsets.items() if s.lexfile == lf] for lf in lexfiles}
    chosen: set[str] = set()
    per_file = max_docs // max(len(lexfiles), 1)
    for lf in lexfiles:
        closures = hyponym_closures(synsets, pools[lf])
        roots = sorted(o for o, m in closures.items() if 20 <= len(m) <= 150)
        rng.shuffle(roots)
        taken: set[str] = set()
        for root in roots:
            new = closures[root] - chosen - taken
            if len(taken) + len(new) > per_file:
                continue
            taken |= new
            if len(taken) >= 0.95 * per_file:
                break
        chosen |= taken
    return sorted(chosen)


def build_wordnet_set(
    out_dir: str | Path,
    *,
    wordnet_dir: str | Path | None = None,
    lexfiles: Sequence[str] = DEFAULT_LEXFILES,
    max_docs: int = 3000,
    seed: int = 0,
    min_size: int = 2,
    max_size: int = 200,
    exclude_below: Sequence[str] = (),
) -> dict[str, object]:
    """Write ``documents.jsonl``, ``atoms.jsonl``, ``train/val/test.jsonl`` and ``wordnet.json``.

    Atoms ("kinds of X" for every synset X with ``min_size..max_size`` documents below it) are
    assigned to one split each (atoms are disjoint across splits); each split's queries are the
    Quest+Variants of its atoms. Returns the manifest.

    ``exclude_below`` (synset offsets) removes those synsets and everything below them before
    documents and atoms are chosen: how the demo's categories (``logic-rag demo``) stay out of
    the training data of the shipped ``logic-gemma``. The set is closed downwards, so no kept
    synset's category passes through a removed one and every gold set stays exact.
    """
    unknown = [lf for lf in lexfiles if lf not in LEXFILES or not lf.startswith("noun.")]
    if unknown or not lexfiles:
        raise ValueError(f"lexfiles must be noun lexicographer files, got unknown {unknown}")
    if max_docs < 10:
        raise ValueError(f"max_docs must be >= 10, got {max_docs}")
    start = time.perf_counter()
    synsets = read_wordnet_nouns(wordnet_dir)
    if exclude_below:
        removed = _below(synsets, exclude_below)
        synsets = {o: s for o, s in synsets.items() if o not in removed}
    rng = random.Random(seed)
    docs = _pick_documents(synsets, lexfiles, max_docs, rng)
    closures = hyponym_closures(synsets, docs)
    # One atom per distinct gold set; on ties keep the most specific (smallest closure, then
    # alphabetical), so "kinds of X" names the tightest category.
    atoms: dict[str, dict[str, object]] = {}
    seen_sets: set[frozenset[str]] = set()
    for offset in sorted(closures, key=lambda o: (len(closures[o]), synsets[o].lemmas[0], o)):
        members = closures[offset]
        if not min_size <= len(members) <= max_size or members in seen_sets:
            continue
        seen_sets.add(members)
        syn = synsets[offset]
        name = f"Kinds of {syn.lemmas[0]}"
        if name in atoms:
            name = f"Kinds of {syn.lemmas[0]} ({syn.gloss.split(';')[0][:40]})"
        if name in atoms:
            continue
        atoms[name] = {
            "atom": name,
            "domain": syn.lexfile,
            "facet": "hyponym",
            "synset": syn.doc_id,
            "docs": sorted(synsets[m].doc_id for m in members),
        }
    names = sorted(atoms)
    rng.shuffle(names)
    cut1 = round(SPLIT_SHARES["train"] * len(names))
    cut2 = cut1 + round(SPLIT_SHARES["val"] * len(names))
    split_of = {
        n: ("train" if i < cut1 else "val" if i < cut2 else "test") for i, n in enumerate(names)
    }
    for n in names:
        atoms[n]["split"] = split_of[n]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_jsonl(
        out / "documents.jsonl",
        ({"title": synsets[o].doc_id, "text": synsets[o].text} for o in docs),
    )
    atomic_write_jsonl(out / "atoms.jsonl", (atoms[n] for n in sorted(atoms)))
    counts: dict[str, int] = {}
    for split in SPLIT_SHARES:
        split_atoms = {n: atoms[n]["docs"] for n in sorted(atoms) if split_of[n] == split}
        domains = {n: str(atoms[n]["domain"]) for n in split_atoms}
        queries = build_variants(
            split_atoms,  # type: ignore[arg-type]
            seed=seed,
            min_size=min_size,
            max_size=max_size,
            domains=domains,
        )
        queries = [
            replace(q, query_id=f"{split}:{q.query_id}", group=f"{split}:{q.group}")
            for q in queries
        ]
        write_quest_format(queries, out / f"{split}.jsonl")
        counts[split] = len(queries)
    manifest: dict[str, object] = {
        "format": "quest",
        "generator": "logic_rag.finetune.data.wordnet",
        "source": "WordNet 3.0 data.noun",
        "wordnet_dir": str(default_wordnet_dir() if wordnet_dir is None else wordnet_dir),
        "seed": seed,
        "lexfiles": list(lexfiles),
        "max_docs": max_docs,
        "exclude_below": sorted(exclude_below),
        "counts": {
            "documents": len(docs),
            "documents_per_lexfile": {
                lf: sum(synsets[o].lexfile == lf for o in docs) for lf in lexfiles
            },
            "atoms": len(atoms),
            "atoms_per_split": {s: sum(v == s for v in split_of.values()) for s in SPLIT_SHARES},
            "queries": counts,
        },
        "seconds": round(time.perf_counter() - start, 2),
    }
    atomic_write_json(out / "wordnet.json", manifest)
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m logic_rag.finetune.data.wordnet --out DIR``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument(
        "--wordnet-dir",
        default=None,
        help="folder holding data.noun or data.noun.gz (default $LOGIC_RAG_DATA/wordnet)",
    )
    parser.add_argument("--lexfiles", nargs="+", default=list(DEFAULT_LEXFILES))
    parser.add_argument("--max-docs", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        manifest = build_wordnet_set(
            args.out,
            wordnet_dir=args.wordnet_dir,
            lexfiles=args.lexfiles,
            max_docs=args.max_docs,
            seed=args.seed,
        )
    except (WordNetMissingError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    import json

    print(json.dumps({"out": args.out, **manifest["counts"]}))  # type: ignore[dict-item]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
