"""Real QUEST-attr queries as an experiment folder: split by atom, atom sets from the data.

Why a builder of its own: the fine-tuning experiments read a folder with ``train.jsonl``,
``test.jsonl``, ``documents.jsonl`` and ``atoms.jsonl`` (the generated world and WordNet
write one). For real QUEST the atoms' member sets are not given; they are read off the
queries (:func:`logic_rag.finetune.verifier.pairs.atom_memberships`: every gold page of
``A that are also B`` is in A and in B, of ``A that are not B`` in A and known out of B,
union pages by their attributions). Only an atom that is itself a whole ``_`` query has its
*complete* set (that query's gold set); those rows carry ``"split": "train"`` and are the
only ones Quest+Variants composes (its gold sets must be exact). Every other atom's set is
partial, marked ``"complete": false`` and a split of its own (``train-partial`` / ``test``),
used for hard negatives, LORE distractors and the violation metric, never for variants.
Members of *negated* atoms are also inferred from the gold sets (see
:func:`_infer_negated_members`); each row counts them in ``inferred``.

The split is :func:`logic_rag.evals.quest.split.split_by_atom` (seed 0, half to dev), the
same one ``runs/split`` of the retrieval experiments uses, so dev atoms are never seen in
training; ``test.jsonl`` holds that dev part. ``documents.jsonl`` is a symbolic link to the
shared corpus (the data is read in place, never copied).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_json, atomic_write_jsonl

__all__ = ["build_quest_set", "quest_atom_sets", "quest_source"]

MANIFEST = "quest.json"
#: Bumped when what the builder derives changes, so an old folder is rebuilt.
BUILDER_VERSION = 2


def quest_source() -> Path:
    """``$LOGIC_RAG_DATA/quest/attr`` (default ``../shared/data``); a clear error if absent."""
    from logic_rag.paths import shared_data_dir

    root = shared_data_dir() / "quest" / "attr"
    for name in ("train_dev.jsonl", "documents.jsonl"):
        if not (root / name).is_file():
            raise FileNotFoundError(
                f"{root / name} is missing; set LOGIC_RAG_DATA to the shared data folder "
                "(the one holding quest/attr/)"
            )
    return root


def quest_atom_sets(
    records: Sequence[Mapping[str, Any]], titles: set[str], split: str
) -> list[dict[str, Any]]:
    """``atoms.jsonl`` rows for the atoms of ``records`` (see the module docstring)."""
    from logic_rag.finetune.verifier.pairs import atom_memberships

    members, _, _ = atom_memberships(records, titles)
    members = {a: set(m) for a, m in members.items()}
    inferred = _infer_negated_members(records, members, titles)
    for atom, pages in inferred.items():
        members.setdefault(atom, set()).update(pages)
    complete: dict[str, set[str]] = {}
    domains: dict[str, str] = {}
    for record in records:
        meta = record.get("metadata") or {}
        atoms = _marked(record.get("original_query") or "")
        for atom in atoms:
            domains.setdefault(atom, str(meta.get("domain", "")))
        if meta.get("template") == "_" and len(atoms) == 1:
            gold = {t for t in record.get("docs", []) if t in titles}
            complete[atoms[0]] = gold | members.get(atoms[0], set())
    rows = []
    for atom in sorted(set(members) | set(complete)):
        exact = atom in complete
        docs = complete[atom] if exact else members[atom]
        rows.append(
            {
                "atom": atom,
                "domain": domains.get(atom, ""),
                "docs": sorted(docs),
                "complete": exact,
                "inferred": len(inferred.get(atom, set()) - complete.get(atom, set())),
                "split": split if exact or split != "train" else "train-partial",
            }
        )
    return rows


_NEGATION = {"_ that are not _": 1, "_ that are also _ but not _": 2}


def _infer_negated_members(
    records: Sequence[Mapping[str, Any]], members: Mapping[str, set[str]], titles: set[str]
) -> dict[str, set[str]]:
    """Members of negated atoms that the gold sets imply: for ``A that are not B``, a page
    known to be in A (from another query) but not gold for ``A ∖ B`` is in B, assuming the
    gold set is complete (QUEST's come from Wikipedia categories; a few are known to miss
    pages, so read these as near-certain, not certain). Likewise for ``A and B but not C``
    with the pages known in both A and B. This is what lets the negation violation and the
    pairwise order be measured on real QUEST at all."""
    out: dict[str, set[str]] = {}
    for record in records:
        template = (record.get("metadata") or {}).get("template")
        atoms = _marked(record.get("original_query") or "")
        n_pos = _NEGATION.get(str(template))
        if n_pos is None or len(atoms) != n_pos + 1:
            continue
        gold = {t for t in record.get("docs", []) if t in titles}
        inside = set.intersection(*(members.get(a, set()) for a in atoms[:n_pos]))
        implied = inside - gold
        if implied:
            out.setdefault(atoms[n_pos], set()).update(implied)
    return out


def _marked(text: str) -> list[str]:
    from logic_rag.evals.quest.data import marked_atoms

    return [" ".join(a.split()) for a in marked_atoms(text)]


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def build_quest_set(
    folder: str | os.PathLike[str],
    *,
    source: str | os.PathLike[str] | None = None,
    seed: int = 0,
    dev_share: float = 0.5,
) -> Path:
    """Write the experiment folder (idempotent: kept when its manifest matches the source)."""
    from logic_rag.evals.quest.split import read_records, split_by_atom
    from logic_rag.finetune.data.examples import load_documents_map

    src = Path(source) if source is not None else quest_source()
    queries, documents = src / "train_dev.jsonl", src / "documents.jsonl"
    out = Path(folder)
    wanted = {
        "source": str(src.resolve()),
        "queries_sha256": _sha256(queries),
        "documents_sha256": _sha256(documents),
        "seed": seed,
        "dev_share": dev_share,
        "builder_version": BUILDER_VERSION,
    }
    manifest = out / MANIFEST
    if manifest.is_file():
        import json

        if {k: v for k, v in json.loads(manifest.read_text()).items() if k in wanted} == wanted:
            return out
    out.mkdir(parents=True, exist_ok=True)
    titles = set(load_documents_map(documents))
    split = split_by_atom(read_records(queries), dev_share=dev_share, seed=seed)
    atomic_write_jsonl(out / "train.jsonl", split.train)
    atomic_write_jsonl(out / "test.jsonl", split.dev)
    rows = quest_atom_sets(split.train, titles, "train") + quest_atom_sets(
        split.dev, titles, "test"
    )
    atomic_write_jsonl(out / "atoms.jsonl", rows)
    link = out / "documents.jsonl"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(documents.resolve())
    summary = split.summary(seed, dev_share)
    summary["atoms"] = {
        "train_complete": sum(r["complete"] for r in rows if r["split"] == "train"),
        "train_partial": sum(r["split"] == "train-partial" for r in rows),
        "test": sum(r["split"] == "test" for r in rows),
    }
    atomic_write_json(manifest, {**wanted, **summary})
    return out
