"""``k`` of every search: numpy integers work; floats, strings and None get a clear error."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def engine(minilm):
    from logic_rag import Document, LogicRetriever

    texts = ["red apples", "green pears", "yellow bananas", "red cherries", "blue berries"]
    return LogicRetriever.build(
        [Document(id=str(i), text=t) for i, t in enumerate(texts)], model=minilm
    )


@pytest.mark.parametrize("k", [2.5, "3", None, True])
def test_a_k_that_is_not_an_integer_is_named(engine, k):
    with pytest.raises(TypeError, match="k must be a positive integer"):
        engine.search("red fruit", k=k)
    with pytest.raises(TypeError, match="k must be a positive integer"):
        engine.dense.search("red fruit", k=k)


def test_numpy_integers_are_integers(engine):
    assert len(engine.search("red fruit", k=np.int64(2))) == 2
    assert len(engine.dense.search("red fruit", k=np.int32(3))) == 3
    from logic_rag.integrations.llama_index import LogicLlamaIndexRetriever

    retriever = LogicLlamaIndexRetriever(engine, similarity_top_k=np.int64(2))
    assert len(retriever.retrieve("red fruit")) == 2
