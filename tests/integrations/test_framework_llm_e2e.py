"""End to end: ``quality`` with the LLM object a LlamaIndex query engine or a LangChain
LCEL chain already holds, driving real local models (issue 49).

* LlamaIndex: ``LocalLLM`` (SmolLM2-135M via transformers, a ``CustomLLM``: no logprobs,
  so the strict one-word path) is the query engine's LLM and the retriever's verifier.
* LangChain: ``GeneratorChatModel`` over SmolLM2 on llama.cpp is the chain's chat model
  and the retriever's verifier (unwrapped to its generator: exact logprobs).
* The salads case (Qwen2.5-1.5B, a dozen recipes, k = 3): no certified hit contains
  cheese.

Slow: each loads a model and asks it dozens of questions.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("langchain_core")

pytestmark = pytest.mark.slow


def _local_llm(**kwargs):
    from logic_rag.errors import ModelNotFoundError
    from logic_rag.integrations.llama_index import LocalLLM

    pytest.importorskip("gguf")
    llm = LocalLLM(model="smollm2-135m", **kwargs)
    try:
        llm._load()
    except ModelNotFoundError as exc:
        pytest.skip(str(exc))
    return llm


def test_a_llama_index_query_engine_runs_quality_with_its_own_llm(engine):
    from llama_index.core.query_engine import RetrieverQueryEngine

    from logic_rag.generators.framework import FrameworkLLM
    from logic_rag.integrations.llama_index import LogicLlamaIndexRetriever

    llm = _local_llm(max_new_tokens=2)
    retriever = LogicLlamaIndexRetriever(engine, similarity_top_k=2, strategy="quality", llm=llm)
    engine_ = RetrieverQueryEngine.from_args(retriever, llm=llm)
    response = engine_.query("fruits grown in California that are not berries")
    assert len(response.source_nodes) == 2
    meta = response.source_nodes[0].node.metadata
    cost = meta["llm_cost"]
    assert cost["calls"] > 0 and cost["covers"] == "every constraint"
    assert "certificate" in meta
    [stage] = [s for s in retriever._search_strategy if hasattr(s, "expensive")]
    scorer = stage.expensive._generator()
    assert isinstance(scorer, FrameworkLLM)
    counted = scorer.counters
    # Every answer is either a one-word Yes / No or a counted parse failure.
    assert counted["prompts"] == counted["text_answers"] + counted["parse_failures"] > 0
    assert cost["unusable"] <= counted["parse_failures"]


def test_a_langchain_lcel_chain_runs_quality_with_its_own_chat_model(engine):
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough

    from logic_rag.generators import make_generator
    from logic_rag.generators.llamacpp import llamacpp_available
    from logic_rag.integrations.langchain import GeneratorChatModel, LogicLangChainRetriever

    if not llamacpp_available():
        pytest.skip("llama-cpp-python is not installed; run `make setup`")
    chat = GeneratorChatModel(generator=make_generator("llamacpp:smollm2-135m"), max_tokens=24)
    retriever = LogicLangChainRetriever(engine=engine, k=2, strategy="quality", llm=chat)
    seen = []

    def context(docs):
        seen.extend(docs)
        return "\n".join(d.page_content for d in docs)

    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    chain = (
        {"context": retriever | context, "question": RunnablePassthrough()}
        | prompt
        | chat
        | StrOutputParser()
    )
    answer = chain.invoke("yellow fruits that are not citrus")
    assert isinstance(answer, str) and answer.strip()
    assert len(seen) == 2
    cost = seen[0].metadata["llm_cost"]
    assert cost["calls"] > 0 and cost["prompt_tokens"] > 0  # llama.cpp counts them
    assert set(seen[0].metadata["certificate"]) >= {"certified", "llm", "embedding_only"}


RECIPES = {
    "greek": ("Greek salad", "Tomatoes, cucumber, red onion, olives and a slab of feta cheese."),
    "caesar": ("Caesar salad", "Romaine lettuce, croutons and grated parmesan cheese."),
    "caprese": ("Caprese salad", "Sliced tomatoes with fresh mozzarella cheese and basil."),
    "cobb": ("Cobb salad", "Chicken, bacon, egg, avocado and crumbled blue cheese."),
    "tabbouleh": ("Tabbouleh", "A salad of parsley, mint, bulgur, tomato and lemon juice."),
    "somtam": ("Som tam", "A Thai salad of shredded green papaya, chili, lime and peanuts."),
    "bean": ("Three-bean salad", "A salad of green beans, kidney beans and chickpeas in vinegar."),
    "slaw": ("Carrot slaw", "A salad of shredded carrot and cabbage with a ginger dressing."),
    "lasagna": ("Lasagna", "Baked pasta sheets layered with meat sauce and ricotta cheese."),
    "risotto": ("Mushroom risotto", "Arborio rice slowly cooked with mushrooms and stock."),
    "stew": ("Beef stew", "Beef, potatoes and carrots simmered for hours."),
    "bread": ("Banana bread", "A sweet loaf of mashed bananas, flour and butter."),
}
CHEESE = {"greek", "caesar", "caprese", "cobb", "lasagna"}


def test_salads_without_cheese_no_certified_hit_contains_cheese(minilm, qwen_1_5b):
    from logic_rag import Document, QualitySettings
    from logic_rag.logic_retriever import LogicRetriever

    docs = [Document(id=key, title=t, text=body) for key, (t, body) in RECIPES.items()]
    retriever = LogicRetriever.build(
        docs,
        model=minilm,
        strategy="quality",
        settings=QualitySettings(verifier=f"llm:{qwen_1_5b}", max_calls=None),
    )
    hits = retriever.search("salads without cheese", k=3, strategy="quality")
    cost = hits[0].logic["llm"]
    assert cost["covers"] == "every constraint"
    certified = [h.id for h in hits if cost["hits"][h.id]["certified"]]
    assert not set(certified) & CHEESE, (certified, cost["hits"])
    for hit in hits:  # each hit's NOT was put to the LLM, or the hit was decided without it
        entry = cost["hits"][hit.id]
        # the rules read the NOT as "salads with cheese": whatever its words, it was asked
        assert any(c.startswith("NOT ") for c in entry["llm"] + entry["irrelevant"]), entry
    if cost["certified"]:
        assert not {h.id for h in hits} & CHEESE
