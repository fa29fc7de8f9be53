"""Loaders on the shared data and on broken input; the fixed MS MARCO query split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.finetune.entailment.data import (
    detokenize,
    load_beir_qrels,
    load_mnli,
    load_snli,
    msmarco_claim_pairs,
    split_queries,
)


def test_detokenize() -> None:
    assert detokenize("Two woman are holding packages .") == "Two woman are holding packages."
    assert detokenize("He did n't go , did he ?") == "He didn't go, did he?"
    assert detokenize("a man 's hat ( red )") == "a man's hat (red)"


def test_snli_dev_entailment_only(shared_data: Path) -> None:
    pairs = load_snli(shared_data / "nli" / "snli_dev.jsonl")
    everything = load_snli(shared_data / "nli" / "snli_dev.jsonl", entailment_only=False)
    assert len(everything) == 9842
    assert 0 < len(pairs) < len(everything)
    assert {p.label for p in pairs} == {"entailment"}
    assert pairs[0].hypothesis == "Two woman are holding packages."


def test_mnli_dev_matched_keeps_every_row(shared_data: Path) -> None:
    everything = load_mnli(shared_data / "nli" / "mnli_dev_matched.tsv", entailment_only=False)
    assert len(everything) == 9815  # QUOTE_NONE: default quoting would merge ~100 rows
    pairs = load_mnli(shared_data / "nli" / "mnli_dev_matched.tsv")
    assert {p.label for p in pairs} == {"entailment"}
    assert all(p.premise and p.hypothesis for p in pairs)


def test_split_is_deterministic_disjoint_and_order_free() -> None:
    ids = [str(i) for i in range(1000)]
    train, test = split_queries(ids)
    assert set(train).isdisjoint(test) and set(train) | set(test) == set(ids)
    assert 0.25 < len(test) / len(ids) < 0.35
    train2, test2 = split_queries(list(reversed(ids)) + ids[:10])
    assert (train2, test2) == (train, test)
    # a query's side does not depend on which other queries are present
    _, test_small = split_queries(ids[:100])
    assert set(test_small) == set(test) & set(ids[:100])


def test_msmarco_pairs_never_use_test_queries(shared_data: Path) -> None:
    beir = shared_data / "beir" / "msmarco"
    train = msmarco_claim_pairs(beir, split="train")
    test = msmarco_claim_pairs(beir, split="test")
    train_q = {p.query_id for p in train}
    test_q = {p.query_id for p in test}
    assert train_q and test_q and train_q.isdisjoint(test_q)
    _, expected_test = split_queries(load_beir_qrels(beir / "qrels" / "test.tsv"))
    assert test_q <= set(expected_test)
    qrels = load_beir_qrels(beir / "qrels" / "test.tsv")
    assert all(qrels[p.query_id][p.doc_id] >= 2 for p in train)
    assert all(p.claim.startswith("There exist") and p.passage for p in train)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('["a list"]', "JSON object"),
        ('{"premise": "p", "label": "entailment"}', "hypothesis"),
        ('{"premise": "p", "hypothesis": "h", "label": "maybe"}', "label"),
    ],
)
def test_snli_broken_lines_name_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    good = json.dumps({"premise": "p .", "hypothesis": "h .", "label": "entailment"})
    path = _write(tmp_path / "snli.jsonl", f"{good}\n\n{line}\n")
    with pytest.raises(CorpusFormatError, match=problem) as info:
        load_snli(path)
    assert info.value.line == 3 and f"{path}:3" in str(info.value)


def test_mnli_broken_rows(tmp_path: Path) -> None:
    header = "index\tpremise\thypothesis\tgold_label\tcount\n"
    path = _write(tmp_path / "m.tsv", header + '0\ta "quoted\th\tentailment\t1\n1\tonly\ttwo\n')
    with pytest.raises(CorpusFormatError, match="fields") as info:
        load_mnli(path)
    assert info.value.line == 3
    bad_header = _write(tmp_path / "h.tsv", "a\tb\n")
    with pytest.raises(CorpusFormatError, match="header"):
        load_mnli(bad_header)


def test_qrels_header_optional_and_bad_score(tmp_path: Path) -> None:
    with_header = _write(tmp_path / "q1.tsv", "query-id\tcorpus-id\tscore\nq\td\t2\n")
    assert load_beir_qrels(with_header) == {"q": {"d": 2}}
    bad = _write(tmp_path / "q2.tsv", "q\td\t2\nq\te\thigh\n")
    with pytest.raises(CorpusFormatError, match="integer") as info:
        load_beir_qrels(bad)
    assert info.value.line == 2


def test_msmarco_broken_corpus_line(tmp_path: Path) -> None:
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    _write(beir / "corpus.jsonl", '{"_id": "d1", "title": "", "text": "t"}\n{"_id": 5}\n')
    _write(beir / "queries.jsonl", '{"_id": "q1", "text": "who wrote it"}\n')
    _write(beir / "qrels" / "test.tsv", "q1\td1\t2\n")
    with pytest.raises(CorpusFormatError) as info:
        msmarco_claim_pairs(beir)
    assert info.value.line == 2
