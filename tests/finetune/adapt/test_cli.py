"""``logic-rag adapt`` on the command line: a whole run with the embedding verifier as the
(cheap) teacher, a stop after the labels, and bad input as one line with exit status 2."""

from __future__ import annotations

import json

from logic_rag.cli import main


def test_cli_runs_every_phase_and_resumes_after_a_stop(tiny_index, tmp_path, capsys):
    index, queries = tiny_index
    out = tmp_path / "run"
    argv = [
        "adapt",
        str(index),
        "--out",
        str(out),
        "--queries",
        str(queries),
        "--verifier",
        "embedding",
        "--max-pairs",
        "40",
        "--max-steps",
        "1",
        "--quiet",
    ]
    assert main([*argv, "--stop-after", "labels"]) == 0
    assert "stopped after labels" in capsys.readouterr().out
    state = json.loads((out / "state.json").read_text())
    assert list(state["phases"]) == ["atoms", "labels"]
    assert not (out / "model").exists()
    labels = (out / "labels.jsonl").read_bytes()

    assert main(argv) == 0
    said = capsys.readouterr().out
    assert f"--model {out / 'model'}" in said and f"cross-encoder:{out / 'verifier'}" in said
    state = json.loads((out / "state.json").read_text())
    assert list(state["phases"]) == [
        "atoms",
        "labels",
        "composed",
        "model",
        "verifier",
        "calibration",
        "card",
    ]
    assert (out / "labels.jsonl").read_bytes() == labels  # labelled once, before the stop
    for product in ("model", "verifier", "calibration.json", "README.md"):
        assert (out / product).exists(), product
    # The embedding verifier taught itself: its verdicts are a step in its own p. The map
    # still never claims certainty.
    calibration = json.loads((out / "calibration.json").read_text())
    assert 0.0 < min(calibration["map"]["y"]) and max(calibration["map"]["y"]) < 1.0


def test_cli_bad_settings_are_one_line(tiny_index, tmp_path, capsys):
    index, queries = tiny_index
    code = main(
        [
            "adapt",
            str(index),
            "--out",
            str(tmp_path / "run"),
            "--queries",
            str(queries),
            "--yes-threshold",
            "1.5",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["logic-rag adapt: error: yes-threshold must lie strictly between 0 and 1"]


def test_teacher_options_are_not_part_of_the_run(tiny_index, tmp_path, capsys):
    """A run started with one device / batch may go on with another (speed, not verdicts)."""
    index, queries = tiny_index
    argv = [
        "adapt",
        str(index),
        "--out",
        str(tmp_path / "run"),
        "--queries",
        str(queries),
        "--verifier",
        "llm:smollm2-135m",
        "--stop-after",
        "atoms",
        "--quiet",
    ]
    assert main([*argv, "--teacher-batch", "4"]) == 0
    assert main([*argv, "--teacher-batch", "64", "--teacher-device", "cpu"]) == 0
    capsys.readouterr()
    code = main(
        [
            "adapt",
            str(index),
            "--out",
            str(tmp_path / "other"),
            "--queries",
            str(queries),
            "--verifier",
            "embedding",
            "--teacher-batch",
            "4",
        ]
    )
    assert code == 2
    assert "llm: teachers only" in capsys.readouterr().err


def test_teacher_options_reach_the_generator():
    from logic_rag.finetune.adapt.driver import _make_verifier
    from logic_rag.finetune.adapt.state import AdaptSettings

    teacher = _make_verifier("llm:smollm2-135m", AdaptSettings(max_chars=300), {"batch_size": 4})
    generator = teacher._generator()  # built, not loaded: no weights are read here
    assert generator.batch_size == 4 and teacher.max_chars == 300


def test_training_on_questions_without_questions_is_refused_before_any_work(
    tiny_index, tmp_path, capsys
):
    index, _ = tiny_index
    out = tmp_path / "run"
    code = main(["adapt", str(index), "--out", str(out), "--train-queries", "questions"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "logic-rag adapt: error: train-queries 'questions' trains on the questions: pass "
        "--queries LOG.jsonl (or train-queries 'composed' or 'both')"
    ]
    assert not out.exists()


def test_cli_trains_on_the_questions_with_their_known_negatives(tiny_index, tmp_path, capsys):
    """The recipe flags reach the run: its fingerprint records them and the composed phase
    counts the questions it kept."""
    index, queries = tiny_index
    out = tmp_path / "run"
    argv = ["adapt", str(index), "--out", str(out), "--queries", str(queries)]
    argv += ["--verifier", "embedding", "--max-pairs", "40", "--quiet"]
    argv += ["--train-queries", "both", "--hard-negatives", "--stop-after", "composed"]
    assert main(argv) == 0
    state = json.loads((out / "state.json").read_text())
    settings = state["fingerprint"]["settings"]
    assert settings["train_queries"] == "both" and settings["hard_negatives"] is True
    composed = state["phases"]["composed"]
    kept = composed["from_questions"]["questions"]
    assert kept >= 1 and composed["queries"] >= kept
