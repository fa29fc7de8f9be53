"""Run the Python blocks of a Markdown page, in order, the way a reader would paste them.

Shared by ``test_readme.py`` and ``test_docs.py``. Why in-process and in one namespace: a
page's later blocks may use names an earlier block defined (as in a notebook), and one
process keeps the loaded models between blocks. Each page runs in its own temporary
folder, so files a block writes (``retriever.save("orchid-index")``) go nowhere else.

A block that cannot run offline or fast is marked in the page itself, right above it:
``<!-- docs-test: skip REASON -->``; the reason is reported by pytest. A block whose
imports need an optional framework that is not installed is skipped with that name.
``--8<-- "path"`` lines (pymdownx.snippets) are still replaced by the file they name,
relative to the repository root, but the guides show their code inline: the repository
host renders Markdown without the snippets extension, where an include reads as a bare
``--8<--`` line instead of code.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s+(.+?)\s*-->\s*$")
_SNIPPET = re.compile(r'^[ \t]*--8<--[ \t]+"([^"]+)"[ \t]*$', re.M)

#: Top-level packages that belong to an extra; a block importing one is skipped without it.
OPTIONAL = frozenset(
    {"llama_index", "langchain_core", "langchain_classic", "langchain_milvus", "pymilvus", "ray"}
)


@dataclass(frozen=True)
class Block:
    """One fenced Python block: its first line in the page, its code, a skip reason."""

    line: int
    code: str
    skip: str | None


def python_blocks(markdown: str) -> list[Block]:
    """Every fenced ``python`` block, with the skip marker that precedes it, if any."""
    blocks = []
    for match in _FENCE.finditer(markdown):
        before = markdown[: match.start()].rstrip("\n").splitlines()
        marker = _SKIP.search(before[-1]) if before else None
        line = markdown.count("\n", 0, match.start()) + 2
        code = _SNIPPET.sub(lambda m: (ROOT / m.group(1)).read_text(), match.group(1))
        blocks.append(Block(line, code, marker.group(1) if marker else None))
    return blocks


_SHELL_FENCE = re.compile(r"^```(?:bash|sh|console)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Command:
    """One shell command of a page (backslash continuations joined): its first line in the
    page and its text, comments and all."""

    line: int
    text: str


def shell_commands(markdown: str) -> list[Command]:
    """Every command of the page's ``bash`` blocks, in order."""
    commands = []
    for match in _SHELL_FENCE.finditer(markdown):
        first = markdown.count("\n", 0, match.start()) + 2
        pending: list[str] = []
        start = first
        for offset, raw in enumerate(match.group(1).splitlines()):
            if not pending:
                start = first + offset
            if raw.rstrip().endswith("\\"):
                pending.append(raw.rstrip()[:-1])
                continue
            pending.append(raw)
            text = " ".join(part.strip() for part in pending).strip()
            pending = []
            if text and not text.startswith("#"):
                commands.append(Command(start, text))
    return commands


def _missing_optional(code: str) -> str | None:
    for node in ast.walk(ast.parse(code)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if (top in OPTIONAL or name in OPTIONAL) and importlib.util.find_spec(top) is None:
                return top
    return None


def run_page(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Execute the page's runnable blocks in order; returns how many ran.

    A failing block raises with ``path:line`` in its traceback; a page whose blocks need a
    framework that is not installed is skipped.
    """
    blocks = python_blocks(path.read_text(encoding="utf-8"))
    runnable = [b for b in blocks if b.skip is None]
    for block in runnable:
        missing = _missing_optional(block.code)
        if missing is not None:
            pytest.skip(f"{path.name}:{block.line} needs {missing} (an optional extra)")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    saved = _framework_settings("\n".join(b.code for b in runnable))
    try:
        for block in runnable:
            exec(compile(block.code, f"{path}:{block.line}", "exec"), namespace)  # noqa: S102
    finally:
        _restore_framework_settings(saved)
    return len(runnable)


_SETTINGS = ("_llm", "_embed_model")


def _framework_settings(code: str) -> dict[str, object]:
    """LlamaIndex's process-wide ``Settings`` that a page may set (``Settings.llm = None``);
    empty when the page does not use LlamaIndex."""
    if "llama_index" not in code or importlib.util.find_spec("llama_index") is None:
        return {}
    from llama_index.core import Settings

    return {name: getattr(Settings, name) for name in _SETTINGS if hasattr(Settings, name)}


def _restore_framework_settings(saved: dict[str, object]) -> None:
    """Put the settings back, so that the next test does not inherit a page's choices."""
    if not saved:
        return
    from llama_index.core import Settings

    for name, value in saved.items():
        setattr(Settings, name, value)
