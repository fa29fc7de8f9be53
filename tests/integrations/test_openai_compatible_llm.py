"""``quality`` with LlamaIndex's ``OpenAILike`` and LangChain's ``ChatOpenAI`` pointed at a
real OpenAI-compatible server (vLLM's, on CPU), the way a user of either framework holds
their LLM (issue 49).

What it shows: the frameworks' own client classes, unmodified, drive the constraint
checks; the server's log-probabilities are read (no one-word parse path: every prompt is
a ``logprob_answers`` count, none a parse failure); the LLM cost lands in the node's /
document's metadata.

The server runs from the vLLM environment (``make vllm-env``); this test runs in the main
one, which has the frameworks: ``make test-vllm`` sets ``LOGIC_RAG_VLLM_PYTHON`` to that
environment's python. Without it the test skips and says so.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.vllm

QUERY = "fruits grown in California that are not berries"


@pytest.fixture(scope="module")
def server():
    python = os.environ.get("LOGIC_RAG_VLLM_PYTHON")
    if not python or not Path(python).is_file():
        pytest.skip(
            "no vLLM environment: set LOGIC_RAG_VLLM_PYTHON to its python "
            "(`make vllm-env` builds .venv-vllm; `make test-vllm` sets it)"
        )
    from logic_rag.generators.openai_server import serve

    with serve("smollm2-135m", python=python, max_model_len=2048, kv_cache_space_gib=1) as running:
        yield running


def _counted(retriever) -> dict[str, int]:
    from logic_rag.generators.framework import FrameworkLLM

    [stage] = [s for s in retriever._search_strategy if hasattr(s, "expensive")]
    scorer = stage.expensive._generator()
    assert isinstance(scorer, FrameworkLLM)
    return scorer.counters


def test_llama_index_openai_like_runs_quality_on_logprobs(engine, server):
    pytest.importorskip("llama_index.llms.openai_like")
    from llama_index.llms.openai_like import OpenAILike

    from logic_rag.integrations.llama_index import LogicLlamaIndexRetriever

    llm = OpenAILike(
        model=server.model,
        api_base=server.base_url,
        api_key="unused",
        is_chat_model=True,
        context_window=2048,
        max_tokens=2,
    )
    retriever = LogicLlamaIndexRetriever(engine, similarity_top_k=2, strategy="quality", llm=llm)
    nodes = retriever.retrieve(QUERY)
    assert len(nodes) == 2
    cost = nodes[0].node.metadata["llm_cost"]
    assert cost["calls"] > 0 and cost["covers"] == "every constraint"
    counted = _counted(retriever)
    assert counted["prompts"] == counted["logprob_answers"] > 0
    assert counted["parse_failures"] == 0


def test_langchain_chat_openai_runs_quality_on_logprobs(engine, server):
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    from logic_rag.integrations.langchain import LogicLangChainRetriever

    chat = ChatOpenAI(model=server.model, base_url=server.base_url, api_key="unused", max_tokens=2)
    retriever = LogicLangChainRetriever(engine=engine, k=2, strategy="quality", llm=chat)
    docs = retriever.invoke(QUERY)
    assert len(docs) == 2
    cost = docs[0].metadata["llm_cost"]
    assert cost["calls"] > 0 and cost["covers"] == "every constraint"
    counted = _counted(retriever)
    assert counted["prompts"] == counted["logprob_answers"] > 0
    assert counted["parse_failures"] == 0
