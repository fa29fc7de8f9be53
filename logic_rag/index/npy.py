"""Read ``.npy`` arrays whose header is checked against the bytes that follow it.

``numpy.load`` trusts the header's shape: a small file that claims a huge shape gets its
array allocated before the short read is noticed. :func:`read_npy` parses the header,
refuses object dtypes (no pickle) and any shape whose byte count differs from what is
left in the file, and only then allocates and fills the array.
"""

from __future__ import annotations

import math
import os
from typing import BinaryIO

import numpy as np

from logic_rag.errors import IndexCorruptError

__all__ = ["read_npy"]

_MAX_HEADER = 10_000


def read_npy(handle: BinaryIO, size: int, path: str | os.PathLike[str]) -> np.ndarray:
    """The array in ``handle`` (positioned at its start; ``size`` bytes from there).

    Raises :class:`~logic_rag.errors.IndexCorruptError` naming ``path`` for a bad header,
    an object dtype, or a shape that does not match the file's length.
    """
    fmt = np.lib.format
    start = handle.tell()
    try:
        version = fmt.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(handle, max_header_size=_MAX_HEADER)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(handle, max_header_size=_MAX_HEADER)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except (ValueError, OSError, EOFError, SyntaxError) as exc:
        raise IndexCorruptError(f"{path}: not a readable .npy array ({exc})") from None
    if dtype.hasobject:
        raise IndexCorruptError(f"{path}: holds Python objects; logic-rag arrays never do")
    count = math.prod(shape)
    claimed = count * dtype.itemsize
    left = size - (handle.tell() - start)
    if claimed != left:
        raise IndexCorruptError(
            f"{path}: the header claims shape {shape} ({claimed} bytes) but {left} bytes follow "
            f"it; the file is damaged, rebuild the index"
        )
    array = np.empty(count, dtype=dtype)
    view = memoryview(array).cast("B") if claimed else memoryview(b"")
    filled = 0
    while filled < claimed:
        n = handle.readinto(view[filled:])  # type: ignore[attr-defined]
        if not n:
            raise IndexCorruptError(f"{path}: the file ends before its array does")
        filled += n
    return array.reshape(shape, order="F" if fortran else "C")
