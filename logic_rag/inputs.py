"""Checks of what a command reads, and reads bounded by a size (issue 51 items 10, 13).

``--verdict-calibration`` and ``--quality-thresholds`` read their files whole: 1 GB of
junk took 2.86 GB and ended in a ``MemoryError`` traceback. A folder, ``/dev/zero`` or a
FIFO was reported as "no such file". Small JSON inputs are read here: the file type is
checked first (a folder, device, pipe or socket named as such), then at most ``limit``
bytes are read, so memory is bounded by the setting, not by the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["MAX_SMALL_FILE_BYTES", "describe_mode", "check_input_file", "read_small_file"]

#: The most bytes a settings-like JSON file (a verdict calibration, a fit-cascade sample)
#: may hold. Real ones are a few hundred KB (a sample of some thousand labelled pairs).
MAX_SMALL_FILE_BYTES = 32 * 2**20


def describe_mode(mode: int) -> str:
    """``a folder``, ``a pipe (FIFO)``, ``a device``, ``a socket`` or ``a regular file``."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a regular file"


def check_input_file(path: str | os.PathLike[str], what: str, *, streams: bool = False) -> Path:
    """``path`` when it can be read as ``what``: missing is "no such file", a folder is
    named as one, and unless ``streams`` (a reader that reads line by line, bounded, such
    as a query file) a device, pipe or socket is refused as not a regular file."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {path}: no such file") from None
    except OSError as exc:
        raise ValueError(f"{what} {path}: cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(mode):
        raise ValueError(f"{what} {path} is a folder, not a file")
    if not stat.S_ISREG(mode) and not (streams and not stat.S_ISSOCK(mode)):
        raise ValueError(f"{what} {path} is {describe_mode(mode)}, not a regular file")
    return p


def read_small_file(path: str | os.PathLike[str], limit: int = MAX_SMALL_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; ``ValueError`` (without the
    file's name: callers add it) for anything else. Never reads more than ``limit + 1``."""
    # Opened without blocking: a FIFO's open would wait for a writer forever.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"is {describe_mode(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise ValueError(f"is {info.st_size:,} bytes; at most {limit:,} are read")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"is larger than {limit:,} bytes")
    return data
