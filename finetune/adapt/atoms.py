"""Phase 1: the atoms (single constraints) the teacher will label, and which go together.

Two sources:

* the user's questions (:func:`atoms_from_queries`): each question is decomposed by the
  rules decomposer and its atoms (asked-for and excluded alike) form one *group*; atoms
  of a group are later labelled on a shared candidate pool, so set algebra over them is
  exact;
* no questions (:func:`atoms_from_pages`): the teacher names a few short categories for
  each of a seeded sample of pages (free generation, a short prompt); names are cleaned,
  deduplicated, and merged when their embeddings are close (cosine >= a threshold, most
  frequent name kept). The categories of one page form a group: they co-occur by
  construction. Generation is appended page by page to ``generated.jsonl``, so a kill
  loses at most one batch of pages.

The output is ``atoms.json``: ``{"source", "atoms", "groups", ...counts}``.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .state import AdaptError

__all__ = [
    "atom_key",
    "read_queries",
    "atoms_from_queries",
    "atoms_from_pages",
    "parse_categories",
    "merge_names",
    "CATEGORY_PROMPT",
    "CATEGORY_SYSTEM",
]

CATEGORY_SYSTEM = "You name Wikipedia categories. Answer with category names only."
_PROMPT_EXAMPLES = frozenset({"italian crime films", "novels set in paris"})
CATEGORY_PROMPT = (
    "Page:\n{page}\n\nName {n} short Wikipedia categories this page belongs to, "
    'such as "Italian crime films" or "Novels set in Paris". One per line, nothing else.'
)


def atom_key(text: str) -> str:
    """An atom's name compared case- and space-insensitively: how spellings are merged."""
    return " ".join(text.split()).casefold()


def read_queries(path: str | Path) -> list[str]:
    """Questions from a log: JSONL with a ``query`` field, or plain text, one per line."""
    from logic_rag.errors import CorpusFormatError
    from logic_rag.json_limits import JsonDepthError, loads_bounded

    path = Path(path)
    out: list[str] = []
    from logic_rag.corpus import decode_line

    with path.open("rb") as handle:
        for lineno, raw in enumerate(handle, 1):
            text = decode_line(raw, path, lineno).strip()  # binary files: file:line
            if not text:
                continue
            if text.startswith("{"):
                try:
                    row = loads_bounded(text)
                except JsonDepthError as exc:
                    raise CorpusFormatError(path, lineno, str(exc)) from None
                except ValueError:
                    raise CorpusFormatError(path, lineno, "not a JSON object") from None
                query = row.get("query") if isinstance(row, dict) else None
                if not isinstance(query, str) or not query.strip():
                    raise CorpusFormatError(path, lineno, '"query" must be a non-empty string')
                text = query.strip()
            out.append(text)
    if not out:
        raise AdaptError(f"--queries {path}: no questions (JSONL with 'query', or one per line)")
    return out


def atoms_from_queries(queries: Sequence[str]) -> dict[str, Any]:
    """Atoms and groups from the rules decomposer's reading of each question.

    A question read as one atom (no connective) is a group of one. Atom spellings are
    merged case- and space-insensitively (the first spelling is kept).
    """
    from logic_rag.query.algebra import atoms
    from logic_rag.query.rules import RuleDecomposer

    decomposer = RuleDecomposer()
    spelling: dict[str, str] = {}
    groups: list[list[str]] = []
    for query in queries:
        group: list[str] = []
        for atom in atoms(decomposer.decompose(query).query):
            name = spelling.setdefault(atom_key(atom.text), " ".join(atom.text.split()))
            if name not in group:
                group.append(name)
        if group and group not in groups:
            groups.append(group)
    return {
        "source": "queries",
        "how": f"rules decomposition of {len(queries)} questions; the atoms of one question "
        f"form a group",
        "questions": len(queries),
        "atoms": list(dict.fromkeys(a for g in groups for a in g)),
        "groups": groups,
    }


_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.)]|[a-z][.)])\s*", re.IGNORECASE)
# Answers that are not names: refusals, sentences about the page, placeholders.
_NOT_A_NAME = re.compile(
    r"^(?:i|i'm|i am|it|this|these|that|the page|the subject|here|sure|sorry|as an|"
    r"unfortunately|none|n/a|unknown|answer|categories)\b",
    re.IGNORECASE,
)


def parse_categories(answer: str, limit: int) -> list[str]:
    """Category names from a generated answer: one per line (or comma list), cleaned.

    Bullets, numbering, quotes and a trailing full stop go; a name keeps 1-8 words and at
    most 80 characters; a line that reads as a sentence (more than 8 words, or ": " inside)
    or as a refusal or a remark ("I do not know", "This page ...", "None") is skipped, and
    so is a one-line answer that is a sentence (more than 8 words, a full stop). The
    prompt's two examples are dropped too: small models repeat them for any page (seen with
    SmolLM2), and a corpus where they are real categories names them in other words too.
    Small models ramble: what is left may be empty.
    """
    lines = [ln for ln in answer.splitlines() if ln.strip()]
    if len(lines) == 1 and len(lines[0].split()) > 8 and lines[0].rstrip().endswith("."):
        return []  # one sentence about the page, not a list of names
    if len(lines) == 1 and "," in lines[0]:
        lines = lines[0].split(",")
    out: list[str] = []
    for line in lines:
        name = _BULLET.sub("", line).strip().strip("\"'“”‘’`").strip()
        if name.lower().startswith("category:"):
            name = name.split(":", 1)[1].strip()
        name = name.rstrip(".;").strip()
        words = name.split()
        if not words or len(words) > 8 or len(name) > 80 or ": " in name:
            continue
        if not any(c.isalpha() for c in name) or _NOT_A_NAME.match(name):
            continue
        if atom_key(name) in _PROMPT_EXAMPLES:
            continue  # the prompt's own examples, parroted by a small model
        name = name[0].upper() + name[1:]
        if atom_key(name) not in {atom_key(o) for o in out}:
            out.append(name)
        if len(out) >= limit:
            break
    return out


