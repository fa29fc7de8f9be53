"""Issue 32, case 3: sizes a file claims are checked against its length before allocating.

A 300 KB ``index.faiss`` whose header claims 500M floats (manifest re-signed, so the
checksums pass) used to be refused only after FAISS had allocated 2 GB. The layout walk
refuses it first; every kind logic-rag writes still loads (differential check against
the installed FAISS). The same holds for the ``.npy`` / ``.npz`` arrays of an index.
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from logic_rag.errors import IndexCorruptError
from logic_rag.index.faiss_index import DenseIndex
from logic_rag.index.faiss_layout import FaissLayoutError, check_faiss_layout
from logic_rag.index.npy import read_npy
from logic_rag.index.store import file_sha256

# Offset of the flat index's vector-count field: fourcc, d, ntotal, 2 dummies, is_trained,
# metric (FAISS's index header), then the size_t that prefixes the float table.
_FLAT_TABLE_SIZE = 4 + 4 + 8 + 8 + 8 + 1 + 4


def _unit(n: int, d: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _write(kind: str, n: int, path: Path) -> np.ndarray:
    vectors = _unit(n, 32)
    index = DenseIndex(32, kind, nlist=4 if kind == "ivfpq" else None)  # type: ignore[arg-type]
    index.add(vectors)
    index.save(path)
    return vectors


@pytest.mark.parametrize(("kind", "n"), [("flat", 50), ("hnsw", 120), ("ivfpq", 400)])
def test_d32_03_every_kind_we_write_walks_exactly_and_loads(tmp_path, kind, n):
    path = tmp_path / f"{kind}.faiss"
    vectors = _write(kind, n, path)
    data = path.read_bytes()
    assert check_faiss_layout(io.BytesIO(data), len(data)) == (32, n)
    loaded = DenseIndex.load(path, kind)  # type: ignore[arg-type]
    assert loaded.ntotal == n
    _, ids = loaded.search(vectors[:3], 1)
    assert ids[:, 0].tolist() == [0, 1, 2] or kind == "ivfpq"
    for cut in (len(data) - 1, len(data) // 2, 40):  # every truncation is refused
        with pytest.raises(FaissLayoutError):
            check_faiss_layout(io.BytesIO(data[:cut]), cut)
    with pytest.raises(FaissLayoutError, match="follow"):
        check_faiss_layout(io.BytesIO(data + b"\0"), len(data) + 1)


def _claiming_flat(path: Path, floats: int) -> None:
    _write("flat", 2400, path)  # 2400 x 32 floats: ~300 KB
    data = bytearray(path.read_bytes())
    struct.pack_into("<q", data, 8, floats // 32)  # ntotal
    struct.pack_into("<Q", data, _FLAT_TABLE_SIZE, floats)  # the float table's length
    path.write_bytes(bytes(data))


def test_d32_03_a_header_claiming_500m_floats_is_refused_before_allocating(tmp_path):
    """In a fresh process (no torch), so its peak RSS is the load's own."""
    path = tmp_path / "index.faiss"
    _claiming_flat(path, 500_000_000)
    assert path.stat().st_size < 400_000
    script = f"""
import sys
from logic_rag.errors import IndexCorruptError
from logic_rag.index.faiss_index import DenseIndex
try:
    DenseIndex.load({str(path)!r})
except IndexCorruptError as exc:
    print("REFUSED", exc)
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print("PEAK_KIB", line.split()[1])
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "REFUSED" in done.stdout and "claims" in done.stdout, done.stdout
    peak = [int(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("PEAK")]
    if peak:  # Linux: FAISS never got to allocate the 2 GB it was told to
        assert peak[0] < 600 * 1024, f"peak RSS {peak[0]} KiB"


def test_d32_03_a_resigned_manifest_does_not_help(tmp_path, minilm):
    from logic_rag.corpus import Document
    from logic_rag.logic_retriever import LogicRetriever

    docs = [Document(id=f"d{i}", title=f"T{i}", text=f"Text number {i}.") for i in range(5)]
    folder = LogicRetriever.build(docs, model=minilm, passages=False).save(tmp_path / "idx")
    faiss_file = folder / "index.faiss"
    data = bytearray(faiss_file.read_bytes())
    struct.pack_into("<Q", data, _FLAT_TABLE_SIZE, 500_000_000)
    faiss_file.write_bytes(bytes(data))
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["files"]["index.faiss"] = {"sha256": file_sha256(faiss_file), "bytes": len(data)}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(IndexCorruptError, match="claims 500000000 elements"):
        LogicRetriever.load(folder, model=minilm)


def test_d32_03_npy_headers_must_match_the_bytes_that_follow():
    buffer = io.BytesIO()
    np.save(buffer, np.ones((3, 4), np.float16), allow_pickle=False)
    good = buffer.getvalue()
    array = read_npy(io.BytesIO(good), len(good), "x.npy")
    assert array.shape == (3, 4) and array.dtype == np.float16
    fake = io.BytesIO()
    header = {"descr": "<f2", "fortran_order": False, "shape": (900_000_000, 4)}
    np.lib.format.write_array_header_1_0(fake, header)
    fake.write(np.ones((3, 4), np.float16).tobytes())
    lying = fake.getvalue()
    with pytest.raises(IndexCorruptError, match="claims shape"):
        read_npy(io.BytesIO(lying), len(lying), "x.npy")
    with pytest.raises(IndexCorruptError, match="claims shape"):
        read_npy(io.BytesIO(good[:-2]), len(good) - 2, "x.npy")
    objects = io.BytesIO()
    np.save(objects, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    raw = objects.getvalue()
    with pytest.raises(IndexCorruptError, match="objects"):
        read_npy(io.BytesIO(raw), len(raw), "x.npy")
