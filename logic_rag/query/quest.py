"""Gold logical queries from QUEST records.

A QUEST record carries the natural-language ``query`` that systems see, and the
``original_query`` it was paraphrased from, in which every atom is wrapped in
``<mark>…</mark>``, plus ``metadata.template``. The gold :data:`LogicalQuery` is the
template filled with the marked atoms. The same format is used by the LIMIT-in-QUEST-format
file, so both are read here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from logic_rag.query.algebra import LogicalQuery
from logic_rag.query.templates import TEMPLATES, from_template

__all__ = ["parse_marked", "parse_quest_record", "read_quest_jsonl"]

_OPEN, _CLOSE = "<mark>", "</mark>"
_MARK = re.compile(r"<mark>(.*?)</mark>", re.DOTALL | re.IGNORECASE)


def parse_marked(original_query: str) -> list[str]:
    """Atom texts wrapped in ``<mark>…</mark>``, in order, whitespace-trimmed.

    Raises ``ValueError`` for an unclosed, stray or nested tag or an empty mark, because a
    silently dropped atom would change the gold answer set.
    """
    if not isinstance(original_query, str):
        raise TypeError(f"original_query must be a str, got {type(original_query).__name__}")
    lower = original_query.lower()
    depth = 0
    for match in re.finditer(r"</?mark>", lower):
        if match.group(0) == _OPEN:
            depth += 1
            if depth > 1:
                raise ValueError(f"nested <mark> at character {match.start()}: {original_query!r}")
        else:
            depth -= 1
            if depth < 0:
                raise ValueError(
                    f"</mark> without an opening <mark> at character {match.start()}:"
                    f" {original_query!r}"
                )
    if depth:
        raise ValueError(f"<mark> is never closed: {original_query!r}")
    texts = [" ".join(m.group(1).split()) for m in _MARK.finditer(original_query)]
    if any(not t for t in texts):
        raise ValueError(f"empty <mark></mark> atom: {original_query!r}")
    return texts


def parse_quest_record(record: Mapping[str, Any], *, strict: bool = True) -> LogicalQuery:
    """Gold query of one QUEST record (``original_query`` marks + ``metadata.template``).

    With ``strict`` (default) the text between the marks must spell the template, e.g.
    ``<mark>A</mark> that are also <mark>B</mark>`` for ``_ that are also _``; every record
    in QUEST and in LIMIT-in-QUEST-format does. Errors name the field that is wrong.
    """
    if not isinstance(record, Mapping):
        raise ValueError(f"a QUEST record must be a JSON object, got {type(record).__name__}")
    original = record.get("original_query")
    if not isinstance(original, str) or not original.strip():
        raise ValueError(
            f"field 'original_query' must be a non-empty string with <mark> atoms, got {original!r}"
        )
    metadata = record.get("metadata")
    if not isinstance(metadata, Mapping):
        raise ValueError(f"field 'metadata' must be an object with a 'template', got {metadata!r}")
    template = metadata.get("template")
    if template not in TEMPLATES:
        raise ValueError(
            f"field 'metadata.template' is {template!r}; expected one of {list(TEMPLATES)}"
        )
    try:
        texts = parse_marked(original)
    except ValueError as exc:
        raise ValueError(f"field 'original_query': {exc}") from None
    n_slots = template.split().count("_")
    if len(texts) != n_slots:
        raise ValueError(
            f"field 'original_query' has {len(texts)} <mark> atom(s) but 'metadata.template'"
            f" {template!r} has {n_slots} slot(s): {original!r}"
        )
    if strict:
        glue = " ".join(_MARK.sub("_", original).split())
        if glue != template:
            raise ValueError(
                f"field 'original_query' reads {glue!r} with atoms replaced by _, which does not"
                f" match 'metadata.template' {template!r}; pass strict=False to trust the template"
            )
    return from_template(template, texts)


def read_quest_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Records of a QUEST-format JSONL file; a malformed line raises ``CorpusFormatError``."""
    from logic_rag.corpus import read_jsonl

    return [row for _lineno, row in read_jsonl(path)]
