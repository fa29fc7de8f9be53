"""The ``logic-rag`` command line: one module per sub-command group (``index``,
``search``, ``evaluate``, ``fit_cascade``, ``adapt``, ``finetune``, ``demo`` with
``world``, ``models``), each adding its parsers and running its commands; ``parser``
assembles them and ``entry`` holds :func:`main`.

Every heavy import (torch, sentence-transformers, FAISS) happens inside a sub-command,
so ``logic-rag --help`` answers instantly.
"""

from logic_rag.cli.entry import main
from logic_rag.cli.parser import build_parser

__all__ = ["main", "build_parser"]
