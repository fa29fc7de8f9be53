"""Where logic-rag finds shared benchmark data and keeps its cache.

Benchmark data is never copied into the repository: it is read from ``LOGIC_RAG_DATA``,
which defaults to ``../shared/data`` relative to the project root. The cache holds models
that packages ship in parts and that must be reassembled once (``LOGIC_RAG_CACHE``,
default ``~/.cache/logic-rag``).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["project_root", "shared_data_dir", "cache_dir"]


def project_root() -> Path:
    """The repository root (the folder that holds ``logic_rag/``)."""
    return Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path:
    """The shared benchmark data folder: ``$LOGIC_RAG_DATA``; else, in a checkout (the
    package beside ``pyproject.toml``), ``../shared/data`` next to it; else (an installed
    wheel, whose parent folder is ``site-packages``) ``shared/data`` under the current
    folder, so installed code never looks beside ``site-packages``."""
    env = os.environ.get("LOGIC_RAG_DATA")
    if env:
        return Path(env).expanduser()
    root = project_root()
    if (root / "pyproject.toml").is_file():
        return root.parent / "shared" / "data"
    return Path.cwd() / "shared" / "data"


def cache_dir() -> Path:
    """The logic-rag cache folder, created on first use."""
    env = os.environ.get("LOGIC_RAG_CACHE")
    path = Path(env).expanduser() if env else Path.home() / ".cache" / "logic-rag"
    path.mkdir(parents=True, exist_ok=True)
    return path
