"""Issue 42 item 17: a byte-order mark, and ids that are empty.

A JSONL corpus saved with a UTF-8 BOM (Notepad does) was refused as invalid JSON, while
a ``.txt`` corpus kept the BOM in document 1's text. An empty ``"id"`` became the line
number, which could be another document's explicit id.
"""

from __future__ import annotations

import json

import pytest

from logic_rag import cli
from logic_rag.corpus import iter_documents, load_documents
from logic_rag.errors import CorpusFormatError

BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_jsonl_with_a_bom_loads(tmp_path, suffix):
    import gzip

    rows = [{"id": "a", "text": "Apples."}, {"id": "b", "text": "Pears."}]
    data = BOM + "".join(json.dumps(r) + "\n" for r in rows).encode()
    path = tmp_path / f"c{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    assert [d.id for d in load_documents(path)] == ["a", "b"]


def test_text_corpus_drops_the_bom(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(BOM + b"First page.\nSecond page.\n")
    docs = load_documents(path)
    assert docs[0].text == "First page." and docs[1].text == "Second page."


def test_beir_and_quest_with_a_bom(tmp_path):
    beir = tmp_path / "corpus.jsonl"
    beir.write_bytes(BOM + b'{"_id": "x", "title": "", "text": "t"}\n')
    assert [d.id for d in iter_documents(beir)] == ["x"]
    quest = tmp_path / "documents.jsonl"
    quest.write_bytes(BOM + b'{"title": "Apple", "text": "t"}\n')
    assert [d.id for d in iter_documents(quest)] == ["Apple"]


def test_a_bom_later_in_the_file_is_text(tmp_path):
    """Only the first three bytes of the file are a mark; elsewhere U+FEFF is a character."""
    path = tmp_path / "c.txt"
    path.write_bytes(b"one\n" + BOM + b"two\n")
    assert load_documents(path)[1].text == "\ufefftwo"


@pytest.mark.parametrize("empty", ['""', '"  "'])
def test_an_empty_id_is_refused_not_numbered(tmp_path, empty):
    path = tmp_path / "c.jsonl"
    path.write_text(
        f'{{"id": "2", "text": "explicit two"}}\n{{"id": {empty}, "text": "no id"}}\n',
        encoding="utf-8",
    )
    with pytest.raises(CorpusFormatError, match=r"c.jsonl:2: field 'id' is empty"):
        load_documents(path)


def test_an_empty_beir_id_is_refused(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "", "title": "", "text": "t"}\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"corpus.jsonl:1: field '_id' is empty"):
        load_documents(path)


def test_a_missing_id_still_becomes_the_line_number(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "one"}\n{"id": "x", "text": "two"}\n', encoding="utf-8")
    assert [d.id for d in load_documents(path)] == ["1", "x"]


def test_cli_index_names_the_empty_id(tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "1", "text": "a"}\n{"id": "", "text": "b"}\n', encoding="utf-8")
    assert cli.main(["index", "--docs", str(path), "--out", str(tmp_path / "i"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"logic-rag index: error: {path}:2: field 'id' is empty; give the document an "
        "id, or leave the field out (the line number is used then)"
    ]
