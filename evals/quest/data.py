"""Loading QUEST-format query files and atom gold sets.

The official QUEST files (``train.jsonl``, ``val.jsonl``, ``test.jsonl``; Malaviya et al.
2023) hold one JSON object a line: ``query`` (paraphrase), ``docs`` (gold document
titles), ``original_query`` (template text with the atomic queries inside
``<mark>...</mark>``), ``scores`` (unused) and ``metadata`` (``template``, ``domain``,
ratings, attributions). Generated worlds of this project add ``metadata.atoms`` (the
atomic queries in template-slot order) and an ``atoms.jsonl`` file of
``{"atom", "domain", "docs"}`` records: the gold set of every atom, from which the
documents a negation must exclude are computed (see :mod:`.violation`).

The loaders validate every line and raise :class:`~logic_rag.errors.CorpusFormatError`
naming ``file:line`` and the fix, because a silently skipped line would silently change
the averages.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logic_rag.errors import CorpusFormatError
from logic_rag.json_limits import JsonDepthError, loads_bounded

__all__ = [
    "QUEST_TEMPLATES",
    "NEGATION_TEMPLATES",
    "QuestQuery",
    "marked_atoms",
    "load_quest_queries",
    "load_atom_sets",
]

#: The seven QUEST templates, in the order the paper reports them.
QUEST_TEMPLATES: tuple[str, ...] = (
    "_",
    "_ or _",
    "_ or _ or _",
    "_ that are also _",
    "_ that are also both _ and _",
    "_ that are not _",
    "_ that are also _ but not _",
)

#: Templates whose last atom is negated, mapped to their number of atoms. For both, the
#: documents the query must exclude are those in the intersection of all atoms' gold sets.
NEGATION_TEMPLATES: Mapping[str, int] = {
    "_ that are not _": 2,
    "_ that are also _ but not _": 3,
}

_MARK = re.compile(r"<mark>(.*?)</mark>", re.DOTALL)


def marked_atoms(original_query: str | None) -> list[str]:
    """The atomic queries marked ``<mark>...</mark>`` in a QUEST ``original_query``, in order."""
    if not original_query:
        return []
    return [m.strip() for m in _MARK.findall(original_query)]


@dataclass(frozen=True)
class QuestQuery:
    """One QUEST query with its gold document set.

    ``qid`` is ``str(record["id"])`` when the record has an ``id``, else the 0-based
    position of the record among the file's non-blank lines (as a string). ``atoms`` is
    ``metadata.atoms`` when present, else the ``<mark>`` spans of ``original_query``
    (the official files mark the atoms there), else ``None``.
    """

    qid: str
    query: str
    docs: frozenset[str]
    original_query: str | None = None
    template: str | None = None
    domain: str | None = None
    atoms: tuple[str, ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def _iter_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed_object)`` for every non-blank line; 1-based numbers."""
    with path.open("r", encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = loads_bounded(line)
            except json.JSONDecodeError as exc:
                raise CorpusFormatError(
                    path,
                    lineno,
                    f"not valid JSON ({exc.msg} at column {exc.colno}); "
                    "every line must be one JSON object",
                ) from None
            except JsonDepthError as exc:  # a value nested too deep (issue 42 item 6)
                raise CorpusFormatError(path, lineno, str(exc)) from None
            yield lineno, record


def _str_list(path: Path, lineno: int, value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CorpusFormatError(
            path, lineno, f"'{name}' must be a list of strings, got {type(value).__name__}"
        )
    return value


def _optional_str(path: Path, lineno: int, value: Any, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise CorpusFormatError(
        path, lineno, f"'{name}' must be a string or null, got {type(value).__name__}"
    )


def _parse_query(path: Path, lineno: int, index: int, obj: Any) -> QuestQuery:
    if not isinstance(obj, dict):
        raise CorpusFormatError(path, lineno, f"expected a JSON object, got {type(obj).__name__}")
    for key in ("query", "docs"):
        if key not in obj:
            raise CorpusFormatError(
                path,
                lineno,
                f"missing required field '{key}' (QUEST records need 'query' and 'docs')",
            )
    if not isinstance(obj["query"], str):
        raise CorpusFormatError(
            path, lineno, f"'query' must be a string, got {type(obj['query']).__name__}"
        )
    docs = _str_list(path, lineno, obj["docs"], "docs")
    original = _optional_str(path, lineno, obj.get("original_query"), "original_query")
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise CorpusFormatError(
            path, lineno, f"'metadata' must be an object, got {type(metadata).__name__}"
        )
    template = _optional_str(path, lineno, metadata.get("template"), "metadata.template")
    domain = _optional_str(path, lineno, metadata.get("domain"), "metadata.domain")
    atoms: tuple[str, ...] | None
    if metadata.get("atoms") is not None:
        atoms = tuple(_str_list(path, lineno, metadata["atoms"], "metadata.atoms"))
    else:
        marked = marked_atoms(original)
        atoms = tuple(marked) if marked else None
    if "id" in obj:
        raw_id = obj["id"]
        if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
            raise CorpusFormatError(
                path, lineno, f"'id' must be a string or an integer, got {raw_id!r}"
            )
        qid = str(raw_id)
    else:
        qid = str(index)
    return QuestQuery(
        qid=qid,
        query=obj["query"],
        docs=frozenset(docs),
        original_query=original,
        template=template,
        domain=domain,
        atoms=atoms,
        metadata=metadata,
    )


def load_quest_queries(path: str | os.PathLike[str]) -> list[QuestQuery]:
    """Read a QUEST-format JSONL query file, in file order.

    Raises :class:`CorpusFormatError` (``file:line``) for a line that is not JSON, lacks
    ``query``/``docs``, has fields of the wrong type, or repeats an earlier query id.
    Blank lines are skipped. An empty gold list is accepted here (generated worlds can
    produce one); :func:`~logic_rag.evals.quest.metrics.evaluate_run` decides about it.
    """
    path = Path(path)
    queries: list[QuestQuery] = []
    seen: dict[str, int] = {}
    for index, (lineno, obj) in enumerate(_iter_json_lines(path)):
        query = _parse_query(path, lineno, index, obj)
        if query.qid in seen:
            raise CorpusFormatError(
                path,
                lineno,
                f"query id {query.qid!r} already used on line {seen[query.qid]}; "
                "ids must be unique (give every record an 'id' or none of them)",
            )
        seen[query.qid] = lineno
        queries.append(query)
    if not queries:
        raise CorpusFormatError(path, None, "the file holds no queries")
    return queries


def load_atom_sets(path: str | os.PathLike[str]) -> dict[str, set[str]]:
    """Read ``atoms.jsonl`` (``{"atom": str, "domain": str, "docs": [str]}`` a line).

    Returns ``{atom: gold document set}``. An atom listed twice with different gold sets
    is an error (the key would be ambiguous); listed twice with the same set it is kept once.
    """
    path = Path(path)
    sets: dict[str, set[str]] = {}
    where: dict[str, int] = {}
    for lineno, obj in _iter_json_lines(path):
        if not isinstance(obj, dict):
            raise CorpusFormatError(
                path, lineno, f"expected a JSON object, got {type(obj).__name__}"
            )
        for key in ("atom", "docs"):
            if key not in obj:
                raise CorpusFormatError(
                    path,
                    lineno,
                    f"missing required field '{key}' (atom records need 'atom' and 'docs')",
                )
        atom = obj["atom"]
        if not isinstance(atom, str):
            raise CorpusFormatError(
                path, lineno, f"'atom' must be a string, got {type(atom).__name__}"
            )
        _optional_str(path, lineno, obj.get("domain"), "domain")
        docs = set(_str_list(path, lineno, obj["docs"], "docs"))
        if atom in sets and sets[atom] != docs:
            raise CorpusFormatError(
                path,
                lineno,
                f"atom {atom!r} was already given a different gold set on line "
                f"{where[atom]}; each atom needs one gold set",
            )
        sets[atom] = docs
        where.setdefault(atom, lineno)
    return sets
