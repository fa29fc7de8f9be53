"""SPLADE encoder: texts -> vocabulary-sized sparse term-weight vectors.

SPLADE (Formal et al., 2021) scores every vocabulary term ``j`` for a text as
``w_j = max_i log(1 + ReLU(logit_ij))`` over the non-padding tokens ``i`` of the
masked-LM logits. The vectors are lexically grounded (one dimension per word piece), which
is what lets :mod:`logic_rag.compose.sparse_ops` build AND / OR / NOT queries by editing
term weights. The model is run through sentence-transformers' ``SparseEncoder``
(``MLMTransformer`` + ``SpladePooling(max, relu)``); the tests check it against the formula
above computed straight from ``AutoModelForMaskedLM`` logits.

Outputs are ``scipy.sparse.csr_matrix`` of shape ``(n_texts, vocab_size)``, float32, which
is the input format of :class:`logic_rag.index.inverted.InvertedIndex`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from logic_rag.encoders.dense import check_texts, is_out_of_memory, model_load_error
from logic_rag.errors import ModelNotFoundError
from logic_rag.models import DEFAULT_SPARSE_MODEL, ResolvedModel, resolve_model

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SparseEncoder

__all__ = ["SpladeEncoder"]

# Inputs longer than this many texts get a progress bar when show_progress_bar is None.
_PROGRESS_THRESHOLD = 256
#: Padded token positions per forward pass (bounds the MLM head's batch x length x vocab
#: logits: 256 positions are 31 MB at float32, and the pooling makes a few such tensors;
#: 1,024 put a long query's search ~250 MB above a short one's).
_BATCH_TOKENS = 256


def _resolve_sparse_model(model: str | os.PathLike[str]) -> ResolvedModel:
    """Resolve through the offline registry and check that the model can do SPLADE."""
    resolved = resolve_model(model)
    if resolved.kind == "sparse":
        return resolved
    # A local folder is classified "sparse" only when it has a sentence-transformers
    # modules.json with SpladePooling; a bare masked-LM folder works with SPLADE pooling too.
    config = resolved.path / "config.json"
    try:
        architectures = json.loads(config.read_text(encoding="utf-8")).get("architectures") or []
    except (OSError, ValueError):
        architectures = []
    if resolved.kind == "dense" and any(a.endswith("ForMaskedLM") for a in architectures):
        return resolved
    raise ModelNotFoundError(
        f"model {resolved.name!r} is a {resolved.kind} model, not a SPLADE / masked-LM model; "
        f"use {DEFAULT_SPARSE_MODEL!r} or a folder with a *ForMaskedLM config"
    )


class SpladeEncoder:
    """Encode queries and documents as SPLADE term-weight vectors (CSR, float32).

    Args:
        model: ``"splade-tiny"`` (packaged, offline), another registry name, or a local
            folder with a SPLADE ``*ForMaskedLM`` model (see :mod:`logic_rag.models`).
        device: torch device (``"cpu"``, ``"cuda"``); ``None`` lets sentence-transformers pick.
        batch_size: texts per forward pass.
        max_length: tokens kept per text (longer texts are truncated).
        show_progress_bar: ``None`` shows one for inputs longer than 256 texts.

    The model loads on first use, so constructing the encoder is cheap.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] = DEFAULT_SPARSE_MODEL,
        *,
        device: str | None = None,
        batch_size: int = 32,
        max_length: int = 256,
        show_progress_bar: bool | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_length < 8:
            raise ValueError(f"max_length must be >= 8 tokens, got {max_length}")
        self.resolved: ResolvedModel = _resolve_sparse_model(model)
        self.name = self.resolved.name
        self.path = self.resolved.path
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self.show_progress_bar = show_progress_bar
        self._model: SparseEncoder | None = None
        self._fingerprint: str | None = None

    # -- model -------------------------------------------------------------------------
    @property
    def model(self) -> SparseEncoder:
        """The underlying sentence-transformers ``SparseEncoder`` (loaded lazily)."""
        if self._model is None:
            from sentence_transformers import SparseEncoder

            try:
                model = SparseEncoder(
                    str(self.path),
                    device=self.device,
                    local_files_only=True,
                    trust_remote_code=False,
                )
            except (MemoryError, OSError, RuntimeError) as exc:
                if not is_out_of_memory(exc):
                    raise
                raise model_load_error(self.path, exc) from None
            model.max_seq_length = self.max_length
            model.eval()
            self._model = model
        return self._model

    @property
    def vocab_size(self) -> int:
        """Number of dimensions of every vector (the tokenizer vocabulary)."""
        # Not get_embedding_dimension(): SpladePooling reports the hidden size until it
        # has seen a batch. The MLM head has one logit per vocabulary entry.
        return int(self.model[0].auto_model.config.vocab_size)

    @property
    def fingerprint(self) -> str:
        """The registry's hash of the model's weight files (what index manifests record),
        the same notion as ``DenseEncoder.fingerprint``."""
        return self.resolved.fingerprint

    @property
    def weights_fingerprint(self) -> str:
        """sha256 of the ``model.safetensors`` file alone (computed once, then cached)."""
        if self._fingerprint is None:
            weights = self.path / "model.safetensors"
            if not weights.is_file():
                candidates = sorted(self.path.glob("*.safetensors"))
                if not candidates:
                    raise ModelNotFoundError(f"no *.safetensors weights file in {self.path}")
                weights = candidates[0]
            digest = hashlib.sha256()
            with open(weights, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            self._fingerprint = digest.hexdigest()
        return self._fingerprint

    # -- encoding ----------------------------------------------------------------------
    def encode_queries(
        self, texts: Sequence[str] | str, *, show_progress_bar: bool | None = None
    ) -> sp.csr_matrix:
        """SPLADE vectors of queries, shape ``(len(texts), vocab_size)``."""
        return self._encode(check_texts(texts, "text"), query=True, progress=show_progress_bar)

    def encode_documents(
        self, texts: Sequence[str] | str, *, show_progress_bar: bool | None = None
    ) -> sp.csr_matrix:
        """SPLADE vectors of documents, shape ``(len(texts), vocab_size)``.

        Texts are encoded in batches of similar length (less padding), and the rows come
        back in input order.
        """
        return self._encode(check_texts(texts, "text"), query=False, progress=show_progress_bar)

    def _encode(self, texts: list[str], *, query: bool, progress: bool | None) -> sp.csr_matrix:
        import torch

        model = self.model
        vocab = self.vocab_size
        if not texts:
            return sp.csr_matrix((0, vocab), dtype=np.float32)
        # Longest first: similar lengths share a batch, and a too-long input fails early.
        lengths = self._token_lengths(texts)
        order = np.argsort([-n for n in lengths], kind="stable")
        batches = _token_batches([lengths[i] for i in order], self.batch_size, _BATCH_TOKENS)
        show = self.show_progress_bar if progress is None else progress
        if show is None:
            show = len(texts) > _PROGRESS_THRESHOLD
        if show:
            from tqdm.auto import tqdm

            batches = tqdm(batches, desc="SPLADE encode", unit="batch")
        encode = model.encode_query if query else model.encode_document
        blocks: list[sp.csr_matrix] = []
        with torch.inference_mode():
            for start, stop in batches:
                batch = [texts[i] for i in order[start:stop]]
                out = encode(
                    batch,
                    batch_size=len(batch),
                    show_progress_bar=False,
                    convert_to_tensor=True,
                    convert_to_sparse_tensor=True,
                    save_to_cpu=True,
                )
                blocks.append(_torch_sparse_to_csr(out, (len(batch), vocab)))
        stacked = sp.vstack(blocks, format="csr", dtype=np.float32)
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        result = stacked[inverse]
        result.sort_indices()
        return sp.csr_matrix(result, dtype=np.float32)

    def _token_lengths(self, texts: list[str]) -> list[int]:
        """Tokens per text after truncation (what a batch is padded to)."""
        tokenizer = self.model.tokenizer
        ids = tokenizer(texts, truncation=True, max_length=self.max_length)["input_ids"]
        return [len(row) for row in ids]

    # -- inspection --------------------------------------------------------------------
    def decode(self, row: Any, top_k: int | None = 20) -> list[tuple[str, float]]:
        """The ``top_k`` heaviest terms of one vector as ``(word piece, weight)``.

        ``row`` is a 1-row CSR matrix or a 1-D array over the vocabulary. Negative weights
        (after a NOT operation) are listed too, ranked by absolute value.
        """
        if sp.issparse(row):
            if row.shape[0] != 1:
                raise ValueError(f"decode takes one row, got shape {row.shape}")
            csr = sp.csr_matrix(row)
            ids, weights = csr.indices, csr.data
        else:
            arr = np.asarray(row)
            if arr.ndim != 1:
                raise ValueError(f"decode takes a 1-D vector, got shape {arr.shape}")
            ids = np.flatnonzero(arr)
            weights = arr[ids]
        keep = weights != 0
        ids, weights = ids[keep], weights[keep]
        ranked = np.lexsort((ids, -np.abs(weights)))
        if top_k is not None:
            ranked = ranked[:top_k]
        tokens = self.model.tokenizer.convert_ids_to_tokens([int(i) for i in ids[ranked]])
        return [(tok, float(w)) for tok, w in zip(tokens, weights[ranked], strict=True)]

    def __repr__(self) -> str:
        return (
            f"SpladeEncoder(model={self.name!r}, device={self.device!r}, "
            f"batch_size={self.batch_size}, max_length={self.max_length})"
        )


def _token_batches(
    lengths: Sequence[int], max_texts: int, max_tokens: int
) -> list[tuple[int, int]]:
    """``(start, stop)`` batches of texts sorted longest first.

    A batch is padded to its first (longest) text, and the MLM head holds one float per
    vocabulary entry for every padded position (30,522 x 4 bytes = 122 KB per token),
    so a batch holds at most ``max_texts`` texts and ``max_tokens`` padded positions
    (at least one text). Without the token bound, 32 texts of 256 tokens took 2.5 GB.
    """
    batches = []
    start = 0
    while start < len(lengths):
        longest = max(lengths[start], 1)
        size = max(1, min(max_texts, max_tokens // longest))
        batches.append((start, min(start + size, len(lengths))))
        start += size
    return batches


def _torch_sparse_to_csr(tensor: Any, shape: tuple[int, int]) -> sp.csr_matrix:
    """A torch (sparse or dense) 2-D tensor as a float32 CSR matrix."""
    if tensor.is_sparse:
        coo = tensor.coalesce()
        idx = coo.indices().cpu().numpy()
        vals = coo.values().cpu().float().numpy()
        keep = vals != 0
        return sp.csr_matrix((vals[keep], (idx[0][keep], idx[1][keep])), shape=shape)
    return sp.csr_matrix(tensor.cpu().float().numpy().reshape(shape))
