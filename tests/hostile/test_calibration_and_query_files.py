"""Verdict calibrations, threshold files and query files (issue 51 items 4, 5, 10, 13, 16).

* ``search --queries /dev/zero`` grew to 22 GB; a 1 GB one-line file took 3.7 GB before
  its refusal: lines are now read at most 1 MiB far.
* ``--verdict-calibration`` took a fit-cascade sample of another corpus and encoder, a
  ``calibration.json`` without a fingerprint, and a map with x outside [0, 1].
* ``--verdict-calibration`` / ``--quality-thresholds`` files were read whole (1 GB junk:
  2.86 GB peak, then a MemoryError traceback).
* a folder, a FIFO or ``/dev/zero`` was "no such file"; ``--queries -`` too.
* on an index under 100 documents the calibration was ignored without a word.
"""

from __future__ import annotations

import io
import json
import os
import tracemalloc
from pathlib import Path

import pytest

from logic_rag.cli.queries import read_queries
from logic_rag.errors import CorpusFormatError
from logic_rag.verifiers.thresholds import CascadeSample, CascadeThresholds
from logic_rag.verifiers.verdicts import EvidenceCalibration
from tests.hostile.test_cli_hostile import CLI, assert_user_error

MB = 2**20


def _peak_of(call) -> int:
    tracemalloc.start()
    try:
        call()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


# ------------------------------------------------------------------ item 4: query lines
def test_queries_from_dev_zero_are_refused_within_a_bounded_read():
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")

    def read() -> None:
        with pytest.raises(CorpusFormatError, match="longer than 1,048,576 bytes"):
            list(read_queries("/dev/zero"))

    assert _peak_of(read) < 16 * MB


def test_a_huge_one_line_query_file_is_refused_within_a_bounded_read(tmp_path):
    path = tmp_path / "q.txt"
    with open(path, "wb") as handle:
        handle.truncate(2**30)  # 1 GB of NUL bytes, sparse: no disk used

    def read() -> None:
        with pytest.raises(CorpusFormatError, match=r"q.txt:1: .*longer than"):
            list(read_queries(str(path)))

    assert _peak_of(read) < 16 * MB


def test_queries_from_stdin_with_a_dash(monkeypatch):
    fake = io.TextIOWrapper(io.BytesIO(b"red apples\n\nnot lemons\n"))
    monkeypatch.setattr("sys.stdin", fake)
    assert list(read_queries("-")) == [("1", "red apples"), ("3", "not lemons")]


# ------------------------------------------------------------------ item 13: file kinds
@pytest.fixture
def odd_files(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"folder": (folder, "is a folder"), "fifo": (fifo, "is a pipe (FIFO)")}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("kind", ["folder", "fifo", "dev"])
@pytest.mark.parametrize("flag", ["--verdict-calibration", "--quality-thresholds"])
def test_calibration_files_that_are_not_regular_files_are_named(tmp_path, odd_files, kind, flag):
    if kind == "dev":
        path, words = Path("/dev/zero"), "is a device"
    else:
        path, words = odd_files[kind]
    extra = ["--quality-bounds", "calibrated"] if flag == "--quality-thresholds" else []
    result = CLI(tmp_path)(
        "search", str(tmp_path / "idx"), "a query", "--strategy", "quality", flag, str(path),
        *extra,
    )  # fmt: skip
    line = assert_user_error(result, flag, words)
    assert "no such file" not in line


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_query_folder_is_named_and_a_missing_file_still_is_missing(tmp_path, odd_files):
    cli_ = CLI(tmp_path)
    folder = odd_files["folder"][0]
    assert_user_error(cli_("search", str(tmp_path), "--queries", str(folder)), "is a folder")
    assert_user_error(
        cli_("search", str(tmp_path), "--queries", str(tmp_path / "none.txt")), "no such file"
    )


