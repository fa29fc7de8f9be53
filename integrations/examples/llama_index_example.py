"""logic-rag as a LlamaIndex retriever: results that respect AND / OR / NOT."""

from llama_index.core import Document

from logic_rag.integrations.llama_index import LogicLlamaIndexRetriever

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
docs = [Document(text=t) for t in texts]
retriever = LogicLlamaIndexRetriever.from_documents(docs, model="minilm", similarity_top_k=3)
for hit in retriever.retrieve("fruits grown in California that are not berries"):
    print(f"{hit.score:.3f}  {hit.node.text}")
    print("       ", hit.node.metadata["constraints"])

# In a query engine (any LlamaIndex LLM; LocalLLM runs a packaged model offline):
# from llama_index.core.query_engine import RetrieverQueryEngine
# qe = RetrieverQueryEngine.from_args(retriever, llm=LocalLLM(model="smollm2-135m"))
