"""Issue 52 item 6: typos and mismatches fail in one line, naming the fix, before any model
loads, from the command line and from Python alike; the unknown-model error offers only
models of the role asked for."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from logic_rag.cli import main
from logic_rag.errors import ModelNotFoundError
from logic_rag.models import registered_name, resolve_model


@pytest.fixture
def no_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.logic_retriever import LogicRetriever

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was loaded before the arguments were checked")

    monkeypatch.setattr(LogicRetriever, "load", fail)
    monkeypatch.setattr(DenseEncoder, "__init__", fail)


def _index(tmp_path: Path, model: str) -> Path:
    folder = tmp_path / "idx"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"model": {"name": model}}), "utf-8")
    return folder


def _fails_fast(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2  # and no model loaded first (the fixture fails any load)
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def test_a_verifier_model_typo_fails_at_once(tmp_path, no_loading, capsys) -> None:
    idx = _index(tmp_path, "minilm")
    argv = ["search", str(idx), "q", "--strategy", "verify", "--verifier", "llm:qwen2.5-3b"]
    err = _fails_fast(argv, capsys)
    assert "--verifier llm:qwen2.5-3b: unknown model 'qwen2.5-3b'" in err
    assert "did you mean 'qwen2.5-coder" in err and "minilm" not in err


def test_a_verifier_kind_typo_says_did_you_mean(tmp_path, no_loading, capsys) -> None:
    idx = _index(tmp_path, "minilm")
    argv = ["search", str(idx), "q", "--strategy", "verify", "--verifier", "lm:qwen2.5-1.5b"]
    assert "(did you mean 'llm'?)" in _fails_fast(argv, capsys)


def test_a_cross_encoder_folder_that_is_missing(tmp_path, no_loading, capsys) -> None:
    idx = _index(tmp_path, "minilm")
    argv = ["search", str(idx), "q", "--strategy", "verify", "--verifier", "cross-encoder:/no"]
    assert "no such folder" in _fails_fast(argv, capsys)


def test_another_registered_model_than_the_index_was_built_with(
    tmp_path, no_loading, capsys
) -> None:
    idx = _index(tmp_path, "mpnet")
    err = _fails_fast(["search", str(idx), "q", "--model", "minilm"], capsys)
    assert f"{idx} was built with 'mpnet', not 'minilm'" in err
    assert "search it without --model" in err


def test_a_dense_model_typo_offers_dense_models_only(tmp_path, no_loading, capsys) -> None:
    idx = _index(tmp_path, "minilm")
    err = _fails_fast(["search", str(idx), "q", "--model", "minilmm"], capsys)
    assert "unknown model 'minilmm' (did you mean 'minilm'?)" in err
    assert "qwen" not in err and "smollm2" not in err and "splade" not in err


def test_unknown_model_message_by_role() -> None:
    with pytest.raises(ModelNotFoundError) as caught:
        resolve_model("qwen2.5-3b", kind="generator")
    message = str(caught.value)
    assert "did you mean 'qwen2.5-coder" in message and "minilm" not in message
    assert "qwen2.5-1.5b" not in message.split("did you mean")[1]  # deprecated alias left out
    with pytest.raises(ModelNotFoundError, match="dense: .*minilm.*; sparse: .*generator: "):
        resolve_model("nosuchmodel")


def test_registered_name_maps_aliases_and_hub_ids() -> None:
    assert registered_name("qwen2.5-1.5b") == "qwen2.5-coder-1.5b"
    assert registered_name("sentence-transformers/all-MiniLM-L6-v2") == "minilm"
    assert registered_name("some/folder") is None


def test_python_strategy_typo_says_did_you_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_rag import LogicRetriever
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.strategies import settings_of

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was loaded before the arguments were checked")

    monkeypatch.setattr(DenseEncoder, "__init__", fail)

    with pytest.raises(ValueError, match=r"unknown strategy 'rernak' \(did you mean 'rerank'\?\)"):
        LogicRetriever.load("/no/such/index", strategy="rernak")
    with pytest.raises(ValueError, match=r"did you mean 'rerank'"):
        settings_of("rernak")


def test_python_verifier_model_typo_fails_when_the_settings_are_made() -> None:
    from logic_rag.strategy_settings import VerifySettings

    with pytest.raises(ModelNotFoundError, match=r"llm:qwen2.5-3b: unknown model 'qwen2.5-3b'"):
        VerifySettings(verifier="llm:qwen2.5-3b")


def test_quiet_means_no_loading_bars(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text(
        json.dumps({"title": "Avocados", "text": "Avocados are green fruits."}) + "\n", "utf-8"
    )
    argv = ["index", "--docs", str(docs), "--out", str(tmp_path / "idx"), "--model", "minilm"]
    assert main([*argv, "-q"]) == 0
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "Batches" not in err and "%|" not in err


@pytest.mark.parametrize("command", [("search",), ("eval", "quest")])
def test_strategy_help_names_every_strategy(command: tuple[str, ...]) -> None:
    """The --strategy help is written out (importing the registry would slow --help); it
    must name every registered strategy (it once left out llm-rerank)."""
    import argparse

    from logic_rag.cli import build_parser
    from logic_rag.strategies import STRATEGIES

    parser = build_parser()
    for name in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    (action,) = [a for a in parser._actions if "--strategy" in a.option_strings]
    for name in STRATEGIES:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", action.help), name
