"""Every code block of the README, docs/index.md and the guides runs alone, from a folder
outside the checkout, and prints what the page shows (issue 52).

Each ``python`` and ``bash`` block runs in a fresh subprocess whose working folder is a new
temporary folder outside the repository, with the installed package (no ``sys.path`` entry
for the checkout), the venv's programs first on ``PATH``, models offline from the cache
(``HF_HUB_OFFLINE=1``), the benchmark data through ``LOGIC_RAG_DATA``, and the shipped
default model (the suite's ``LOGIC_RAG_DEFAULT_MODEL=minilm`` is taken away, so a block
that uses the default shows what a user sees).

**Output.** A ```` ```text ```` block right after a code block (blank lines only between)
is what that code block prints on standard output; the subprocess's output must match it
line by line, numbers within 0.002 (the last digit may differ between CPUs). A code block
with no such block must print nothing (Python), or only exit 0 (bash, whose commands
report progress). Standard error is not compared: progress bars and warnings go there.

**Markers**, HTML comments on the lines right above a block (any order):

* ``<!-- docs-test: skip REASON -->``: not run; REASON (four words or more) is reported.
  For blocks that need a remote server, a GPU, a cluster, an index or data a reader
  builds first, minutes of training or indexing, or that install packages.
* ``<!-- docs-test: slow REASON -->``: run only in the slow suite (``make test-slow``);
  for blocks over ~20 s on 2 CPU cores (a model loaded for seconds is fine, the default
  EmbeddingGemma is not).
* ``<!-- docs-test: continues -->``: the block goes on from the page's previous block of
  its language (names it defined, files it wrote): that block (and what it continues)
  runs first in the same folder, its output discarded.

Rewrite every output block after a change with
``python -m tests.docs.test_code_blocks --write`` from the repository root (add
``--slow`` to include the slow blocks, and page paths to limit it to them); check the
diff before committing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "README.md",
    ROOT / "docs" / "index.md",
    *sorted((ROOT / "docs" / "guides").glob("*.md")),
]
LANGUAGES = ("python", "bash")
TIMEOUT_S = 600

_FENCE = re.compile(r"^```([A-Za-z]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_MARKER = re.compile(r"^<!--\s*docs-test:\s*(skip|slow|continues)\b\s*(.*?)\s*-->\s*$")
_NUMBER = re.compile(r"-?\d+\.\d+")
TOLERANCE = 0.002


@dataclass
class Block:
    """One code block of a page, with its markers and the output the page shows."""

    page: Path
    line: int  # the fence's line, 1-based
    language: str
    code: str
    skip: str | None = None
    slow: str | None = None
    continues: Block | None = None
    output: str | None = None  # the ```text block after it, if any
    output_span: tuple[int, int] | None = None  # its content's character span
    fence_end: int = 0  # where the code block's closing fence ends
    chain: list[Block] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    """The page's python and bash blocks, in order."""
    text = page.read_text(encoding="utf-8")
    fences = list(_FENCE.finditer(text))
    found: list[Block] = []
    last: dict[str, Block] = {}
    for i, m in enumerate(fences):
        language = m.group(1).lower()
        if language not in LANGUAGES:
            continue
        block = Block(
            page,
            text.count("\n", 0, m.start()) + 1,
            language,
            m.group(2),
            fence_end=m.end(),
        )
        for before in reversed(text[: m.start()].rstrip("\n").splitlines()):
            marker = _MARKER.match(before.strip())
            if marker is None:
                break
            kind, reason = marker.groups()
            if kind == "skip":
                block.skip = reason or "no reason given"
            elif kind == "slow":
                block.slow = reason or "over ~20 s"
            else:
                block.continues = last.get(language)
                if block.continues is None:
                    raise ValueError(f"{block.name}: 'continues' with no earlier {language} block")
        following = fences[i + 1] if i + 1 < len(fences) else None
        if (
            following is not None
            and following.group(1).lower() == "text"
            and not text[m.end() : following.start()].strip()
        ):
            block.output = following.group(2)
            block.output_span = (following.start(2), following.end(2))
        chain, at = [], block.continues
        while at is not None:
            chain.insert(0, at)
            at = at.continues
        block.chain = chain
        last[language] = block
        found.append(block)
    return found


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks_of(page)]


# ------------------------------------------------------------------------------ running

_DRIVER = """
import contextlib, io, json, sys
codes = json.load(sys.stdin)
namespace = {"__name__": "__main__"}
for i, (name, code) in enumerate(codes):
    last = i == len(codes) - 1
    with contextlib.nullcontext() if last else contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, name, "exec"), namespace)
"""


def _environment() -> dict[str, str]:
    from logic_rag.paths import shared_data_dir

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env.pop("LOGIC_RAG_DEFAULT_MODEL", None)  # the default a user gets
    env.update(
        {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "LOGIC_RAG_DATA": str(shared_data_dir().resolve()),
            "COLUMNS": "100",
        }
    )
    return env


def run_block(block: Block) -> str:
    """Run ``block`` (after what it continues) in a new folder outside the checkout; its
    standard output, with that folder's path taken out. Raises on a failure."""
    with tempfile.TemporaryDirectory(prefix="logic-rag-docs-") as folder:
        where = Path(folder).resolve()
        assert not where.is_relative_to(ROOT), where
        env = _environment()
        if block.language == "python":
            codes = [[b.name, b.code] for b in (*block.chain, block)]
            done = subprocess.run(
                [sys.executable, "-c", _DRIVER],
                input=json.dumps(codes),
                cwd=where,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
            )
        else:
            for earlier in block.chain:
                first = _bash(earlier, where, env)
                if first.returncode != 0:
                    raise AssertionError(
                        f"{earlier.name} exited {first.returncode}\n{first.stderr[-3000:]}"
                    )
            done = _bash(block, where, env)
        if done.returncode != 0:
            raise AssertionError(
                f"{block.name} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}"
                f"\n--- stderr\n{done.stderr[-3000:]}"
            )
        return done.stdout.replace(str(where) + os.sep, "").replace(str(where), ".")


