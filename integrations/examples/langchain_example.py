"""logic-rag as a LangChain retriever: results that respect AND / OR / NOT."""

from langchain_core.runnables import RunnableLambda

from logic_rag.integrations.langchain import LogicLangChainRetriever

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
retriever = LogicLangChainRetriever.from_texts(texts, model="minilm", k=3)
for doc in retriever.invoke("fruits grown in California that are not berries"):
    print(f"{doc.metadata['score']:.3f}  {doc.page_content}")
    print("       ", doc.metadata["constraints"])


# LCEL: chain = {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | llm
format_docs = RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs))
print((retriever | format_docs).invoke("yellow fruits that are not citrus"))
