"""Atomic file writes: a reader sees the old file or the new one, never half of either.

Each write goes to a temporary file in the destination folder, is flushed and fsynced,
then renamed over the target with :func:`os.replace` (atomic on POSIX).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "atomic_open",
    "make_public_dir",
    "atomic_write_text",
    "atomic_write_json",
    "atomic_write_jsonl",
]


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success it replaces ``path`` atomically."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open supports modes 'w' and 'wb', not {mode!r}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        kwargs: dict[str, Any] = {} if "b" in mode else {"encoding": "utf-8", "newline": "\n"}
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path) as handle:
        handle.write(text)


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> None:
    """Serialise ``obj`` as JSON to ``path`` atomically."""
    with atomic_open(path) as handle:
        json.dump(obj, handle, indent=indent, ensure_ascii=False)
        handle.write("\n")


def atomic_write_jsonl(path: str | os.PathLike[str], rows: Iterable[Any]) -> int:
    """Write one JSON object per line to ``path`` atomically; returns the number of rows."""
    count = 0
    with atomic_open(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False))
            handle.write("\n")
            count += 1
    return count


def make_public_dir(path: str | os.PathLike[str]) -> None:
    """Give a folder made by :func:`tempfile.mkdtemp` (mode 0700) the usual permissions."""
    os.chmod(path, 0o777 & ~_umask())
