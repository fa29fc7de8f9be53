"""Checks of where a command writes, made before any work (issue 51 items 2 and 15).

``fit-cascade --out IDX/manifest.json`` overwrote an index's manifest and exited 0; a
character device given as ``--out`` was replaced by a regular file; ``adapt --out`` inside
an index folder was accepted. Every command that writes a file or a folder checks its
target here first: never inside an index folder, and a file output is a regular file or a
new path (not a folder, device, pipe, socket or symbolic link).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["check_outside_index", "check_output_file"]


def check_outside_index(out: str | os.PathLike[str], flag: str = "--out") -> Path:
    """Refuse ``out`` when it is an index folder or lies inside one (links resolved, so
    ``idx/../idx`` and a link to the index are caught); returns ``out`` as a Path."""
    from logic_rag.index.store import has_index_manifest

    target = Path(os.path.realpath(out))
    for folder in (target, *target.parents):
        if has_index_manifest(folder):
            raise ValueError(
                f"{flag} {out} is the index folder {folder} or lies inside it; writing there "
                f"would damage the index. Choose another {flag}"
            )
    return Path(out)


def check_output_file(out: str | os.PathLike[str], flag: str = "--out") -> Path:
    """Refuse a file output that exists and is not a regular file, or lies in an index
    folder; a new path (its folder is made when written) and a regular file pass."""
    path = Path(out)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise ValueError(f"{flag} {out}: cannot be checked ({exc.strerror})") from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = (
            "a folder"
            if stat.S_ISDIR(mode)
            else "a symbolic link"
            if stat.S_ISLNK(mode)
            else "a device, pipe or socket"
        )
        raise ValueError(
            f"{flag} {out} is {kind}, not a regular file; give a new file path (or a file "
            f"to replace)"
        )
    check_outside_index(path, flag)
    return path
