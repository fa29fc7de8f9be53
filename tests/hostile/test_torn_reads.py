"""Issue 32, case 1: a reader racing a writer sees one whole index, never a mix.

One process saves two different indexes to the same folder in a loop while this one loads
that folder in a loop, for a bounded time. Every load must be exactly one of the two
(documents, FAISS vectors and sentence vectors of the same index), and none may call the
intact folder corrupt.
"""

from __future__ import annotations

import multiprocessing
import os
import time

import numpy as np
import pytest

from logic_rag.corpus import Document
from logic_rag.errors import IndexCorruptError
from logic_rag.logic_retriever import LogicRetriever

RACE_SECONDS = 4.0


def _docs(prefix: str, topic: str, n: int) -> list[Document]:
    return [
        Document(
            id=f"{prefix}{i}",
            title=f"{topic} {i}",
            text=f"{topic} number {i} is described here. It has property {i * 7 % 5}.",
        )
        for i in range(n)
    ]


def _save_loop(a: LogicRetriever, b: LogicRetriever, out: str, until: float) -> None:
    while time.monotonic() < until:
        for retriever in (a, b):
            retriever.save(out)
    os._exit(0)  # skip the forked interpreter's teardown (torch, tokenizers)


def _which(loaded: LogicRetriever, expected: dict[str, LogicRetriever]) -> str:
    """'a' or 'b' when every part of ``loaded`` is that index's, else 'mixed'."""
    prefixes = {d.id[0] for d in loaded.documents}
    if len(prefixes) != 1:
        return "mixed"
    name = prefixes.pop()
    want = expected[name]
    same = (
        len(loaded.documents) == len(want.documents)
        and np.array_equal(loaded.dense.index.vectors(), want.dense.index.vectors())
        and np.array_equal(loaded.passages.vectors, want.passages.vectors)
        and np.array_equal(loaded.passages.offsets, want.passages.offsets)
    )
    return name if same else "mixed"


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs fork to share the model"
)
def test_d32_01_loads_racing_saves_are_never_mixed_nor_called_corrupt(tmp_path, minilm):
    a = LogicRetriever.build(_docs("a", "Orchid", 12), model=minilm)
    b = LogicRetriever.build(_docs("b", "Locomotive", 7), model=minilm)
    assert not np.array_equal(a.dense.index.vectors()[:7], b.dense.index.vectors())
    live = tmp_path / "live"
    a.save(live)
    until = time.monotonic() + RACE_SECONDS
    writer = multiprocessing.get_context("fork").Process(
        target=_save_loop, args=(a, b, str(live), until)
    )
    writer.start()
    counts = {"a": 0, "b": 0, "mixed": 0, "corrupt": 0}
    errors: list[str] = []
    try:
        while time.monotonic() < until:
            try:
                loaded = LogicRetriever.load(live, model=minilm)
            except (IndexCorruptError, FileNotFoundError) as exc:  # intact, only being replaced
                counts["corrupt"] += 1
                errors.append(str(exc))
                continue
            counts[_which(loaded, {"a": a, "b": b})] += 1
    finally:
        writer.join(timeout=60)
    print(f"torn-read race: {counts}")  # shown with -s
    assert writer.exitcode == 0
    assert counts["mixed"] == 0, (counts, errors[:3])
    assert counts["corrupt"] == 0, (counts, errors[:3])
    assert counts["a"] + counts["b"] >= 5, counts  # the loop really ran
