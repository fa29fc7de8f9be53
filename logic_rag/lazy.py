"""Lazy re-exports (PEP 562) for the package ``__init__`` files.

Why: importing ``logic_rag`` or one of its sub-packages must not import torch, FAISS,
sentence-transformers or a framework; each public name is imported from its module on
first use and then cached in the package. One implementation serves every package.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``exports`` map name -> module.

    Modules are relative to the package (``"retriever"``, ``"encoders.dense"``). Use as
    ``__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)``.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
