"""``choice_logprobs`` (the ScoresChoices protocol) on every backend available here.

Pure helpers are tested on fakes; transformers runs for real on SmolLM2-135M (a few
seconds); llama.cpp runs on SmolLM2's GGUF when ``llama_cpp`` is installed (skipped with
the reason otherwise); the OpenAI-compatible path runs against a local stub that answers
``logprobs``/``top_logprobs`` like vLLM's server. The real vLLM paths are in test_vllm.py.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from logic_rag.generators import make_generator
from logic_rag.generators.base import (
    FLOOR_MARGIN,
    GeneratorError,
    ScoresChoices,
    check_choices,
    choice_token_ids,
    logprobs_from_top,
)

QUESTIONS = [
    "Is Paris the capital of France? Answer Yes or No.",
    "Is the sun cold? Answer Yes or No.",
    "Reply with one digit: how many legs does a cat have?",
]

# --- helpers ------------------------------------------------------------------------------


def test_check_choices_refuses_ambiguous_input() -> None:
    assert check_choices([" Yes", "No "]) == ["Yes", "No"]
    with pytest.raises(TypeError):
        check_choices("Yes")
    with pytest.raises(ValueError, match="at least one"):
        check_choices([])
    with pytest.raises(ValueError, match="blank"):
        check_choices(["Yes", "  "])
    with pytest.raises(ValueError, match="repeat"):
        check_choices(["Yes", " Yes"])


def test_logprobs_from_top_adds_variants_and_floors_missing_choices() -> None:
    top = [("Yes", math.log(0.5)), (" Yes", math.log(0.2)), ("No", math.log(0.1)), ("\n", -5.0)]
    row = logprobs_from_top(top, ["Yes", "No", "Maybe", "yes"])
    assert row[0] == pytest.approx(math.log(0.7))  # "Yes" and " Yes" are one choice
    assert row[1] == pytest.approx(math.log(0.1))
    # Missing choices (case-sensitive: "yes" is not "Yes") get min(returned) - log 2.
    assert row[2] == row[3] == pytest.approx(-5.0 - FLOOR_MARGIN)
    with pytest.raises(GeneratorError, match="no finite"):
        logprobs_from_top([("Yes", float("-inf"))], ["Yes"])


class _ToyTokenizer:
    """Word-piece toy: 'Partially' -> 'Part' + 'ially'; a leading space is its own piece."""

    vocab = ["Yes", " Yes", "No", " No", "Part", " Part", "ially", " ", "1", " 1"]

    def encode(self, text: str) -> list[int]:
        out, rest = [], text
        while rest:
            for piece in sorted(self.vocab, key=len, reverse=True):
                if rest.startswith(piece):
                    out.append(self.vocab.index(piece))
                    rest = rest[len(piece) :]
                    break
            else:
                raise ValueError(rest)
        return out

    def decode(self, token: int) -> str:
        return self.vocab[token]


def test_choice_token_ids_keys_are_stripped_first_tokens() -> None:
    tok = _ToyTokenizer()
    keys, ids = choice_token_ids(["Yes", "No", "Partially"], tok.encode, tok.decode)
    assert keys == ["Yes", "No", "Part"]
    assert ids == [[0, 1], [2, 3], [4, 5]]  # "Yes" and " Yes" both count
    with pytest.raises(ValueError, match="share a first token"):
        choice_token_ids(["Part", "Partially"], tok.encode, tok.decode)


# --- transformers, exact ------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2() -> Any:
    pytest.importorskip("gguf", reason="GGUF loading needs `pip install gguf`")
    gen = make_generator("smollm2-135m", batch_size=2)
    try:
        gen.load()
    except LookupError as exc:
        pytest.skip(f"SmolLM2 weights not installed: {exc}")
    return gen


def test_transformers_choice_logprobs_are_exact(smollm2: Any) -> None:
    import torch

    assert isinstance(smollm2, ScoresChoices)
    scores = smollm2.choice_logprobs(QUESTIONS, ["Yes", "No", "4"], system="Be brief.")
    assert scores.shape == (3, 3) and scores.dtype == np.float64
    assert np.all(scores < 0) and np.all(np.logaddexp.reduce(scores, axis=1) <= 1e-9)
    # Against one unpadded forward pass, read by hand.
    tokenizer, model = smollm2.load()
    text = tokenizer.apply_chat_template(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTIONS[2]}],
        add_generation_prompt=True,
        tokenize=False,
    )
    ids = tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        lp = torch.log_softmax(model(input_ids=ids).logits[0, -1].double(), -1)
    # Candidates: first tokens of "4" and " 4" that decode to "4" (here " 4" is " " + "4").
    firsts = {tokenizer.encode(t, add_special_tokens=False)[0] for t in ("4", " 4")}
    four = sorted(t for t in firsts if tokenizer.decode([t]).strip() == "4")
    expected = float(torch.logsumexp(lp[four], 0))
    assert scores[2, 2] == pytest.approx(expected, abs=2e-3)
    # Batching (left padding, length order) and prompt order do not change the scores.
    singles = np.stack(
        [smollm2.choice_logprobs([q], ["Yes", "No", "4"], system="Be brief.")[0] for q in QUESTIONS]
    )
    np.testing.assert_allclose(scores, singles, atol=2e-3)
    reversed_scores = smollm2.choice_logprobs(
        QUESTIONS[::-1], ["Yes", "No", "4"], system="Be brief."
    )
    np.testing.assert_allclose(reversed_scores[::-1], scores, atol=2e-3)
    assert smollm2.choice_logprobs([], ["Yes"]).shape == (0, 1)


def test_transformers_choice_logprobs_follow_the_greedy_answer(smollm2: Any) -> None:
    """The most likely choice is the token greedy decoding writes first, when it is one."""
    scores = smollm2.choice_logprobs(QUESTIONS[:2], ["Yes", "No"])
    answers = smollm2.generate(QUESTIONS[:2], max_tokens=2)
    for row, answer in zip(scores, answers, strict=True):
        first = answer.split()[0].strip(".,!") if answer.split() else ""
        if first in ("Yes", "No"):
            assert ["Yes", "No"][int(np.argmax(row))] == first


# --- llama.cpp, exact ---------------------------------------------------------------------

HAS_LLAMACPP = importlib.util.find_spec("llama_cpp") is not None


@pytest.fixture(scope="module")
def smollm2_llamacpp() -> Any:
    if not HAS_LLAMACPP:
        pytest.skip("llama-cpp-python is not installed: bash scripts/llamacpp_build.sh .venv")
    gen = make_generator("llamacpp:smollm2-135m", n_ctx=512)
    try:
        gen.load()
    except LookupError as exc:
        pytest.skip(f"SmolLM2 weights not installed: {exc}")
    return gen


def test_llamacpp_choice_logprobs_match_transformers(smollm2_llamacpp: Any, smollm2: Any) -> None:
    assert isinstance(smollm2_llamacpp, ScoresChoices)
    choices = ["Yes", "No", "4"]
    fast = smollm2_llamacpp.choice_logprobs(QUESTIONS, choices, system="Be brief.")
    exact = smollm2.choice_logprobs(QUESTIONS, choices, system="Be brief.")
    assert fast.shape == (3, 3) and np.all(fast < 0)
    # Same Q4_1 weights: llama.cpp's quantised kernels against transformers' dequantised
    # float32, so close but not bit-identical.
    np.testing.assert_allclose(fast, exact, atol=0.35)
    assert (np.argmax(fast, axis=1) == np.argmax(exact, axis=1)).all()
    # KV prefix reuse must not change scores: call again in another order, and singly.
    again = smollm2_llamacpp.choice_logprobs(QUESTIONS[::-1], choices, system="Be brief.")
    np.testing.assert_allclose(again[::-1], fast, atol=1e-4)
    single = smollm2_llamacpp.choice_logprobs(QUESTIONS[1:2], choices, system="Be brief.")
    np.testing.assert_allclose(single[0], fast[1], atol=1e-4)


def test_llamacpp_generates_and_constrains(smollm2_llamacpp: Any) -> None:
    answers = smollm2_llamacpp.generate(QUESTIONS, max_tokens=8)
    assert len(answers) == 3 and all(isinstance(a, str) for a in answers)
    assert smollm2_llamacpp.generate(QUESTIONS[::-1], max_tokens=8) == answers[::-1]
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
        "required": ["answer"],
    }
    for text in smollm2_llamacpp.generate_json(QUESTIONS[:2], schema, max_tokens=24):
        assert json.loads(text)["answer"] in ("yes", "no")
    [digit] = smollm2_llamacpp.generate(QUESTIONS[2:], max_tokens=4, grammar="root ::= [1-5]")
    assert digit in {"1", "2", "3", "4", "5"}
    with pytest.raises(GeneratorError, match="grammar"):
        smollm2_llamacpp.generate(QUESTIONS[:1], max_tokens=2, grammar="root ::= (")


# --- OpenAI-compatible server (stub) ------------------------------------------------------


class _LogprobStub(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        user = body["messages"][-1]["content"]
        # "Paris" questions lean Yes; others No; " Yes" is a second spelling of "Yes".
        yes, no = (-0.7, -2.0) if "Paris" in user else (-3.0, -0.1)
        top = [
            {"token": "Yes", "logprob": yes, "bytes": None},
            {"token": " Yes", "logprob": yes - 1.0, "bytes": None},
            {"token": "No", "logprob": no, "bytes": None},
            {"token": "Maybe", "logprob": -6.0, "bytes": None},
        ]
        sampled = top[0] if yes > no else top[2]
        payload = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": sampled["token"]},
                    "logprobs": {"content": [{**sampled, "top_logprobs": top}]},
                    "finish_reason": "length",
                }
            ],
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def logprob_stub() -> Iterator[str]:
    _LogprobStub.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LogprobStub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_openai_choice_logprobs_from_top_logprobs(logprob_stub: str) -> None:
    gen = make_generator(f"openai:{logprob_stub}#m", max_retries=0, timeout=10)
    assert isinstance(gen, ScoresChoices)
    scores = gen.choice_logprobs(QUESTIONS[:2], ["Yes", "No", "Unsure"], system="Judge.")
    assert scores.shape == (2, 3)
    assert scores[0, 0] == pytest.approx(float(np.logaddexp(-0.7, -1.7)))
    assert scores[0, 1] == pytest.approx(-2.0)
    assert scores[1, 1] == pytest.approx(-0.1)
    assert scores[0, 2] == scores[1, 2] == pytest.approx(-6.0 - math.log(2))  # floor
    for request in _LogprobStub.requests:
        assert request["max_tokens"] == 1 and request["logprobs"] is True
        assert request["top_logprobs"] == 20 and request["temperature"] == 0.0
        assert request["messages"][0] == {"role": "system", "content": "Judge."}


def test_openai_choice_logprobs_reports_a_server_without_logprobs() -> None:
    gen = make_generator("openai:http://127.0.0.1:9/v1#m", max_retries=0, timeout=5)
    with pytest.raises(GeneratorError, match="request failed"):
        gen.choice_logprobs(["x"], ["Yes", "No"])


# --- the fastest runtime for qwen2.5-1.5b -------------------------------------------------


def test_bare_qwen_1_5b_takes_llamacpp_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import logic_rag.generators.llamacpp as llamacpp
    from logic_rag.generators.base import GeneratorSpec
    from logic_rag.generators.factory import parse_spec

    monkeypatch.setattr(llamacpp, "llamacpp_available", lambda: True)
    assert parse_spec("qwen2.5-1.5b") == GeneratorSpec("llamacpp", "qwen2.5-1.5b")
    assert parse_spec("transformers:qwen2.5-1.5b").backend == "transformers"  # explicit wins
    assert parse_spec("smollm2-135m").backend == "transformers"  # others keep the default
    monkeypatch.setattr(llamacpp, "llamacpp_available", lambda: False)
    assert parse_spec("Qwen2.5-1.5B") == GeneratorSpec("transformers", "Qwen2.5-1.5B")
    fallback = make_generator("qwen2.5-1.5b")  # built lazily: nothing loads here
    assert fallback.name == "transformers:qwen2.5-1.5b" and fallback.dtype == "bfloat16"
    with pytest.raises(GeneratorError, match="llamacpp_build.sh"):
        make_generator("llamacpp:qwen2.5-1.5b")