# ------------------------------------------------------------------ item 10: file sizes
@pytest.mark.parametrize("reader", ["calibration", "thresholds"])
def test_a_huge_calibration_file_is_refused_without_reading_it(tmp_path, reader):
    path = tmp_path / "junk.json"
    with open(path, "wb") as handle:
        handle.truncate(2**30)

    def load() -> None:
        with pytest.raises(ValueError, match=r"junk\.json.*at most") as caught:
            if reader == "calibration":
                EvidenceCalibration.load(path)
            else:
                CascadeThresholds.load(path)
        assert "\n" not in str(caught.value)

    assert _peak_of(load) < 16 * MB


# ------------------------------------------------------------------ item 5: keys and maps
def _adapt_file(tmp_path, xs, ys, fingerprint) -> Path:
    path = tmp_path / "calibration.json"
    body = {"map": {"x": xs, "y": ys}, "input": {"kind": "embedding_p"}}
    if fingerprint is not None:
        body["fingerprint"] = fingerprint
    path.write_text(json.dumps(body))
    return path


def test_a_calibration_without_a_fingerprint_is_refused(tmp_path):
    path = _adapt_file(tmp_path, [0.0, 1.0], [0.1, 0.9], None)
    with pytest.raises(ValueError, match="does not say which encoder") as caught:
        EvidenceCalibration.load(path)
    assert str(path) in str(caught.value)


def test_a_map_with_x_outside_zero_one_is_refused(tmp_path):
    fp = {"encoder": {"weights_sha256": "abc"}}
    path = _adapt_file(tmp_path, [-5.0, 7.0], [0.1, 0.9], fp)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        EvidenceCalibration.load(path)


@pytest.fixture(scope="module")
def big_retriever(minilm):
    """120 pages: enough for corpus-calibrated evidence, where calibrations apply."""
    from logic_rag import Document, LogicRetriever

    docs = [
        Document(id=str(i), text=f"page {i} about topic {i % 7} and thing {i % 5}")
        for i in range(120)
    ]
    return LogicRetriever.build(docs, model=minilm)


def _sample_file(tmp_path, key) -> Path:
    sample = CascadeSample()
    for s in (0.1, 0.3, 0.5, 0.7, 0.9):
        sample.add(s, 1.0, 1.0, True)  # "every constraint holds": all ✓ / ✗ NOT
    return CascadeThresholds(sample, key).save(tmp_path / "sample.json")


def test_a_fit_cascade_sample_of_another_corpus_or_encoder_is_refused(big_retriever, tmp_path):
    corpus = big_retriever.resources.corpus_fingerprint()
    encoder = big_retriever.dense.encoder.name
    for key, word in (
        ({"expensive": "llm:x", "encoder": encoder, "corpus": "another"}, "corpus"),
        ({"expensive": "llm:x", "encoder": "gemma", "corpus": corpus}, "encoder"),
        ({"expensive": "llm:x"}, "does not say which"),
    ):
        path = _sample_file(tmp_path, key)
        calibrated = _calibrated(big_retriever, path)
        with pytest.raises(ValueError, match=word):
            calibrated.search("topic 3 but not thing 2", k=3)
    good = _sample_file(tmp_path, {"expensive": "llm:x", "encoder": encoder, "corpus": corpus})
    hits = _calibrated(big_retriever, good).search("topic 3", k=3)
    assert hits


def _calibrated(retriever, path):
    """``retriever`` whose ``rerank`` verdicts use the calibration at ``path``."""
    from logic_rag.strategy_settings import LogicSettings, RerankSettings

    logic = LogicSettings(verdict_calibration=str(path))
    return retriever.with_settings(RerankSettings(logic=logic))


# ------------------------------------------------------------------ item 16: a word
def test_a_calibration_not_used_on_a_small_index_is_said(minilm, tmp_path):
    from logic_rag import Document, LogicRetriever

    docs = [Document(id=str(i), text=f"page {i} about topic {i % 3}") for i in range(8)]
    small = LogicRetriever.build(docs, model=minilm)
    fp = {"encoder": {"weights_sha256": minilm.fingerprint}}
    path = _adapt_file(tmp_path, [0.0, 1.0], [0.9, 0.9], fp)
    calibrated = _calibrated(small, path)
    with pytest.warns(UserWarning, match="is not used: the index holds 8 documents"):
        calibrated.search("topic 1 but not topic 2", k=3)
