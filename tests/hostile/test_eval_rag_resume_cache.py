"""Issue 42 item 10: ``eval rag`` resuming from a cache it should not trust.

``{"id": ID}`` alone counted as a finished item (null scores in the results, exit 0);
wrongly typed fields or a ``run_settings.json`` that is a JSON list gave tracebacks, and
garbage settings a message without the file's name. A cached line must now be a whole
finished record, or the run stops with ``file:line``; a bad settings file is named.
"""

from __future__ import annotations

import json

import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.evals.rag.cache import ItemCache, RunSettingsMismatch, check_run_settings
from logic_rag.evals.rag.runner import RagEvalConfig, item_record_problem, run_rag_eval
from tests.evals.rag.conftest import canned_llm, fake_generator  # noqa: F401 - fixtures
from tests.evals.rag.test_runner import EXAMPLES, FakeRetriever, _answer, _judge_text, examples  # noqa: F401


@pytest.fixture
def finished(tmp_path, examples, fake_generator, canned_llm):  # noqa: F811
    """A finished 5-item run; returns (config, items file, its lines)."""
    config = RagEvalConfig(dataset="eli5", out=tmp_path / "run", limit=5)
    run_rag_eval(
        config,
        generator=fake_generator(_answer),
        judge_llm=canned_llm(_judge_text),
        retriever=FakeRetriever(),
    )
    items = tmp_path / "run" / "items.jsonl"
    return config, items, items.read_text().splitlines()


def _edit(record: dict, change: str) -> dict:
    record = dict(record)
    if change == "id only":
        return {"id": record["id"]}
    if change == "metrics a string":
        record["metrics"] = dict(record["metrics"], correctness="4")
    elif change == "metrics a list":
        record["metrics"] = [1, 2]
    elif change == "answer a number":
        record["answer"] = 7
    elif change == "timings a string":
        record["timings"] = dict(record["timings"], generate_s="fast")
    elif change == "passages an object":
        record["passages"] = {"id": "d1"}
    elif change == "judge_raw a number":
        record["judge_raw"] = {"correctness": 4}
    elif change == "id an object":
        record["id"] = {"q": 1}
    elif change == "deep":
        record["metrics"] = json.loads("[" * 5_000 + "]" * 5_000)
    return record


CHANGES = [
    "id only",
    "metrics a string",
    "metrics a list",
    "answer a number",
    "timings a string",
    "passages an object",
    "judge_raw a number",
    "id an object",
]


@pytest.mark.parametrize("last", [False, True], ids=["middle", "last"])
@pytest.mark.parametrize("change", CHANGES)
def test_a_cached_line_that_is_not_a_finished_item_stops_the_run(
    finished,
    fake_generator,  # noqa: F811
    canned_llm,  # noqa: F811
    change,
    last,
):
    config, items, lines = finished
    where = len(lines) if last else 2
    record = json.loads(lines[where - 1])
    lines[where - 1] = json.dumps(_edit(record, change))
    items.write_text("\n".join(lines) + "\n")
    before = items.read_bytes()
    generator = fake_generator(_answer)
    with pytest.raises(CorpusFormatError, match=rf"items.jsonl:{where}: malformed cache line"):
        run_rag_eval(
            config,
            generator=generator,
            judge_llm=canned_llm(_judge_text),
            retriever=FakeRetriever(),
        )
    assert generator.calls == []  # nothing redone, nothing mixed
    assert items.read_bytes() == before  # a valid but incomplete last line is not "torn"


def test_deeply_nested_cache_line_is_a_file_line_error(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "a", "x": ' + "[" * 5_000 + "]" * 5_000 + "}\n" + '{"id": "b"}\n')
    with pytest.raises(CorpusFormatError, match=r"items.jsonl:1: malformed cache line \(JSON"):
        ItemCache(path).load()


def test_finished_records_pass_the_check(finished):
    _config, _items, lines = finished
    assert all(item_record_problem(json.loads(line)) is None for line in lines)


@pytest.mark.parametrize(
    "content, needle",
    [
        ("[1, 2]", "holds a JSON list, not the settings object"),
        ('"k=5"', "holds a JSON str"),
        ("k: 5\nretriever: dense", "is not valid JSON"),
        ("\udcff", "is not valid JSON"),
    ],
    ids=["list", "string", "garbage", "bad utf-8"],
)
def test_a_bad_settings_file_is_named(tmp_path, content, needle):
    out = tmp_path / "run"
    out.mkdir()
    path = out / "run_settings.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(RunSettingsMismatch) as caught:
        check_run_settings(out, {"k": 5})
    assert str(caught.value).startswith(f"{path} ") and needle in str(caught.value)
    assert path.read_bytes() == content.encode("utf-8", "surrogateescape")  # kept
