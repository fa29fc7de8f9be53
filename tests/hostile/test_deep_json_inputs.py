"""Issue 42 item 6: JSON nested hundreds or thousands of levels deep in a user's file.

Corpus metadata 500-1,000 levels deep loaded, embedded everything, then crashed on save
(work lost); ``--chunk-size`` crashed after chunk 1; 5,000 levels crashed at read
(``RecursionError``, a traceback). The same in query files, ``fit-cascade`` and ``eval
rag`` items. Every reader now refuses such a line with one ``file:line`` error, before any
model is loaded or anything embedded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_rag import cli
from logic_rag.cli.queries import read_queries
from logic_rag.corpus import load_documents
from logic_rag.errors import CorpusFormatError
from logic_rag.json_limits import MAX_JSON_DEPTH, check_json_depth, loads_bounded

DEPTHS = [MAX_JSON_DEPTH + 1, 500, 1_000, 5_000]


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _corpus(path: Path, depth: int, *, bad_line: int = 3) -> Path:
    lines = []
    for i in range(1, 6):
        row = json.dumps({"id": f"d{i}", "title": f"T{i}", "text": f"Page {i} text."})
        if i == bad_line:
            row = row[:-1] + f', "metadata": {{"deep": {_nested(depth)}}}}}'
        lines.append(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_corpus_metadata_is_one_file_line_error(tmp_path, depth):
    corpus = _corpus(tmp_path / "c.jsonl", depth)
    with pytest.raises(CorpusFormatError) as caught:
        load_documents(corpus)
    assert str(caught.value).startswith(f"{corpus}:3: JSON nested more than {MAX_JSON_DEPTH}")


def test_metadata_at_the_limit_still_loads(tmp_path):
    corpus = tmp_path / "c.jsonl"
    # {"metadata": {"deep": [[...]]}}: the row object and metadata take two levels.
    value = json.loads(_nested(MAX_JSON_DEPTH - 2))
    row = {"id": "d1", "text": "x", "metadata": {"deep": value}}
    corpus.write_text(json.dumps(row) + "\n", encoding="utf-8")
    (doc,) = load_documents(corpus)
    assert doc.metadata["deep"] == value


def test_depth_check_is_iterative_and_wide_values_pass():
    assert check_json_depth({"a": [1, 2, {"b": [3]}]}) is not None
    wide = [[i] for i in range(100_000)]
    assert check_json_depth(wide) is wide
    with pytest.raises(ValueError, match="nested more than 64 levels"):
        loads_bounded(_nested(100_000))  # far past the interpreter's recursion limit


@pytest.mark.parametrize("chunked", [False, True])
def test_cli_index_refuses_before_loading_the_model(tmp_path, capsys, monkeypatch, chunked):
    """Plain and chunked builds stop at the line, before any encoder is created."""
    from logic_rag.encoders import dense

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded before the corpus was read")

    monkeypatch.setattr(dense.DenseEncoder, "__init__", no_model)
    corpus = _corpus(tmp_path / "c.jsonl", 1_000, bad_line=5)
    out = tmp_path / "idx"
    argv = ["index", "--docs", str(corpus), "--out", str(out), "-q"]
    if chunked:
        argv += ["--chunk-size", "2"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) <= 2 and err[-1].startswith(f"logic-rag index: error: {corpus}:5: JSON"), err
    assert not out.exists()


@pytest.mark.parametrize("suffix", [".jsonl", ".txt"])
def test_query_files_refuse_deep_lines(tmp_path, suffix):
    """``search --queries`` and ``fit-cascade --queries`` share this reader."""
    path = tmp_path / f"q{suffix}"
    path.write_text(
        '{"query": "films"}\n' + f'{{"query": "x", "extra": {_nested(5_000)}}}\n', "utf-8"
    )
    with pytest.raises(CorpusFormatError, match=rf"{path.name}:2: JSON nested"):
        list(read_queries(str(path)))


def test_eval_quest_query_files_refuse_deep_lines(tmp_path):
    from logic_rag.evals.quest.data import load_quest_queries

    path = tmp_path / "test.jsonl"
    good = {"query": "films", "docs": ["A"], "original_query": "films", "metadata": {}}
    deep = dict(good, metadata={"x": json.loads(_nested(200))})
    path.write_text(json.dumps(good) + "\n" + json.dumps(deep) + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"test.jsonl:2: JSON nested"):
        load_quest_queries(path)


@pytest.mark.parametrize("layout", ["lines", "array"])
def test_eval_rag_items_refuse_deep_values(tmp_path, layout):
    from logic_rag.evals.rag.datasets import load_rag_dataset

    good = {"q_id": "q1", "title": "Why?", "answers": {"a_id": ["a"], "text": ["Because."]}}
    text = json.dumps(good)[:-1] + f', "extra": {_nested(5_000)}}}'
    path = tmp_path / "eli5.jsonl"
    if layout == "lines":
        path.write_text(json.dumps(good) + "\n" + text + "\n", encoding="utf-8")
        where = r"eli5.jsonl:2: JSON nested"
    else:
        path.write_text(f"[{json.dumps(good)}, {text}]", encoding="utf-8")
        where = r"eli5.jsonl: JSON nested"
    with pytest.raises(CorpusFormatError, match=where):
        load_rag_dataset("eli5", path)
