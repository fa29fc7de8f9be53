"""A saved index remembers how it searches: ``LogicRetriever.save`` writes the strategy and
its settings in ``strategy.json`` beside the manifest, and ``load`` restores them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from logic_rag.corpus import Document
from logic_rag.errors import IndexCorruptError
from logic_rag.logic_retriever import LogicRetriever
from logic_rag.strategies import pipeline_of
from logic_rag.strategy_settings import RerankSettings, SetopsSettings, VerifySettings

DOCS = [
    Document(id=str(i), title=t, text=f"{t} is a page about {t.lower()}.")
    for i, t in enumerate(["Orchids of Malaysia", "Orchids of Thailand", "Ferns of Borneo"])
]


@pytest.fixture(scope="module")
def retriever(minilm):
    return LogicRetriever.build(
        DOCS, model=minilm, strategy="verify", settings=VerifySettings(verifier_top=7)
    ).with_settings(RerankSettings(candidates=50, truth_weight=0.25))


def _rewrite(out: Path, name: str, text: str | None) -> None:
    """Replace (or with None delete) a listed file and fix the manifest's checksum table,
    as a folder saved by another version would look."""
    manifest = json.loads((out / "manifest.json").read_text())
    if text is None:
        (out / name).unlink()
        del manifest["files"][name]
        manifest.pop("strategy_file", None)
    else:
        (out / name).write_text(text)
        data = text.encode()
        manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    (out / "manifest.json").write_text(json.dumps(manifest))


def test_a_saved_index_reloads_with_its_strategy_and_settings(retriever, minilm, tmp_path):
    out = retriever.save(tmp_path / "idx")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["strategy_file"] == "strategy.json" and "strategy.json" in manifest["files"]
    loaded = LogicRetriever.load(out, model=minilm)
    assert loaded.strategy == "verify"
    assert loaded.settings_for("verify") == VerifySettings(verifier_top=7)
    assert loaded.settings_for("rerank") == RerankSettings(candidates=50, truth_weight=0.25)
    assert loaded.settings_for("setops") == SetopsSettings()  # never given: the defaults
    query = "Orchids of Malaysia but not Orchids of Thailand"
    a, b = retriever.search(query, k=3), loaded.search(query, k=3)
    assert [(h.id, round(h.score, 5)) for h in a] == [(h.id, round(h.score, 5)) for h in b]


def test_what_load_is_given_wins_over_what_was_saved(retriever, minilm, tmp_path):
    out = retriever.save(tmp_path / "idx")
    other = LogicRetriever.load(out, model=minilm, strategy="rerank")
    assert other.strategy == "rerank"
    assert other.settings_for("verify") == VerifySettings(verifier_top=7)  # still kept
    given = LogicRetriever.load(out, model=minilm, settings=VerifySettings(verifier_top=9))
    assert given.strategy == "verify" and given.settings_for("verify").verifier_top == 9
    assert given.settings_for("rerank").truth_weight == 0.25
    with pytest.raises(TypeError, match="VerifySettings"):
        LogicRetriever.load(out, model=minilm, settings=RerankSettings())


def test_an_older_index_without_the_file_loads_with_defaults(retriever, minilm, tmp_path):
    out = retriever.save(tmp_path / "idx")
    _rewrite(out, "strategy.json", None)
    loaded = LogicRetriever.load(out, model=minilm)
    assert loaded.strategy == "rerank"
    assert loaded.settings_for("verify") == VerifySettings()
    assert loaded.settings_for("rerank") == RerankSettings()


def test_the_default_search_is_saved_without_the_file(minilm, tmp_path):
    out = LogicRetriever.build(DOCS, model=minilm).save(tmp_path / "idx")
    assert not (out / "strategy.json").exists()
    assert "strategy_file" not in json.loads((out / "manifest.json").read_text())
    assert LogicRetriever.load(out, model=minilm).strategy == "rerank"


def test_a_custom_stage_is_saved_through_the_allow_listed_stage_format(minilm, tmp_path):
    stage = pipeline_of("vanilla")
    out = LogicRetriever.build(DOCS, model=minilm, strategy=stage).save(tmp_path / "idx")
    loaded = LogicRetriever.load(out, model=minilm)
    assert loaded.strategy.to_dict() == stage.to_dict()


def test_settings_without_a_json_form_are_left_out_with_a_warning(minilm, tmp_path):
    from tests.verifier_doubles import KeywordVerifier

    settings = VerifySettings(verifier=KeywordVerifier())
    built = LogicRetriever.build(DOCS, model=minilm, strategy="verify", settings=settings)
    with pytest.warns(UserWarning, match="VerifySettings"):
        out = built.save(tmp_path / "idx")
    loaded = LogicRetriever.load(out, model=minilm)
    assert loaded.strategy == "verify" and loaded.settings_for("verify") == VerifySettings()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[1, 2", "not JSON"),
        ('{"format": "other"}', "not a logic-rag strategy file"),
        ('{"format": "logic-rag/strategy", "format_version": 9}', "version 9"),
        (
            '{"format": "logic-rag/strategy", "format_version": 1, "strategy": "os.system"}',
            "unknown strategy",
        ),
        (
            '{"format": "logic-rag/strategy", "format_version": 1, "strategy": "verify", '
            '"settings": {"verify": {"verifier_top": 7, "shell": "rm -rf /"}}}',
            "unknown VerifySettings field",
        ),
        (
            '{"format": "logic-rag/strategy", "format_version": 1, "strategy": '
            '{"type": "logic_rag.atomic.atomic_write_text", "init_parameters": {}}}',
            "custom strategy",
        ),
    ],
)
def test_a_damaged_or_foreign_strategy_file_is_refused(retriever, minilm, tmp_path, text, match):
    out = retriever.save(tmp_path / "idx")
    _rewrite(out, "strategy.json", text)
    with pytest.raises(IndexCorruptError, match=match):
        LogicRetriever.load(out, model=minilm)
