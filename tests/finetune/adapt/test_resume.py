"""A kill in the middle of labelling loses at most the batch in flight; the rerun resumes.

The teacher is scripted (a hash of the pair), the index and the driver are real: a child
process runs ``adapt(..., stop_after="labels")`` and SIGKILLs itself after N pairs; the
rerun must produce the same ``labels.jsonl``, byte for byte, as an uninterrupted run, and
must not ask the teacher again about the pairs already written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = Path(__file__).with_name("label_child.py")


def _child(index, queries, out, kill_after, batch=8):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LOGIC_RAG_DEFAULT_MODEL": "minilm"}
    return subprocess.run(
        [
            sys.executable,
            str(CHILD),
            str(index),
            str(queries),
            str(out),
            str(kill_after),
            str(batch),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_resume_after_a_kill_mid_labelling_gives_the_same_labels(tiny_index, tmp_path):
    index, queries = tiny_index
    whole = _child(index, queries, tmp_path / "whole", 0)
    assert whole.returncode == 0, whole.stderr[-2000:]
    expected = (tmp_path / "whole" / "labels.jsonl").read_bytes()
    planned = len((tmp_path / "whole" / "plan.jsonl").read_text().splitlines())
    assert planned > 20 and len(expected.splitlines()) == planned

    killed = _child(index, queries, tmp_path / "run", 20)
    assert killed.returncode == -9, (killed.returncode, killed.stderr[-2000:])
    partial = (tmp_path / "run" / "labels.jsonl").read_bytes()
    # Batches of 8 pairs: two were written before the teacher died in the third.
    assert len(partial.splitlines()) == 16
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert "atoms" in state["phases"] and "labels" not in state["phases"]
    # A write torn by the kill: the half line is cut off on resume.
    with (tmp_path / "run" / "labels.jsonl").open("ab") as handle:
        handle.write(b'{"key": "0123", "atom": "Orch')

    # Resumed with another batch size (it changes speed, not results: not in the fingerprint).
    resumed = _child(index, queries, tmp_path / "run", 0, batch=5)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"scored {planned - 16}" in resumed.stdout  # the 16 done pairs were not asked again
    assert (tmp_path / "run" / "labels.jsonl").read_bytes() == expected
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["phases"]["labels"]["pairs_resumed"] == 16


def test_a_folder_of_another_run_is_refused(tiny_index, tmp_path):
    from logic_rag.finetune.adapt import AdaptError, AdaptSettings, adapt

    index, queries = tiny_index
    done = _child(index, queries, tmp_path / "run", 0)
    assert done.returncode == 0, done.stderr[-2000:]
    with pytest.raises(AdaptError, match="another adapt run"):
        adapt(
            index,
            tmp_path / "run",
            queries=queries,
            verifier="embedding",
            settings=AdaptSettings(max_pairs=60, top_k=5, random_pages=2, label_batch=8),
            progress=False,
            stop_after="labels",
        )
