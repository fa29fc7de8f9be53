"""Issue 42, item 1: queries read from a pipe are all read, with their own ids.

``logic-rag search IDX --queries <(cat q.txt)`` lost the first 8 KB of the pipe: the file
was opened twice (a peek at the first line, then the read), and the peek drained what the
pipe had buffered. ``fit-cascade --queries`` reads through the same function. These tests
feed real FIFOs (a writer thread on the other end) to ``logic_rag.cli.queries.read_queries``.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from logic_rag.cli.queries import read_queries
from logic_rag.errors import CorpusFormatError

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _fifo(tmp_path: Path, name: str, payload: bytes) -> tuple[Path, threading.Thread]:
    """A FIFO at ``tmp_path/name`` and a started thread that writes ``payload`` into it."""
    path = tmp_path / name
    os.mkfifo(path)

    def write() -> None:
        try:
            with open(path, "wb") as handle:
                handle.write(payload)
        except BrokenPipeError:
            pass  # the reader stopped at a bad line: that is the point of some tests

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return path, writer


def test_every_line_of_a_plain_text_pipe_is_read_with_its_line_number(tmp_path):
    lines = [f"query number {i} about orchids of Malaysia" for i in range(1, 3001)]
    path, writer = _fifo(tmp_path, "q.txt", ("\n".join(lines) + "\n").encode())
    got = list(read_queries(str(path)))
    writer.join(5)
    assert len(got) == 3000
    assert got[0] == ("1", lines[0])
    assert got[332] == ("333", lines[332])
    assert got[-1] == ("3000", lines[-1])


def test_a_jsonl_pipe_is_read_whole_with_its_ids(tmp_path):
    rows = [{"id": f"q{i}", "query": f"films {i} but not comedies"} for i in range(2000)]
    blank_first = b"\n" + "".join(json.dumps(r) + "\n" for r in rows).encode()
    path, writer = _fifo(tmp_path, "queries", blank_first)
    got = list(read_queries(str(path)))
    writer.join(5)
    assert got == [(r["id"], r["query"]) for r in rows]


def test_a_bad_line_in_a_piped_jsonl_names_its_line(tmp_path):
    payload = b'{"query": "a"}\n\n{"query": 3}\n'
    path, writer = _fifo(tmp_path, "queries", payload)
    with pytest.raises(CorpusFormatError, match=r":3: needs a non-empty"):
        list(read_queries(str(path)))
    writer.join(5)


def test_invalid_utf8_in_a_plain_text_file_names_the_line(tmp_path):
    path = tmp_path / "q.txt"
    path.write_bytes(b"fine query\nbad \xff query\n")
    with pytest.raises(CorpusFormatError, match=r"q\.txt:2: invalid UTF-8"):
        list(read_queries(str(path)))


def test_regular_files_still_read_both_formats(tmp_path):
    text = tmp_path / "q.txt"
    text.write_text("\nfirst\n\nsecond\n", encoding="utf-8")
    assert list(read_queries(str(text))) == [("2", "first"), ("4", "second")]
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"qid": 7, "text": "x"}\n{"query": "y"}\n', encoding="utf-8")
    assert list(read_queries(str(jsonl))) == [("7", "x"), ("2", "y")]


def test_a_folder_or_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(read_queries(str(tmp_path / "missing.txt")))
    with pytest.raises((CorpusFormatError, IsADirectoryError)):
        list(read_queries(str(tmp_path)))
