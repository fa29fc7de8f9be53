"""Issue 32, case 2: one huge text does not set the memory or time of indexing or search.

Peak RSS of ``logic-rag index`` on a corpus holding one 50 MB document must stay within
1.5x of the same corpus without it (each measured in its own subprocess with
``resource``); a huge rerank candidate is bounded before it reaches the tokenizer; and the
cut is reported (a warning and the manifest), never silent.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from logic_rag.corpus import Document, TextBudget
from logic_rag.index.passages import split_sentences

HUGE_BYTES = 50 * 2**20
# Runs the CLI in a fresh process and prints its own peak RSS (KiB) as the last line:
# VmHWM, which starts afresh at exec, where resource's ru_maxrss would keep the forking
# pytest's (torch-sized) peak and hide the difference.
_MEASURE = """
import runpy, sys
sys.argv = ["logic-rag", *sys.argv[1:]]
try:
    runpy.run_module("logic_rag", run_name="__main__")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print("PEAK_RSS_KIB", line.split()[1])
sys.exit(code)
"""


def _normal_docs(n: int) -> list[dict]:
    return [
        {
            "id": f"d{i}",
            "title": f"Topic {i}",
            "text": f"Topic {i} is a subject. It was studied in year {1900 + i}. Many wrote on it.",
        }
        for i in range(n)
    ]


def _huge_text() -> str:
    sentence = "The river {i} flows north past the old mill. "
    parts: list[str] = []
    size = 0
    i = 0
    while size < HUGE_BYTES:
        part = sentence.format(i=i)
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts)


def _index_peak(tmp: Path, rows: list[dict], name: str) -> int:
    corpus = tmp / f"{name}.jsonl"
    with corpus.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env["LOGIC_RAG_DEFAULT_MODEL"] = "minilm"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _MEASURE,
            "index",
            "--docs",
            str(corpus),
            "--model",
            "minilm",
            "--out",
            str(tmp / f"{name}.idx"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    peak = [line for line in done.stdout.splitlines() if line.startswith("PEAK_RSS_KIB")]
    assert peak, done.stdout[-2000:]
    if name == "huge":
        assert "cut" in done.stderr, done.stderr[-2000:]  # the cut is reported
    return int(peak[-1].split()[1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_d32_02_one_50mb_document_keeps_index_peak_rss_within_1_5x(tmp_path):
    normal = _normal_docs(100)
    base = _index_peak(tmp_path, normal, "base")
    huge = _index_peak(
        tmp_path, [*normal, {"id": "huge", "title": "Huge", "text": _huge_text()}], "huge"
    )
    assert huge <= 1.5 * base, f"peak RSS {huge} KiB with the 50 MB document vs {base} KiB without"
    manifest = json.loads((tmp_path / "huge.idx" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["text_budget"]["documents_cut"] == 1
    assert manifest["text_budget"]["longest_document_chars"] >= HUGE_BYTES
    stored = (tmp_path / "huge.idx" / "documents.jsonl").read_text(encoding="utf-8")
    assert len(stored) > HUGE_BYTES  # the document itself is kept whole


def test_d32_02_budget_cuts_and_reports(caplog):
    budget = TextBudget(10)
    with caplog.at_level(logging.WARNING):
        out = budget.apply(["short", "x" * 25, "y" * 10])
    assert out == ["short", "x" * 10, "y" * 10]
    assert budget.record() == {
        "max_document_chars": 10,
        "documents_cut": 1,
        "longest_document_chars": 25,
    }
    assert "1 of 3 documents" in caplog.text


def test_d32_02_sentence_split_of_a_long_text_keeps_at_most_32_passages():
    text = " ".join(f"Sentence {i} is here." for i in range(5000))
    parts = split_sentences(text)
    assert len(parts) == 32
    assert parts[0] == "Sentence 0 is here."
    huge = split_sentences("Another short one. " * 1_000_000)  # 19 MB, read up to 100k chars
    assert len(huge) == 32 and sum(map(len, huge)) <= 100_000


def test_d32_02_a_huge_rerank_candidate_is_bounded_before_tokenizing(minilm, caplog):
    huge = "word " * 4_000_000  # 20 MB
    seen: list[int] = []
    tokenizer = minilm.model.tokenizer
    original = tokenizer.__class__.__call__

    def spy(self, texts, *args, **kwargs):
        seen.extend(len(t) for t in (texts if isinstance(texts, list) else [texts]))
        return original(self, texts, *args, **kwargs)

    tokenizer.__class__.__call__ = spy
    try:
        with caplog.at_level(logging.INFO):
            vectors = minilm.encode_documents(["a short text", huge])
    finally:
        tokenizer.__class__.__call__ = original
    assert vectors.shape[0] == 2 and np.isfinite(vectors).all()
    assert max(seen) <= minilm.max_chars
    assert minilm.texts_cut >= 1 and "were cut" in caplog.text
    # The cut changes nothing the model reads: the vector equals that of the cut text.
    np.testing.assert_allclose(
        vectors[1], minilm.encode_documents([huge[: minilm.max_chars]])[0], atol=1e-5
    )


def test_d32_02_documents_keep_their_whole_text_in_the_index(minilm, tmp_path):
    from logic_rag.logic_retriever import LogicRetriever

    docs = [
        Document(id="a", title="A", text="Alpha. " * 20),
        Document(id="b", title="B", text="Beta is a letter."),
    ]
    built = LogicRetriever.build(docs, model=minilm, max_document_chars=30)
    assert built.dense.text_budget is not None and built.dense.text_budget.cut == 1
    built.save(tmp_path / "idx")
    loaded = LogicRetriever.load(tmp_path / "idx", model=minilm)
    assert loaded.documents[0].text == "Alpha. " * 20
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["text_budget"] == {
        "max_document_chars": 30,
        "documents_cut": 1,
        "longest_document_chars": len("A\n" + "Alpha. " * 20),
    }
