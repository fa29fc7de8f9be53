"""A bounded cache of verifier scores keyed by (verifier, atom, document content).

Cross-encoder and LLM checks cost milliseconds to seconds per pair, and the same pair
recurs: a user refines a query, an evaluation runs several pipelines over one candidate
prefix, an atom appears in many queries. The key holds the verifier's fingerprint (its
model weights and prompt), the atom text and a SHA-1 of the document's content, so a
changed document or model misses the cache instead of returning a stale score. The cache
is an LRU of at most ``max_entries`` floats, so memory stays bounded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["PairCache"]

Key = tuple[str, str, str]


class PairCache:
    """LRU map ``(fingerprint, atom, document hash) -> score`` (thread-safe)."""

    def __init__(self, max_entries: int = 200_000) -> None:
        if max_entries < 0:
            raise ValueError("max_entries must be >= 0")
        self.max_entries = max_entries
        self._data: OrderedDict[Key, float] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._data)

    def get_or_compute(
        self,
        fingerprint: str,
        pairs: Sequence[tuple[str, str]],
        compute: Callable[[list[int]], np.ndarray],
    ) -> np.ndarray:
        """Scores of ``pairs`` (atom, document hash); ``compute(missing_positions)`` fills
        the misses in one batched call."""
        out = np.empty(len(pairs), dtype=np.float64)
        missing: list[int] = []
        first_of: dict[Key, int] = {}
        duplicates: list[tuple[int, int]] = []
        with self._lock:
            for i, (atom, doc) in enumerate(pairs):
                key = (fingerprint, atom, doc)
                value = self._data.get(key)
                if value is not None:
                    self._data.move_to_end(key)
                    out[i] = value
                    self.hits += 1
                elif key in first_of:
                    duplicates.append((i, first_of[key]))
                else:
                    first_of[key] = i
                    missing.append(i)
        if missing:
            self.misses += len(missing)
            values = np.asarray(compute(missing), dtype=np.float64)
            if values.shape != (len(missing),):
                raise ValueError(
                    f"verifier returned {values.shape} scores for {len(missing)} pairs"
                )
            out[missing] = values
            with self._lock:
                for i, value in zip(missing, values.tolist(), strict=True):
                    atom, doc = pairs[i]
                    self._data[(fingerprint, atom, doc)] = value
                while len(self._data) > self.max_entries:
                    self._data.popitem(last=False)
        for i, j in duplicates:
            out[i] = out[j]
        return out

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0
