"""Issue 32, cases 4 and 7 (and the 200 MB answer of 9): generator requests are bounded.

Real local HTTP servers in threads play the hostile replicas: one trickles a byte at a
time (only an overall deadline stops it; the per-read timeout never fires), one answers
500, one answers 200 with a body that is not JSON, one with an oversized body. The
client is the real :class:`OpenAIGenerator`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from logic_rag.generators import GeneratorError, make_generator
from logic_rag.generators.base import default_deadline, set_default_deadline
from logic_rag.generators.openai_server import DeadlineError


def _completion(text: str) -> bytes:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
        }
    ).encode()


class _Hostile(BaseHTTPRequestHandler):
    """``server.mode``: ok, trickle, 500, 400, garbage, huge, huge-unannounced."""

    def log_message(self, *args: Any) -> None:
        pass

    def _head(self, status: int, length: int | None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        server: Any = self.server
        self.rfile.read(int(self.headers["Content-Length"]))
        server.hits += 1
        mode = server.mode
        try:
            if mode == "ok":
                body = _completion(server.name)
                self._head(200, len(body))
                self.wfile.write(body)
            elif mode == "trickle":
                body = _completion("slow") + b" " * 4000
                self._head(200, len(body))
                for byte in body:
                    if server.stop.is_set():
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.5)
            elif mode in ("500", "400"):
                body = b'{"error": {"message": "boom"}}'
                self._head(int(mode), len(body))
                self.wfile.write(body)
            elif mode == "garbage":
                body = b"<html>upstream proxy error</html>"
                self._head(200, len(body))
                self.wfile.write(body)
            elif mode in ("huge", "huge-unannounced"):
                size = 3 * 2**20
                self._head(200, size if mode == "huge" else None)
                chunk = b" " * 2**16
                for _ in range(size // len(chunk)):
                    self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Servers:
    def __init__(self) -> None:
        self.running: list[Any] = []

    def start(self, name: str, mode: str) -> Any:
        server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
        server.daemon_threads = True
        server.name, server.mode, server.hits, server.stop = name, mode, 0, threading.Event()
        server.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.running.append(server)
        return server


@pytest.fixture
def servers() -> Iterator[_Servers]:
    pool = _Servers()
    yield pool
    for server in pool.running:
        server.stop.set()
        server.shutdown()
        server.server_close()


def test_d32_04_a_trickling_server_is_abandoned_at_the_deadline(servers):
    slow = servers.start("slow", "trickle")
    gen = make_generator(f"openai:{slow.url}#m", timeout=30, deadline=2.0, max_retries=2)
    began = time.monotonic()
    with pytest.raises(DeadlineError, match="2 s deadline"):
        gen.generate(["hello"], max_tokens=4)
    assert time.monotonic() - began < 2.0 + 1.0
    assert slow.hits == 1  # no retry once the time is spent


def test_d32_04_the_default_deadline_is_settable_for_a_whole_run(servers):
    slow = servers.start("slow", "trickle")
    before = default_deadline()
    set_default_deadline(1.5)
    try:
        gen = make_generator(f"openai:{slow.url}#m", timeout=30)
        assert gen.deadline == 1.5
        began = time.monotonic()
        with pytest.raises(DeadlineError):
            gen.generate(["hello"], max_tokens=4)
        assert time.monotonic() - began < 2.5
    finally:
        set_default_deadline(before)
    with pytest.raises(ValueError):
        set_default_deadline(0)


@pytest.mark.parametrize("mode", ["500", "garbage", "huge", "huge-unannounced"])
def test_d32_07_a_5xx_or_malformed_or_oversized_answer_moves_to_the_next_server(servers, mode):
    bad = servers.start("bad", mode)
    good = servers.start("good", "ok")
    gen = make_generator(
        f"openai:{bad.url},{good.url}#m",
        timeout=10,
        deadline=20,
        max_retries=0,
        concurrency=1,
        max_response_bytes=2**20,
    )
    answers = gen.generate(["a", "b", "c"], max_tokens=4)
    assert answers == ["good", "good", "good"]
    assert bad.hits >= 1  # it was tried, and its answer not taken


def test_d32_07_a_4xx_is_not_moved(servers):
    bad = servers.start("bad", "400")
    good = servers.start("good", "ok")
    gen = make_generator(f"openai:{bad.url},{good.url}#m", timeout=10, max_retries=0)
    with pytest.raises(GeneratorError, match="400"):
        gen.generate(["x"], max_tokens=2)
    assert good.hits == 0


def test_d32_09_a_huge_answer_is_refused_not_read_whole(servers):
    huge = servers.start("huge", "huge-unannounced")
    gen = make_generator(
        f"openai:{huge.url}#m", timeout=10, max_retries=0, max_response_bytes=2**20
    )
    with pytest.raises(GeneratorError, match="cap"):
        gen.generate(["x"], max_tokens=2)
