"""Per-item result cache (append-only JSON lines) and index-cache keys.

A RAG evaluation on CPU takes long enough to be interrupted. Each finished item is
appended as one JSON line and flushed + fsynced before the next item starts, so a
restarted run reads the file, skips what is done and redoes at most the item that was in
flight. A process killed mid-write leaves a torn *last* line: it is dropped with a
warning (and cut from the file so the next append starts on a clean line). A malformed
line anywhere else means the file was edited or corrupted and is an error naming
``file:line``.

The run's settings are stored beside the cache; resuming with settings that change the
answers (dataset, retriever, generator, judge, k, ...) is refused instead of mixing two
runs in one file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_json
from logic_rag.errors import CorpusFormatError, LogicRagError
from logic_rag.json_limits import JsonDepthError, loads_bounded

#: A record check: the problem with a parsed cache line, or ``None`` when it is whole.
RecordCheck = Callable[[Mapping[str, Any]], "str | None"]

__all__ = ["ItemCache", "RunSettingsMismatch", "check_run_settings", "corpus_key"]

log = logging.getLogger(__name__)


class RunSettingsMismatch(LogicRagError, ValueError):
    """An output folder holds a cache made with other settings than this run's."""


class ItemCache:
    """Finished items of one run, keyed by ``id``, in an append-only JSONL file.

    ``check`` (optional) says what is wrong with a parsed record, or ``None``: a line that
    parses but is not a finished record (``{"id": "q1"}`` alone, a score that is a string)
    is an error naming ``file:line``, never counted as done (issue 42 item 10). Only a
    last line that does not parse is taken for torn.
    """

    def __init__(
        self, path: str | os.PathLike[str], key: str = "id", check: RecordCheck | None = None
    ) -> None:
        self.path = Path(path)
        self.key = key
        self.check = check
        self._items: dict[str, dict[str, Any]] = {}
        self._loaded = False

    def load(self) -> dict[str, dict[str, Any]]:
        """Read the file (if any); returns ``{id: record}``. Drops a torn last line."""
        self._items = {}
        self._loaded = True
        if not self.path.exists():
            return dict(self._items)
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        good_bytes = 0
        for lineno, line in enumerate(lines, start=1):
            is_last = lineno == len(lines) or (lineno == len(lines) - 1 and lines[-1] == b"")
            if not line.strip():
                good_bytes += len(line) + (0 if lineno == len(lines) else 1)
                continue
            try:
                record = loads_bounded(line.decode("utf-8"))
            except JsonDepthError as exc:
                raise self._malformed(lineno, exc) from None
            except (ValueError, UnicodeDecodeError) as exc:
                if is_last:
                    warnings.warn(
                        f"{self.path}:{lineno}: dropping a torn last line (the run was "
                        f"probably interrupted while writing it); that item will be redone",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                    self._truncate(good_bytes)
                    break
                raise self._malformed(lineno, exc) from None
            problem = self._problem(record)
            if problem is not None:
                raise self._malformed(lineno, problem)
            self._items[str(record[self.key])] = record
            good_bytes += len(line) + (0 if lineno == len(lines) else 1)
        return dict(self._items)

    def _problem(self, record: Any) -> str | None:
        if not isinstance(record, dict):
            return f"a cache line must be a JSON object, got {type(record).__name__}"
        ident = record.get(self.key)
        if isinstance(ident, bool) or not isinstance(ident, str | int) or ident == "":
            return f"a cache line needs {self.key!r} (a non-empty string or an integer)"
        return self.check(record) if self.check is not None else None

    def _malformed(self, lineno: int, problem: object) -> CorpusFormatError:
        return CorpusFormatError(
            self.path,
            lineno,
            f"malformed cache line ({problem}); delete the file or use a new --out folder",
        )

    def _truncate(self, size: int) -> None:
        with open(self.path, "r+b") as handle:
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())

    def __contains__(self, item_id: object) -> bool:
        if not self._loaded:
            self.load()
        return str(item_id) in self._items

    def __len__(self) -> int:
        if not self._loaded:
            self.load()
        return len(self._items)

    def get(self, item_id: str) -> dict[str, Any] | None:
        if not self._loaded:
            self.load()
        return self._items.get(str(item_id))

    def items(self) -> dict[str, dict[str, Any]]:
        """All finished records, in file order."""
        if not self._loaded:
            self.load()
        return dict(self._items)

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one finished item durably (write, flush, fsync)."""
        if self.key not in record:
            raise ValueError(f"record has no {self.key!r} field")
        if not self._loaded:
            self.load()
        line = json.dumps(dict(record), ensure_ascii=False, allow_nan=False) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        needs_newline = self.path.exists() and self.path.stat().st_size > 0
        if needs_newline:
            with open(self.path, "rb") as handle:
                handle.seek(-1, os.SEEK_END)
                needs_newline = handle.read(1) != b"\n"
        with open(self.path, "a", encoding="utf-8") as handle:
            if needs_newline:
                handle.write("\n")
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        self._items[str(record[self.key])] = dict(record)


def check_run_settings(out: str | os.PathLike[str], settings: Mapping[str, Any]) -> None:
    """Record ``settings`` in ``OUT/run_settings.json``, or check they match the stored ones."""
    path = Path(out) / "run_settings.json"
    wanted = json.loads(json.dumps(dict(settings)))
    if path.exists():
        stored = _stored_settings(path)
        diff = sorted(k for k in set(stored) | set(wanted) if stored.get(k) != wanted.get(k))
        if diff:
            details = ", ".join(f"{k}: {stored.get(k)!r} -> {wanted.get(k)!r}" for k in diff)
            raise RunSettingsMismatch(
                f"{path.parent} holds results of a run with other settings ({details}); "
                f"use a new --out folder or delete {path.parent} to start over"
            )
        return
    atomic_write_json(path, wanted)


def _stored_settings(path: Path) -> dict[str, Any]:
    """The settings an earlier run stored in ``path``; anything but a JSON object is an
    error naming the file (a list or garbage gave a traceback, or a message without it)."""
    advice = f"delete it (or {path.parent}) to start over, or use a new --out folder"
    try:
        stored = loads_bounded(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise RunSettingsMismatch(f"{path} is not valid JSON ({exc}); {advice}") from None
    except OSError as exc:
        raise RunSettingsMismatch(f"{path} cannot be read ({exc.strerror}); {advice}") from None
    if not isinstance(stored, dict):
        raise RunSettingsMismatch(
            f"{path} holds a JSON {type(stored).__name__}, not the settings object a run "
            f"writes; {advice}"
        )
    return stored


def corpus_key(texts: Iterable[str], model_fingerprint: str) -> str:
    """A short hash of the corpus texts and the encoder weights: the index cache's name."""
    digest = hashlib.sha256(model_fingerprint.encode("utf-8"))
    for text in texts:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()[:16]
