"""End to end: a LlamaIndex query engine over our retriever, answered by a real local LLM."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("gguf")


@pytest.mark.slow
def test_query_engine_with_local_smollm2(engine):
    from llama_index.core.query_engine import RetrieverQueryEngine

    from logic_rag.errors import ModelNotFoundError
    from logic_rag.integrations.llama_index import LocalLLM, LogicLlamaIndexRetriever

    prompts: list[str] = []

    class RecordingLLM(LocalLLM):
        def _generate(self, messages, max_new_tokens):
            prompts.append("\n".join(m["content"] for m in messages))
            return super()._generate(messages, max_new_tokens)

    llm = RecordingLLM(model="smollm2-135m", max_new_tokens=24)
    try:
        llm._load()
    except ModelNotFoundError as exc:
        pytest.skip(str(exc))
    retriever = LogicLlamaIndexRetriever(engine, similarity_top_k=1)
    qe = RetrieverQueryEngine.from_args(retriever, llm=llm)
    response = qe.query("Where are bananas grown?")
    assert response.source_nodes[0].node.node_id == "d3"  # the banana document
    # The retrieved text reached the model; our explanation metadata did not.
    assert len(prompts) == 1 and "Bananas are long yellow tropical fruits" in prompts[0]
    assert "constraint" not in prompts[0]
    answer = str(response)
    assert answer.strip()
    # A 135M model is plumbing-grade, but with the right context it names the country.
    assert "ecuador" in answer.lower(), answer
