"""A FIFO in an index folder never hangs a load (issue 51 item 7; round 4 item 7 held).

Opening a FIFO for reading waits for a writer, forever: any of the index's files replaced
by one hung ``search``. Every file of the folder (the manifest and each listed file) is
now opened without blocking and its type checked before anything is read. Each load runs
in a child process with a deadline, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from logic_rag.corpus import Document
from logic_rag.logic_retriever import LogicRetriever

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

DOCS = [
    Document("d1", "Apples are crisp red fruits grown in orchards.", "Apple"),
    Document("d2", "Lemons are sour yellow citrus fruits.", "Lemon"),
    Document("d3", "Jazz is a music genre from New Orleans.", "Jazz"),
]

_LOAD = """
import sys
from logic_rag.errors import IndexCorruptError
from logic_rag.logic_retriever import LogicRetriever
try:
    LogicRetriever.load(sys.argv[1], model=sys.argv[2])
except IndexCorruptError as exc:
    print("refused:", exc)
else:
    print("loaded")
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory, minilm) -> tuple[Path, list[str]]:
    folder = LogicRetriever.build(DOCS, model=minilm).save(tmp_path_factory.mktemp("i") / "idx")
    listed = sorted(json.loads((folder / "manifest.json").read_text())["files"])
    return folder, ["manifest.json", *listed]


@pytest.mark.parametrize("index", range(8))
def test_a_fifo_in_place_of_any_index_file_is_refused_not_waited_on(built, tmp_path, index):
    folder, names = built
    if index >= len(names):
        pytest.skip(f"the index has {len(names)} files")
    name = names[index]
    copy = tmp_path / "idx"
    shutil.copytree(folder, copy)
    (copy / name).unlink()
    os.mkfifo(copy / name)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _LOAD, str(copy), "minilm"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading an index whose {name} is a FIFO hung")
    assert "refused:" in done.stdout, done.stdout + done.stderr[-2000:]
    assert name.split("/")[-1] in done.stdout
