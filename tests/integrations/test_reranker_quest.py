"""End to end on real QUEST pages and MiniLM: a negation query pushes its violators down."""

from __future__ import annotations

import pytest

QUERY = "novels that are not science fiction novels"


@pytest.fixture(scope="module")
def pages(quest_novel_pages):
    return quest_novel_pages


def _sf(text: str) -> bool:
    return "science fiction" in text.lower()


def test_negation_moves_science_fiction_down(pages, minilm):
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    from logic_rag.integrations.langchain import LogicLangChainReranker

    docs = [
        Document(page_content=p["text"], metadata={"title": p["title"]}, id=p["title"])
        for p in pages
    ]
    before = [_sf(d.page_content) for d in docs]
    assert before[:6] == [True] * 6 and not any(before[6:])
    out = LogicLangChainReranker(minilm, top_n=None).compress_documents(docs, QUERY)
    after = [_sf(d.page_content) for d in out]
    assert len(out) == len(docs)
    # The input's first page (a science fiction novel) moves down, and pages that satisfy
    # the negated constraint move into the top five.
    assert out[0].id != docs[0].id
    assert [d.id for d in out].index(docs[0].id) >= 2
    assert sum(after[:5]) <= 3 < sum(before[:5])
    for doc in out:
        assert "NOT science fiction novels" in doc.metadata["constraints"]
