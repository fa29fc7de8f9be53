"""The LLM a LlamaIndex / LangChain pipeline already holds, as the verifier (issue 49).

Unit tests of our reading of replies use small subclasses of the real framework base
classes (LlamaIndex ``CustomLLM``, LangChain ``BaseChatModel``) that return fixed replies;
the end-to-end tests drive real local models through the real classes (``LocalLLM``,
``GeneratorLLM``, ``GeneratorChatModel``) and are marked slow where they take more than a
few seconds.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("langchain_core")

from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from llama_index.core.base.llms.types import (  # noqa: E402
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    LLMMetadata,
    LogProb,
    MessageRole,
)
from llama_index.core.llms.custom import CustomLLM  # noqa: E402

from logic_rag.generators.framework import FrameworkLLM, as_choice_scorer, read_yes_no  # noqa: E402


# ---------------------------------------------------------------------- doubles
class FixedLlamaLLM(CustomLLM):
    """A LlamaIndex LLM that answers every chat with ``text`` (and ``top`` as the first
    token's logprobs when given); records the calls and how many ran at once."""

    text: str = "Yes"
    top: list[tuple[str, float]] | None = None
    prompt_tokens: int | None = None
    calls: list[Any] = []
    peak: int = 0
    running: int = 0

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(is_chat_model=True, model_name="fixed")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.text)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    def chat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        raise AssertionError("the verifier must use the async call")

    async def achat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        self.calls.append((list(messages), kwargs))
        self.running += 1
        self.peak = max(self.peak, self.running)
        await asyncio.sleep(0.01)
        self.running -= 1
        logprobs = None
        if self.top is not None and kwargs.get("logprobs"):
            logprobs = [[LogProb(token=t, logprob=lp, bytes=[]) for t, lp in self.top]]
        raw = {"usage": {"prompt_tokens": self.prompt_tokens}} if self.prompt_tokens else None
        return ChatResponse(
            message=ChatMessage(role=MessageRole.ASSISTANT, content=self.text),
            logprobs=logprobs,
            raw=raw,
        )


class FixedChatModel(BaseChatModel):
    """A LangChain chat model that answers ``text`` and, asked for logprobs, the
    OpenAI-shaped ``response_metadata["logprobs"]`` of ``top``."""

    text: str = "No"
    top: list[tuple[str, float]] | None = None

    @property
    def _llm_type(self) -> str:
        return "fixed"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
        meta: dict[str, Any] = {}
        if self.top is not None and kw.get("logprobs"):
            entries = [{"token": t, "logprob": lp} for t, lp in self.top]
            meta["logprobs"] = {"content": [{**entries[0], "top_logprobs": entries}]}
        message = AIMessage(
            content=self.text,
            response_metadata=meta,
            usage_metadata={"input_tokens": 31, "output_tokens": 1, "total_tokens": 32},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


# ---------------------------------------------------------------------- reading replies
@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Yes", True),
        ("No", False),
        ("yes.", True),
        (" **No**", False),
        ("Yes, it is a salad.", True),
        ("Yesterday", None),
        ("Maybe", None),
        ("I think yes", None),
        ("", None),
        ("Nope", None),
    ],
)
def test_a_one_word_answer_is_read_strictly(text, said):
    assert read_yes_no(text) is said


def test_parse_failures_are_counted_and_never_read_as_yes():
    llm = FixedLlamaLLM(text="It depends on the dressing.", calls=[])
    scorer = FrameworkLLM(llm)
    rows = scorer.choice_logprobs(["p1", "p2", "p3"], ("Yes", "No"), system="Answer Yes or No.")
    assert np.isnan(rows).all()
    assert scorer.counters["parse_failures"] == 3 and scorer.counters["text_answers"] == 0
    # The verifier turns them into unusable (NaN) verdicts, counted, not P = 0.5.
    from logic_rag.verifiers.llm import LLMVerifier

    verifier = LLMVerifier(generator=llm)
    assert np.isnan(verifier.verify_pairs([("salads", "a page")])).all()
    assert verifier.stats()["unusable"] == 1


def test_one_word_answers_become_certain_choices_through_the_async_call():
    llm = FixedLlamaLLM(text="No.", calls=[])
    scorer = FrameworkLLM(llm, concurrency=3)
    rows = scorer.choice_logprobs([f"p{i}" for i in range(9)], ("Yes", "No"), system="S")
    assert np.all(rows[:, 0] == -math.inf) and np.all(rows[:, 1] == 0.0)
    assert scorer.counters["text_answers"] == 9
    assert 1 < llm.peak <= 3  # concurrent, bounded
    messages, kwargs = llm.calls[0]
    assert [m.role for m in messages] == [MessageRole.SYSTEM, MessageRole.USER]
    assert kwargs["logprobs"] is True and kwargs["top_logprobs"] == 20


def test_llama_index_logprobs_are_read_where_the_llm_returns_them():
    top = [("Yes", -0.2), ("No", -1.8), ("The", -4.0)]
    llm = FixedLlamaLLM(text="Yes", top=top, prompt_tokens=44, calls=[])
    scorer = FrameworkLLM(llm)
    rows = scorer.choice_logprobs(["p1", "p2"], ("Yes", "No"))
    assert np.allclose(rows, [[-0.2, -1.8], [-0.2, -1.8]])
    assert scorer.counters["logprob_answers"] == 2
    assert scorer.counters["prompt_tokens"] == 88


