"""Question -> existence-claim rules: hand examples per question word, coverage, CLI."""

from __future__ import annotations

import pytest

from logic_rag.finetune.entailment.claims import RULES, coverage_report, main, question_to_claim

CASES = [
    (
        "when did the berlin wall fall?",
        "when",
        "There exists a known time when the berlin wall fell",
    ),
    (
        "when was the eiffel tower built",
        "when",
        "There exists a known time when the eiffel tower was built",
    ),
    ("who wrote the hobbit", "who", "There exists someone who wrote the hobbit"),
    ("who did Taylor Swift marry", "who", "There exists someone that Taylor Swift married"),
    (
        "who is the president of France",
        "who",
        "There exists someone who is the president of France",
    ),
    ("where is the eiffel tower", "where", "There exists a place where the eiffel tower is"),
    (
        "where is the eiffel tower located",
        "where",
        "There exists a place where the eiffel tower is located",
    ),
    ("why did the titanic sink", "why", "There exists a reason why the titanic sank"),
    ("how did Lincoln die", "how", "There exists a way in which Lincoln died"),
    ("how old is Barack Obama", "how", "There exists a known measure of how old Barack Obama is"),
    (
        "how many seasons of the bastard executioner are there",
        "how_many",
        "There exists a known number of seasons of the bastard executioner",
    ),
    (
        "how many times has brazil won the world cup",
        "how_many",
        "There exists a known number of times such that brazil has won the world cup",
    ),
    (
        "how much does a gallon of water weigh",
        "how_much",
        "There exists a known amount such that a gallon of water weighs",
    ),
    (
        "what is the capital of France",
        "what",
        "There exists something that is the capital of France",
    ),
    ("what does dna stand for", "what", "There exists something that dna stands for"),
    ("what year did the us enter ww2", "what", "There exists a known year when the us entered ww2"),
    (
        "which country won the world cup in 2010",
        "which",
        "There exists a country that won the world cup in 2010",
    ),
    ("which countries border france", "which", "There exist some countries that border france"),
    (
        "is the moon made of cheese",
        "yes_no",
        "There exists an answer to whether the moon is made of cheese",
    ),
    ("can dogs eat grapes", "yes_no", "There exists an answer to whether dogs can eat grapes"),
    (
        "does the nile flow north",
        "yes_no",
        "There exists an answer to whether the nile flows north",
    ),
    (
        "causes of left ventricular hypertrophy",
        "fallback",
        "There exists information about causes of left ventricular hypertrophy",
    ),
]


@pytest.mark.parametrize(("question", "rule", "claim"), CASES)
def test_hand_examples(question: str, rule: str, claim: str) -> None:
    got = question_to_claim(question)
    assert (got.rule, got.text) == (rule, claim)


def test_every_rule_has_a_hand_example() -> None:
    assert {rule for _, rule, _ in CASES} == set(RULES)


def test_case_is_kept_and_claim_is_capitalised() -> None:
    claim = question_to_claim("Who painted the Mona Lisa?")
    assert claim.text == "There exists someone who painted the Mona Lisa"


def test_empty_question_is_refused() -> None:
    with pytest.raises(ValueError):
        question_to_claim("  ? ")


def test_coverage_report_shares() -> None:
    report = coverage_report(["who wrote it", "when did it end", "flooring cost", "who sang"])
    assert report["n"] == 4
    assert report["by_rule"]["who"] == 0.5
    assert report["fallback_share"] == 0.25
    assert sum(report["by_rule"].values()) == pytest.approx(1.0)


def test_main_on_nq_open(shared_data, capsys) -> None:  # noqa: ANN001
    assert main([str(shared_data / "rag" / "nq_open" / "NQ-open.dev.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "3610 questions" in out
    assert out.count("    -> There exist") == 15


def test_nq_open_fallback_is_a_minority(shared_data) -> None:  # noqa: ANN001
    import json

    path = shared_data / "rag" / "nq_open" / "NQ-open.dev.jsonl"
    questions = [json.loads(line)["question"] for line in path.open(encoding="utf-8")]
    assert coverage_report(questions)["fallback_share"] < 0.2