def _bash(block: Block, where: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    return done


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def mismatch(printed: str, shown: str) -> str | None:
    """Why ``printed`` does not match the page's ``shown`` output; None when it does."""
    got, want = _lines(printed), _lines(shown)
    if len(got) != len(want):
        return f"{len(got)} lines printed, the page shows {len(want)}"
    for n, (a, b) in enumerate(zip(got, want, strict=True), 1):
        if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
            return f"line {n}: printed {a!r}, the page shows {b!r}"
        for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b), strict=True):
            if abs(float(x) - float(y)) > TOLERANCE:
                return f"line {n}: {x} printed, the page shows {y}"
    return None


# -------------------------------------------------------------------------------- tests


def _params() -> list[object]:
    params = []
    for block in all_blocks():
        marks = [pytest.mark.slow] if block.slow else []
        params.append(pytest.param(block, id=block.name, marks=marks))
    return params


_FIX = "run `python -m tests.docs.test_code_blocks --write` from the repository root"


@pytest.mark.parametrize("block", _params())
def test_block_prints_what_the_page_shows(block: Block) -> None:
    if block.skip is not None:
        pytest.skip(f"{block.name}: {block.skip}")
    needs_data = "LOGIC_RAG_DATA" in block.code or any(
        "LOGIC_RAG_DATA" in b.code for b in block.chain
    )
    if needs_data:
        from logic_rag.paths import shared_data_dir

        if not shared_data_dir().is_dir():
            pytest.skip(f"{block.name} reads the benchmark data; set LOGIC_RAG_DATA")
    printed = run_block(block)
    if block.output is None:
        if block.language == "python":
            assert not _lines(printed), f"{block.name} printed output the page does not show"
        return
    why = mismatch(printed, block.output)
    assert why is None, f"{block.name}: {why}\n--- printed\n{printed}\n; {_FIX}"


def test_every_marker_says_why() -> None:
    for block in all_blocks():
        for reason in (block.skip, block.slow):
            assert reason is None or len(reason.split()) >= 4, (block.name, reason)


def test_the_markers_are_read() -> None:
    page = ROOT / "docs" / "guides" / "llama-index.md"
    blocks = blocks_of(page)
    assert any(b.continues is not None for b in blocks)
    assert any(b.output is not None for b in all_blocks() if b.page.name == "README.md")
    assert mismatch("0.5001  a\n", "0.500  a") is None
    assert mismatch("0.51  a\n", "0.50  a") is not None
    assert mismatch("x\ny\n", "x") is not None


def test_the_framework_examples_load_their_model_once() -> None:
    """The README's and the guides' rerankers take the embedding object as their model, so
    the encoder the index embedded with is shared, not loaded a second time (issue 52)."""
    pages = [ROOT / "README.md", *(ROOT / "docs" / "guides").glob("*ang*.md")]
    pages += [ROOT / "docs" / "guides" / "llama-index.md"]
    checked = 0
    for block in (b for page in pages for b in blocks_of(page) if b.skip is None):
        for embedding, reranker in (
            ("LogicEmbedding(", "LogicLlamaIndexReranker("),
            ("LogicEmbeddings(", "LogicLangChainReranker("),
        ):
            if embedding in block.code and reranker in block.code:
                name = re.search(rf"(\w+) = {re.escape(embedding)}", block.code)
                assert name, f"{block.name}: name the embedding, then pass it to the reranker"
                assert f"{reranker}model={name.group(1)}" in block.code, block.name
                checked += 1
    assert checked >= 4, checked


# ------------------------------------------------------------------------------ writing


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def write(include_slow: bool, only: list[str]) -> int:
    """Rewrite the output blocks of every runnable block (insert one where a block prints
    and the page shows nothing); ``only``: page paths to limit it to."""
    for page in PAGES:
        if only and page.relative_to(ROOT).as_posix() not in only:
            continue
        text = page.read_text(encoding="utf-8")
        edits: list[tuple[int, int, str]] = []
        for block in blocks_of(page):
            if block.skip is not None or (block.slow and not include_slow):
                continue
            started, cpu = time.monotonic(), _children_cpu()
            printed = "\n".join(_lines(run_block(block)))
            wall, cpu = time.monotonic() - started, _children_cpu() - cpu
            print(f"{block.name}: {wall:.1f} s, {cpu:.1f} s of CPU", file=sys.stderr)
            if block.output_span is not None:
                if mismatch(printed, block.output or "") is not None:
                    start, end = block.output_span
                    edits.append((start, end, printed + "\n"))
            elif printed:
                edits.append((block.fence_end, block.fence_end, f"\n\n```text\n{printed}\n```"))
        for start, end, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[end:]
        if edits:
            page.write_text(text, encoding="utf-8")
            print(f"rewrote {page.relative_to(ROOT)} ({len(edits)} blocks)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--write" not in args:
        raise SystemExit("usage: python -m tests.docs.test_code_blocks --write [--slow] [PAGE...]")
    raise SystemExit(write("--slow" in args, [a for a in args if not a.startswith("--")]))
