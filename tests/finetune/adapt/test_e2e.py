"""End to end on real QUEST-attr pages: an LLM teacher, a MiniLM student, all three products.

Default suite: SmolLM2-135M as the teacher (plumbing-grade verdicts: its P(yes) rarely
passes 0.5, so the run counts a pair as a member from 0.3), 60 pages, 10 questions of
``train_dev.jsonl``, a few training steps. The gold documents of those questions are used
only to pick which pages are in the small corpus, never as labels. The slow suite runs
Qwen2.5-1.5B as the teacher with the default threshold.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest


def _corpus(shared_data, questions=10, pages=60):
    folder = shared_data / "quest" / "attr"
    if not (folder / "documents.jsonl").is_file():
        pytest.skip(f"QUEST-attr data not found in {folder}")
    records = [json.loads(line) for line in (folder / "train_dev.jsonl").open()][:questions]
    by_title = {}
    with (folder / "documents.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            by_title[row["title"]] = row["text"]
    titles = sorted({t for r in records for t in r["docs"][:3] if t in by_title})
    titles += random.Random(0).sample(sorted(by_title), pages)
    titles = list(dict.fromkeys(titles))[:pages]
    return [r["query"] for r in records], [(t, by_title[t]) for t in titles]


@pytest.fixture(scope="module")
def small_index(shared_data, minilm, tmp_path_factory):
    from logic_rag import Document
    from logic_rag.logic_retriever import LogicRetriever

    questions, pages = _corpus(shared_data)
    root = tmp_path_factory.mktemp("adapt-e2e")
    docs = [Document(id=t, title=t, text=x) for t, x in pages]
    LogicRetriever.build(docs, model=minilm).save(root / "index")
    log = root / "questions.jsonl"
    log.write_text("".join(json.dumps({"query": q}) + "\n" for q in questions))
    return root / "index", log, docs


def _check_products(result, docs):
    from logic_rag.finetune.adapt import load_calibration
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier

    phases = result.phases
    assert list(phases) == [
        "atoms",
        "labels",
        "composed",
        "model",
        "verifier",
        "calibration",
        "card",
    ]
    assert phases["atoms"]["source"] == "queries" and len(phases["atoms"]["atoms"]) >= 10
    assert 0 < phases["labels"]["pairs_planned"] <= 40
    assert phases["composed"]["queries"] >= 2
    # The bi-encoder indexes and searches like any model folder.
    adapted = LogicRetriever.build(docs[:10], model=str(result.model), passages=False)
    assert len(adapted.search("Bulgarian animated films", k=3)) == 3
    # The verifier loads through its spec and gives probabilities.
    probs = CrossEncoderVerifier(model=str(result.verifier)).verify_pairs(
        [("Bulgarian animated films", docs[0].content)]
    )
    assert 0.0 < float(probs[0]) < 1.0
    calibration = load_calibration(result.calibration)
    assert np.all(np.diff(calibration.knots_y) >= 0)
    assert 0.0 < calibration.knots_y.min() and calibration.knots_y.max() < 1.0
    assert calibration.fingerprint["encoder"]["name"] == "minilm"
    card = result.card.read_text()
    assert "llm:" in card and "## Seconds per phase" in card and "None measured" in card


def test_smollm2_teacher_minilm_student_end_to_end(small_index, tmp_path):
    from logic_rag.finetune.adapt import AdaptSettings, adapt

    index, log, docs = small_index
    settings = AdaptSettings(
        max_pairs=40,
        top_k=4,
        random_pages=1,
        max_chars=300,
        yes_threshold=0.3,
        max_steps=2,
        batch_size=8,
        verifier_max_steps=2,
        verifier_batch_size=8,
    )
    kwargs = dict(queries=log, verifier="llm:smollm2-135m", settings=settings, progress=False)
    result = adapt(index, tmp_path / "run", **kwargs)
    _check_products(result, docs)
    labels = (tmp_path / "run" / "labels.jsonl").read_text().splitlines()
    assert len(labels) == result.phases["labels"]["pairs_planned"]
    # A second call finds every phase done: nothing is labelled or trained again.
    again = adapt(index, tmp_path / "run", **kwargs)
    assert {k: v for k, v in again.phases.items() if k != "card"} == {
        k: v for k, v in result.phases.items() if k != "card"
    }
    assert (tmp_path / "run" / "labels.jsonl").read_text().splitlines() == labels


def test_cli_bad_index_is_one_line_and_exit_2(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "logic_rag",
            "adapt",
            str(tmp_path / "nowhere"),
            "--out",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("logic-rag adapt: error: ")
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_qwen_teacher_end_to_end(small_index, qwen_1_5b, tmp_path):
    from logic_rag.finetune.adapt import AdaptSettings, adapt

    index, log, docs = small_index
    settings = AdaptSettings(
        max_pairs=40,
        top_k=4,
        random_pages=1,
        max_steps=2,
        batch_size=8,
        verifier_max_steps=2,
        verifier_batch_size=8,
    )
    result = adapt(
        index,
        tmp_path / "run",
        queries=log,
        verifier=f"llm:{qwen_1_5b}",
        settings=settings,
        progress=False,
    )
    _check_products(result, docs)
    assert result.phases["labels"]["yes"] > 0
