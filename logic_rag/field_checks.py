"""Field values checked against their annotations (issue 51 items 6 and 12).

Settings and stages are frozen dataclasses whose values may come from JSON (a pipeline
file, the LlamaIndex reranker's ``from_dict(settings=...)``). Before this check a NaN
weight or temperature ranked every page at NaN and returned no hits, silently; a depth of
``"100"`` or NaN reached numpy and failed as a ``TypeError`` or a ``KeyError`` holding
the query; an unknown t-norm or text field was accepted and changed the scores.

:func:`check_field_values` walks a dataclass's fields and checks each value against its
annotation: ``int`` a whole number (not a bool, not a string), ``float`` a *finite* real
number, ``str`` / ``bool`` their types, ``Literal[...]`` one of its choices, ``X | None``,
and tuples element by element (a field named ``depth`` or ``*_depth``, a number of
neighbours, is at least 1); other annotations (verifier objects, callables) are left
to their owners. A bad value raises :class:`FieldValueError` (both a ``ValueError`` and a
``TypeError``), one line naming the field; nested dataclass values are checked too.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
import typing
from typing import Any, Literal, get_args, get_origin

__all__ = ["FieldValueError", "check_field_values"]


class FieldValueError(ValueError, TypeError):
    """A settings or stage field holds a value its annotation does not admit."""


_SKIP = object()  # an annotation this module does not check


def _hints(kind: type) -> dict[str, Any]:
    """The field annotations of ``kind``, resolved (settings and stages are built once per
    retriever, not per query, so resolving them each time costs nothing that matters)."""
    try:
        return typing.get_type_hints(kind)
    except Exception:  # noqa: BLE001 - names only importable under TYPE_CHECKING: no checks
        return {}


def _show(value: Any) -> str:
    if isinstance(value, list | tuple | dict | set):
        return f"a {type(value).__name__}"
    text = repr(value)
    return f"{text[:40]}{'…' if len(text) > 40 else ''} ({type(value).__name__})"


def _problem(value: Any, hint: Any) -> str | None | object:
    """What is wrong with ``value`` for ``hint``; None when it is fine, ``_SKIP`` when
    the annotation is not one this module checks."""
    if hint is Any:
        return None
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        ok = any(value == a and type(value) is type(a) for a in args)
        return None if ok else f"must be one of {', '.join(repr(a) for a in args)}"
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        results = [_problem(value, a) for a in args if a is not type(None)]
        if any(r is None for r in results) or any(r is _SKIP for r in results):
            return None
        return " or ".join(str(r) for r in results)
    if origin is tuple:
        if not isinstance(value, tuple):
            return "must be a tuple"
        if len(args) == 2 and args[1] is Ellipsis:
            items = [(v, args[0]) for v in value]
        elif args:
            if len(args) != len(value):
                return f"must hold {len(args)} values"
            items = list(zip(value, args, strict=True))
        else:
            return None
        for i, (v, h) in enumerate(items):
            p = _problem(v, h)
            if p is not None and p is not _SKIP:
                return f"[{i}]{p}" if str(p).startswith("[") else f"[{i}] {p}, got {_show(v)}"
        return None
    if hint is bool:
        return None if isinstance(value, bool) else "must be true or false"
    if hint is int:
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        return None if ok else "must be a whole number"
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return "must be a number"
        try:
            finite = math.isfinite(float(value))
        except OverflowError:
            finite = False
        return None if finite else "must be a finite number"
    if hint is str:
        return None if isinstance(value, str) else "must be a string"
    return _SKIP


def check_field_values(obj: Any, *, _depth: int = 0) -> Any:
    """``obj`` itself when every field's value fits its annotation, else
    :class:`FieldValueError` naming the first field that does not."""
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type) or _depth > 16:
        return obj
    hints = _hints(type(obj))
    for f in dataclasses.fields(obj):
        if f.name not in hints or not f.init:
            continue
        value = getattr(obj, f.name)
        problem = _problem(value, hints[f.name])
        if problem is not None and problem is not _SKIP:
            text, where = str(problem), f"{type(obj).__name__}.{f.name}"
            nested = text.startswith("[")  # a tuple's element: it shows its own value
            raise FieldValueError(
                f"{where}{text}" if nested else f"{where} {text}, got {_show(value)}"
            )
        if (f.name == "depth" or f.name.endswith("_depth")) and isinstance(value, int):
            if value < 1:  # neighbours to fetch: -5 or 0 used to fail inside the search
                raise FieldValueError(
                    f"{type(obj).__name__}.{f.name} must be at least 1, got {value}"
                )
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            check_field_values(value, _depth=_depth + 1)
    return obj
