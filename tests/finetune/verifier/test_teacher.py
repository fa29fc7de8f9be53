"""Teacher scores: which pairs are scored (against brute force), balance, resume, bad files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.finetune.verifier.teacher import (
    TeacherError,
    read_teacher_examples,
    score_teacher_pairs,
    teacher_pairs,
)
from logic_rag.query.algebra import positive_atoms
from logic_rag.verifiers.base import PairVerifier

DOCS = {"A": "page a", "B": "page b", "C": "page c", "D": "page d"}


def _write(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


# ------------------------------------------------------------------ reading teacher files


def test_balance_keeps_every_member_and_ratio_times_as_many_others(tmp_path):
    rows = [
        {"atom": "x", "title": t, "score": s}
        for t, s in zip("ABCD", (0.9, 0.1, 0.2, 0.3), strict=True)
    ]
    path = _write(tmp_path / "t.jsonl", rows)
    one = read_teacher_examples(path, DOCS, ratio=1.0, seed=0)
    assert [e for e in one if e[2] >= 0.5] == [("x", "page a", 0.9)]
    assert len(one) == 2 and one[1] in {
        ("x", DOCS[t], s) for t, s in zip("BCD", (0.1, 0.2, 0.3), strict=True)
    }
    assert read_teacher_examples(path, DOCS, ratio=1.0, seed=0) == one  # seeded
    assert len(read_teacher_examples(path, DOCS, ratio=2.0)) == 3
    assert len(read_teacher_examples(path, DOCS, ratio=0.0)) == 4  # 0 keeps every pair


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"atom": "", "title": "A", "score": 0.5}', "non-empty"),
        ('{"atom": "x", "title": 3, "score": 0.5}', "title"),
        ('{"atom": "x", "title": "A", "score": 1.5}', r"\[0, 1\]"),
        ('{"atom": "x", "title": "A", "score": true}', r"\[0, 1\]"),
        ('{"atom": "x", "title": "Z", "score": 0.5}', "another corpus"),
    ],
)
def test_bad_lines_name_the_file_and_line(tmp_path, line, message):
    path = _write(tmp_path / "t.jsonl", [{"atom": "x", "title": "A", "score": 0.7}, line])
    with pytest.raises(CorpusFormatError, match=message) as info:
        read_teacher_examples(path, DOCS)
    assert "t.jsonl" in str(info.value) and ":2" in str(info.value)


def test_an_empty_teacher_file_is_an_error(tmp_path):
    with pytest.raises(CorpusFormatError, match="no teacher scores"):
        read_teacher_examples(_write(tmp_path / "t.jsonl", []), DOCS)


# ------------------------------------------------------------------ scoring teacher pairs


@dataclass(frozen=True, eq=False)
class _Recorder(PairVerifier):
    """Scores a pair by word overlap; records every scored pair; can fail after n calls."""

    tag: str = "v1"
    calls: list = field(default_factory=list, compare=False, repr=False)
    fail_after: int | None = None

    def fingerprint(self) -> str:
        return self.tag

    def score_texts(self, pairs):
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt("interrupted")
        self.calls.append(list(pairs))
        return np.array(
            [len(set(a.lower().split()) & set(t.lower().split())) - 1.0 for a, t in pairs]
        )


QUERIES = [
    "novels that are not science fiction novels",
    "italian films or french films",
    "italian films or german films",  # shares an atom with the query above
    "westerns",
]


def _records():
    return [{"query": q} for q in QUERIES]


def test_pairs_are_each_positive_atom_against_the_brute_force_candidates(
    small_logic_retriever,
):
    lr = small_logic_retriever
    enc, docs = lr.dense.encoder, lr.documents
    doc_vecs = enc.encode_documents([d.content for d in docs])

    def top(text, n):
        sims = doc_vecs @ enc.encode_queries([text])[0]
        return set(np.argsort(-sims, kind="stable")[:n].tolist())

    expected = {"positive": [], "all": []}
    for plan in lr.plan(QUERIES):
        rows = top(plan.text, 5)
        if plan.has_logic:
            for atom in positive_atoms(plan.logic):
                rows |= top(atom.text, 3)
        expected["positive"] += [(a.text, rows) for a in positive_atoms(plan.logic)]
        expected["all"] += [(a.text, rows) for a in plan.atoms]
    for atoms, want in expected.items():
        got = teacher_pairs(lr, QUERIES, candidates=5, atom_candidates=3, atoms=atoms)
        assert [(a, set(r)) for a, r in got] == want
    negated = "science fiction novels"
    assert negated in {a for a, _ in expected["all"]} - {a for a, _ in expected["positive"]}


def test_depths_default_to_the_retrievers_explicit_verify_settings(small_logic_retriever):
    """Settings given to the retriever set the depths (the deprecated ``config`` gave the
    defaults for them)."""
    from logic_rag.strategy_settings import VerifySettings

    lr = small_logic_retriever.with_settings(VerifySettings(candidates=5, atom_candidates=3))
    explicit = teacher_pairs(small_logic_retriever, QUERIES, candidates=5, atom_candidates=3)
    assert teacher_pairs(lr, QUERIES) == explicit
    assert teacher_pairs(small_logic_retriever, QUERIES) != explicit  # the defaults differ


def test_scores_every_pair_once_and_resumes_after_an_interruption(small_logic_retriever, tmp_path):
    lr = small_logic_retriever
    out = tmp_path / "teacher.jsonl"
    kw = {"chunk": 1, "progress": False, "candidates": 6, "atom_candidates": 2}
    titles = [d.title or d.id for d in lr.documents]
    expected = {
        (a, titles[r])
        for a, rows in teacher_pairs(lr, QUERIES, candidates=6, atom_candidates=2)
        for r in rows
    }

    first = _Recorder(fail_after=2)
    with pytest.raises(KeyboardInterrupt):
        score_teacher_pairs(lr, _records(), first, out, **kw)
    assert not out.exists()
    partial = out.with_name("teacher.jsonl.partial")
    saved = [json.loads(line) for line in partial.read_text().splitlines()]
    assert saved and len(saved) == sum(len(c) for c in first.calls)
    with partial.open("a") as handle:
        handle.write('{"atom": "torn')  # a write cut short by the kill

    # Another verifier: the saved scores are not its scores.
    with pytest.raises(TeacherError, match="other queries, documents or verifier"):
        score_teacher_pairs(lr, _records(), _Recorder(tag="v2"), out, **kw)

    second = _Recorder()
    assert score_teacher_pairs(lr, _records(), second, out, **kw) == out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    pairs = [(r["atom"], r["title"]) for r in rows]
    assert len(pairs) == len(set(pairs))  # each (atom, page) once, shared atoms included
    assert set(pairs) == expected
    rescored = {(a, t) for call in second.calls for a, t in call}
    assert len(rescored) == len(expected) - len(saved)  # only what was missing
    reference = _Recorder()
    by_title = {d.title or d.id: d.content for d in lr.documents}
    for r in rows:
        want = float(reference.verify_pairs([(r["atom"], by_title[r["title"]])])[0])
        assert r["score"] == pytest.approx(want)
    assert not partial.exists() and not out.with_name("teacher.jsonl.partial.json").exists()


def test_queries_must_not_be_empty(small_logic_retriever, tmp_path):
    with pytest.raises(TeacherError, match="non-empty 'query'"):
        score_teacher_pairs(small_logic_retriever, [{"query": " "}], _Recorder(), tmp_path / "t")


def test_positive_atoms_only_holds_for_every_chunk(small_logic_retriever, tmp_path):
    """atoms="positive" applies to every chunk, not only to the first one."""
    lr = small_logic_retriever
    kw = {"chunk": 1, "progress": False, "candidates": 3, "atom_candidates": 1}
    records = [{"query": q} for q in ["westerns", *QUERIES]]  # the negation comes 2nd
    out = score_teacher_pairs(
        lr, records, _Recorder(), tmp_path / "t.jsonl", atoms="positive", **kw
    )
    taught = {json.loads(line)["atom"] for line in out.read_text().splitlines()}
    positive = {a.text for plan in lr.plan(QUERIES) for a in positive_atoms(plan.logic)}
    assert taught and taught <= positive | {"westerns"}
    assert "science fiction novels" not in taught
