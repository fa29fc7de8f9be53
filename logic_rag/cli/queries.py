"""``--queries FILE``: the query files of ``search`` and ``fit-cascade``, read once, front
to back, a bounded line at a time (a pipe, stdin or ``/dev/zero`` included)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Bytes one line of a ``--queries`` file may hold: far above any query (they are cut at
#: a few thousand characters), far below what would strain memory.
QUERY_LINE_BYTES = 2**20


def read_queries(path_text: str) -> Iterator[tuple[str, str]]:
    """Yield ``(id, query)`` from JSONL (a "query" or "text" field, optional "id" / "_id" /
    "qid") or from plain text (one query per line, ids are line numbers).

    JSONL is recognised by its suffix or by a first line that starts with ``{``; a bad line
    fails with ``file:line``.

    The file is opened once and read once, front to back: ``--queries <(cat q.txt)`` is a
    pipe, and a second open would miss what a first look at it consumed (issue 42 item 1
    lost the first 8 KB that way). The lines read to find the format are replayed.
    """
    import contextlib
    import itertools

    from logic_rag.corpus import decode_line, read_jsonl
    from logic_rag.encoders.dense import check_unicode
    from logic_rag.errors import CorpusFormatError
    from logic_rag.inputs import check_input_file

    stdin = path_text == "-"
    path = Path("<stdin>" if stdin else path_text)
    if path.is_dir():
        raise CorpusFormatError(path, None, "is a folder, not a query file")
    if not stdin:
        check_input_file(path, "--queries", streams=True)  # devices and pipes are read bounded

    def bounded(handle: Any) -> Iterator[bytes]:
        """Lines read at most :data:`QUERY_LINE_BYTES` far (``/dev/zero`` is one endless
        line: refused after 1 MiB, not read into memory until the machine runs out)."""
        lineno = 0
        while raw := handle.readline(QUERY_LINE_BYTES + 1):
            lineno += 1
            if len(raw) > QUERY_LINE_BYTES and not (
                len(raw) == QUERY_LINE_BYTES + 1 and raw.endswith(b"\n")
            ):
                raise CorpusFormatError(
                    path,
                    lineno,
                    f"the line is longer than {QUERY_LINE_BYTES:,} bytes; a query file holds "
                    f"one short query per line",
                )
            yield raw

    with contextlib.nullcontext(sys.stdin.buffer) if stdin else open(path, "rb") as handle:
        raw_lines = bounded(handle)
        seen: list[bytes] = []
        for raw in raw_lines:
            seen.append(raw)
            if raw.strip():
                break
        first = seen[-1] if seen else b""
        lines = itertools.chain(seen, raw_lines)  # every line once, in order
        if path.suffix in (".jsonl", ".json") or first.lstrip().startswith(b"{"):
            for lineno, row in read_jsonl(path, handle=lines):  # type: ignore[arg-type]
                text = row.get("query", row.get("text"))
                if not isinstance(text, str) or not text.strip():
                    raise CorpusFormatError(
                        path, lineno, 'needs a non-empty "query" or "text" string'
                    )
                qid = next((row[f] for f in ("id", "_id", "qid") if row.get(f) is not None), lineno)
                yield str(qid), check_unicode(text, f"{path}:{lineno}")
            return
        for lineno, raw in enumerate(lines, 1):
            line = decode_line(raw, path, lineno)
            if line.strip():
                yield str(lineno), check_unicode(line.strip(), f"{path}:{lineno}")
