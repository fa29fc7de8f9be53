from __future__ import annotations

import pytest

from logic_rag.evals.rag.judges import Judges


def test_correctness_uses_the_judge_llm_and_reference(canned_llm):
    llm = canned_llm(["Score: 4/5\nMostly right."])
    judges = Judges(llm)
    result = judges.correctness("Why is the sky blue?", "Rayleigh scattering.", "Scattering.")
    assert result.score == 4.0
    assert result.raw == "Score: 4/5\nMostly right."
    assert not result.parse_failure
    assert "Rayleigh scattering." in llm.prompts[0]
    assert "Scattering." in llm.prompts[0]


def test_one_line_output_does_not_crash_llamaindex(canned_llm):
    # LlamaIndex's default parser raises on outputs without a newline.
    judges = Judges(canned_llm(["5"]))
    assert judges.correctness("q", "a").score == 5.0


@pytest.mark.parametrize("bad", ["I refuse.", "Score: 9/10", "", "7"])
def test_malformed_correctness_is_a_parse_failure_not_zero(canned_llm, bad):
    result = Judges(canned_llm([bad])).correctness("q", "a", "ref")
    assert result.score is None
    assert result.parse_failure
    assert result.raw == bad


def test_relevancy_is_normalised_to_zero_one(canned_llm):
    judges = Judges(canned_llm(["Matches subject, addresses focus. [RESULT] 1"]))
    assert judges.answer_relevancy("q", "a").score == 0.5
    judges = Judges(canned_llm(["Off topic. [RESULT] 0"]))
    assert judges.answer_relevancy("q", "a").score == 0.0
    failed = Judges(canned_llm(["no idea"])).answer_relevancy("q", "a")
    assert failed.score is None and failed.parse_failure


def test_score_all_and_unknown_metric(canned_llm):
    judges = Judges(canned_llm(lambda p: "[RESULT] 2" if "[RESULT]" in p else "3\nok"))
    scores = judges.score_all(["correctness", "answer_relevancy"], "q", "a")
    assert scores["correctness"].score == 3.0
    assert scores["answer_relevancy"].score == 1.0
    with pytest.raises(ValueError, match="unknown judge metric"):
        judges.score("faithfulness", "q", "a")


def _positional(first: str, second: str):
    """A judge that always names the answer containing ``first``'s text as the winner."""

    def respond(prompt: str) -> str:
        a_pos = prompt.index("Assistant A’s Answer]")
        b_pos = prompt.index("Assistant B’s Answer]")
        a_text = prompt[a_pos:b_pos]
        return "[[A]]" if first in a_text else "[[B]]"

    return respond


def test_pairwise_consistent_preference_both_orders(canned_llm):
    llm = canned_llm(_positional("GOOD", "BAD"))
    verdict = Judges(llm).pairwise("q", "GOOD answer", "BAD answer")
    assert verdict.winner == "a" and verdict.preference_a == 1.0
    assert len(llm.prompts) == 2  # judged in both orders
    verdict = Judges(canned_llm(_positional("GOOD", "BAD"))).pairwise("q", "BAD", "GOOD")
    assert verdict.winner == "b" and verdict.preference_a == 0.0


def test_pairwise_position_bias_is_inconsistent(canned_llm):
    verdict = Judges(canned_llm(["[[A]]"])).pairwise("q", "x", "y")
    assert verdict.winner == "inconsistent"
    assert verdict.preference_a == 0.5
    assert verdict.raw == ["[[A]]", "[[A]]"]


def test_pairwise_tie_and_failure(canned_llm):
    assert Judges(canned_llm(["[[C]]"])).pairwise("q", "x", "y").winner == "tie"
    failed = Judges(canned_llm(["dunno"])).pairwise("q", "x", "y")
    assert failed.winner == "failed" and failed.preference_a is None
    half = Judges(canned_llm(["[[A]]", "garbled"])).pairwise("q", "x", "y")
    assert half.winner == "failed"


def test_judges_refuse_missing_llm():
    with pytest.raises(ValueError, match="explicit judge llm"):
        Judges(None)
