"""Arguments checkable without a model fail before one loads (issue 43 item 3).

A dense model takes 8-11 s to load on 2 cores; these tests replace the loader with one
that fails the test, so an argument error found only after loading shows up here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from logic_rag.cli import main


@pytest.fixture
def no_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_rag.logic_retriever import LogicRetriever

    def load(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was loaded before the arguments were checked")

    monkeypatch.setattr(LogicRetriever, "load", load)


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    """An index folder's manifest (dense only); the loader is never reached."""
    folder = tmp_path / "idx"
    folder.mkdir()
    (folder / "manifest.json").write_text(
        json.dumps({"model": {"name": "embeddinggemma-300m"}}), encoding="utf-8"
    )
    return folder


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["q", "--strategy", "rernak"], "unknown strategy 'rernak' (did you mean 'rerank'?)"),
        (["q", "--strategy", ""], "--strategy is empty"),
        (["q", "--strategy", "vanilla,rerank"], "search runs one strategy"),
        ([""], "the query is empty"),
        (["   "], "the query is empty"),
        (["q", "-k", "0"], "-k must be at least 1"),
        (["--queries", "/no/such/file.jsonl"], "no such file"),
        (["q", "--strategy", "splade"], "needs a SPLADE index"),
        (["q", "--verifier", "llm:qwen2.5-1.5b"], "--verifier applies to --strategy verify"),
        (["q", "--model", "nosuchmodel"], "unknown model 'nosuchmodel'"),
        (["q", "--decomposer", "llm", "--decomposer-model", "nosuch"], "unknown model 'nosuch'"),
    ],
)
def test_search_fails_before_loading(
    argv: list[str], expected: str, index_dir: Path, no_loading: None, capsys
) -> None:
    assert main(["search", str(index_dir), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("logic-rag search: error: ") and expected in err, err
    assert err.count("\n") == 1


def test_eval_strategies_checked_before_loading(tmp_path: Path, no_loading: None, capsys) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"title": "a", "text": "a"}\n', encoding="utf-8")
    argv = ["eval", "quest", "--docs", str(docs), "--queries", str(docs)]
    assert main([*argv, "--out", str(tmp_path / "o"), "--strategy", "vanilla,setopz"]) == 2
    assert "unknown strategy 'setopz' (did you mean 'setops'?)" in capsys.readouterr().err


def test_typo_strategy_fails_fast_in_a_fresh_process(index_dir: Path) -> None:
    """The acceptance check: a new process, one line, exit 2, and fast because nothing heavy
    is imported before the strategy is checked (how fast is a benchmark's business, not a
    timed assertion's: this machine may be loaded)."""
    argv = ["search", str(index_dir), "q", "--strategy", "rernak"]
    done = subprocess.run(
        [sys.executable, "-m", "logic_rag", *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "unknown strategy" in done.stderr
    probe = (
        "import sys\n"
        "from logic_rag.cli import main\n"
        f"code = main({argv!r})\n"
        "heavy = ('torch', 'transformers', 'sentence_transformers', 'faiss')\n"
        "print(code, sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.split("\n")[0] == "2 []", done.stdout + done.stderr
