"""Check a FAISS file's claimed sizes against its length before FAISS allocates anything.

FAISS reads a vector by reading its length, resizing (allocating and zeroing) the vector,
then reading the bytes: a 300 KB file whose header claims 500M floats costs 2 GB of
memory before the short read is noticed. This walker reads the layout of the three index
kinds logic-rag writes (flat, HNSW over flat, IVF-PQ with array inverted lists), checks
every claimed length against the bytes left in the file, and requires the walk to end
exactly at the end of the file. It allocates nothing in proportion to a claim.

The layout follows FAISS's ``index_read.cpp`` (format unchanged since 1.7); a test walks
files written by the installed FAISS for every kind, so a format change fails loudly.
"""

from __future__ import annotations

import io
import struct
from typing import BinaryIO

__all__ = ["FaissLayoutError", "check_faiss_layout"]

#: Product quantizers use at most 16 bits per sub-code in practice (8 by default).
_MAX_PQ_BITS = 16
_MAX_DEPTH = 4


class FaissLayoutError(ValueError):
    """A size the file claims does not fit in the file (or the layout is not one we write)."""


class _Walker:
    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle = handle
        self.size = size
        self.pos = 0

    @property
    def left(self) -> int:
        return self.size - self.pos

    def read(self, n: int) -> bytes:
        if n > self.left:
            raise FaissLayoutError(f"the file ends at byte {self.size}, {n} more bytes expected")
        data = self.handle.read(n)
        if len(data) != n:
            raise FaissLayoutError("the file is shorter than its length")
        self.pos += n
        return data

    def skip(self, n: int, what: str) -> None:
        if n < 0 or n > self.left:
            raise FaissLayoutError(
                f"{what} claims {n} bytes but only {self.left} remain in a {self.size}-byte file"
            )
        self.handle.seek(n, io.SEEK_CUR)
        self.pos += n

    def u8(self) -> int:
        return self.read(1)[0]

    def i32(self) -> int:
        return int(struct.unpack("<i", self.read(4))[0])

    def u64(self) -> int:
        return int(struct.unpack("<Q", self.read(8))[0])

    def i64(self) -> int:
        return int(struct.unpack("<q", self.read(8))[0])

    def vector(self, item: int, what: str) -> int:
        """Skip a length-prefixed vector of ``item``-byte elements; returns its length."""
        n = self.u64()
        if n > self.left // item:
            raise FaissLayoutError(
                f"{what} claims {n} elements ({n * item} bytes) but only {self.left} bytes "
                f"remain in a {self.size}-byte file"
            )
        self.skip(n * item, what)
        return n

    def header(self) -> tuple[int, int]:
        d, ntotal = self.i32(), self.i64()
        self.i64(), self.i64()  # FAISS's two dummy fields
        self.u8()  # is_trained
        metric = self.i32()
        if metric > 1:
            self.read(4)  # metric_arg
        if d <= 0 or ntotal < 0:
            raise FaissLayoutError(f"header claims dimension {d} and {ntotal} vectors")
        return d, ntotal

    def index(self, depth: int = 0) -> tuple[int, int]:
        if depth > _MAX_DEPTH:
            raise FaissLayoutError("indexes nested too deeply")
        code = self.read(4)
        if code in (b"IxFI", b"IxF2", b"IxFl"):
            return self.flat()
        if code == b"IHNf":
            return self.hnsw(depth)
        if code == b"IwPQ":
            return self.ivfpq(depth)
        raise FaissLayoutError(f"index type {code!r} is not one logic-rag writes")

    def flat(self) -> tuple[int, int]:
        d, ntotal = self.header()
        if ntotal * d * 4 > self.left:
            raise FaissLayoutError(
                f"header claims {ntotal} vectors of dimension {d} ({ntotal * d * 4} bytes) but "
                f"only {self.left} bytes remain in a {self.size}-byte file"
            )
        n = self.vector(4, "the vector table")
        if n != ntotal * d:
            raise FaissLayoutError(f"the vector table holds {n} floats, not {ntotal} x {d}")
        return d, ntotal

    def hnsw(self, depth: int) -> tuple[int, int]:
        d, ntotal = self.header()
        self.vector(8, "HNSW level probabilities")
        self.vector(4, "HNSW neighbours per level")
        levels = self.vector(4, "HNSW levels")
        offsets = self.vector(8, "HNSW offsets")
        self.vector(4, "HNSW neighbours")
        self.read(20)  # entry point, max level, efConstruction, efSearch, a dummy
        if levels != ntotal or offsets != ntotal + 1:
            raise FaissLayoutError(f"HNSW graph covers {levels} nodes, the header {ntotal}")
        inner = self.index(depth + 1)
        if inner != (d, ntotal):
            raise FaissLayoutError("HNSW storage does not match the graph")
        return d, ntotal

    def ivfpq(self, depth: int) -> tuple[int, int]:
        d, ntotal = self.header()
        nlist, nprobe = self.u64(), self.u64()
        qd, qn = self.index(depth + 1)
        if qd != d or qn != nlist or nprobe > max(nlist, 1) * 1024:
            raise FaissLayoutError(f"the coarse quantizer holds {qn} lists, the header {nlist}")
        map_type = self.u8()
        self.vector(8, "the direct map")
        if map_type == 2:
            self.vector(16, "the direct map's table")
        self.u8()  # by_residual
        code_size = self.u64()
        pq_d, pq_m, nbits = self.u64(), self.u64(), self.u64()
        if pq_d != d or not 0 < nbits <= _MAX_PQ_BITS or pq_m == 0 or pq_m > d:
            raise FaissLayoutError(f"product quantizer claims d={pq_d}, M={pq_m}, nbits={nbits}")
        if d * (1 << nbits) * 4 > self.left:
            raise FaissLayoutError("the product quantizer's centroids do not fit in the file")
        self.vector(4, "the product quantizer's centroids")
        if code_size > self.left:
            raise FaissLayoutError(f"code size {code_size} does not fit in the file")
        if self.read(4) != b"ilar":
            raise FaissLayoutError("inverted lists are not stored in the file")
        lists, list_code = self.u64(), self.u64()
        if lists != nlist or list_code != code_size:
            raise FaissLayoutError("inverted lists do not match the index header")
        kind = self.read(4)
        sizes: list[int]
        if kind == b"full":
            if self.u64() != nlist or nlist * 8 > self.left:
                raise FaissLayoutError("inverted list sizes do not match the list count")
            sizes = list(struct.unpack(f"<{nlist}Q", self.read(nlist * 8)))
        elif kind == b"sprs":
            n = self.u64()
            if n * 8 > self.left or n % 2:
                raise FaissLayoutError("sparse inverted list sizes do not fit in the file")
            pairs = struct.unpack(f"<{n}Q", self.read(n * 8))
            sizes = [0] * nlist
            for j in range(0, n, 2):
                if pairs[j] >= nlist:
                    raise FaissLayoutError("a sparse inverted list size names no list")
                sizes[pairs[j]] = pairs[j + 1]
        else:
            raise FaissLayoutError(f"inverted list sizes of type {kind!r}")
        total = sum(sizes)
        if total != ntotal or total * (code_size + 8) > self.left:
            raise FaissLayoutError(
                f"inverted lists claim {total} entries ({total * (code_size + 8)} bytes), the "
                f"header {ntotal}, with {self.left} bytes left"
            )
        for n in sizes:
            self.skip(n * code_size, "inverted list codes")
            self.skip(n * 8, "inverted list ids")
        return d, ntotal


def check_faiss_layout(handle: BinaryIO, size: int) -> tuple[int, int]:
    """Walk a FAISS file (positioned at 0, ``size`` bytes) and return ``(d, ntotal)``.

    Raises :class:`FaissLayoutError` when a claimed size exceeds the bytes left, the
    layout is not flat / HNSW-flat / IVF-PQ, or bytes remain after the index. The handle
    is left at an unspecified position.
    """
    walker = _Walker(handle, size)
    d, ntotal = walker.index()
    if walker.left:
        raise FaissLayoutError(f"{walker.left} bytes follow the index")
    return d, ntotal
