"""ROUGE-Lsum against rouge-score and a hand-computed union LCS; STR-EM on hand examples."""

from __future__ import annotations

import pytest
from rouge_score import rouge_scorer

from logic_rag.evals.rag.metrics import (
    exact_match_recall,
    normalize_answer,
    rouge_lsum,
    sentences_per_line,
)


def _direct(pred_lines: str, ref_lines: str) -> float:
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)
    return scorer.score(ref_lines, pred_lines)["rougeLsum"].fmeasure


def test_hand_computed_union_lcs() -> None:
    # Reference: one sentence "the cat sat on the mat" (6 tokens). Prediction: two
    # sentences "on the mat" / "the cat sat". Union LCS of the reference sentence with
    # the prediction's sentences covers all 6 reference tokens -> P = R = F = 1, whereas
    # a single LCS over the joined text matches only 3 of 6 tokens -> 0.5.
    assert rouge_lsum("On the mat. The cat sat.", ["The cat sat on the mat."]) == pytest.approx(1.0)
    plain = (
        rouge_scorer.RougeScorer(["rougeL"])
        .score("the cat sat on the mat", "on the mat the cat sat")["rougeL"]
        .fmeasure
    )
    assert plain == pytest.approx(0.5)
    # Partial: prediction "the dog sat" / "under the mat" (6 tokens) vs the same reference.
    # Union LCS hits: {the, sat} from s1 and {the, mat} from s2 -> reference tokens
    # the(0) sat(2) the(4) mat(5) = 4 hits; P = 4/6, R = 4/6, F = 2/3.
    assert rouge_lsum("The dog sat. Under the mat.", ["The cat sat on the mat."]) == pytest.approx(
        2 / 3
    )


@pytest.mark.parametrize(
    ("prediction", "references"),
    [
        (
            "Mawsynram holds the record. Cherrapunji was once the wettest place!",
            [
                "The official record is held by Mawsynram, India. Cherrapunji holds the monthly record."
            ],
        ),
        (
            "Running runners ran quickly.\nThey were running.",
            ["A runner runs quickly.", "Nothing in common here?"],
        ),
        ("One sentence only", ["Completely different words", "only one sentence"]),
    ],
)
def test_matches_direct_rouge_score_call(prediction: str, references: list[str]) -> None:
    expected = max(
        _direct(sentences_per_line(prediction), sentences_per_line(ref)) for ref in references
    )
    assert rouge_lsum(prediction, references) == pytest.approx(expected)
    assert 0.0 < expected < 1.0


def test_stemming_max_over_references_and_citations() -> None:
    assert rouge_lsum("runners running", ["runner run"]) == pytest.approx(1.0)  # Porter stems
    assert rouge_lsum("alpha beta", ["gamma", "alpha beta"]) == pytest.approx(1.0)
    with_cites = rouge_lsum("alpha [1] beta [2][3].", ["alpha beta"])
    assert with_cites == pytest.approx(1.0)
    assert rouge_lsum("alpha [1] beta", ["alpha beta"], remove_citations=False) < 1.0
    assert rouge_lsum("", ["alpha"]) == 0.0
    with pytest.raises(ValueError, match="reference"):
        rouge_lsum("x", ["", "  "])
    with pytest.raises(TypeError):
        rouge_lsum("x", "a reference string")


def test_normalize_answer() -> None:
    assert normalize_answer("The  Ali-Daei!") == "alidaei"
    assert normalize_answer("An apple, a pear and THE plum.") == "apple pear and plum"
    assert normalize_answer("theatre") == "theatre"  # articles only as whole words


def test_exact_match_recall_hand_examples() -> None:
    groups = [("Daei", "Ali Daei"), ("Sinclair", "Christine Sinclair"), ("Pelé",)]
    pred = "The record holder is ALI DAEI [1]; among women, Christine Sinclair."
    assert exact_match_recall(pred, groups) == pytest.approx(2 / 3)
    assert exact_match_recall("Pelé, Daei and Sinclair.", groups) == pytest.approx(1.0)
    assert exact_match_recall("nobody", groups) == 0.0
    # normalisation: punctuation and articles are removed on both sides
    assert exact_match_recall("It was May 24 2017.", [("May 24, 2017",)]) == 1.0
    assert exact_match_recall("Sound of Silence", [("The Sound of Silence",)]) == 1.0
    # substring, not word, match (as in ALCE's exact_presence)
    assert exact_match_recall("Sinclairs", [("Sinclair",)]) == 1.0
    # empty alternatives never match (they would match everything)
    assert exact_match_recall("anything", [("",), ("the",)]) == 0.0
    with pytest.raises(ValueError):
        exact_match_recall("x", [])
    with pytest.raises(TypeError):
        exact_match_recall("x", ["Daei", "Ali Daei"])
