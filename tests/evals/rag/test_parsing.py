from __future__ import annotations

import pytest

from logic_rag.evals.rag.parsing import (
    parse_correctness,
    parse_pairwise,
    parse_relevancy,
    parse_score,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4.5\nThe answer is right but verbose.", 4.5),
        ("4.0", 4.0),
        ("Score: 4/5", 4.0),
        ("[RESULT] 2", 2.0),
        ("Rating: 3 out of 5", 3.0),
        ('{"score": 4, "reason": "ok"}', 4.0),
        ('Here you go: {"rating": "3/5"}', 3.0),
        ("Sure! Here is my evaluation.\n**Score:** 5\nIt is complete.", 5.0),
        ("I would give it 2 out of 5.", 2.0),
        ("The final score is 3.", 3.0),
        ("4 - relevant and correct", 4.0),
        ("Some chatter first\n3\nreasoning", 3.0),
        ("feedback ... [RESULT] 1 ... later [RESULT] 4", 4.0),
    ],
)
def test_correctness_formats(text, expected):
    score, reasoning = parse_correctness(text)
    assert score == expected
    assert reasoning == text.strip()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        None,
        "I cannot judge this answer.",
        "7\nway too high",  # out of range
        "0\ntoo low",  # below 1
        "Score: 8/10",  # another scale
        "Rating: 5 out of 10",
        "1. Does the response match the query? Yes.",  # a numbered list, not a score
        '{"score": true}',
        '{"score": "excellent"}',
        "Score: nan",
    ],
)
def test_correctness_failures_are_none_not_zero(text):
    assert parse_correctness(text) == (None, None)


def test_relevancy_scale_is_zero_to_two():
    assert parse_relevancy("Good match.\n[RESULT] 2")[0] == 2.0
    assert parse_relevancy("[RESULT] 0")[0] == 0.0  # a real 0 stays 0
    assert parse_relevancy("[RESULT] 3") == (None, None)
    assert parse_relevancy("Score: 4/5") == (None, None)
    assert parse_relevancy("Score: 1/2")[0] == 1.0


def test_parse_score_range_is_inclusive():
    assert parse_score("1", 1, 5) == 1.0
    assert parse_score("5", 1, 5) == 5.0
    assert parse_score("5.01", 1, 5) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A is more complete. [[A]]", (True, 1.0)),
        ("[[B]]", (False, 0.0)),
        ("They are equal [[C]]", (None, 0.5)),
        ("Both fine.\nVerdict: B", (False, 0.0)),
        ("tie", (None, 0.5)),
    ],
)
def test_pairwise_verdicts(text, expected):
    passing, score, feedback = parse_pairwise(text)
    assert (passing, score) == expected
    assert feedback == text.strip()


@pytest.mark.parametrize("text", ["", "I like both", "[[A]] no wait [[B]]", "Answer A is good"])
def test_pairwise_failures(text):
    assert parse_pairwise(text) == (None, None, None)


# ------------------------------------------------------------------------ issue 18: d10
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Written at a grade 2 reading level. Score: 5", 5.0),  # was 2
        ("3 correct facts out of 4. Score: 5", 5.0),  # was 3
        ("Score: 1e1", None),  # 10: out of range (was 1)
        ("Score: 4\nScore: 2", None),  # conflicting fields (was the first)
        ("Correctness: 4", 4.0),  # was a failure
        ("Score: 4\nsome reasoning\nScore: 4", 4.0),  # repeated, not conflicting
        ("Grade: 3", 3.0),
        ("Rating: 2\nRating: 5", None),
        ("The answer has 2 errors.\n**Score:** 3", 3.0),
    ],
)
def test_explicit_score_field_wins_and_conflicts_fail(text, expected):
    assert parse_correctness(text)[0] == expected


def test_relevancy_label_and_exponent():
    assert parse_relevancy("Relevancy: 2")[0] == 2.0
    assert parse_relevancy("Score: 2e0")[0] == 2.0
    assert parse_relevancy("Score: 1\nScore: 2") == (None, None)
