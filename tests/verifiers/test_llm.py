"""The LLM verifier with a test-double generator, and the real model where installed."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.verifiers.llm import LLMVerifier


class FakeGenerator:
    """Says "Yes" with log-odds equal to the number of atom words found in the page."""

    name = "fake"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def choice_logprobs(self, prompts, choices, *, system=None):
        assert tuple(choices) == ("Yes", "No") and system
        self.calls.append(list(prompts))
        out = []
        for prompt in prompts:
            page, question = prompt.split("\n\nQuestion: ")
            atom = question.split('"')[1]
            found = sum(w.lower() in page.lower() for w in atom.split())
            out.append([-np.log1p(np.exp(-found)), -np.log1p(np.exp(found))])
        return np.array(out)


def test_probabilities_are_the_yes_share_in_input_order():
    gen = FakeGenerator()
    v = LLMVerifier(generator=gen)
    pairs = [
        ("Italian films", "Page B: French films."),
        ("Italian films", "Page A: Italian films."),
    ]
    probs = v.verify_pairs(pairs)
    assert probs[0] == pytest.approx(1 / (1 + np.exp(-1)))  # one word ("films") found
    assert probs[1] == pytest.approx(1 / (1 + np.exp(-2)))
    # Prompts were sent page-major (so pages share prefixes), results restored to input order.
    assert gen.calls[0][0].startswith("Page:\nPage A")


def test_pages_are_cut_and_prompts_checked():
    v = LLMVerifier(generator=FakeGenerator(), max_chars=60)
    assert len(v.render("x", "word " * 100)) < 60 + len(v.prompt)
    with pytest.raises(ValueError, match="placeholders"):
        LLMVerifier(generator=FakeGenerator(), prompt="no slots")


def test_a_generator_without_logprobs_is_refused():
    class Plain:
        name = "plain"

    with pytest.raises(TypeError, match="choice_logprobs"):
        LLMVerifier(generator=Plain()).verify_pairs([("a", "b")])


def test_generator_options_reach_make_generator(monkeypatch):
    """vLLM parallel sizes travel with a spec; they leave the cache fingerprint alone."""
    built = []
    monkeypatch.setattr(
        "logic_rag.generators.factory.make_generator",
        lambda spec, **options: built.append((spec, options)) or FakeGenerator(),
    )
    sharded = LLMVerifier(
        generator="vllm:x",
        generator_options={"tensor_parallel_size": 2, "pipeline_parallel_size": 1},
    )
    assert sharded.generator_options == (("pipeline_parallel_size", 1), ("tensor_parallel_size", 2))
    assert hash(sharded) and sharded.fingerprint() == LLMVerifier(generator="vllm:x").fingerprint()
    sharded.warm_up()
    assert built == [("vllm:x", {"pipeline_parallel_size": 1, "tensor_parallel_size": 2})]


def test_cli_parallel_flags_build_an_llm_verifier():
    from logic_rag.cli import build_parser
    from logic_rag.cli.settings import flag_values
    from logic_rag.generators.base import GeneratorError

    def config(*extra):
        argv = ["search", "idx", "q", "--strategy", "verify", *extra]
        return flag_values(build_parser().parse_args(argv))

    verifier = config("--verifier", "llm:vllm:x", "--tensor-parallel-size", "2")["verifier"]
    assert isinstance(verifier, LLMVerifier) and verifier.generator == "vllm:x"
    assert verifier.generator_options == (("tensor_parallel_size", 2),)
    assert config("--verifier", "llm:vllm:x")["verifier"] == "llm:vllm:x"  # default: the spec
    with pytest.raises(GeneratorError, match="in-process vLLM"):
        config("--verifier", "llm:openai:http://h/v1#m", "--pipeline-parallel-size", "2")
    with pytest.raises(ValueError, match="need --verifier"):
        config("--tensor-parallel-size", "2")