def test_langchain_logprobs_and_usage_are_read_from_the_message():
    model = FixedChatModel(text="No", top=[("No", -0.1), ("Yes", -2.4)])
    scorer = FrameworkLLM(model)
    rows = scorer.choice_logprobs(["p"], ("Yes", "No"), system="S")
    assert np.allclose(rows, [[-2.4, -0.1]])
    assert scorer.counters["prompt_tokens"] == 31 and scorer.counters["logprob_answers"] == 1
    plain = FrameworkLLM(FixedChatModel(text="Yes"))
    assert np.allclose(plain.choice_logprobs(["p"], ("Yes", "No")), [[0.0, -math.inf]])


def test_logprobs_true_refuses_a_text_only_llm_as_unusable():
    scorer = FrameworkLLM(FixedChatModel(text="Yes"), logprobs=True)
    assert np.isnan(scorer.choice_logprobs(["p"], ("Yes", "No"))).all()
    assert scorer.counters["parse_failures"] == 1


def test_anything_else_is_refused_in_one_line():
    with pytest.raises(TypeError, match="LlamaIndex LLM, a LangChain chat model"):
        as_choice_scorer(object())
    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker

    with pytest.raises(TypeError, match="llm must be"):
        LogicLlamaIndexReranker("minilm", strategy="quality", llm=42)


def test_works_when_called_from_inside_a_running_event_loop():
    llm = FixedLlamaLLM(text="Yes", calls=[])
    scorer = FrameworkLLM(llm)

    async def inside() -> Any:
        return scorer.choice_logprobs(["p"], ("Yes", "No"))

    assert np.allclose(asyncio.run(inside()), [[0.0, -math.inf]])


# ---------------------------------------------------------------------- adapters
def test_the_llama_index_reranker_takes_llm_and_reports_cost_and_certificates(minilm):
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker

    # The LLM says every page is a salad and none has cheese.
    class Answers(FixedLlamaLLM):
        async def achat(self, messages, **kwargs):
            await super().achat(messages, **kwargs)
            text = "No" if "cheese" in messages[-1].content.split("Question:")[1] else "Yes"
            return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))

    llm = Answers(calls=[])
    texts = ["Greek salad with tomato.", "Tabbouleh, a parsley salad.", "Som tam papaya salad."]
    nodes = [
        NodeWithScore(node=TextNode(text=t, id_=f"n{i}"), score=1.0) for i, t in enumerate(texts)
    ]
    reranker = LogicLlamaIndexReranker(minilm, strategy="quality", llm=llm, top_n=2)
    out = reranker.postprocess_nodes(nodes, QueryBundle("salads without cheese"))
    assert len(out) == 2
    for node in out:
        meta = node.node.metadata
        assert meta["llm_cost"]["calls"] > 0 and meta["llm_cost"]["certified"] is True
        [negated] = [c for c in meta["constraints"] if c.startswith("NOT ")]  # the rules'
        assert meta["certificate"]["certified"] and negated in meta["certificate"]["llm"]
        assert meta["constraint_sources"][negated] == "llm"
        assert "llm_cost" in node.node.excluded_llm_metadata_keys  # hidden from the LLM
    with pytest.raises(ValueError, match="asks no LLM"):
        LogicLlamaIndexReranker(minilm, strategy="rerank", llm=llm)


def test_the_reranker_warns_once_when_given_fewer_nodes_than_top_n(minilm):
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker

    nodes = [NodeWithScore(node=TextNode(text=t), score=1.0) for t in ("Almonds", "Avocados")]
    reranker = LogicLlamaIndexReranker(minilm, strategy="rerank", top_n=5)
    with pytest.warns(UserWarning, match="similarity_top_k"):
        reranker.postprocess_nodes(nodes, QueryBundle("fruit"))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reranker.postprocess_nodes(nodes, QueryBundle("fruit"))  # once only
        LogicLlamaIndexReranker(minilm, strategy="rerank", top_n=2).postprocess_nodes(
            nodes, QueryBundle("fruit")
        )


def test_the_langchain_retriever_and_reranker_take_llm(engine, minilm):
    from langchain_core.documents import Document as LCDocument

    from logic_rag.integrations.langchain import LogicLangChainReranker, LogicLangChainRetriever

    model = FixedChatModel(text="Yes")
    retriever = LogicLangChainRetriever(engine=engine, k=2, strategy="quality", llm=model)
    docs = retriever.invoke("fruit that is not yellow")
    assert docs and all(d.metadata["llm_cost"]["calls"] > 0 for d in docs)
    assert all("certificate" in d.metadata for d in docs)
    with pytest.raises(ValueError, match="asks no LLM"):
        LogicLangChainRetriever(engine=engine, strategy="rerank", llm=model)
    reranker = LogicLangChainReranker(minilm, strategy="llm-rerank", llm=model, top_n=2)
    kept = reranker.compress_documents(
        [LCDocument(page_content=t) for t in ("Bananas are yellow.", "Cherries are red.")], "fruit"
    )
    assert len(kept) == 2 and kept[0].metadata["llm_cost"]["question"] == "whole query"
