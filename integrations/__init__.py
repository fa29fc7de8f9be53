"""Framework adapters: ``logic_rag.integrations.llama_index`` and ``.langchain``.

Import the submodule for your framework; this package itself imports neither framework,
so ``import logic_rag.integrations`` works without LlamaIndex or LangChain installed.
"""
