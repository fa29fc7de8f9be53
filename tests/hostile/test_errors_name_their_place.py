"""Errors name their file, and the command line speaks in one line (issue 51 items 14, 18).

* a damaged ``atoms.json`` / ``plan.jsonl`` of an adapt run, a binary queries file, NaN
  label scores (blamed on a "weak teacher") and threshold weights of 1e308 (an ``n_eff``
  overflow warning) gave messages without their file;
* argparse printed 9-15 usage lines before its error; ``world --entities -5`` lacked the
  ``logic-rag world:`` prefix and ``--entities 100000000`` ran unbounded; ``--store-uri
  ftp://x`` was ignored without a word.
"""

from __future__ import annotations

import json
import warnings

import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.verifiers.thresholds import CascadeThresholds
from tests.hostile.test_cli_hostile import CLI, assert_user_error


def test_damaged_adapt_run_files_are_named(tmp_path):
    from logic_rag.finetune.adapt.driver import AdaptError, _read_json, _read_plan

    atoms = tmp_path / "atoms.json"
    atoms.write_text('{"groups": [')
    with pytest.raises(AdaptError, match="atoms.json is damaged"):
        _read_json(atoms)
    plan = tmp_path / "plan.jsonl"
    plan.write_text('{"key": "a"}\n{"key": \n')
    with pytest.raises(AdaptError, match=r"plan.jsonl:2: damaged"):
        _read_plan(plan)


def test_nan_labels_are_not_blamed_on_a_weak_teacher(tmp_path):
    from logic_rag.finetune.adapt.driver import AdaptError, _check_scores

    path = tmp_path / "labels.jsonl"
    with pytest.raises(AdaptError, match=r"labels.jsonl: the label of 'k2' is nan"):
        _check_scores([{"key": "k1", "score": 0.5}, {"key": "k2", "score": float("nan")}], path)


def test_a_binary_adapt_queries_file_is_named(tmp_path):
    from logic_rag.finetune.adapt.atoms import read_queries

    path = tmp_path / "q.txt"
    path.write_bytes(b"films\n\xff\xfe\x00binary\n")
    with pytest.raises(CorpusFormatError, match=r"q.txt:2: invalid UTF-8"):
        read_queries(path)


def test_huge_threshold_weights_are_refused_with_the_file(tmp_path):
    body = {
        "format": "logic-rag cascade thresholds",
        "version": 1,
        "key": {},
        "sample": {"scores": [0.2], "labels": [1.0], "weights": [1e308], "positive": [True]},
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(body))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow RuntimeWarning either
        with pytest.raises(ValueError, match=r"t.json.*weights\[0\]"):
            CascadeThresholds.load(path)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("search",), "logic-rag search: error: the following arguments are required"),
        (("search", "idx", "q", "-k", "x"), "logic-rag search: error: argument -k"),
        (("world", "--out", "w", "--entities", "-5"), "logic-rag world: error: argument"),
        (("world", "--out", "w", "--entities", "100000000"), "at most 100,000"),
        (("nosuchcommand",), "logic-rag: error: argument"),
    ],
)
def test_argparse_errors_are_one_line(tmp_path, args, words):
    result = CLI(tmp_path)(*args)
    err = result.stderr.decode()
    assert result.returncode == 2, err
    lines = [line for line in err.splitlines() if not line.startswith("hostile-test-peak")]
    assert len(lines) == 1 and words in lines[0], err
    assert not (tmp_path / "w").exists()


def test_an_unsupported_store_uri_is_refused(tmp_path):
    result = CLI(tmp_path)("search", str(tmp_path / "idx"), "q", "--store-uri", "ftp://x")
    assert_user_error(result, "ftp://x")
