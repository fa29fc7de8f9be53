"""MkDocs hook: list every report in ``docs/experiments/`` under "Experiments", newest first.

Why a hook: several people add dated reports (``YYYY-MM-DD-topic.md``) to that folder; with
the nav written out in ``mkdocs.yml`` each of them would have to edit it, and a forgotten
entry leaves a page out of the navigation. The hook reads the folder at build time and
titles each entry with its date and its first ``# heading``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SECTION = "Experiments"
FOLDER = "experiments"


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def report_entries(docs_dir: Path) -> list[dict[str, str]]:
    """``{title: path}`` nav entries for the dated reports, newest first."""
    folder = docs_dir / FOLDER
    reports = sorted((p for p in folder.glob("*.md") if p.name != "index.md"), reverse=True)
    return [{f"{p.name[:10]}: {_title(p)}": f"{FOLDER}/{p.name}"} for p in reports]


def on_config(config: Any, **kwargs: Any) -> Any:
    nav = config.get("nav") or []
    for item in nav:
        if isinstance(item, dict) and SECTION in item:
            children = [c for c in item[SECTION] if c == f"{FOLDER}/index.md"]
            item[SECTION] = children + report_entries(Path(config["docs_dir"]))
    return config


MARKER = "<!-- reports -->"


def on_page_markdown(markdown: str, page: Any, config: Any, **kwargs: Any) -> str:
    """Fill the marker in ``experiments/index.md`` with a link to every report."""
    if page.file.src_uri != f"{FOLDER}/index.md" or MARKER not in markdown:
        return markdown
    lines = []
    for entry in report_entries(Path(config["docs_dir"])):
        ((title, path),) = entry.items()
        lines.append(f"- [{title}]({Path(path).name})")
    return markdown.replace(MARKER, "\n".join(lines))
