"""A tiny real index shared by the adapt tests."""

from __future__ import annotations

import json

import pytest

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
def tiny_index(minilm, tmp_path_factory):
    """Twelve short pages indexed with MiniLM, and a log of three questions."""
    from logic_rag import Document
    from logic_rag.logic_retriever import LogicRetriever

    root = tmp_path_factory.mktemp("adapt-resume")
    docs = [Document(id=t, title=t, text=x) for t, x in PAGES.items()]
    LogicRetriever.build(docs, model=minilm).save(root / "index")
    queries = root / "queries.jsonl"
    queries.write_text("".join(json.dumps({"query": q}) + "\n" for q in QUERIES))
    return root / "index", queries
