"""Mapped .npy arrays get the same header checks as read ones, and are never copied in."""

from __future__ import annotations

import os

import numpy as np
import pytest

from logic_rag.errors import IndexCorruptError
from logic_rag.index.npy import map_npy


def _fd(path) -> int:
    return os.open(path, os.O_RDONLY)


def test_map_npy_maps_the_checked_array(tmp_path):
    path = tmp_path / "a.npy"
    data = np.arange(24, dtype=np.float16).reshape(6, 4)
    np.save(path, data, allow_pickle=False)
    mapped = map_npy(_fd(path), path)
    assert isinstance(mapped, np.memmap) and mapped.mode == "r"
    np.testing.assert_array_equal(mapped, data)
    path.unlink()  # the mapping holds the file, as an open descriptor would
    np.testing.assert_array_equal(mapped[5], data[5])
    empty = tmp_path / "e.npy"
    np.save(empty, np.zeros((0, 4), np.int8), allow_pickle=False)
    assert map_npy(_fd(empty), empty).shape == (0, 4)


def test_map_npy_refuses_lying_headers_and_objects(tmp_path):
    path = tmp_path / "lying.npy"
    with open(path, "wb") as handle:
        header = {"descr": "<f2", "fortran_order": False, "shape": (900_000_000, 4)}
        np.lib.format.write_array_header_1_0(handle, header)
        handle.write(np.ones((3, 4), np.float16).tobytes())
    with pytest.raises(IndexCorruptError, match="claims shape"):
        map_npy(_fd(path), path)
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(IndexCorruptError, match="objects"):
        map_npy(_fd(path), path)


def test_write_npy_blocks_equals_np_save_and_refuses_a_wrong_row_count(tmp_path):
    import io

    import numpy as np
    import pytest

    from logic_rag.index.npy import write_npy_blocks

    array = np.arange(35, dtype=np.float32).reshape(7, 5)
    expected = io.BytesIO()
    np.save(expected, array.astype(np.float16), allow_pickle=False)
    path = tmp_path / "a.npy"
    write_npy_blocks(path, (7, 5), np.float16, [array[:3], array[3:3], array[3:]])
    assert path.read_bytes() == expected.getvalue()

    short = tmp_path / "short.npy"
    with pytest.raises(ValueError, match="6 rows written"):
        write_npy_blocks(short, (7, 5), np.float16, [array[:6]])
    with pytest.raises(ValueError, match="block of shape"):
        write_npy_blocks(short, (7, 5), np.float16, [array[:, :4]])
    assert not short.exists() and list(tmp_path.iterdir()) == [path]
