"""Issue 42 item 16: ``eval quest --out`` pointing at (or into) the index folder.

The results were written into the index (``results.json`` beside ``manifest.json``); the
folder then held files that are not part of an index, so it refused to be rebuilt. Such an
``--out`` is now refused before anything is read or embedded, and so is an ``--index``
that would be written over a folder that is not an index.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_rag import cli
from logic_rag.corpus import Document
from logic_rag.evals.quest import runner
from logic_rag.evals.quest.runner import check_out_folder
from logic_rag.logic_retriever import LogicRetriever
from tests.hostile.test_cli_hostile import snapshot

DOCS = [
    Document("Apple", "Apples are crisp red fruits.", "Apple"),
    Document("Lemon", "Lemons are sour yellow citrus fruits.", "Lemon"),
    Document("Jazz", "Jazz is a music genre.", "Jazz"),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory, minilm) -> Path:
    return LogicRetriever.build(DOCS, model=minilm, passages=False).save(
        tmp_path_factory.mktemp("eval_out") / "idx"
    )


@pytest.fixture
def queries(tmp_path) -> Path:
    path = tmp_path / "test.jsonl"
    row = {"query": "fruits", "docs": ["Apple", "Lemon"], "original_query": "fruits"}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def _no_work(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the index was opened before --out was checked")

    monkeypatch.setattr(LogicRetriever, "load", refuse)
    monkeypatch.setattr(LogicRetriever, "build", refuse)


@pytest.mark.parametrize("where", [".", "results", "results/deeper", "../idx/./x"])
def test_out_in_the_index_folder_is_refused_before_any_work(
    index, queries, monkeypatch, capsys, where
):
    _no_work(monkeypatch)
    before = snapshot(index)
    out = index / where
    argv = ["eval", "quest", "--index", str(index), "--queries", str(queries), "--out", str(out)]
    assert cli.main(argv) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("logic-rag eval: error: --out "), errors
    assert "results would be written into the index" in errors[0]
    assert snapshot(index) == before


def test_out_naming_another_index_folder_is_refused(index, queries, tmp_path, monkeypatch):
    """``--docs`` given, ``--out`` an existing index: refused before the corpus is indexed."""
    _no_work(monkeypatch)
    with pytest.raises(ValueError, match="results would be written into the index"):
        runner.run_eval_quest(docs=queries, queries=queries, out=index / "run")


def test_a_symlink_to_the_index_is_the_index(index, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(index, target_is_directory=True)
    with pytest.raises(ValueError, match="is the index folder"):
        check_out_folder(link, None)


def test_an_index_to_write_over_a_user_folder_is_refused_first(tmp_path, queries, monkeypatch):
    _no_work(monkeypatch)
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="is not a logic-rag index folder"):
        runner.run_eval_quest(docs=queries, queries=queries, out=tmp_path / "out", index=mine)
    assert (mine / "todo.txt").read_text() == "keep me"


def test_a_separate_out_still_works(index, queries, tmp_path, capsys):
    out = tmp_path / "results"
    argv = ["eval", "quest", "--index", str(index), "--queries", str(queries), "--out", str(out)]
    assert cli.main([*argv, "--strategy", "vanilla"]) == 0
    assert (out / "results.json").is_file()
    check_out_folder(index.parent / "beside", index)  # a sibling of the index is fine
