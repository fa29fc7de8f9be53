from __future__ import annotations

import json

import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.evals.rag.cache import ItemCache, RunSettingsMismatch, check_run_settings, corpus_key


def test_append_and_reload(tmp_path):
    path = tmp_path / "items.jsonl"
    cache = ItemCache(path)
    assert cache.load() == {}
    cache.append({"id": "a", "x": 1})
    cache.append({"id": "b", "x": 2})
    again = ItemCache(path)
    assert again.load() == {"a": {"id": "a", "x": 1}, "b": {"id": "b", "x": 2}}
    assert "a" in again and len(again) == 2
    assert path.read_text().count("\n") == 2


def test_torn_last_line_dropped_with_warning_and_truncated(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b"}\n{"id": "c", "answ')
    cache = ItemCache(path)
    with pytest.warns(RuntimeWarning, match=r"items.jsonl:3: dropping a torn last line"):
        items = cache.load()
    assert list(items) == ["a", "b"]
    cache.append({"id": "c"})
    lines = path.read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == ["a", "b", "c"]


def test_torn_line_without_trailing_newline_then_append(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "a"}')  # complete JSON but no newline: kept
    cache = ItemCache(path)
    assert list(cache.load()) == ["a"]
    cache.append({"id": "b"})
    assert [json.loads(x)["id"] for x in path.read_text().splitlines()] == ["a", "b"]


def test_malformed_middle_line_is_an_error_with_line_number(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "a"}\nnot json\n{"id": "c"}\n')
    with pytest.raises(CorpusFormatError, match=r"items.jsonl:2: malformed cache line"):
        ItemCache(path).load()


def test_record_without_key_rejected(tmp_path):
    with pytest.raises(ValueError, match="no 'id' field"):
        ItemCache(tmp_path / "x.jsonl").append({"x": 1})
    (tmp_path / "y.jsonl").write_text('{"x": 1}\n{"id": "b"}\n')
    with pytest.raises(CorpusFormatError, match=":1:"):
        ItemCache(tmp_path / "y.jsonl").load()


def test_nan_refused(tmp_path):
    with pytest.raises(ValueError):
        ItemCache(tmp_path / "x.jsonl").append({"id": "a", "score": float("nan")})


def test_run_settings_mismatch(tmp_path):
    check_run_settings(tmp_path, {"k": 5, "model": "minilm"})
    check_run_settings(tmp_path, {"k": 5, "model": "minilm"})  # same: fine
    with pytest.raises(RunSettingsMismatch, match="model: 'minilm' -> 'mpnet'"):
        check_run_settings(tmp_path, {"k": 5, "model": "mpnet"})


def test_corpus_key_depends_on_texts_order_and_model():
    base = corpus_key(["a", "b"], "m1")
    assert base == corpus_key(["a", "b"], "m1")
    assert base != corpus_key(["b", "a"], "m1")
    assert base != corpus_key(["a", "b"], "m2")
    assert corpus_key(["ab"], "m1") != corpus_key(["a", "b"], "m1")  # length-prefixed
