"""Gold queries from QUEST records, on hand-made and on every shared real record."""

from __future__ import annotations

import json

import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.query.algebra import And, Atom, Not, Or, atoms, negated_atoms
from logic_rag.query.quest import parse_marked, parse_quest_record, read_quest_jsonl
from logic_rag.query.templates import TEMPLATES, to_template

QUEST_FILE = "quest/quest_train_sample20.jsonl"
LIMIT_FILE = "limit/limit_quest_format_queries.jsonl"


def record(original: str, template: str) -> dict:
    return {"query": "q", "original_query": original, "metadata": {"template": template}}


def test_parse_marked() -> None:
    text = "<mark>Orchids of Malaysia</mark> that are not <mark> Orchids  of\nThailand </mark>"
    assert parse_marked(text) == ["Orchids of Malaysia", "Orchids of Thailand"]
    assert parse_marked("no marks") == []
    assert parse_marked("<MARK>A</MARK>") == ["A"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("<mark>A", "never closed"),
        ("A</mark>", "without an opening"),
        ("<mark><mark>A</mark></mark>", "nested"),
        ("<mark> </mark> or <mark>B</mark>", "empty"),
    ],
)
def test_parse_marked_errors(bad, message) -> None:
    with pytest.raises(ValueError, match=message):
        parse_marked(bad)


def test_parse_record_examples() -> None:
    q = parse_quest_record(
        record(
            "<mark>A</mark> that are also <mark>B</mark> but not <mark>C</mark>",
            "_ that are also _ but not _",
        )
    )
    assert q == And((Atom("A"), Atom("B"), Not(Atom("C"))))
    q = parse_quest_record(record("<mark>A</mark> or <mark>B</mark>", "_ or _"))
    assert q == Or((Atom("A"), Atom("B")))


@pytest.mark.parametrize(
    ("rec", "field"),
    [
        ([], "JSON object"),
        ({"metadata": {"template": "_"}}, "'original_query'"),
        ({"original_query": "<mark>A</mark>"}, "'metadata'"),
        ({"original_query": "<mark>A</mark>", "metadata": {}}, "'metadata.template'"),
        (record("<mark>A</mark>", "_ and _"), "'metadata.template'"),
        (record("<mark>A</mark> or B", "_ or _"), "1 <mark> atom"),
        (record("<mark>A</mark> and <mark>B</mark>", "_ or _"), "does not match"),
        (record("<mark>A</mark> or <mark>B", "_ or _"), "field 'original_query': .*closed"),
    ],
)
def test_parse_record_errors_name_the_field(rec, field) -> None:
    with pytest.raises(ValueError, match=field):
        parse_quest_record(rec)


def test_non_strict_trusts_template() -> None:
    rec = record("<mark>A</mark> and <mark>B</mark>", "_ or _")
    assert parse_quest_record(rec, strict=False) == Or((Atom("A"), Atom("B")))


def test_read_jsonl_reports_file_and_line(tmp_path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(record("<mark>A</mark>", "_")) + "\n\n{broken\n")
    with pytest.raises(CorpusFormatError, match=r"q\.jsonl:3: not valid JSON"):
        read_quest_jsonl(path)
    path.write_text("[1, 2]\n")
    with pytest.raises(CorpusFormatError, match=r"q\.jsonl:1: expected a JSON object"):
        read_quest_jsonl(path)


def test_every_shared_quest_record_parses(shared_data) -> None:
    records = read_quest_jsonl(shared_data / QUEST_FILE)
    assert len(records) == 20
    for rec in records:
        q = parse_quest_record(rec)
        template = rec["metadata"]["template"]
        assert to_template(q) == template
        assert [a.text for a in atoms(q)] == parse_marked(rec["original_query"])


def test_every_shared_limit_record_parses(shared_data) -> None:
    records = read_quest_jsonl(shared_data / LIMIT_FILE)
    assert len(records) == 700
    seen = set()
    for rec in records:
        q = parse_quest_record(rec)
        template = rec["metadata"]["template"]
        seen.add(template)
        assert to_template(q) == template
        # an independent gold: the generator's own attribute list, in slot order
        assert [a.text for a in atoms(q)] == rec["metadata"]["attrs"]
        if "not" in template.split():
            assert negated_atoms(q) == [Atom(rec["metadata"]["attrs"][-1])]
    assert seen == set(TEMPLATES)
