"""Issue 42 item 12: one enormous corpus line.

A 100 MB line of NUL bytes (a sparse file) used 1.94 GB of memory and wrote a 601 MB
``documents.jsonl`` (each NUL stored as the six bytes ``\\u0000``); a 2 GB line reached
4.3 GB before the JSON error. A line is now read at most ``line_limit()`` bytes far
(``$LOGIC_RAG_MAX_LINE_BYTES``, default 64 MiB) and refused with its line number, and a
text line whose JSON form would pass the limit is refused too (escaping counts).
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

from logic_rag import cli
from logic_rag.corpus import DEFAULT_MAX_LINE_BYTES, line_limit, load_documents
from logic_rag.errors import CorpusFormatError


def _sparse(path, size: int, head: bytes = b"") -> None:
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(size)  # a hole: NUL bytes that take no disk space


@pytest.mark.parametrize("suffix", [".txt", ".jsonl"])
def test_a_sparse_line_is_refused_within_the_limit(tmp_path, monkeypatch, suffix):
    monkeypatch.setenv("LOGIC_RAG_MAX_LINE_BYTES", str(2**20))
    path = tmp_path / f"c{suffix}"
    _sparse(path, 64 * 2**20, b"first page\n" if suffix == ".txt" else b'{"text": "a"}\n')
    tracemalloc.start()
    try:
        with pytest.raises(CorpusFormatError) as caught:
            load_documents(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value).startswith(f"{path}:2: the line is longer than 1,048,576 bytes")
    assert "LOGIC_RAG_MAX_LINE_BYTES" in str(caught.value)
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MB traced for a 1 MB limit"


def test_the_default_limit_refuses_the_100_mb_line(tmp_path):
    path = tmp_path / "c.txt"
    _sparse(path, 100 * 2**20)
    assert line_limit() == DEFAULT_MAX_LINE_BYTES == 64 * 2**20
    with pytest.raises(CorpusFormatError, match=r"c.txt:1: the line is longer than 67,108,864"):
        load_documents(path)


def test_a_line_of_exactly_the_limit_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGIC_RAG_MAX_LINE_BYTES", "1000")
    path = tmp_path / "c.txt"
    path.write_bytes(b"a" * 1000 + b"\n" + b"b" * 1000)
    assert [len(d.text) for d in load_documents(path)] == [1000, 1000]
    path.write_bytes(b"a" * 1001 + b"\n")
    with pytest.raises(CorpusFormatError, match="c.txt:1: the line is longer than 1,000 bytes"):
        load_documents(path)
    assert len(load_documents(path, max_line_bytes=1001)) == 1


def test_json_escaping_counts_against_the_limit(tmp_path, monkeypatch):
    """300 NUL bytes pass a 1,000-byte line limit but would be stored as 1,800 bytes."""
    monkeypatch.setenv("LOGIC_RAG_MAX_LINE_BYTES", "1000")
    path = tmp_path / "c.txt"
    path.write_bytes(b"fine\n" + b"\0" * 300 + b"\n")
    with pytest.raises(CorpusFormatError, match=r"c.txt:2: the text, written as JSON, is longer"):
        load_documents(path)
    path.write_bytes(b"fine\n" + b"\0" * 150 + b"\n")  # 900 bytes as JSON: kept
    assert len(json.dumps(load_documents(path)[1].text)) == 902


@pytest.mark.parametrize("bad", ["0", "-5", "lots"])
def test_a_bad_limit_setting_is_one_line(tmp_path, monkeypatch, capsys, bad):
    monkeypatch.setenv("LOGIC_RAG_MAX_LINE_BYTES", bad)
    path = tmp_path / "c.txt"
    path.write_text("a page\n", encoding="utf-8")
    assert cli.main(["index", "--docs", str(path), "--out", str(tmp_path / "i"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "$LOGIC_RAG_MAX_LINE_BYTES must be" in err[0], err


def test_escaping_is_counted_without_writing_the_json(tmp_path, monkeypatch):
    """A 5 MB line of NUL bytes is refused without building its 30 MB JSON form."""
    monkeypatch.setenv("LOGIC_RAG_MAX_LINE_BYTES", str(10 * 2**20))
    path = tmp_path / "c.txt"
    _sparse(path, 5 * 2**20)
    tracemalloc.start()
    try:
        with pytest.raises(CorpusFormatError, match="c.txt:1: the text, written as JSON,"):
            load_documents(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 25 * 2**20, f"{peak / 2**20:.1f} MB traced"
