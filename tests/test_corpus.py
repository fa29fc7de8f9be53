"""Corpus loaders: formats, and malformed input reported with file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_rag.corpus import detect_format, iter_documents, load_beir, load_documents
from logic_rag.errors import CorpusFormatError


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_quest_documents_use_the_title_as_id(tmp_path):
    path = _write(
        tmp_path / "documents.jsonl",
        [
            json.dumps({"title": "Potato", "text": "A tuber."}),
            json.dumps({"title": "Ullucus", "text": "Andean."}),
        ],
    )
    assert detect_format(path) == "quest"
    docs = load_documents(path)
    assert [d.id for d in docs] == ["Potato", "Ullucus"]
    assert docs[0].content == "Potato\nA tuber."


def test_beir_corpus(shared_data):
    data = load_beir(shared_data / "beir" / "msmarco")
    assert len(data.corpus) == 5000
    assert len(data.queries) == 50
    assert len(data.qrels) == 43
    ids = {d.id for d in data.corpus}
    assert all(doc in ids for rel in data.qrels.values() for doc in rel)


def test_plain_jsonl_and_text(tmp_path):
    jsonl = _write(
        tmp_path / "c.jsonl",
        [
            json.dumps({"text": "alpha"}),
            "",
            json.dumps({"id": 7, "text": "beta", "metadata": {"k": 1}}),
        ],
    )
    docs = load_documents(jsonl)
    assert [(d.id, d.text) for d in docs] == [("1", "alpha"), ("7", "beta")]
    assert docs[1].metadata == {"k": 1}
    text = _write(tmp_path / "c.txt", ["first line", "", "third line"])
    assert [(d.id, d.text) for d in iter_documents(text)] == [
        ("1", "first line"),
        ("3", "third line"),
    ]


@pytest.mark.parametrize(
    ("bad_line", "problem"),
    [
        ('{"title": "B", "text": ', "not valid JSON"),
        ('["a list"]', "expected a JSON object"),
        ('{"title": "B"}', "missing field 'text'"),
        ('{"title": "B", "text": 3}', "must be a string"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, bad_line, problem):
    path = _write(
        tmp_path / "documents.jsonl", [json.dumps({"title": "A", "text": "ok"}), "", bad_line]
    )
    with pytest.raises(CorpusFormatError) as info:
        load_documents(path, "quest")
    assert str(info.value).startswith(f"{path}:3: ")
    assert problem in str(info.value)
    assert info.value.line == 3


def test_duplicate_ids_are_refused(tmp_path):
    path = _write(tmp_path / "d.jsonl", [json.dumps({"title": "A", "text": "x"})] * 2)
    with pytest.raises(CorpusFormatError, match="duplicate document id 'A'"):
        load_documents(path)


def test_bad_qrels_line(tmp_path):
    (tmp_path / "qrels").mkdir()
    _write(tmp_path / "corpus.jsonl", [json.dumps({"_id": "d1", "text": "x"})])
    _write(tmp_path / "queries.jsonl", [json.dumps({"_id": "q1", "text": "x"})])
    _write(tmp_path / "qrels" / "test.tsv", ["query-id\tcorpus-id\tscore", "q1\td1\tone"])
    with pytest.raises(CorpusFormatError, match=r"test.tsv:2: score 'one'"):
        load_beir(tmp_path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_documents(tmp_path / "nope.jsonl")


# ------------------------------------------------------------------- issue 18: d08, d09, d12
def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": "ok"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(CorpusFormatError, match=r"c\.jsonl:2: invalid UTF-8 \(byte 0xe9"):
        load_documents(path)
    text = tmp_path / "c.txt"
    text.write_bytes(b"fine\n\xff\n")
    with pytest.raises(CorpusFormatError, match=r"c\.txt:2: invalid UTF-8"):
        load_documents(text)


def test_lone_surrogates_and_nan_name_the_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "ok"}\n{"text": "x", "metadata": {"k": ["\\udc80"]}}\n')
    with pytest.raises(CorpusFormatError, match=r"c\.jsonl:2: .*lone surrogate"):
        load_documents(path)
    path.write_text('{"text": "ok", "metadata": {"score": Infinity}}\n')
    with pytest.raises(CorpusFormatError, match=r"c\.jsonl:1: Infinity is not valid JSON"):
        load_documents(path)


def test_gz_that_is_not_gzip(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    path.write_text('{"text": "plain"}\n')
    with pytest.raises(CorpusFormatError, match=r"c\.jsonl\.gz.*not a valid gzip file"):
        load_documents(path)


def test_duplicate_ids_name_both_lines(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n{"id": "a", "text": "z"}\n'
    )
    with pytest.raises(
        CorpusFormatError, match=r"c\.jsonl:3: duplicate document id 'a' \(first at line 1\)"
    ):
        load_documents(path)


def test_devices_are_not_reported_as_missing():
    with pytest.raises(CorpusFormatError, match="/dev/null: is not a regular file"):
        load_documents("/dev/null")
