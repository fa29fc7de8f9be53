"""Issue 42, items 4, 18 and 19 (logprobs): a bad server answer is a bad answer, not a crash.

A garbage status line, a 70 KB header, more than 100 headers, a bad chunk size, an
HTTP/0.9 reply (a body without a status line), a 200 KB deeply nested JSON body, a
top-logprob token that is an integer, a logprob of 10^400 or of +50, and a 302 with a
JSON body each raised an exception of their own (or, for the 302 and +50, were taken as
the answer). Each is now a :class:`ServerAnswerError`, so a request with a bad and a good
replica is answered by the good one, and one with only the bad replica fails with one
GeneratorError (one line on the CLI, exit 2).

The bad replica is a raw socket server on 127.0.0.1 that writes exactly the bytes of each
case; the good one is the same server answering well. The client is the real
:class:`OpenAIGenerator`.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from logic_rag.generators import GeneratorError, make_generator
from logic_rag.generators.base import logprobs_from_top
from logic_rag.generators.openai_server import ServerAnswerError, request_json


def _completion(text: str, top: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    top = top or [{"token": "Yes", "logprob": -0.1}, {"token": "No", "logprob": -2.5}]
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": {"content": [{**top[0], "top_logprobs": top}]},
                "finish_reason": "stop",
            }
        ],
    }


def _http(body: bytes, status: str = "200 OK", headers: bytes = b"") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n".encode()
        + headers
        + b"Connection: close\r\n\r\n"
        + body
    )


def _raw_answer(mode: str, name: str) -> bytes:
    """The exact bytes a replica in ``mode`` writes back."""
    good = json.dumps(_completion(name)).encode()
    if mode == "ok":
        return _http(good)
    if mode == "garbage-status":
        return b"SPAM SPAM SPAM\r\n\r\n" + good
    if mode == "long-header":
        return _http(good, headers=b"X-Long: " + b"a" * 70_000 + b"\r\n")
    if mode == "many-headers":
        return _http(good, headers=b"".join(b"X-H%d: v\r\n" % i for i in range(150)))
    if mode == "bad-chunk":
        return (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n"
            + good
            + b"\r\n0\r\n\r\n"
        )
    if mode == "http09":
        return good  # no status line, no headers
    if mode == "deep-json":
        return _http(b"[" * 100_000 + b"]" * 100_000)
    if mode == "deep-json-object":
        return _http(b'{"a": ' * 40_000 + b"1" + b"}" * 40_000)
    if mode == "int-token":
        top = [{"token": 5, "logprob": -0.1}, {"token": "No", "logprob": -2.5}]
        return _http(json.dumps(_completion(name, top)).encode())
    if mode == "huge-logprob":
        text = json.dumps(_completion(name)).replace("-0.1", "1e400")
        return _http(text.encode())
    if mode == "positive-logprob":
        top = [{"token": "Yes", "logprob": 50.0}, {"token": "No", "logprob": -2.5}]
        return _http(json.dumps(_completion(name, top)).encode())
    if mode == "nan-logprob":
        return _http(json.dumps(_completion(name)).replace("-0.1", "NaN").encode())
    if mode == "redirect":
        return _http(good, status="302 Found", headers=b"Location: http://127.0.0.1:1/v1\r\n")
    raise AssertionError(mode)


class _RawServer:
    """A socket server on 127.0.0.1 that reads one request per connection and answers
    with :func:`_raw_answer` bytes, then closes."""

    def __init__(self, mode: str, name: str) -> None:
        self.mode, self.name, self.hits = mode, name, 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                while len(body) < length:
                    body += conn.recv(65536)
                self.hits += 1
                conn.sendall(_raw_answer(self.mode, self.name))
                conn.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self) -> None:
        self.closed.set()
        self.sock.close()


@pytest.fixture
def replicas() -> Iterator[Any]:
    started: list[_RawServer] = []

    def start(mode: str, name: str) -> _RawServer:
        server = _RawServer(mode, name)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


_HTTP_MODES = [
    "garbage-status",
    "long-header",
    "many-headers",
    "bad-chunk",
    "http09",
    "deep-json",
    "deep-json-object",
    "redirect",
]
_LOGPROB_MODES = ["int-token", "huge-logprob", "positive-logprob", "nan-logprob"]


def _generator(*urls: str) -> Any:
    return make_generator(
        "openai:" + ",".join(urls) + "#m", timeout=10, deadline=20, max_retries=0, concurrency=1
    )


@pytest.mark.parametrize("mode", _HTTP_MODES)
def test_a_malformed_http_answer_fails_over_to_the_good_replica(replicas, mode):
    bad, good = replicas(mode, "bad"), replicas("ok", "good")
    assert _generator(bad.url, good.url).generate(["a", "b", "c"], max_tokens=4) == ["good"] * 3
    assert bad.hits >= 1  # it was asked, and its answer not taken


@pytest.mark.parametrize("mode", _HTTP_MODES)
def test_a_malformed_http_answer_alone_is_one_generator_error(replicas, mode):
    bad = replicas(mode, "bad")
    with pytest.raises(GeneratorError) as info:
        _generator(bad.url).generate(["a"], max_tokens=4)
    assert "\n" not in str(info.value).strip()


@pytest.mark.parametrize("mode", _HTTP_MODES)
def test_request_json_reports_each_as_a_server_answer_error(replicas, mode):
    import time

    bad = replicas(mode, "bad")
    with pytest.raises(ServerAnswerError):
        request_json(bad.url + "/chat/completions", {"x": 1}, deadline=time.monotonic() + 10)


def test_a_redirect_is_named_and_not_followed(replicas):
    import time

    bad = replicas("redirect", "bad")
    with pytest.raises(ServerAnswerError, match="302"):
        request_json(bad.url + "/chat/completions", {"x": 1}, deadline=time.monotonic() + 10)


@pytest.mark.parametrize("mode", _LOGPROB_MODES)
def test_bad_logprobs_fail_over_to_the_good_replica(replicas, mode):
    bad, good = replicas(mode, "bad"), replicas("ok", "good")
    rows = _generator(bad.url, good.url).choice_logprobs(["q1", "q2"], ["Yes", "No"])
    assert np.allclose(rows, [[-0.1, -2.5], [-0.1, -2.5]])
    assert bad.hits >= 1


@pytest.mark.parametrize("mode", _LOGPROB_MODES)
def test_bad_logprobs_alone_are_one_generator_error(replicas, mode):
    bad = replicas(mode, "bad")
    with pytest.raises(GeneratorError, match="logprob|token"):
        _generator(bad.url).choice_logprobs(["q"], ["Yes", "No"])


@pytest.mark.parametrize(
    "top",
    [
        [("Yes", 50.0)],
        [("Yes", float("nan"))],
        [(5, -0.1)],
        [("Yes", "-0.1")],
        [("Yes", True)],
    ],
)
def test_logprobs_from_top_refuses_values_no_model_gives(top):
    with pytest.raises(GeneratorError):
        logprobs_from_top(top, ["Yes"])


def test_logprobs_from_top_keeps_rounding_noise_and_impossible_tokens():
    row = logprobs_from_top([("Yes", 1e-7), ("No", float("-inf")), ("Maybe", -3.0)], ["Yes", "No"])
    assert row[0] == pytest.approx(0.0, abs=1e-6)
    assert row[1] == float("-inf")  # impossible, as listed (issue 51 item 9: not the floor)