def merge_names(
    names: Sequence[str], counts: Counter[str], vectors: np.ndarray, threshold: float
) -> dict[str, str]:
    """Map each name to its representative: greedy, most frequent names first.

    ``vectors`` are unit-normalised embeddings of ``names`` (same order). A name joins the
    first representative whose cosine with it is >= ``threshold``; otherwise it becomes
    one. Ties in frequency are broken by the name, so the result is deterministic.
    """
    order = sorted(range(len(names)), key=lambda i: (-counts[names[i]], names[i]))
    reps: list[int] = []
    mapping: dict[str, str] = {}
    for i in order:
        if reps:
            sims = vectors[reps] @ vectors[i]
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                mapping[names[i]] = names[reps[j]]
                continue
        reps.append(i)
        mapping[names[i]] = names[i]
    return mapping


def atoms_from_pages(
    documents: Sequence[Any],
    generator: Any,
    encode: Callable[[list[str]], np.ndarray],
    out: Path,
    *,
    sample_pages: int,
    per_page: int,
    merge_threshold: float,
    max_chars: int,
    seed: int,
    batch: int = 8,
    progress: bool = True,
) -> dict[str, Any]:
    """Atoms generated from a seeded sample of pages (see the module docstring).

    ``generator`` has ``generate(prompts, max_tokens=, temperature=, system=)``;
    ``encode`` embeds names (unit vectors). ``out`` is ``generated.jsonl`` (appended,
    resumed: pages already there are not asked again).
    """
    from tqdm.auto import tqdm

    rows = list(range(len(documents)))
    random.Random(seed).shuffle(rows)
    rows = sorted(rows[:sample_pages])
    done: dict[str, list[str]] = {}
    if out.is_file():
        for row in _read_lines(out):
            if isinstance(row.get("page"), str) and isinstance(row.get("categories"), list):
                done[row["page"]] = [str(c) for c in row["categories"]]
    todo = [r for r in rows if documents[r].id not in done]
    with (
        out.open("a", encoding="utf-8") as handle,
        tqdm(
            total=len(rows),
            initial=len(rows) - len(todo),
            desc="atoms",
            unit="page",
            disable=not progress,
        ) as bar,
    ):
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            prompts = [
                CATEGORY_PROMPT.format(page=documents[r].content[:max_chars].strip(), n=per_page)
                for r in chunk
            ]
            answers = generator.generate(
                prompts, max_tokens=16 * per_page, temperature=0.0, system=CATEGORY_SYSTEM
            )
            for r, answer in zip(chunk, answers, strict=True):
                title = atom_key(getattr(documents[r], "title", "") or "")
                # A page is not its own category (small models repeat the title).
                names = [n for n in parse_categories(answer, per_page) if atom_key(n) != title]
                done[documents[r].id] = names
                handle.write(
                    json.dumps(
                        {"page": documents[r].id, "answer": answer, "categories": names},
                        ensure_ascii=False,
                    )
                    + "\n"
                )
            handle.flush()
            bar.update(len(chunk))
    counts: Counter[str] = Counter()
    spelling: dict[str, str] = {}
    for r in rows:
        for name in done.get(documents[r].id, []):
            counts[spelling.setdefault(atom_key(name), name)] += 1
    names = sorted(counts)
    if not names:
        raise AdaptError(
            f"the teacher named no usable category for {len(rows)} pages (see {out}); use a "
            f"stronger --verifier model or pass --queries"
        )
    vectors = np.asarray(encode(names), dtype=np.float32)
    mapping = merge_names(names, counts, vectors, merge_threshold)
    groups: list[list[str]] = []
    for r in rows:
        group = list(
            dict.fromkeys(mapping[spelling[atom_key(n)]] for n in done.get(documents[r].id, []))
        )
        if group and group not in groups:
            groups.append(group)
    atoms = sorted(set(mapping.values()), key=lambda a: (-counts[a], a))
    return {
        "source": "pages",
        "how": f"the teacher named up to {per_page} categories for each of {len(rows)} "
        f"pages sampled at random (seed {seed}); {len(names)} distinct names merged into "
        f"{len(atoms)} atoms at embedding cosine >= {merge_threshold}; the categories of "
        f"one page form a group",
        "pages": len(rows),
        "names": len(names),
        "atoms": atoms,
        "groups": groups,
    }


def _read_lines(path: Path) -> list[dict[str, Any]]:
    """Rows of an appended JSONL file; a torn last line (a kill mid-write) is cut off."""
    data = path.read_bytes()
    complete = data.rfind(b"\n") + 1
    if complete < len(data):
        with path.open("r+b") as handle:
            handle.truncate(complete)
    out = []
    for line in data[:complete].decode("utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            out.append(row)
    return out
