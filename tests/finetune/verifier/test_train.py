"""The verifier recipe end to end on a tiny QUEST file: model, card, resume guard."""

from __future__ import annotations

import json

import pytest

from logic_rag.finetune.recipes.cli import main as recipe_main

RECORDS = [
    {
        "query": "Italian films that are not crime films",
        "docs": ["Roma 1", "Roma 2"],
        "original_query": "<mark>Italian films</mark> that are not <mark>Crime films</mark>",
        "metadata": {"template": "_ that are not _", "domain": "films"},
    },
    {
        "query": "Westerns",
        "docs": ["West 1", "West 2"],
        "original_query": "<mark>Westerns</mark>",
        "metadata": {"template": "_", "domain": "films"},
    },
]
PAGES = {
    "Roma 1": "An Italian comedy film from 1960.",
    "Roma 2": "An Italian drama film set in Rome.",
    "West 1": "A western film with cowboys.",
    "West 2": "An American western set in Texas.",
    "Noir": "A crime film set in Chicago.",
    "Book": "A novel about a lighthouse.",
}


@pytest.fixture()
def quest_files(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    docs = tmp_path / "documents.jsonl"
    docs.write_text("".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in PAGES.items()))
    return train, docs


def test_trains_publishes_and_refuses_to_resume_other_inputs(quest_files, tmp_path, capsys):
    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier

    train, docs = quest_files
    out = tmp_path / "run"
    argv = [
        "--train",
        str(train),
        "--docs",
        str(docs),
        "--out",
        str(out),
        "--max-steps",
        "2",
        "--batch-size",
        "4",
        "--save-steps",
        "1",
    ]
    assert recipe_main("verifier", argv) == 0
    model = out / "model"
    card = (model / "README.md").read_text()
    assert "positive 4" in card and "excluded 2" in card
    info = json.loads((model / "logic_rag_training.json").read_text())
    assert info["global_step"] == 2 and info["examples"]["positive"] == 4
    probs = CrossEncoderVerifier(model=str(model)).verify_pairs([("Westerns", PAGES["West 1"])])
    assert 0.0 < float(probs[0]) < 1.0

    # Other training data: the old checkpoints must not be resumed.
    train.write_text(json.dumps(RECORDS[0]) + "\n")
    with pytest.raises(ValueError, match="other inputs"):
        recipe_main("verifier", argv)
    assert recipe_main("verifier", [*argv, "--no-resume"]) == 0


def test_teacher_scores_join_the_training_pairs(quest_files, tmp_path):
    """--teacher adds the soft labels (balanced: each member and one other per member) to
    the QUEST pairs, records the file's hash, and trains from a cross-encoder folder."""
    from logic_rag.finetune.verifier.train import VerifierArgs, training_pairs

    train, docs = quest_files
    teacher = tmp_path / "teacher.jsonl"
    scores = {"West 1": 0.95, "West 2": 0.8, "Noir": 0.1, "Book": 0.02, "Roma 1": 0.3}
    teacher.write_text(
        "".join(
            json.dumps({"atom": "Westerns", "title": t, "score": s}) + "\n"
            for t, s in scores.items()
        )
    )
    args = VerifierArgs(
        out=str(tmp_path / "r"), train=str(train), docs=str(docs), teacher=str(teacher)
    )
    examples, counts = training_pairs(args)
    assert counts["teacher"] == 4 and counts["positive"] == 4
    taught = [e for e in examples if 0.0 < e[2] < 1.0]
    members = {e[1].split("\n")[0] for e in taught if e[2] >= 0.5}  # a page is "title\ntext"
    assert members == {"West 1", "West 2"}
    assert len(taught) == 4 and all(e[0] == "Westerns" for e in taught)

    out = tmp_path / "run"
    argv = ["--docs", str(docs), "--teacher", str(teacher), "--out", str(out), "--max-steps", "1"]
    assert recipe_main("verifier", [*argv, "--batch-size", "2"]) == 0
    info = json.loads((out / "model" / "logic_rag_training.json").read_text())
    assert set(info["data"]) == {"docs", "teacher"} and info["examples"] == {"teacher": 4}
    again = tmp_path / "again"  # go on from the first run's cross-encoder
    argv = ["--docs", str(docs), "--teacher", str(teacher), "--base", str(out / "model")]
    assert recipe_main("verifier", [*argv, "--out", str(again), "--max-steps", "1"]) == 0


def test_arguments_are_checked(tmp_path, quest_files):
    train, docs = quest_files
    with pytest.raises(SystemExit):
        recipe_main("verifier", ["--out", str(tmp_path / "x")])  # no --train, --nli, --teacher
    with pytest.raises(SystemExit):  # a teacher file needs the documents its titles name
        recipe_main("verifier", ["--out", str(tmp_path / "x"), "--teacher", str(train)])
    with pytest.raises(SystemExit):
        recipe_main(
            "verifier",
            [
                "--out",
                str(tmp_path / "x"),
                "--train",
                str(train),
                "--docs",
                str(docs),
                "--teacher-ratio",
                "-1",
            ],
        )
