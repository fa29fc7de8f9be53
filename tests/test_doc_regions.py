"""Generated regions of the README and the guides agree with the code and with what their
examples print (issue 52 item 4). Regenerate them with ``python -m tests.doc_regions``."""

from __future__ import annotations

import re

import pytest

from tests.doc_regions import PAGES, REGIONS, ROOT, explain_example, regions, verdict_bands

_FIX = "run `python -m tests.doc_regions` from the repository root"


def test_every_region_has_a_generator_and_the_bands_are_stated_where_needed() -> None:
    found = {p.relative_to(ROOT).as_posix(): regions(p.read_text("utf-8")) for p in PAGES}
    assert all(name in REGIONS for page in found.values() for name, _ in page)
    for page in ("README.md", "docs/guides/cli.md"):
        assert "verdict-bands" in {name for name, _ in found[page]}, page


def test_the_verdict_bands_are_the_codes() -> None:
    expected = verdict_bands()
    for page in PAGES:
        for name, text in regions(page.read_text("utf-8")):
            if name == "verdict-bands":
                assert text == expected, f"{page.name}: stale verdict bands; {_FIX}"


def test_the_bands_statement_follows_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    from logic_rag.verifiers import verdicts

    class Wider(verdicts.VerdictRule):
        def __init__(self) -> None:
            super().__init__(low=0.25, high=0.75)

    monkeypatch.setattr(verdicts, "VerdictRule", Wider)
    assert "✓ (holds) at 0.75 or more, ✗ (fails) at 0.25 or less" in verdict_bands()


_NUMBER = re.compile(r"\d+\.\d+")


def test_the_explain_example_prints_what_the_guide_shows() -> None:
    """The command line guide's --explain transcript, run again from an empty folder
    outside the checkout (the guide's own orchids.jsonl block first). Numbers may differ
    in the last digit between CPUs; everything else must match."""
    page = ROOT / "docs" / "guides" / "cli.md"
    (shown,) = [t for n, t in regions(page.read_text("utf-8")) if n == "explain-example"]
    made = explain_example()
    assert _NUMBER.sub("#", made) == _NUMBER.sub("#", shown), f"stale transcript; {_FIX}"
    for a, b in zip(_NUMBER.findall(made), _NUMBER.findall(shown), strict=True):
        assert abs(float(a) - float(b)) <= 0.002, (a, b, _FIX)
