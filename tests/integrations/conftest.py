"""A ten-document corpus and one logic-aware engine over it, built once per module."""

from __future__ import annotations

import pytest

TEXTS = [
    "Apples are crisp red or green fruits grown in orchards in Washington.",
    "Oranges are sweet citrus fruits grown in Spain and Florida.",
    "Lemons are sour yellow citrus fruits used in lemonade.",
    "Bananas are long yellow tropical fruits grown in Ecuador.",
    "Strawberries are small red berries grown in California.",
    "Carrots are orange root vegetables rich in vitamin A.",
    "Broccoli is a green vegetable related to cabbage.",
    "Salmon is an oily fish that swims upstream to spawn.",
    "Tuna is a large ocean fish often canned.",
    "Almonds are nuts grown in California orchards.",
]
TITLES = [t.split()[0] for t in TEXTS]

#: A query with logic in it: the rule decomposer reads "A that are not B".
LOGIC_QUERY = "fruits grown in California that are not berries"
QUERIES = [
    LOGIC_QUERY,
    "citrus fruits",
    "fish",
    "yellow fruits that are not citrus",
    "vegetables or nuts",
    "red fruit",
]


@pytest.fixture(scope="module")
def engine(minilm):
    """A ``logic_rag.LogicRetriever`` over :data:`TEXTS` (ids d0..d9)."""
    from logic_rag.corpus import Document
    from logic_rag.logic_retriever import LogicRetriever

    docs = [
        Document(id=f"d{i}", text=t, title=TITLES[i], metadata={"n": i})
        for i, t in enumerate(TEXTS)
    ]
    return LogicRetriever.build(docs, model=minilm)


@pytest.fixture(scope="session")
def texts() -> list[str]:
    return list(TEXTS)


@pytest.fixture(scope="session")
def queries() -> list[str]:
    return list(QUERIES)
