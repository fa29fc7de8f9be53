"""Issue 42 items 11 and 15: chunked builds (``index --chunk-size``) and their work folder.

11. Editing the corpus in place (same inode) while a chunked build ran gave an index that
    mixed both versions, exit 0: the corpus was hashed once, at the start. The join now
    hashes it again and refuses when it changed; nothing is written to ``--out``.
15. After a killed chunked build, a successful plain ``index`` to the same ``--out`` left
    the ``.OUT.build`` work folder behind, and later chunked builds refused to start until
    ``--restart``. The plain build now removes it (unless a running build holds it).
"""

from __future__ import annotations

import fcntl

import pytest

from logic_rag import cli
from logic_rag.index import streaming
from logic_rag.index.streaming import (
    CorpusChangedError,
    ResumeMismatchError,
    discard_stale_build,
    stream_index,
    work_folder,
)
from logic_rag.logic_retriever import LogicRetriever
from tests.index.test_streaming import _write_corpus


def _edit_after_first_chunk(monkeypatch, corpus):
    """Rewrite the corpus in place (same inode) once chunk 1 is committed."""
    real_commit = streaming._ChunkWriter.commit

    def commit(self, number, chunk):
        real_commit(self, number, chunk)
        if number == 0:
            inode = corpus.stat().st_ino
            with open(corpus, "r+b") as handle:  # an editor saving in place
                data = handle.read().replace(b"Entity 20 ", b"Entity XX ")
                handle.seek(0)
                handle.write(data)
            assert corpus.stat().st_ino == inode

    monkeypatch.setattr(streaming._ChunkWriter, "commit", commit)


def test_a_corpus_edited_during_the_build_is_refused_at_the_join(tmp_path, minilm, monkeypatch):
    corpus = _write_corpus(tmp_path / "docs.jsonl", n=30)
    out = tmp_path / "idx"
    _edit_after_first_chunk(monkeypatch, corpus)
    with pytest.raises(CorpusChangedError) as caught:
        stream_index(corpus, out, model=minilm, chunk_size=10)
    message = str(caught.value)
    assert f"{corpus} changed while it was being indexed" in message
    assert "nothing was written" in message and "--restart" in message
    assert not out.exists()
    monkeypatch.undo()
    # The committed chunks hold the old version: they are not resumed without --restart.
    with pytest.raises(ResumeMismatchError, match=r"corpus\.sha256.*--restart"):
        stream_index(corpus, out, model=minilm, chunk_size=10)
    stream_index(corpus, out, model=minilm, chunk_size=10, restart=True)
    titles = [d.text for d in LogicRetriever.load(out, model=minilm).documents]
    assert sum("Entity XX " in t for t in titles) == 1


def test_cli_says_the_corpus_changed_in_one_line(tmp_path, monkeypatch, capsys):
    corpus = _write_corpus(tmp_path / "docs.jsonl", n=30)
    _edit_after_first_chunk(monkeypatch, corpus)
    out = tmp_path / "idx"
    argv = ["index", "--docs", str(corpus), "--out", str(out), "--chunk-size", "10", "-q"]
    assert cli.main(argv) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if ": error: " in line]
    assert len(errors) == 1 and "changed while it was being indexed" in errors[0], errors


def _killed_build(monkeypatch, corpus, out, minilm):
    real_save = streaming._save_part

    def dies_in_chunk_2(path, array):
        if path.name.startswith("000001."):
            raise KeyboardInterrupt("kill -9")
        real_save(path, array)

    monkeypatch.setattr(streaming, "_save_part", dies_in_chunk_2)
    with pytest.raises(KeyboardInterrupt):
        stream_index(corpus, out, model=minilm, chunk_size=10)
    monkeypatch.undo()
    assert work_folder(out).is_dir()


def test_a_plain_index_removes_a_killed_builds_work_folder(tmp_path, minilm, monkeypatch, capsys):
    corpus = _write_corpus(tmp_path / "docs.jsonl", n=30)
    out = tmp_path / "idx"
    _killed_build(monkeypatch, corpus, out, minilm)
    assert cli.main(["index", "--docs", str(corpus), "--out", str(out), "-q"]) == 0
    assert "the work folder of an interrupted chunked build" in capsys.readouterr().err
    assert not work_folder(out).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl", "idx"]
    # A later chunked build with other settings starts without --restart.
    stream_index(corpus, out, model=minilm, chunk_size=7)
    assert len(LogicRetriever.load(out, model=minilm)) == 30


def test_a_running_builds_work_folder_is_left_alone(tmp_path, minilm, monkeypatch):
    corpus = _write_corpus(tmp_path / "docs.jsonl", n=30)
    out = tmp_path / "idx"
    _killed_build(monkeypatch, corpus, out, minilm)
    work = work_folder(out)
    before = sorted(p.name for p in work.iterdir())
    with open(work / "lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a build in another process
        assert discard_stale_build(out) is False
    assert sorted(p.name for p in work.iterdir()) == before
    (work / "notes.txt").write_text("mine")  # a stranger's file: never deleted
    assert discard_stale_build(out) is False and (work / "notes.txt").exists()
    (work / "notes.txt").unlink()
    assert discard_stale_build(out) is True and not work.exists()
