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

PAGES = {
    "Roma (film)": "Roma is a 2018 Mexican drama film set in Mexico City.",
    "La dolce vita": "La dolce vita is a 1960 Italian comedy-drama film shot in Rome.",
    "Gomorrah (film)": "Gomorrah is a 2008 Italian crime drama film set in Naples.",
    "Suburra (film)": "Suburra is a 2015 Italian crime film set in Rome.",
    "Il Divo": "Il Divo is a 2008 Italian biographical film about Giulio Andreotti.",
    "Nana (novel)": "Nana is an 1880 French novel by Emile Zola set in Paris.",
    "Les Miserables": "Les Miserables is an 1862 French historical novel set in Paris.",
    "The Stranger": "The Stranger is a 1942 novel by the French author Albert Camus set in Algiers.",
    "Cattleya": "Cattleya is a genus of orchids from Costa Rica and South America.",
    "Vanda": "Vanda is a genus of orchids found in Malaysia and Thailand.",
    "Bulbophyllum": "Bulbophyllum is the largest genus of orchids, common in Malaysia.",
    "Frigatebird": "The magnificent frigatebird is a seabird of Guadeloupe.",
}
QUERIES = [
    "Italian crime films that are also films set in Rome",
    "French novels but not novels set in Paris",
    "Orchids of Malaysia or orchids of Thailand",
]


@pytest.fixture(scope="module")
def index_and_queries(minilm, tmp_path_factory):
    from logic_rag import Document
    from logic_rag.logic_retriever import LogicRetriever

    root = tmp_path_factory.mktemp("adapt-resume")
    docs = [Document(id=t, title=t, text=x) for t, x in PAGES.items()]
    LogicRetriever.build(docs, model=minilm).save(root / "index")
    queries = root / "queries.jsonl"
    queries.write_text("".join(json.dumps({"query": q}) + "\n" for q in QUERIES))
    return root / "index", queries


def _child(index, queries, out, kill_after):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LOGIC_RAG_DEFAULT_MODEL": "minilm"}
    return subprocess.run(
        [sys.executable, str(CHILD), str(index), str(queries), str(out), str(kill_after)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_resume_after_a_kill_mid_labelling_gives_the_same_labels(index_and_queries, tmp_path):
    index, queries = index_and_queries
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

    resumed = _child(index, queries, tmp_path / "run", 0)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"scored {planned - 16}" in resumed.stdout  # the 16 done pairs were not asked again
    assert (tmp_path / "run" / "labels.jsonl").read_bytes() == expected
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["phases"]["labels"]["pairs_resumed"] == 16


def test_a_folder_of_another_run_is_refused(index_and_queries, tmp_path):
    from logic_rag.finetune.adapt import AdaptError, AdaptSettings, adapt

    index, queries = index_and_queries
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
