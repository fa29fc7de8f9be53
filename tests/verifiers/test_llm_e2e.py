"""End to end on real QUEST pages: the `verify` strategy with Qwen2.5-1.5B as its verifier.

Ten real novel pages (six science fiction, four not); the LLM answers "is this page one
of the science fiction novels?" for each, and its probabilities must separate the two
groups. Slow: the model loads in seconds on llama.cpp, ~50 s on transformers.
"""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.slow

ATOM = "science fiction novels"


def test_verify_with_the_llm_separates_members_on_real_pages(quest_novel_pages, minilm, qwen_1_5b):
    pages = quest_novel_pages
    from logic_rag import Document
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.strategy_settings import VerifySettings

    docs = [Document(id=p["title"], title=p["title"], text=p["text"]) for p in pages]
    member = {p["title"]: "science fiction" in p["text"].lower() for p in pages}
    retriever = LogicRetriever.build(
        docs, model=minilm, strategy="verify", settings=VerifySettings(verifier="llm:qwen2.5-1.5b")
    )
    hits = retriever.search(ATOM, k=len(docs), strategy="verify")
    assert {h.id for h in hits} == set(member)
    p = {h.id: h.constraint_scores[ATOM] for h in hits}
    yes = np.array([p[t] for t in member if member[t]])
    no = np.array([p[t] for t in member if not member[t]])
    assert len(yes) == 6 and len(no) == 4
    auc = float((yes[:, None] > no[None, :]).mean() + 0.5 * (yes[:, None] == no[None, :]).mean())
    assert auc >= 0.75, (auc, p)
    top5 = [h.id for h in hits[:5]]
    assert sum(member[t] for t in top5) >= 4, top5


def test_the_llm_cascade_re_ranks_only_the_top_of_the_embedding_ranking(
    quest_novel_pages, minilm, qwen_1_5b
):
    """``verifier_top``: Qwen re-checks the embedding ranking's best 4 pages, the rest keep
    their embedding order and evidence."""
    from logic_rag import Document
    from logic_rag.logic_retriever import LogicRetriever

    docs = [Document(id=p["title"], title=p["title"], text=p["text"]) for p in quest_novel_pages]
    embedding = LogicRetriever.build(docs, model=minilm)
    first = embedding.search(ATOM, k=len(docs), strategy="verify")
    from logic_rag.strategy_settings import VerifySettings

    cascade = embedding.with_settings(VerifySettings(verifier="llm:qwen2.5-1.5b", verifier_top=4))
    hits = cascade.search(ATOM, k=len(docs), strategy="verify")
    assert {h.id for h in hits[:4]} == {h.id for h in first[:4]}
    assert [h.id for h in hits[4:]] == [h.id for h in first[4:]]
    before = {h.id: h.constraint_scores[ATOM] for h in first}
    after = {h.id: h.constraint_scores[ATOM] for h in hits}
    assert all(after[h.id] == before[h.id] for h in hits[4:])  # not re-checked
    assert any(after[h.id] != before[h.id] for h in hits[:4])  # the LLM's verdicts
