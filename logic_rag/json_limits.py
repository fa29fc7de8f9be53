"""Bounds on parsed JSON: how deep a value may nest.

Python's ``json`` parses a few hundred levels of ``[[[...]]]`` fine, then the value breaks
whatever walks it recursively later (``json.dumps`` when an index is saved, the strict
checks, deep copies): a corpus line with 1,000 nested lists in its metadata loaded,
embedded every document, then crashed on save and lost the work (issue 42 item 6). Past
the interpreter's recursion limit the parser itself raises ``RecursionError``, which is
not a ``ValueError`` and so escaped every reader's error handling as a traceback.

Every reader of user JSON (corpus lines, query files, ``eval rag`` items, caches) parses
with :func:`loads_bounded` or checks what it parsed with :func:`check_json_depth`, so a
too-deep value is one ``file:line`` error before anything is embedded. The depth is
measured iteratively (no recursion), in time linear in the value's size.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = [
    "MAX_JSON_DEPTH",
    "JsonDepthError",
    "json_depth_exceeds",
    "check_json_depth",
    "loads_bounded",
]

#: How deep a value read from a user's file may nest (``{"a": [1]}`` is depth 2). Real
#: records (metadata, judge answers, settings) nest a handful of levels; 64 leaves room
#: for any of them and stays far below the recursion limit of everything that walks them.
MAX_JSON_DEPTH = 64


class JsonDepthError(ValueError):
    """A JSON value nests deeper than allowed; the message says the limit (callers add
    the file and line)."""


def json_depth_exceeds(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` (parsed JSON: dicts, lists, scalars) nests more than ``limit`` deep.

    Iterative, and it stops at the first container past the limit, so a hostile value
    costs at most one pass over what it holds.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > limit:
            return True
        stack.extend((child, depth) for child in children if isinstance(child, dict | list | tuple))
    return False


def check_json_depth(value: Any, where: str = "", limit: int = MAX_JSON_DEPTH) -> Any:
    """``value`` itself, or :class:`JsonDepthError` when it nests past ``limit``.

    ``where`` (``"file:line"``) starts the message when given; readers that raise their own
    ``file:line`` errors pass nothing and wrap the message.
    """
    if json_depth_exceeds(value, limit):
        raise JsonDepthError(_message(where, limit))
    return value


def loads_bounded(
    text: str | bytes,
    where: str = "",
    *,
    limit: int = MAX_JSON_DEPTH,
    parse_constant: Callable[[str], Any] | None = None,
) -> Any:
    """``json.loads(text)`` that never raises ``RecursionError`` and refuses values nested
    past ``limit`` (:class:`JsonDepthError`, a ``ValueError``); other errors are the
    parser's own ``json.JSONDecodeError``."""
    try:
        value = json.loads(text, parse_constant=parse_constant)
    except RecursionError:
        raise JsonDepthError(_message(where, limit)) from None
    return check_json_depth(value, where, limit)


def _message(where: str, limit: int) -> str:
    prefix = f"{where}: " if where else ""
    return (
        f"{prefix}JSON nested more than {limit} levels deep; logic-rag reads at most {limit} "
        f"levels (flatten the value)"
    )
