"""A pipeline in JSON is configuration people share: reading it never runs code (issue 51
item 1). Every ``type`` is resolved against the allow-list of stage and verifier modules,
recursively, before anything is constructed, and a module outside it is never imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from logic_rag.pipeline.stage import Pipeline, Stage


def _writer(path) -> dict:
    return {
        "type": "logic_rag.atomic.atomic_write_text",
        "init_parameters": {"path": str(path), "text": "owned"},
    }


def test_a_function_named_as_a_type_is_not_called(tmp_path):
    target = tmp_path / "x"
    with pytest.raises(ValueError, match="only logic_rag stages and verifiers"):
        Stage.from_dict(_writer(target))
    assert not target.exists()


def test_a_function_nested_in_a_real_stage_is_not_called(tmp_path):
    target = tmp_path / "x"
    nested = {
        "type": "logic_rag.verifiers.base.Verify",
        "init_parameters": {"verifier": _writer(target)},
    }
    with pytest.raises(ValueError, match="refusing to load"):
        Stage.from_dict(nested)
    pipeline = {"type": "logic_rag.pipeline.stage.Pipeline", "stages": [nested]}
    with pytest.raises(ValueError, match="refusing to load"):
        Pipeline.from_dict(pipeline)
    assert not target.exists()


def test_a_nested_remove_deletes_nothing(tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "file.txt").write_text("mine")
    remove = {"type": "logic_rag.index.store._remove", "init_parameters": {"path": str(keep)}}
    data = {
        "type": "logic_rag.pipeline.ranking.Combine",
        "init_parameters": {"weights": [remove]},
    }
    with pytest.raises(ValueError, match="refusing to load"):
        Stage.from_dict(data)
    assert (keep / "file.txt").read_text() == "mine"


@pytest.mark.parametrize(
    "name",
    [
        "logic_rag.pipeline.stage.dataclasses",  # a module imported there
        "logic_rag.pipeline.stage.SearchContext",  # a class imported there, not a stage
        "logic_rag.strategy_settings._CheckOnly",
        "logic_rag.verifiers.base.Verifier.__subclasses__",
    ],
)
def test_only_stage_and_verifier_classes_defined_in_allowed_modules_load(name):
    with pytest.raises(ValueError, match="refusing to load|unknown component"):
        Stage.from_dict({"type": name, "init_parameters": {}})


def test_the_cli_module_is_never_imported():
    """``{"type": "logic_rag.__main__.x"}`` ran the CLI with the host's argv."""
    code = (
        "import json, sys\n"
        "from logic_rag.pipeline.stage import Stage\n"
        "try:\n"
        "    Stage.from_dict({'type': 'logic_rag.__main__.x'})\n"
        "except ValueError as exc:\n"
        "    print('refused', exc)\n"
        "print('imported' if 'logic_rag.__main__' in sys.modules else 'not imported')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, "search"], capture_output=True, text=True, timeout=120
    )
    assert "refused" in out.stdout and "not imported" in out.stdout, out.stdout + out.stderr


def test_unknown_parameters_and_deep_nesting_are_refused_before_construction(tmp_path):
    with pytest.raises(ValueError, match="unknown parameter"):
        Stage.from_dict({"type": "logic_rag.pipeline.ranking.TopK", "init_parameters": {"x": 1}})
    deep: dict = _writer(tmp_path / "x")
    for _ in range(5000):
        deep = {"type": "logic_rag.verifiers.base.Verify", "init_parameters": {"verifier": deep}}
    with pytest.raises(ValueError, match="nest(ed|s) more than"):
        Stage.from_dict(deep)
    assert not (tmp_path / "x").exists()
