"""Where commands write, and what a resumed ``adapt`` run claims (issue 51 items 2, 11, 15).

``fit-cascade --out IDX/manifest.json`` overwrote the manifest and exited 0; a device or
pipe given as ``--out`` was replaced by a regular file; ``adapt --out`` inside an index
folder was accepted; ``adapt --queries`` nested 5,000 deep gave a RecursionError; a rerun
after ``model/``, ``verifier/`` and ``calibration.json`` were deleted printed "wrote ..."
with none of them there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from logic_rag.index.store import FORMAT_NAME
from tests.hostile.test_cli_hostile import CLI, assert_user_error


def _fake_index(folder: Path) -> Path:
    """A folder that says it is an index (all the output checks look at)."""
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"format": FORMAT_NAME, "version": 2}))
    (folder / "documents.jsonl").write_text('{"id": "d1", "text": "x"}\n')
    return folder


@pytest.fixture
def setup(tmp_path):
    index = _fake_index(tmp_path / "idx")
    queries = tmp_path / "q.txt"
    queries.write_text("films that are not comedies\n")
    return CLI(tmp_path), index, queries


@pytest.mark.parametrize("name", ["manifest.json", "documents.jsonl", "new.json", "sub/x.json"])
def test_fit_cascade_never_writes_into_an_index_folder(setup, name):
    cli, index, queries = setup
    before = {p.name: p.read_bytes() for p in index.iterdir()}
    result = cli("fit-cascade", str(index), "--queries", str(queries), "--out", str(index / name))
    assert_user_error(result, "--out", "index folder")
    assert {p.name: p.read_bytes() for p in index.iterdir()} == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fit_cascade_refuses_an_out_that_is_not_a_regular_file(setup, tmp_path):
    cli, index, queries = setup
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    for out, kind in ((fifo, "a device, pipe or socket"), (folder, "a folder")):
        result = cli("fit-cascade", str(index), "--queries", str(queries), "--out", str(out))
        assert_user_error(result, "not a regular file", kind)
    assert fifo.is_fifo() and folder.is_dir()


def test_the_thresholds_file_api_refuses_an_index_folder(tmp_path):
    from logic_rag.verifiers.thresholds import CascadeSample, CascadeThresholds

    index = _fake_index(tmp_path / "idx")
    before = (index / "manifest.json").read_bytes()
    with pytest.raises(ValueError, match="index folder"):
        CascadeThresholds(CascadeSample(), {}).save(index / "manifest.json")
    assert (index / "manifest.json").read_bytes() == before


def test_adapt_out_inside_the_index_is_refused_before_any_work(setup):
    cli, index, queries = setup
    before = sorted(p.name for p in index.iterdir())
    result = cli("adapt", str(index), "--queries", str(queries), "--out", str(index / "run"))
    assert_user_error(result, "--out", "index folder")
    assert sorted(p.name for p in index.iterdir()) == before


def test_adapt_queries_nested_deep_are_one_error(tmp_path):
    from logic_rag.errors import CorpusFormatError
    from logic_rag.finetune.adapt.atoms import read_queries

    path = tmp_path / "q.jsonl"
    path.write_text('{"query": ' + "[" * 5000 + "]" * 5000 + "}\n")
    with pytest.raises(CorpusFormatError, match="nested more than") as caught:
        read_queries(path)
    assert str(path) in str(caught.value)


def test_a_resumed_adapt_run_redoes_phases_whose_outputs_were_deleted(tmp_path):
    from logic_rag.finetune.adapt.driver import _forget_lost_outputs
    from logic_rag.finetune.adapt.state import PHASES, RunState

    folder = tmp_path / "run"
    state = RunState.open(folder, {"x": 1})
    for name in ("atoms.json", "plan.jsonl", "labels.jsonl", "calibration.json", "README.md"):
        (folder / name).write_text("{}\n")
    for name in ("model", "verifier"):
        (folder / name).mkdir()
        (folder / name / "config.json").write_text("{}")
    for phase in PHASES:
        state.finish(phase, 1.0)
    _forget_lost_outputs(folder, state)
    assert list(state.phases) == list(PHASES)  # everything there: nothing redone

    for name in ("model", "verifier"):
        (folder / name / "config.json").unlink()
    (folder / "calibration.json").unlink()
    again = RunState.open(folder, {"x": 1})
    _forget_lost_outputs(folder, again)
    assert list(again.phases) == ["atoms", "labels", "composed"]
    # and it is on disk: the next open sees the same
    assert list(RunState.open(folder, {"x": 1}).phases) == ["atoms", "labels", "composed"]

    (folder / "labels.jsonl").unlink()
    _forget_lost_outputs(folder, again)
    assert list(again.phases) == ["atoms"]
