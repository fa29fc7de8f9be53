"""Issue 51 item 12: a LlamaIndex node whose text is None (built with ``model_construct`` or
set past pydantic's checks) is reranked as an empty candidate, not an AttributeError."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")


def test_a_node_with_text_none_is_an_empty_candidate(minilm):
    from llama_index.core.schema import NodeWithScore, TextNode

    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker

    empty = TextNode(text="placeholder")
    object.__setattr__(empty, "text", None)
    avocado = TextNode(text="Avocados are creamy green fruits grown in California.")
    nodes = [NodeWithScore(node=empty, score=0.5), NodeWithScore(node=avocado, score=0.4)]
    out = LogicLlamaIndexReranker(model="minilm", top_n=2).postprocess_nodes(
        nodes, query_str="fruits grown in California"
    )
    assert out[0].node.node_id == avocado.node_id
    assert {n.node.node_id for n in out} == {empty.node_id, avocado.node_id}
