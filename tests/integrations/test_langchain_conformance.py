"""langchain-tests' standard suites for the retriever and the embeddings."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_tests")

from langchain_tests.integration_tests import (  # noqa: E402
    EmbeddingsIntegrationTests,
    RetrieversIntegrationTests,
)
from langchain_tests.unit_tests import EmbeddingsUnitTests  # noqa: E402

from logic_rag.integrations.langchain import LogicEmbeddings, LogicLangChainRetriever  # noqa: E402

# The suites read their constructor arguments from properties, which cannot take
# fixtures; an autouse fixture puts the session's MiniLM and engine here first.
_SHARED: dict = {}


@pytest.fixture(autouse=True)
def _share(minilm, engine):
    _SHARED.update(encoder=minilm, engine=engine)


class TestLogicRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[LogicLangChainRetriever]:
        return LogicLangChainRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"engine": _SHARED["engine"], "k": 4}

    @property
    def retriever_query_example(self) -> str:
        return "citrus fruits that are not yellow"


class TestLogicEmbeddingsUnit(EmbeddingsUnitTests):
    @property
    def embeddings_class(self) -> type[LogicEmbeddings]:
        return LogicEmbeddings

    @property
    def embedding_model_params(self) -> dict:
        return {"model": _SHARED["encoder"]}


class TestLogicEmbeddingsIntegration(EmbeddingsIntegrationTests):
    @property
    def embeddings_class(self) -> type[LogicEmbeddings]:
        return LogicEmbeddings

    @property
    def embedding_model_params(self) -> dict:
        return {"model": _SHARED["encoder"]}
