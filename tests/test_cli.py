"""The command line: instant help, index + search, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys

from logic_rag.cli import main


def test_help_does_not_import_heavy_libraries():
    code = (
        "import sys; from logic_rag.cli import build_parser; build_parser().format_help();"
        "import logic_rag;"
        "heavy = [m for m in ('torch', 'faiss', 'sentence_transformers', 'transformers') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_index_then_search_json(tmp_path, capsys):
    docs = tmp_path / "documents.jsonl"
    rows = [
        {"title": "Fahrenheit", "text": "The Fahrenheit scale is a temperature scale."},
        {"title": "Potato", "text": "The potato is a starchy tuber."},
        {"title": "Jazz", "text": "Jazz is a music genre from New Orleans."},
    ]
    docs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["index", "--docs", str(docs), "--out", str(tmp_path / "idx"), "-q"]) == 0
    capsys.readouterr()
    assert (
        main(["search", str(tmp_path / "idx"), "what is the fahrenheit scale", "-k", "2", "--json"])
        == 0
    )
    hits = json.loads(capsys.readouterr().out)
    assert [h["id"] for h in hits][0] == "Fahrenheit"
    assert set(hits[0]) == {"id", "title", "score", "text"}
    argv = [
        "search",
        str(tmp_path / "idx"),
        "music genres or vegetables but not tubers",
        "--json",
        "--explain",
    ]
    assert main([*argv, "--strategy", "setops"]) == 0
    explained = json.loads(capsys.readouterr().out)
    assert explained[0]["logic"]["query"] == "(music genres OR vegetables) NOT tubers"
    assert set(explained[0]["constraints"]) == {"music genres", "vegetables", "NOT tubers"}
    assert main(["search", str(tmp_path / "idx"), "jazz", "--strategy", "nope"]) == 2
    assert "unknown strategy" in capsys.readouterr().err
    assert main(["search", str(tmp_path / "idx"), "  "]) == 2
    assert "empty" in capsys.readouterr().err
    # The verify strategy, and its verifier flags' errors.
    assert main([*argv, "--strategy", "verify"]) == 0
    verified = json.loads(capsys.readouterr().out)
    assert verified[0]["logic"]["query"] == "(music genres OR vegetables) NOT tubers"
    assert main([*argv, "--verifier", "llm:qwen2.5-1.5b"]) == 2
    assert "--verifier applies to --strategy verify" in capsys.readouterr().err
    assert main([*argv, "--strategy", "verify", "--verifier", "magic"]) == 2
    assert "unknown verifier 'magic'" in capsys.readouterr().err
    assert main([*argv, "--strategy", "verify", "--verifier-top", "3"]) == 2
    assert "--verifier-top and --verifier-weight need --verifier" in capsys.readouterr().err
    assert main([*argv, "--strategy", "verify", "--verifier-weight", "0.5"]) == 2
    assert "need --verifier" in capsys.readouterr().err
    verify_with = [*argv, "--strategy", "verify", "--verifier", "embedding"]
    assert main([*verify_with, "--verifier-weight", "0"]) == 2
    assert "(verifier_weight) must be in (0, 1]" in capsys.readouterr().err
    assert main([*verify_with, "--verifier-weight", "0.5"]) == 0


def test_errors_are_reported_not_raised(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "A", "text": "x"}\n{oops\n')
    assert main(["index", "--docs", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert f"{bad}:2" in capsys.readouterr().err
    assert main(["index", "--docs", str(bad), "--out", str(tmp_path / "o"), "--model", "nope"]) == 2
    assert main(["search", str(tmp_path / "missing"), "q"]) == 2
    assert "no such index folder" in capsys.readouterr().err
