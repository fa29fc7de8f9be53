"""Chunked, resumable indexing: the same index as an in-memory build, and after a kill."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from logic_rag.cli import main
from logic_rag.corpus import load_documents
from logic_rag.errors import CorpusFormatError, IndexCorruptError
from logic_rag.index import streaming
from logic_rag.index.streaming import ResumeMismatchError, stream_index, work_folder
from logic_rag.logic_retriever import LogicRetriever

KINDS = ["film", "novel", "orchid", "moth"]
PLACES = ["Rome", "Oslo", "Lima", "Pune", "Hanoi"]


def _write_corpus(path: Path, n: int = 50) -> Path:
    """``n`` short pages of 2-4 sentences each (JSONL with ids)."""
    rows = []
    for i in range(n):
        text = (
            f"Entity {i} is a {KINDS[i % 4]} first described in {1900 + 3 * i}. "
            f"It is set in {PLACES[i % 5]}. Critics ranked it number {i}."
        )
        if i % 3 == 0:
            text += " It won a regional prize."
        rows.append({"id": f"d{i}", "title": f"Entity {i}", "text": text})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _files(folder: Path) -> dict[str, bytes]:
    """Every file of an index folder; the manifest without its creation time."""
    out = {p.name: p.read_bytes() for p in folder.iterdir()}
    manifest = json.loads(out.pop("manifest.json"))
    del manifest["created_at"]
    out["manifest.json"] = json.dumps(manifest, sort_keys=True).encode()
    return out


def test_streamed_index_matches_an_in_memory_build(tmp_path, minilm):
    corpus = _write_corpus(tmp_path / "docs.jsonl")
    lines: list[str] = []
    out = stream_index(
        corpus, tmp_path / "streamed", model=minilm, chunk_size=16, progress=lines.append
    )
    assert lines[-1] == "chunk 4: 50 documents committed"
    assert not work_folder(out).exists()
    built = LogicRetriever.build(load_documents(corpus), model=minilm).save(tmp_path / "built")
    streamed_files, built_files = _files(out), _files(built)
    assert set(streamed_files) == set(built_files)
    assert streamed_files["documents.jsonl"] == built_files["documents.jsonl"]
    assert streamed_files["passage_offsets.npy"] == built_files["passage_offsets.npy"]
    a, b = LogicRetriever.load(out, model=minilm), LogicRetriever.load(built, model=minilm)
    a_manifest = json.loads(streamed_files["manifest.json"])
    b_manifest = json.loads(built_files["manifest.json"])
    assert {k: v for k, v in a_manifest.items() if k != "files"} == {
        k: v for k, v in b_manifest.items() if k != "files"
    }
    # Chunks are encoded in other batches than the whole corpus: padding noise only.
    np.testing.assert_allclose(a.dense.index.vectors(), b.dense.index.vectors(), atol=1e-5)
    np.testing.assert_allclose(
        a.passages.decode(0, len(a.passages.vectors)),
        b.passages.decode(0, len(b.passages.vectors)),
        atol=1e-3,
    )
    query = "films set in Rome that did not win a prize"
    assert [h.id for h in a.search(query, k=10)] == [h.id for h in b.search(query, k=10)]


def test_a_killed_build_resumes_to_the_same_index(tmp_path, minilm, monkeypatch):
    corpus = _write_corpus(tmp_path / "docs.jsonl")
    whole = stream_index(corpus, tmp_path / "whole", model=minilm, chunk_size=16)
    real_save = streaming._save_part
    saved = []

    def dies_in_chunk_3(path, array):
        saved.append(path.name)
        if path.name == "000002.lengths.npy":  # chunk 3's dense shards are on disk already
            raise KeyboardInterrupt("kill -9")
        real_save(path, array)

    monkeypatch.setattr(streaming, "_save_part", dies_in_chunk_3)
    target = tmp_path / "resumed"
    with pytest.raises(KeyboardInterrupt):
        stream_index(corpus, target, model=minilm, chunk_size=16)
    work = work_folder(target)
    record = json.loads((work / "progress.json").read_text())
    assert len(record["chunks"]) == 2 and not target.exists()
    assert (work / "000002.dense.npy").exists()  # written, never committed
    monkeypatch.setattr(streaming, "_save_part", real_save)
    calls = []
    real_encode = type(minilm).encode_documents

    def counting(self, texts, **kwargs):
        calls.append(len(texts))
        return real_encode(self, texts, **kwargs)

    monkeypatch.setattr(type(minilm), "encode_documents", counting)
    lines: list[str] = []
    stream_index(corpus, target, model=minilm, chunk_size=16, progress=lines.append)
    assert lines[0] == "resuming after 2 committed chunks (32 documents)"
    assert calls[::2] == [16, 2]  # documents of chunks 3 and 4 only (then their sentences)
    assert _files(target) == _files(whole)  # byte for byte
    assert not work.exists()


def test_changed_inputs_do_not_resume(tmp_path, minilm, monkeypatch):
    corpus = _write_corpus(tmp_path / "docs.jsonl")

    def dies(path, array):
        raise KeyboardInterrupt("kill")

    monkeypatch.setattr(streaming, "_save_part", dies)
    target = tmp_path / "idx"
    with pytest.raises(KeyboardInterrupt):
        stream_index(corpus, target, model=minilm, chunk_size=16)
    monkeypatch.undo()
    with pytest.raises(ResumeMismatchError, match="settings.sentence_dtype: 'float16' -> 'int8'"):
        stream_index(corpus, target, model=minilm, chunk_size=16, sentence_dtype="int8")
    with pytest.raises(ResumeMismatchError, match="settings.chunk_size: 16 -> 20"):
        stream_index(corpus, target, model=minilm, chunk_size=20)
    _write_corpus(corpus, n=51)
    with pytest.raises(ResumeMismatchError, match=r"corpus\.bytes.*corpus\.sha256.*--restart"):
        stream_index(corpus, target, model=minilm, chunk_size=16)
    out = stream_index(corpus, target, model=minilm, chunk_size=16, restart=True)
    assert len(LogicRetriever.load(out, model=minilm)) == 51


def test_damaged_shards_and_duplicate_ids_are_refused(tmp_path, minilm, monkeypatch):
    corpus = _write_corpus(tmp_path / "docs.jsonl", n=20)
    rows = corpus.read_text().splitlines()
    dup = tmp_path / "dup.jsonl"
    dup.write_text("\n".join([*rows, rows[3]]) + "\n")
    with pytest.raises(CorpusFormatError, match="duplicate document id 'd3'.*document 21"):
        stream_index(dup, tmp_path / "dup", model=minilm, chunk_size=8)
    real_join = streaming._join

    def join_fails(*args, **kwargs):
        raise KeyboardInterrupt("killed while joining")

    monkeypatch.setattr(streaming, "_join", join_fails)
    target = tmp_path / "idx"
    with pytest.raises(KeyboardInterrupt):
        stream_index(corpus, target, model=minilm, chunk_size=8)
    monkeypatch.setattr(streaming, "_join", real_join)
    shard = work_folder(target) / "000001.sent.npy"
    shard.write_bytes(shard.read_bytes()[:-4] + b"\0\0\0\0")
    with pytest.raises(IndexCorruptError, match="000001.sent.npy does not match its checksum"):
        stream_index(corpus, target, model=minilm, chunk_size=8)
    (work_folder(target) / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="notes.txt"):
        stream_index(corpus, target, model=minilm, chunk_size=8, restart=True)


@pytest.fixture(scope="module")
def flat_300(tmp_path_factory, minilm):
    """300 pages streamed into a flat index without sentence vectors."""
    folder = tmp_path_factory.mktemp("flat300")
    corpus = _write_corpus(folder / "docs.jsonl", n=300)
    flat = stream_index(corpus, folder / "flat", model=minilm, chunk_size=128, passages=False)
    return corpus, LogicRetriever.load(flat, model=minilm)


@pytest.mark.parametrize("kind", ["hnsw", "ivfpq"])
def test_streamed_approximate_indexes_load_and_find_the_flat_top_10(
    tmp_path, minilm, flat_300, kind
):
    corpus, flat = flat_300
    approx = stream_index(
        corpus, tmp_path / kind, model=minilm, chunk_size=128, passages=False, index=kind
    )
    loaded = LogicRetriever.load(approx, model=minilm)
    assert loaded.dense.index.kind == kind
    queries = [f"a {k} set in {p}" for k in KINDS for p in PLACES]
    truth = [[h.id for h in hits] for hits in flat.search_batch(queries, 10, strategy="vanilla")]
    got = [[h.id for h in hits] for hits in loaded.search_batch(queries, 10, strategy="vanilla")]
    recall = np.mean([len(set(x) & set(y)) / 10 for x, y in zip(got, truth, strict=True)])
    assert recall >= 0.97


def test_cli_chunked_index(tmp_path, capsys):
    corpus = _write_corpus(tmp_path / "docs.jsonl", n=12)
    out = tmp_path / "idx"
    argv = ["index", "--docs", str(corpus), "--out", str(out), "--chunk-size", "5"]
    assert main([*argv, "--sentence-dtype", "int8"]) == 0
    err = capsys.readouterr().err
    assert "chunk 3: 12 documents committed" in err
    loaded = LogicRetriever.load(out)
    assert loaded.passages.dtype == "int8" and len(loaded) == 12
    assert main([*argv, "--sparse-model", "splade-tiny"]) == 2
    assert "--chunk-size builds dense and sentence vectors only" in capsys.readouterr().err
