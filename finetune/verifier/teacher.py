"""Teacher scores: a slow verifier's verdicts, as soft labels for training a fast one.

Why: on QUEST-attr the Qwen yes/no verifier separates an atom's members from known
non-members far better than a cross-encoder trained on 136 queries' attributions, but it
costs ~1 s per (atom, page) on a CPU. Its verdicts on the training queries' candidates are
a much larger training signal than the attributions alone: a cross-encoder trained on
them (``logic-rag finetune verifier --teacher FILE``) checks a constraint in ~20 ms.

:func:`score_teacher_pairs` writes, for every training query, the pairs the ``verify``
strategy's verifiers check: each atom of the query's decomposition (``atoms="positive"``:
only those the query asks for, as the second verifier re-checks them) against each candidate (``DenseCandidates(candidates) >> AtomCandidates(atom_candidates)``,
the strategy's defaults), scored by any verifier spec (``llm:vllm:FOLDER`` on a GPU makes
this minutes). Rows: ``{"atom": ..., "title": ..., "score": P(page satisfies atom)}``.

The file is written as ``OUT.partial`` a chunk of queries at a time and renamed to ``OUT``
when complete; an interrupted run resumes from the partial file, but only when the
queries, the documents and the verifier are unchanged (``OUT.partial.json``).

``python -m logic_rag.finetune.verifier.teacher --index DIR --train train.jsonl
--verifier llm:vllm:/path/to/qwen --out teacher.jsonl``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from logic_rag.errors import CorpusFormatError, LogicRagError

__all__ = ["read_teacher_examples", "teacher_pairs", "score_teacher_pairs", "main"]


class TeacherError(LogicRagError, ValueError):
    """A teacher file does not belong to these inputs or cannot be written."""


def read_teacher_examples(
    path: str | Path, documents: Mapping[str, str], *, ratio: float = 1.0, seed: int = 0
) -> list[tuple[str, str, float]]:
    """``(atom, page text, score)`` training examples from a teacher JSONL file.

    Every pair the teacher calls a member (score >= 0.5) is kept, and ``ratio`` times as
    many of the others, drawn at random with ``seed`` (``ratio`` 0 keeps every pair): most
    candidates of a query are clear non-members, and without the balance they dominate
    the loss. Bad lines raise ``CorpusFormatError`` with the file and line; a title that
    is not in ``documents`` too (the teacher scored another corpus).
    """
    from logic_rag.corpus import read_jsonl

    path = Path(path)
    members: list[tuple[str, str, float]] = []
    others: list[tuple[str, str, float]] = []
    for lineno, row in read_jsonl(path):
        atom, title, score = row.get("atom"), row.get("title"), row.get("score")
        if not isinstance(atom, str) or not atom.strip():
            raise CorpusFormatError(path, lineno, '"atom" must be a non-empty string')
        if not isinstance(title, str):
            raise CorpusFormatError(path, lineno, '"title" must be a string')
        if isinstance(score, bool) or not isinstance(score, int | float) or not 0.0 <= score <= 1.0:
            raise CorpusFormatError(path, lineno, '"score" must be a number in [0, 1]')
        if title not in documents:
            raise CorpusFormatError(
                path, lineno, f"title {title!r} is not in --docs (a teacher of another corpus?)"
            )
        (members if score >= 0.5 else others).append((atom, documents[title], float(score)))
    if not members and not others:
        raise CorpusFormatError(path, None, "the file holds no teacher scores")
    if ratio > 0:
        random.Random(seed).shuffle(others)
        others = others[: round(len(members) * ratio)]
    return members + others


def teacher_pairs(
    retriever: Any,
    queries: Sequence[str],
    *,
    candidates: int | None = None,
    atom_candidates: int | None = None,
    atoms: Literal["all", "positive"] = "all",
) -> list[tuple[str, list[int]]]:
    """``(atom, candidate rows)`` for each atom of each query, as ``verify`` sees them.

    Candidate depths default to the retriever's ``verify`` settings (``candidates``,
    ``atom_candidates``). ``atoms="positive"`` leaves out the negated atoms; the
    verdicts on them still teach what lies outside an atom.
    """
    from logic_rag.candidates.atoms import AtomCandidates
    from logic_rag.candidates.dense import DenseCandidates
    from logic_rag.pipeline.context import SearchContext
    from logic_rag.pipeline.state import QueryState, SearchBatch
    from logic_rag.query.algebra import positive_atoms

    depth, per_atom = _verify_depths(retriever, candidates, atom_candidates)
    stage = DenseCandidates(depth)
    if per_atom:
        stage = stage >> AtomCandidates(per_atom)
    plans = retriever.plan(list(queries), None, decompose=True)
    batch = SearchBatch([QueryState(p) for p in plans], depth)
    stage(batch, SearchContext(retriever.resources))
    out: list[tuple[str, list[int]]] = []
    for state in batch:
        rows = [int(r) for r in state.candidates.tolist()]
        chosen = positive_atoms(state.plan.logic) if atoms == "positive" else state.plan.atoms
        for atom in dict.fromkeys(chosen):
            out.append((atom.text, rows))
    return out


def _verify_depths(
    retriever: Any, candidates: int | None, atom_candidates: int | None
) -> tuple[int, int]:
    """The whole-query and per-atom candidate depths: the given ones, else those of the
    retriever's ``verify`` settings. Read through ``settings_for`` (not the deprecated
    ``config``), which holds settings given explicitly; ``config`` would give the
    defaults for them."""
    verify = retriever.settings_for("verify")
    return (
        verify.candidates if candidates is None else candidates,
        verify.atom_candidates if atom_candidates is None else atom_candidates,
    )


def _documents_digest(resources: Any) -> str:
    """One hash over the documents' ids and content hashes (the verifier cache's own)."""
    digest = hashlib.sha256()
    for row, doc in enumerate(resources.documents):
        digest.update(f"{doc.id}\x00{resources.doc_hash(row)}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _read_partial(path: Path) -> Iterator[tuple[str, str]]:
    """Pairs already in a partial file. A torn last line (the run was killed mid-write) is
    cut off first, so that the lines appended next start on a line of their own."""
    data = path.read_bytes()
    complete = data.rfind(b"\n") + 1
    if complete < len(data):
        with path.open("r+b") as handle:
            handle.truncate(complete)
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                row = json.loads(line)
                yield row["atom"], row["title"]
            except (json.JSONDecodeError, KeyError, TypeError):
                continue


def score_teacher_pairs(
    retriever: Any,
    records: Sequence[Mapping[str, Any]],
    verifier: Any,
    out: str | Path,
    *,
    chunk: int = 8,
    resume: bool = True,
    progress: bool = True,
    candidates: int | None = None,
    atom_candidates: int | None = None,
    atoms: Literal["all", "positive"] = "all",
) -> Path:
    """Score every training query's (positive atom, candidate) pairs; see the module docstring.

    ``records`` are QUEST rows (their ``query`` is decomposed as a search would). Each
    (atom, page) is scored once, however many queries share it. Returns ``out``.
    """
    import numpy as np
    from tqdm.auto import tqdm

    from logic_rag.atomic import atomic_write_json
    from logic_rag.pipeline.context import SearchContext
    from logic_rag.verifiers.base import CheckRequest

    out = Path(out)
    partial = out.with_name(out.name + ".partial")
    meta_path = out.with_name(out.name + ".partial.json")
    queries = [str(r.get("query", "")) for r in records]
    if not queries or not all(q.strip() for q in queries):
        raise TeacherError("every training record needs a non-empty 'query'")
    depth, per_atom = _verify_depths(retriever, candidates, atom_candidates)
    depths = {"candidates": depth, "atom_candidates": per_atom}
    meta = {
        "queries": hashlib.sha256("\n".join(queries).encode("utf-8")).hexdigest(),
        "documents": _documents_digest(retriever.resources),
        "verifier": verifier.fingerprint() if hasattr(verifier, "fingerprint") else repr(verifier),
        "atoms": atoms,
        **depths,
    }
    done: set[tuple[str, str]] = set()
    if partial.exists() and resume:
        previous = (
            json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else None
        )
        if previous != meta:
            raise TeacherError(
                f"{partial} was written for other queries, documents or verifier; delete it "
                f"or pass --no-resume"
            )
        done = set(_read_partial(partial))
    elif partial.exists():
        partial.unlink()
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(meta_path, meta)

    titles = [d.title or d.id for d in retriever.documents]
    ctx = SearchContext(retriever.resources)
    with partial.open("a", encoding="utf-8") as handle:
        bar = tqdm(
            range(0, len(queries), chunk), desc="teacher", unit="chunk", disable=not progress
        )
        for start in bar:
            wanted: dict[str, list[int]] = {}
            for atom, rows in teacher_pairs(
                retriever, queries[start : start + chunk], atoms=atoms, **depths
            ):
                for row in rows:
                    if (atom, titles[row]) not in done:
                        done.add((atom, titles[row]))  # written below, before the next chunk
                        wanted.setdefault(atom, []).append(row)
            if not wanted:
                continue
            texts = sorted(wanted)
            verifier.prepare(texts, ctx)
            ctx.run_wanted()
            requests = [CheckRequest((a,), np.array(wanted[a], np.int64)) for a in texts]
            for atom, checked in zip(texts, verifier.check(requests, ctx), strict=True):
                for row, p in zip(wanted[atom], checked.probs[0].tolist(), strict=True):
                    if not math.isfinite(p):
                        raise TeacherError(f"the verifier gave {p} for ({atom!r}, {titles[row]!r})")
                    handle.write(
                        json.dumps({"atom": atom, "title": titles[row], "score": p}) + "\n"
                    )
            handle.flush()
    partial.replace(out)
    meta_path.unlink(missing_ok=True)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from logic_rag.evals.quest.split import read_records
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.verifiers.spec import make_verifier

    parser = argparse.ArgumentParser(
        prog="python -m logic_rag.finetune.verifier.teacher",
        description="Score the training queries' (atom, candidate) pairs with a slow verifier, "
        "as soft labels for `logic-rag finetune verifier --teacher`.",
    )
    parser.add_argument("--index", required=True, help="index folder over the QUEST documents")
    parser.add_argument("--train", required=True, help="QUEST JSONL: your training split")
    parser.add_argument(
        "--verifier", required=True, help="verifier spec, e.g. llm:vllm:/path/to/qwen"
    )
    parser.add_argument("--out", required=True, help="teacher JSONL to write")
    parser.add_argument(
        "--atoms",
        choices=("all", "positive"),
        default="all",
        help="score every atom against the candidates, or only those the query asks for",
    )
    parser.add_argument("--chunk", type=int, default=8, help="queries scored per batch")
    parser.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args(argv)
    if args.chunk < 1:
        parser.error("--chunk must be >= 1")
    retriever = LogicRetriever.load(args.index)
    path = score_teacher_pairs(
        retriever,
        read_records(args.train),
        make_verifier(args.verifier),
        args.out,
        chunk=args.chunk,
        resume=args.resume,
        atoms=args.atoms,
    )
    print(f"saved {path.resolve()}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
