"""Generated regions of the README and the guides: statements made from the code, and
example output made by running the example.

A region sits between ``<!-- generated: NAME -->`` and ``<!-- /generated -->``; its text is
what :data:`REGIONS` [NAME] returns. ``tests/test_doc_regions.py`` checks every region
against it, and ``python -m tests.doc_regions`` (from the repository root) rewrites them
after a change to the code:

* ``verdict-bands``: the one statement of where ✓ / ✗ / ? start, from
  :class:`~logic_rag.verifiers.verdicts.VerdictRule`'s defaults and the corpus size below
  which embedding evidence is relative;
* ``explain-example``: the command line guide's ``--explain`` transcript, made by running
  that guide's commands (the ``orchids.jsonl`` block included) in an empty folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The pages that may hold generated regions.
PAGES = [
    ROOT / "README.md",
    ROOT / "docs" / "index.md",
    *sorted((ROOT / "docs" / "guides").glob("*.md")),
]
_REGION = re.compile(r"(<!-- generated: ([a-z-]+) -->\n)(.*?)(<!-- /generated -->)", re.S)


def _number(x: float) -> str:
    return f"{x:g}"


def verdict_bands() -> str:
    """Where a constraint's degree turns into ✓ / ✗ / ?, from the code's defaults."""
    from logic_rag.explain import SMALL_CORPUS_RANKS
    from logic_rag.strategy_settings import EvidenceSettings
    from logic_rag.verifiers.verdicts import VerdictRule

    rule = VerdictRule()
    small = SMALL_CORPUS_RANKS * EvidenceSettings().threshold_rank
    return (
        f"**Verdicts.** A constraint's degree (`hit.constraint_scores`: the verifier's "
        f"probability that the page satisfies it, one minus that for a `NOT`) becomes ✓ "
        f"(holds) at {_number(rule.high)} or more, ✗ (fails) at {_number(rule.low)} or "
        f"less, and ? (unsure) in between. Embedding evidence that is only relative "
        f"(calibrated on a reranker's candidates, or on an index of fewer than {small} "
        f"pages) has the wider band: ✓ at {_number(rule.candidates_high)} or more, ✗ at "
        f"{_number(rule.candidates_low)} or less, so on a small index most embedding "
        f"verdicts are ?. An LLM's verdicts (`quality`, `verify --verifier llm:...`) always "
        f"use the first band. The bands (`VerdictRule`, `logic_rag.verifiers.verdicts`) "
        f"change what is shown, never the ranking.\n"
    )


def _shell_block(page: Path, marker: str) -> str:
    """The ``bash`` block of ``page`` that contains ``marker``."""
    for block in re.findall(r"^```bash\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M):
        if marker in block:
            return block
    raise LookupError(f"{page.name}: no bash block with {marker!r}")


def explain_example() -> str:
    """Run the command line guide's orchid commands in an empty folder outside the
    checkout; the transcript as the guide shows it."""
    page = ROOT / "docs" / "guides" / "cli.md"
    setup = _shell_block(page, "cat > orchids.jsonl")
    commands = [
        line
        for line in _shell_block(page, "--explain").splitlines()
        if line.startswith("logic-rag ")
    ]
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        assert not Path(folder).resolve().is_relative_to(ROOT)
        subprocess.run(["bash", "-euo", "pipefail", "-c", setup], cwd=folder, env=env, check=True)
        for command in commands:
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", command],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            if done.returncode != 0:
                raise RuntimeError(f"{command}: exit {done.returncode}\n{done.stderr[-2000:]}")
            lines.append(f"$ {command}")
            here = str(Path(folder).resolve()) + os.sep
            lines += [line.rstrip().replace(here, "") for line in done.stdout.splitlines()]
    return "```text\n" + "\n".join(lines) + "\n```\n"


REGIONS: dict[str, Callable[[], str]] = {
    "verdict-bands": verdict_bands,
    "explain-example": explain_example,
}


def regions(text: str) -> list[tuple[str, str]]:
    """``(name, current text)`` of every generated region of a page."""
    return [(m.group(2), m.group(3)) for m in _REGION.finditer(text)]


def rewrite(text: str, made: dict[str, str]) -> str:
    """``text`` with every region replaced by its generated text."""
    return _REGION.sub(lambda m: m.group(1) + made[m.group(2)] + m.group(4), text)


def main() -> int:
    made: dict[str, str] = {}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        names = {name for name, _ in regions(text)}
        for name in names - set(made):
            made[name] = REGIONS[name]()
        new = rewrite(text, made)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"rewrote {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
