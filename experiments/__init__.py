"""Drivers that reproduce the reports in ``docs/experiments/``; not part of the library.

Why a folder outside the package: ``pip install logic-rag`` ships the retrieval library and
its reusable recipes, metrics and runners (``logic_rag.finetune``, ``logic_rag.evals``); the
code here only reruns one measured comparison, the way sentence-transformers keeps
``examples/`` out of its wheel. It is not installed: run it from the repository root, e.g.
``python -m experiments.finetune.logicol_ablation --out runs/ablation``. It is still linted
and smoke-tested (``tests/experiments/``).

* :mod:`.finetune`: the LogiCoL ablation, the LORE before/after and their paired tests.
* :mod:`.entailment`: base vs entailment-tuned encoder under the same contrastive step.
* :mod:`.milvus_acceptance`: LlamaIndex and LangChain over Milvus, plain vs reranked.
* :mod:`.embedding_probe`: re-scorings of ``rerank``'s candidates from the index's vectors.
* :mod:`.llm_speed`: seconds per call of the local LLM runtimes.
"""
