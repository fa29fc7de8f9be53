"""logic-rag as a LangChain document compressor: logic on top of any retriever."""

from langchain_core.vectorstores import InMemoryVectorStore

from logic_rag.integrations.langchain import LogicEmbeddings, LogicLangChainReranker

texts = [
    "Apples are crisp red or green fruits grown in orchards in Washington.",
    "Oranges are sweet citrus fruits grown in Spain and Florida.",
    "Lemons are sour yellow citrus fruits used in lemonade.",
    "Bananas are long yellow tropical fruits grown in Ecuador.",
    "Strawberries are small red berries grown in California.",
    "Avocados are creamy green fruits grown in California.",
    "Broccoli is a green vegetable related to cabbage.",
    "Salmon is an oily fish that swims upstream to spawn.",
    "Tuna is a large ocean fish often canned.",
    "Almonds are nuts grown in California orchards.",
]
embeddings = LogicEmbeddings("minilm")  # the model loads once: the reranker below shares it
store = InMemoryVectorStore.from_texts(texts, embeddings)
query = "fruits grown in California that are not berries"
docs = store.as_retriever(search_kwargs={"k": 6}).invoke(query)  # any retriever
reranker = LogicLangChainReranker(model=embeddings, top_n=3)
for doc in reranker.compress_documents(docs, query):
    print(f"{doc.metadata['relevance_score']:.3f}  {doc.page_content}")
    print("       ", doc.metadata["constraints"])

# With `langchain` installed, on top of any retriever:
# ContextualCompressionRetriever(base_compressor=reranker, base_retriever=retriever)
