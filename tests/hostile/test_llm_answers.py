"""Issue 51, items 8, 9 and 17: what an LLM server answers is checked before it counts.

* 8: a log-probability written as a 400-digit integer raised OverflowError from
  ``float()``: no fail-over to the good replica, a traceback from ``search --strategy
  quality``. It is now a bad answer like 10^400 as a float (the next replica answers).
* 9: an answer that names neither Yes nor No was a "check": a ``-Infinity`` Yes
  log-probability was read as P(yes) = 1/3 (the floor below a lone No), a server that
  never answers Yes or No gave 0.5 per pair and "top 3 certified". Such an answer is now
  unusable: a NaN verdict, counted, never a check, never part of a certificate.
* 17: the cost line said "0 prompt tokens" on the OpenAI backend although the server
  reports ``usage.prompt_tokens``; the generator now counts them.

The servers are real HTTP servers on 127.0.0.1 (``http.server``) that answer every chat
completion with a fixed JSON body; the client is the real :class:`OpenAIGenerator`, the
verifier the real :class:`LLMVerifier`, the stage the real :class:`CertifiedTopK`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from logic_rag.compose.score import Score
from logic_rag.corpus import Document
from logic_rag.generators import GeneratorError, make_generator
from logic_rag.pipeline.state import QueryPlan, QueryState, SearchBatch
from logic_rag.query.algebra import And, Atom, Not
from logic_rag.verifiers.certified import CertifiedTopK
from logic_rag.verifiers.llm import LLMVerifier


def _completion(top: list[tuple[str, Any]], usage: dict[str, int] | None = None) -> str:
    """A chat completion whose first token has the alternatives ``top``, as JSON text
    (Python's json writes a huge int as its digits and -inf as ``-Infinity``)."""
    entries = [{"token": t, "logprob": lp} for t, lp in top]
    body: dict[str, Any] = {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": top[0][0]},
                "logprobs": {"content": [{**entries[0], "top_logprobs": entries}]},
                "finish_reason": "length",
            }
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body)


class _Server:
    """Answers every POST with ``body``; counts the requests."""

    def __init__(self, body: str) -> None:
        self.hits = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.hits += 1
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers() -> Iterator[Any]:
    started: list[_Server] = []

    def start(body: str) -> _Server:
        started.append(_Server(body))
        return started[-1]

    yield start
    for server in started:
        server.close()


def _generator(*urls: str) -> Any:
    return make_generator(
        "openai:" + ",".join(urls) + "#m", timeout=10, deadline=20, max_retries=0, concurrency=1
    )


GOOD = [("Yes", -0.1), ("No", -2.5)]


# ---------------------------------------------------------------------- item 8
@pytest.mark.parametrize("digits", [-(10**400), 10**400])
def test_d51_08_a_400_digit_integer_logprob_fails_over_to_the_good_replica(servers, digits):
    bad = servers(_completion([("Yes", digits), ("No", -0.5)]))
    good = servers(_completion(GOOD))
    rows = _generator(bad.url, good.url).choice_logprobs(["q1", "q2"], ["Yes", "No"])
    assert np.allclose(rows, [[-0.1, -2.5], [-0.1, -2.5]])
    assert bad.hits >= 1  # asked, and its answer not taken


def test_d51_08_a_400_digit_integer_logprob_alone_is_one_generator_error(servers):
    bad = servers(_completion([("Yes", -(10**400)), ("No", -0.5)]))
    with pytest.raises(GeneratorError, match="digits") as info:
        _generator(bad.url).choice_logprobs(["q"], ["Yes", "No"])
    assert "\n" not in str(info.value).strip()


# ---------------------------------------------------------------------- item 9
def test_d51_09_a_minus_infinity_yes_is_impossible_not_one_third(servers):
    server = servers(_completion([("No", -0.4), ("Yes", float("-inf")), ("Maybe", -3.0)]))
    verifier = LLMVerifier(generator=_generator(server.url), system=None)
    p = verifier.verify_pairs([("salads", "A Greek salad with feta.")])
    assert p[0] < 1e-20  # was 1/3: the server said Yes is impossible (log-odds -inf)
    assert verifier.stats()["unusable"] == 0


def test_d51_09_an_answer_whose_only_choice_is_minus_infinity_is_unusable(servers):
    server = servers(_completion([("Maybe", -0.1), ("Yes", float("-inf"))]))
    verifier = LLMVerifier(generator=_generator(server.url), system=None)
    p = verifier.verify_pairs([("salads", "A Greek salad with feta.")])
    assert np.isnan(p).all()  # was 1/3 too: nothing was answered
    assert verifier.stats()["unusable"] == 1


def _ctx(pages: list[str]) -> Any:
    class Resources:
        documents = [Document(id=f"r{i}", text=t) for i, t in enumerate(pages)]
        passages = None

    class Ctx:
        resources = Resources()

    return Ctx()


def _salads_state(n: int) -> QueryState:
    state = QueryState(
        QueryPlan("salads without cheese", And((Atom("salads"), Not(Atom("cheese")))))
    )
    state.candidates = np.arange(n, dtype=np.int64)
    state.set_probs(np.vstack([np.full(n, 0.8), np.full(n, 0.2)]), None, "embedding")
    state.set_signal("cosine", np.linspace(0.6, 0.3, n))
    return state


def test_d51_09_a_server_that_never_says_yes_or_no_certifies_nothing(servers):
    server = servers(_completion([("Maybe", -0.1), ("The", -2.0)]))
    verifier = LLMVerifier(generator=_generator(server.url), system=None)
    pages = [f"Recipe {i}: a salad of leaves and dressing." for i in range(6)]
    state = _salads_state(len(pages))
    stage = CertifiedTopK(verifier, score=Score(prior=(("cosine", 1.0),)), max_llm_calls=None)
    stage.run(SearchBatch([state], 3), _ctx(pages))
    info = state.info["llm"]
    assert info["calls"] > 0 and info["unusable"] == info["calls"]
    assert info["certified"] is False and info["certified_hits"] == 0
    assert all(hit["unanswered"] and not hit["llm"] for hit in info["hits"].values())
    assert not (state.pair_source == "llm").any()  # no verdict is called the LLM's
    from logic_rag.verifiers.certified import certificate_line

    assert "unusable LLM answers" in certificate_line(info)


# ---------------------------------------------------------------------- item 17
def test_d51_17_the_cost_line_counts_the_prompt_tokens_the_server_reports(servers):
    from logic_rag.cli.output import llm_cost_line

    usage = {"prompt_tokens": 57, "completion_tokens": 1, "total_tokens": 58}
    server = servers(_completion(GOOD, usage))
    generator = _generator(server.url)
    verifier = LLMVerifier(generator=generator, system=None)
    pages = [f"Recipe {i}: a salad." for i in range(5)]
    state = _salads_state(len(pages))
    CertifiedTopK(verifier, score=Score(prior=(("cosine", 1.0),)), max_llm_calls=None).run(
        SearchBatch([state], 2), _ctx(pages)
    )
    info = state.info["llm"]
    assert generator.counters["prompt_tokens"] == 57 * server.hits == 57 * info["calls"]
    assert info["prompt_tokens"] == 57 * info["calls"] > 0
    assert f"{57 * info['calls']} prompt tokens" in llm_cost_line(info)
