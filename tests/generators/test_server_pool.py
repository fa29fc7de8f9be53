"""Several OpenAI-compatible servers behind one generator: spreading, failover, errors.

The servers are real local HTTP servers in threads speaking the minimal OpenAI JSON
(``/v1/models``, ``/v1/chat/completions``); the client side is the real one (LlamaIndex
``OpenAILike`` over the OpenAI SDK, and urllib for ``/models``). Each stub answers with its
own name, so a test sees which server answered which prompt.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from logic_rag.generators import GeneratorError, OpenAIGenerator, make_generator, parse_spec
from logic_rag.generators.base import parallel_options
from logic_rag.generators.openai_server import ServerPool, is_unreachable


class _Replica(BaseHTTPRequestHandler):
    """One replica; ``server.name``, ``server.delay``, ``server.status`` set per instance."""

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, payload: dict[str, Any], status: int = 200) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self._send({"object": "list", "data": [{"id": "stub-model", "object": "model"}]})

    def do_POST(self) -> None:  # noqa: N802
        server: Any = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with server.lock:
            server.seen.append(body["messages"][-1]["content"])
        if server.status != 200:
            self._send({"error": {"message": "bad request", "type": "invalid"}}, server.status)
            return
        time.sleep(server.delay)
        content = f"{server.name}: {body['messages'][-1]['content']}"
        self._send(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )


class _Servers:
    def __init__(self) -> None:
        self.running: list[ThreadingHTTPServer] = []

    def start(self, name: str, *, delay: float = 0.0, status: int = 200) -> Any:
        server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Replica)
        server.name, server.delay, server.status = name, delay, status
        server.seen, server.lock = [], threading.Lock()
        server.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.running.append(server)
        return server


@pytest.fixture
def servers() -> Iterator[_Servers]:
    pool = _Servers()
    yield pool
    for server in pool.running:
        server.shutdown()
        server.server_close()


def _dead_url() -> str:
    """A local port with nothing listening (connection refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_spec_takes_several_urls() -> None:
    spec = parse_spec("openai:http://a:1, http://b:2/v1/#m")
    assert spec.base_url == "http://a:1/v1,http://b:2/v1" and spec.model == "m"
    assert str(spec) == "openai:http://a:1/v1,http://b:2/v1#m"
    gen = make_generator(spec)
    assert isinstance(gen, OpenAIGenerator)
    assert gen.base_urls == ["http://a:1/v1", "http://b:2/v1"]
    with pytest.raises(GeneratorError, match="not an http"):
        parse_spec("openai:http://a:1,b:2#m")
    with pytest.raises(ValueError, match="twice"):
        OpenAIGenerator(["http://a:1/v1", "http://a:1/v1"])


def test_requests_are_spread_over_servers(servers: _Servers) -> None:
    a = servers.start("A", delay=0.05)
    b = servers.start("B", delay=0.05)
    gen = make_generator(f"openai:{a.url},{b.url}#stub-model", concurrency=4, timeout=10)
    prompts = [f"q{i}" for i in range(12)]
    answers = gen.generate(prompts, max_tokens=4)
    # Order kept; every answer from one of the two replicas.
    assert [x.split(": ", 1)[1] for x in answers] == prompts
    assert len(a.seen) + len(b.seen) == 12
    assert len(a.seen) >= 4 and len(b.seen) >= 4, (a.seen, b.seen)
    assert gen.pool.requests_sent() == {a.url: len(a.seen), b.url: len(b.seen)}


def test_least_busy_server_gets_more(servers: _Servers) -> None:
    slow = servers.start("slow", delay=0.6)
    fast = servers.start("fast", delay=0.0)
    gen = make_generator(f"openai:{slow.url},{fast.url}#stub-model", concurrency=2, timeout=10)
    gen.generate([f"q{i}" for i in range(10)], max_tokens=4)
    assert len(fast.seen) > len(slow.seen)


def test_unreachable_server_fails_over(servers: _Servers) -> None:
    live = servers.start("live")
    dead = _dead_url()
    gen = make_generator(f"openai:{dead},{live.url}#stub-model", concurrency=3, timeout=10)
    answers = gen.generate([f"q{i}" for i in range(9)], max_tokens=4)
    assert all(a.startswith("live: ") for a in answers)
    assert len(live.seen) == 9
    sent = gen.pool.requests_sent()
    # The dead server was tried, then left alone while it cools down.
    assert 1 <= sent[dead] <= 3
    # /models discovery fails over too.
    assert make_generator(f"openai:{dead},{live.url}", timeout=10).model == "stub-model"


def test_all_servers_down_names_each(servers: _Servers) -> None:
    first, second = _dead_url(), _dead_url()
    gen = make_generator(f"openai:{first},{second}#m", max_retries=1, timeout=5)
    with pytest.raises(GeneratorError, match="request failed") as err:
        gen.generate(["x"], max_tokens=2)
    assert first in str(err.value) and second in str(err.value)
    assert "2 tried, 2 round(s)" in str(err.value)
    assert gen.pool.requests_sent() == {first: 2, second: 2}


def test_http_errors_do_not_fail_over(servers: _Servers) -> None:
    """A 400 is the request's fault: another replica would refuse it too."""
    bad = servers.start("bad", status=400)
    good = servers.start("good")
    gen = make_generator(f"openai:{bad.url},{good.url}#stub-model", max_retries=0, timeout=5)
    with pytest.raises(GeneratorError):
        gen.generate(["x"], max_tokens=2)
    assert bad.seen == ["x"] and good.seen == []


def test_as_llm_over_several_servers(servers: _Servers) -> None:
    from llama_index.core.llms import LLM

    a, b = servers.start("A"), servers.start("B")
    llm = make_generator(f"openai:{a.url},{b.url}#stub-model", timeout=10).as_llm(max_tokens=5)
    assert isinstance(llm, LLM)
    texts = [llm.complete(f"judge {i}").text for i in range(4)]
    assert {t.split(":")[0] for t in texts} == {"A", "B"}


def test_pool_rounds_and_classification() -> None:
    pool = ServerPool(["u1", "u2"], rounds=2)
    calls: list[str] = []

    def flaky(url: str) -> str:
        calls.append(url)
        if len(calls) < 3:
            raise ConnectionRefusedError("refused")
        return url

    assert pool.call(flaky) in ("u1", "u2") and len(calls) == 3
    with pytest.raises(KeyError):
        pool.call(lambda url: {}["missing"])  # not a connection error: raised as is
    assert is_unreachable(TimeoutError()) and not is_unreachable(ValueError("x"))


def test_parallel_options_only_for_vllm() -> None:
    assert parallel_options("vllm") == {}
    assert parallel_options(
        "vllm", tensor_parallel_size=2, pipeline_parallel_size=2, distributed_executor_backend="ray"
    ) == {
        "tensor_parallel_size": 2,
        "pipeline_parallel_size": 2,
        "distributed_executor_backend": "ray",
    }
    assert parallel_options("openai") == {}
    with pytest.raises(GeneratorError, match="vllm serve --tensor-parallel-size"):
        parallel_options("openai", tensor_parallel_size=2)
    with pytest.raises(GeneratorError, match="vllm:"):
        parallel_options("llamacpp", pipeline_parallel_size=2)
    with pytest.raises(ValueError, match="positive"):
        parallel_options("vllm", tensor_parallel_size=0)
    with pytest.raises(ValueError, match="distributed_executor_backend"):
        parallel_options("vllm", distributed_executor_backend="slurm")
