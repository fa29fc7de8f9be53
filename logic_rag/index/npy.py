"""Read ``.npy`` arrays whose header is checked against the bytes that follow it.

``numpy.load`` trusts the header's shape: a small file that claims a huge shape gets its
array allocated before the short read is noticed. :func:`read_npy` parses the header,
refuses object dtypes (no pickle) and any shape whose byte count differs from what is
left in the file, and only then allocates and fills the array.

:func:`map_npy` makes the same checks and then maps the file instead of reading it: the
array is an :class:`numpy.memmap` whose pages are read when touched, so a 15 GB table of
sentence vectors costs resident memory only for the rows a search reads (clean file pages,
which the kernel drops again under pressure). Searches read scattered rows, so the mapping
is advised ``MADV_RANDOM``: with the kernel's read-ahead (8 MB per fault on this machine's
disk) 20 scattered row reads of a cold 460 MB file pulled ~155 MB into the page cache;
with the advice, 92 KB.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
from collections.abc import Iterable
from typing import BinaryIO

import numpy as np

from logic_rag.errors import IndexCorruptError

__all__ = ["read_npy", "map_npy", "write_npy_blocks", "check_finite_npy", "first_non_finite"]

_MAX_HEADER = 10_000


def _checked_header(
    handle: BinaryIO, size: int, path: str | os.PathLike[str]
) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """``(shape, fortran_order, dtype, data_offset)`` of the array in ``handle`` (at its
    start, ``size`` bytes from there), after the checks described in the module docstring."""
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
    claimed = math.prod(shape) * dtype.itemsize
    left = size - (handle.tell() - start)
    if claimed != left:
        raise IndexCorruptError(
            f"{path}: the header claims shape {shape} ({claimed} bytes) but {left} bytes follow "
            f"it; the file is damaged, rebuild the index"
        )
    return shape, fortran, dtype, handle.tell() - start


def read_npy(handle: BinaryIO, size: int, path: str | os.PathLike[str]) -> np.ndarray:
    """The array in ``handle`` (positioned at its start; ``size`` bytes from there).

    Raises :class:`~logic_rag.errors.IndexCorruptError` naming ``path`` for a bad header,
    an object dtype, or a shape that does not match the file's length.
    """
    shape, fortran, dtype, _offset = _checked_header(handle, size, path)
    count = math.prod(shape)
    claimed = count * dtype.itemsize
    array = np.empty(count, dtype=dtype)
    # Viewed as bytes first: datetime and some structured dtypes export no buffer.
    view = memoryview(array.view(np.uint8)) if claimed else memoryview(b"")
    filled = 0
    while filled < claimed:
        n = handle.readinto(view[filled:])  # type: ignore[attr-defined]
        if not n:
            raise IndexCorruptError(f"{path}: the file ends before its array does")
        filled += n
    return array.reshape(shape, order="F" if fortran else "C")


#: Bytes read at a time by :func:`check_finite_npy`.
_FINITE_BLOCK = 1 << 22


def first_non_finite(array: np.ndarray, block_rows: int = 65_536) -> int | None:
    """The first row of ``array`` (2-d, or 1-d: one value a row) holding NaN or an
    infinity, or ``None``; checked ``block_rows`` rows at a time, so the mask never costs
    more than a block. Integer arrays are finite by construction."""
    if array.dtype.kind not in "fc":
        return None
    for start in range(0, len(array), block_rows):
        block = np.asarray(array[start : start + block_rows])
        bad = ~np.isfinite(block)
        if bad.ndim > 1:
            bad = bad.reshape(len(block), -1).any(axis=1)
        if bad.any():
            return start + int(np.argmax(bad))
    return None


def check_finite_npy(handle: BinaryIO, size: int, path: str | os.PathLike[str]) -> None:
    """Refuse a ``.npy`` array holding NaN or an infinity, naming ``path`` and the row.

    NaN in stored vectors does not fail a search: every similarity with it is NaN, and a
    ranking that stops at the first non-finite score returns no hits, exit 0 (issue 42
    item 9). The file is read through ``handle`` in 4 MB blocks (not memory-mapped), so a
    large table of vectors is checked without its pages staying counted in the process's
    memory. Integer arrays pass without being read.
    """
    shape, fortran, dtype, _offset = _checked_header(handle, size, path)
    if dtype.kind not in "fc" or math.prod(shape) == 0:
        return
    row = math.prod(shape[1:]) if len(shape) > 1 and not fortran else 1
    step = max(1, _FINITE_BLOCK // (dtype.itemsize * row)) * row
    done = 0
    total = math.prod(shape)
    while done < total:
        want = min(step, total - done)
        raw = handle.read(want * dtype.itemsize)
        if len(raw) != want * dtype.itemsize:
            raise IndexCorruptError(f"{path}: the file ends before its array does")
        bad = ~np.isfinite(np.frombuffer(raw, dtype=dtype))
        if bad.any():
            where = (done + int(np.argmax(bad))) // row
            raise IndexCorruptError(
                f"{path}: row {where} holds NaN or an infinity (vectors must be finite); the "
                f"file is damaged, rebuild the index"
            )
        done += want


def map_npy(fd: int, path: str | os.PathLike[str], *, random_access: bool = True) -> np.ndarray:
    """The whole-file array behind descriptor ``fd``, memory-mapped read-only.

    ``fd`` is taken over (closed here); the mapping stays valid after that, and after the
    file is renamed or deleted, because it holds the file itself. The header is checked
    exactly as in :func:`read_npy`. An empty array comes back as an ordinary one (a
    zero-length file region cannot be mapped). ``random_access`` turns the kernel's
    read-ahead off for the mapping (see the module docstring).
    """
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        shape, fortran, dtype, offset = _checked_header(handle, size, path)
        if math.prod(shape) == 0:
            return np.empty(shape, dtype=dtype, order="F" if fortran else "C")
        try:
            array = np.memmap(
                handle, dtype=dtype, mode="r", offset=offset, shape=shape,
                order="F" if fortran else "C",
            )  # fmt: skip
        except (OSError, ValueError) as exc:
            raise IndexCorruptError(f"{path}: cannot map the array ({exc})") from None
    mapping = getattr(array, "_mmap", None)
    if random_access and mapping is not None and hasattr(mmap, "MADV_RANDOM"):
        with contextlib.suppress(OSError, ValueError):  # advice only; reads work without it
            mapping.madvise(mmap.MADV_RANDOM)
    return array


def write_npy_blocks(
    path: str | os.PathLike[str],
    shape: tuple[int, ...],
    dtype: np.dtype | type,
    blocks: Iterable[np.ndarray],
) -> None:
    """Write an array given as row blocks as one ``.npy`` file, one block in memory at a time.

    The header says ``shape`` and ``dtype``; each block is converted to ``dtype`` and must
    have ``shape``'s trailing dimensions. The bytes are those ``np.save`` writes for the
    whole array (format 1.0). The file is written to a temporary name and renamed into
    place, so a reader sees all of it or none; rows adding up to other than ``shape[0]``
    raise :class:`ValueError` and leave nothing behind.
    """
    from logic_rag.atomic import atomic_open

    dtype = np.dtype(dtype)
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    rows = 0
    with atomic_open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, header)
        for block in blocks:
            block = np.ascontiguousarray(block, dtype=dtype)
            if block.shape[1:] != tuple(shape[1:]):
                raise ValueError(f"{path}: row {rows}: a block of shape {block.shape}, not {shape}")
            rows += len(block)
            if block.size:  # an empty view cannot be cast to bytes
                handle.write(memoryview(block).cast("B"))
        if rows != shape[0]:
            raise ValueError(f"{path}: {rows} rows written, the header says {shape[0]}")
