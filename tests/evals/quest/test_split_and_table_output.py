"""The split command fails in one line on a missing file; the eval table names the model."""

from __future__ import annotations

from logic_rag.evals.quest.runner import print_table
from logic_rag.evals.quest.split import main


def test_split_of_a_missing_file_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["--queries", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_the_terminal_table_names_the_model(capsys):
    results = {
        "vanilla": {"model": "minilm", "metrics": {}, "by_template": {}},
    }
    print_table(results, metrics=())  # the tables themselves are tested elsewhere
    assert capsys.readouterr().out.startswith("model: minilm")
