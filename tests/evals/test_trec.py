"""TREC-format loader: a tiny collection written in tmp_path, and malformed lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from logic_rag.errors import CorpusFormatError
from logic_rag.evals.trec import (
    load_trec_collection,
    load_trec_documents,
    load_trec_qrels,
    load_trec_topics,
)

DOCS = """<DOC>
<DOCNO>1</DOCNO>
compact memories have flexible capacities  a digital data
storage system
</DOC>
<DOC>
<DOCNO> 2 </DOCNO>
<TEXT>an electronic analogue computer</TEXT>
</DOC>
"""
TOPICS = """<top>
<num>1</num><title>
MEASUREMENT OF DIELECTRIC CONSTANT
</title>
</top>
<top>
<num> Number: 2
<title> waveguide design
</top>
"""
QRELS = "1 0 1 1\n\n2 0 2 1\n2 0 1 0\n"


def _write(tmp_path: Path, docs: str = DOCS, topics: str = TOPICS, qrels: str = QRELS) -> Path:
    (tmp_path / "doc-text.trec").write_text(docs)
    (tmp_path / "query-text.trec").write_text(topics)
    (tmp_path / "qrels").write_text(qrels)
    return tmp_path


def test_loads_small_collection(tmp_path: Path) -> None:
    c = load_trec_collection(_write(tmp_path))
    assert c.corpus == {
        "1": "compact memories have flexible capacities a digital data storage system",
        "2": "an electronic analogue computer",
    }
    assert c.queries == {"1": "MEASUREMENT OF DIELECTRIC CONSTANT", "2": "waveguide design"}
    assert c.qrels == {"1": {"1": 1}, "2": {"2": 1, "1": 0}}
    assert [p.name for p in c.files] == ["doc-text.trec", "query-text.trec", "qrels"]


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("<DOC>\n<DOCNO>1</DOCNO>\nx\n<DOC>\n", 4, "inside the <DOC> opened on line 1"),
        ("<DOC>\nx\n</DOC>\n", 3, "has no <DOCNO>"),
        ("stray\n", 1, "text outside"),
        ("<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n", 6, "twice"),
        ("<DOC>\n<DOCNO>1</DOCNO>\nx\n", 1, "never closed"),
        ("</DOC>\n", 1, "without an open"),
    ],
)
def test_malformed_documents_name_file_and_line(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    path = tmp_path / "d.trec"
    path.write_text(text)
    with pytest.raises(CorpusFormatError, match=problem) as err:
        load_trec_documents(path)
    assert err.value.line == line
    assert str(err.value).startswith(f"{path}:{line}:")


def test_malformed_topics(tmp_path: Path) -> None:
    path = tmp_path / "t.trec"
    path.write_text("<top>\n<num>1</num><title>\n</title>\n</top>\n")
    with pytest.raises(CorpusFormatError, match="empty <title>"):
        load_trec_topics(path)
    path.write_text(TOPICS + "<top>\n<num>1</num><title>again</title>\n</top>\n")
    with pytest.raises(CorpusFormatError, match="appears twice") as err:
        load_trec_topics(path)
    assert err.value.line == 12  # the closing </top> of the repeat


def test_malformed_qrels_line(tmp_path: Path) -> None:
    path = tmp_path / "qrels"
    path.write_text("1 0 1 1\n1 0 2\n")
    with pytest.raises(CorpusFormatError, match="expected 4 fields") as err:
        load_trec_qrels(path)
    assert str(err.value).startswith(f"{path}:2:")
    path.write_text("1 0 1 yes\n")
    with pytest.raises(CorpusFormatError, match="not an integer"):
        load_trec_qrels(path)


def test_qrels_must_refer_to_known_documents_and_topics(tmp_path: Path) -> None:
    folder = _write(tmp_path, qrels=QRELS + "2 0 99 1\n")
    with pytest.raises(CorpusFormatError, match="document '99' is not in") as err:
        load_trec_collection(folder)
    assert err.value.line == 5
    folder = _write(tmp_path, qrels="7 0 1 1\n")
    with pytest.raises(CorpusFormatError, match="topic '7' is not in"):
        load_trec_collection(folder)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CorpusFormatError, match="file not found"):
        load_trec_documents(tmp_path / "nope.trec")
