"""logic-rag as a LlamaIndex reranker: logic on top of any retriever's nodes."""

from llama_index.core import Document, VectorStoreIndex

from logic_rag.integrations.llama_index import LogicEmbedding, LogicLlamaIndexReranker

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
embed = LogicEmbedding("minilm")  # the model loads once: the reranker below shares it
index = VectorStoreIndex.from_documents([Document(text=t) for t in texts], embed_model=embed)
query = "fruits grown in California that are not berries"
nodes = index.as_retriever(similarity_top_k=6).retrieve(query)  # any retriever
reranker = LogicLlamaIndexReranker(model=embed, top_n=3)
for hit in reranker.postprocess_nodes(nodes, query_str=query):
    print(f"{hit.score:.3f}  {hit.node.text}")
    print("       ", hit.node.metadata["constraints"])

# In a query engine, give the reranker more nodes than top_n (LlamaIndex retrieves 2):
# index.as_query_engine(similarity_top_k=6, node_postprocessors=[reranker], llm=...)
