"""The marker of a query-only encoder: ``logic_rag_encoder.json`` in its model folder.

Why one module: a LORE or ``--query-only`` fine-tune trains the query side alone, so indexes
built with its base's documents stay valid for it. The recipes write the marker, the
retriever reads it to accept such a model over an older index, and the experiments read it
to embed documents with the base; all three go through here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["ENCODER_JSON", "document_encoder_meta"]

#: File name of the marker inside a model folder.
ENCODER_JSON = "logic_rag_encoder.json"


def document_encoder_meta(model_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``document_encoder`` entry (``name``, ``weights_sha256``) of a query-only model
    folder, or None when the folder carries no marker.

    A marker that is unreadable, not ``{"role": "query", "document_encoder": {...}}``, raises
    ``ValueError`` naming the file.
    """
    path = Path(model_dir) / ENCODER_JSON
    if not path.is_file():
        return None
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: unreadable ({exc})") from None
    doc = info.get("document_encoder") if isinstance(info, dict) else None
    if info.get("role") != "query" or not isinstance(doc, dict):
        raise ValueError(f"{path}: expected a query encoder naming its document_encoder")
    return doc
