"""RAG dataset loaders: the real shared files, hand-made files in each format, bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.evals.rag.datasets import (
    DATASETS,
    RagExample,
    default_path,
    load_rag_dataset,
    strip_citations,
)


def _eli5_record(q_id: str, title: str, answers: list[str]) -> dict:
    return {
        "q_id": q_id,
        "title": title,
        "selftext": "",
        "category": "Engineering",
        "answers": {"a_id": [f"{q_id}a{i}" for i in range(len(answers))], "text": answers},
    }


# --------------------------------------------------------------------------- real files
def test_every_default_file_loads(shared_data: Path) -> None:
    for name in DATASETS:
        path = default_path(name)
        assert path.is_relative_to(shared_data)
        examples = load_rag_dataset(name, limit=3)
        assert 1 <= len(examples) <= 3, name
        for ex in examples:
            assert isinstance(ex, RagExample)
            assert ex.question.strip(), name
            assert ex.metadata["dataset"] == name
            assert ex.metadata["source_path"] == str(path)
            assert all(isinstance(g, tuple) for g in ex.short_answers)


def test_eli5_real_file(shared_data: Path) -> None:
    examples = load_rag_dataset("eli5")
    assert len(examples) == 5411  # the README's count for ELI5-Category test
    first = examples[0]
    assert first.id == "5lcm18"
    assert first.question == "Why do old games running on new hardware still have technical issues?"
    assert len(first.answers) == 2 and first.answers[0].startswith("The XBox is emulating")
    assert first.short_answers == () and first.documents == ()
    assert len({ex.id for ex in examples}) == len(examples)


def test_limit_takes_the_first_in_file_order(shared_data: Path) -> None:
    full = load_rag_dataset("nq")
    assert len(full) == 3610
    assert load_rag_dataset("nq", limit=5) == full[:5]
    assert load_rag_dataset("nq", limit=0) == []
    first = full[0]
    assert first.question == "when was the last time anyone was on the moon"
    assert first.short_answers == (("14 December 1972 UTC", "December 1972"),)
    with pytest.raises(ValueError, match="limit"):
        load_rag_dataset("nq", limit=-1)


def test_asqa_sample_structure(shared_data: Path) -> None:
    sample = shared_data / "rag/asqa/asqa_sample3.json"
    dev = load_rag_dataset("asqa", sample)  # dev split by default
    assert [ex.id for ex in dev] == ["-7013890438520559398"]
    ex = dev[0]
    assert ex.question == "Who has the highest goals in world football?"
    assert ex.short_answers == (("Daei", "Ali Daei"), ("Sinclair", "Christine Sinclair"))
    assert ex.answers[0].startswith("The players with the highest all-time goals")
    knowledge = [d for d in ex.documents if d.metadata["kind"] == "knowledge"]
    assert len(knowledge) == 1 and knowledge[0].title == "Christine Sinclair"
    contexts = [d for d in ex.documents if d.metadata["kind"] == "qa_context"]
    assert [d.title for d in contexts] == [
        "List of women's footballers with 100 or more international goals ..."
    ]
    assert ex.metadata["split"] == "dev"
    every = load_rag_dataset("asqa", sample, split="all")
    assert len(every) == 3 and every[0] == ex
    # a knowledge entry whose content is null ships no document
    bunkd = next(e for e in every if e.id == "-5742327688291876861")
    assert bunkd.documents == ()
    with pytest.raises(ValueError, match="no split 'test'"):
        load_rag_dataset("asqa", sample, split="test")


def test_asqa_dev500_lines(shared_data: Path) -> None:
    """The 500 real dev questions, one per line: counts read independently of the loader."""
    path = shared_data / "rag/asqa/asqa_dev500.jsonl"
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    examples = load_rag_dataset("asqa", path)
    assert [ex.id for ex in examples] == [r["sample_id"] for r in raw]
    assert default_path("asqa") == path  # no ASQA.json here: the dev file is the default
    assert sum(len(ex.short_answers) for ex in examples) == sum(len(r["qa_pairs"]) for r in raw)
    assert all(len(ex.answers) == 2 for ex in examples)
    contexts = {
        (p["wikipage"] or "", p["context"].strip())
        for r in raw
        for p in r["qa_pairs"]
        if p["context"].strip() and p["context"] != "No context provided"
    }
    shipped = {
        (d.title, d.text)
        for ex in examples
        for d in ex.documents
        if d.metadata["kind"] == "qa_context"
    }
    assert shipped == contexts
    first = examples[0]
    assert first.short_answers[1] == ("Bican", "Josef Bican")
    assert {d.title for d in first.documents} >= {"Christine Sinclair", "Ali Daei"}
    assert all(d.metadata["source_id"] == first.id for d in first.documents)
    with pytest.raises(ValueError, match="a line-based ASQA file holds one split"):
        load_rag_dataset("asqa", path, split="dev")


def test_asqa_lines_skip_missing_context_and_bad_ids(tmp_path: Path) -> None:
    record = {
        "sample_id": "s1",
        "ambiguous_question": "Q?",
        "qa_pairs": [
            {"question": "a?", "short_answers": ["x"], "context": "No context provided"},
            {"question": "b?", "short_answers": ["y"], "context": "Para.", "wikipage": "P"},
        ],
        "annotations": [{"long_answer": "L", "knowledge": [{"content": "Para.", "wikipage": "P"}]}],
    }
    path = tmp_path / "asqa.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (ex,) = load_rag_dataset("asqa", path)
    # the paragraph quoted as a qa context and as knowledge is one document
    assert [(d.title, d.text, d.metadata["kind"]) for d in ex.documents] == [
        ("P", "Para.", "qa_context")
    ]
    record["sample_id"] = None
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="sample_id"):
        load_rag_dataset("asqa", path)


def test_alce_demo_files(shared_data: Path) -> None:
    asqa = load_rag_dataset("alce-asqa")
    assert len(asqa) == 4
    assert all(len(ex.documents) == 5 for ex in asqa)
    assert all("[1]" not in a and "[3]" not in a for ex in asqa for a in ex.answers)
    assert "[3]" in asqa[0].metadata["answer_with_citations"]
    qampari = load_rag_dataset("alce-qampari")[0]
    assert qampari.question == "Which books were written by Nevil Shute?"
    assert qampari.short_answers[:3] == (
        ("Marazan",),
        ("Stephen Morris",),
        ("Beyond the Black Stump",),
    )
    assert qampari.short_answers[-1] == ("On the Beach",)
    ids = [d.id for ex in asqa for d in ex.documents]
    assert len(ids) == len(set(ids))


def test_quest_sample(shared_data: Path) -> None:
    examples = load_rag_dataset("quest")
    assert len(examples) == 20
    ex = examples[0]
    assert ex.question == "Stoloniferous plants or crops originating from Bolivia"
    gold = set(ex.metadata["gold_docs"])
    assert len(ex.short_answers) == len(gold) == 20
    assert {g[0] for g in ex.short_answers} == gold
    assert ex.metadata["template"] == "_ or _"


# --------------------------------------------------------------------------- hand-made files
def test_eli5_json_lines_and_array_agree(tmp_path: Path) -> None:
    records = [_eli5_record("q1", "Why?", ["Because.", "  "]), _eli5_record("q2", "How?", ["So."])]
    array = tmp_path / "a.json.gz"
    with gzip.open(array, "wt", encoding="utf-8") as handle:
        json.dump(records, handle)
    lines = tmp_path / "b.jsonl"
    lines.write_text("\n".join(json.dumps(r) for r in records) + "\n\n", encoding="utf-8")
    from_array = load_rag_dataset("eli5", array)
    from_lines = load_rag_dataset("eli5", lines)
    assert [(e.id, e.question, e.answers) for e in from_array] == [
        ("q1", "Why?", ("Because.",)),  # blank answers are dropped
        ("q2", "How?", ("So.",)),
    ]
    assert [(e.id, e.answers) for e in from_lines] == [(e.id, e.answers) for e in from_array]


def test_malformed_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "nq.jsonl"
    path.write_text('{"question": "q", "answer": ["a"]}\n{"question": oops}\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError) as info:
        load_rag_dataset("nq", path)
    assert info.value.line == 2 and f"{path}:2" in str(info.value)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"answer": ["a"]}', "'question'"),
        ('{"question": "q", "answer": "a"}', "'answer'"),
        ('{"question": "q", "answer": []}', "empty"),
        ('["q", "a"]', "JSON object"),
    ],
)
def test_bad_nq_records(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "nq.jsonl"
    path.write_text('{"question": "ok", "answer": ["x"]}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=problem) as info:
        load_rag_dataset("nq", path)
    assert info.value.line == 3


def test_bad_eli5_record_in_array_names_record(tmp_path: Path) -> None:
    bad = _eli5_record("q2", "How?", ["So."])
    bad["answers"]["a_id"] = ["only-one", "two"]
    path = tmp_path / "e.json"
    path.write_text(json.dumps([_eli5_record("q1", "Why?", ["B."]), bad]), encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="record 1: 2 answer ids but 1 answer texts"):
        load_rag_dataset("eli5", path)


def test_duplicate_ids_rejected(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    rec = json.dumps(_eli5_record("q1", "Why?", ["B."]))
    path.write_text(rec + "\n" + rec + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="duplicate example id 'q1'"):
        load_rag_dataset("eli5", path)


def test_asqa_official_list_wikipages_and_bad_pairs(tmp_path: Path) -> None:
    record = {
        "ambiguous_question": "Q?",
        "qa_pairs": [{"question": "Q1?", "short_answers": ["x"]}],
        "wikipages": [{"title": "Page", "url": "u"}],
        "annotations": [
            {"long_answer": "L1", "knowledge": [{"content": "K", "wikipage": "W"}]},
            {"long_answer": "L2", "knowledge": [{"content": "K", "wikipage": "W"}]},
        ],
    }
    path = tmp_path / "ASQA.json"
    path.write_text(json.dumps({"train": {"1": record}, "dev": {"2": record}}), encoding="utf-8")
    (ex,) = load_rag_dataset("asqa", path)
    assert ex.id == "2" and ex.answers == ("L1", "L2")
    assert ex.metadata["wikipages"] == ("Page",)
    assert len(ex.documents) == 1  # the same knowledge passage twice is one document
    record["qa_pairs"][0]["short_answers"] = "x"
    path.write_text(json.dumps({"dev": {"2": record}}), encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"dev/2: qa_pairs\[0\].short_answers"):
        load_rag_dataset("asqa", path)


def test_alce_eval_file_format(tmp_path: Path) -> None:
    records = [
        {
            "id": "7",
            "question": "Q?",
            "answer": "Long [1].",
            "qa_pairs": [{"short_answers": ["a", "b"]}, {"short_answers": ["c"]}],
            "annotations": [{"long_answer": "Annotated."}],
            "docs": [{"id": "123", "title": "T", "text": "passage"}],
        },
        {"question": "List?", "answers": [["x", "X"], ["y"]], "docs": []},
    ]
    path = tmp_path / "eval.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    first, second = load_rag_dataset("alce-qampari", path)
    assert first.id == "7" and first.answers == ("Annotated.",)
    assert first.short_answers == (("a", "b"), ("c",))
    assert first.documents[0].metadata["passage_id"] == "123"
    assert second.short_answers == (("x", "X"), ("y",)) and second.answers == ("x, y",)


def test_unknown_name_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown RAG dataset 'squad'"):
        load_rag_dataset("squad")
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_rag_dataset("nq", tmp_path / "absent.jsonl")


def test_default_path_prefers_official_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGIC_RAG_DATA", str(tmp_path))
    assert default_path("asqa") == tmp_path / "rag/asqa/ASQA.json"  # none exists
    sample = tmp_path / "rag/asqa/asqa_sample3.json"
    sample.parent.mkdir(parents=True)
    sample.write_text("{}", encoding="utf-8")
    assert default_path("asqa") == sample
    (tmp_path / "rag/asqa/ASQA.json").write_text("{}", encoding="utf-8")
    assert default_path("asqa") == tmp_path / "rag/asqa/ASQA.json"


def test_strip_citations() -> None:
    assert strip_citations("A [1][2], B [3, 4]. C") == "A, B. C"
    assert strip_citations("no citations") == "no citations"
