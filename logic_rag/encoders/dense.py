"""Dense bi-encoder over sentence-transformers.

Queries and documents may carry different prompts (``query_prompt`` /
``document_prompt``, defaulting to the prompts stored in the model's config, if any);
embeddings are L2-normalised by default so inner product is cosine similarity, which is
what the FAISS indexes assume. sentence-transformers already sorts each call's texts by
length before batching (less padding), and shows a progress bar on long inputs.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from logic_rag.encoders.dtype import DType, choose_dtype
from logic_rag.models import DEFAULT_DENSE_MODEL, ResolvedModel, resolve_model

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sentence_transformers import SentenceTransformer

__all__ = ["DenseEncoder", "check_texts"]

#: Inputs at least this long get a progress bar unless the caller says otherwise.
_PROGRESS_THRESHOLD = 2048


def check_texts(texts: Sequence[str] | str, what: str = "query") -> list[str]:
    """Validate texts: a list of non-empty strings (a single string is wrapped)."""
    if isinstance(texts, str):
        texts = [texts]
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"{what} {i} is {type(text).__name__}, expected str")
        if not text.strip():
            raise ValueError(f"{what} {i} is empty or whitespace; pass text with at least one word")
    return out


class DenseEncoder:
    """Encode queries and documents with a sentence-transformers model.

    Args:
        model: a registry short name (``minilm``, ``mpnet``) or a local model folder.
        device: torch device; ``None`` lets sentence-transformers pick (CPU here).
        batch_size: texts per forward pass.
        normalize: L2-normalise embeddings (required for cosine search).
        query_prompt / document_prompt: text prepended to queries / documents; ``None``
            uses the model's stored ``query`` / ``document`` prompts when it has them.
        trust_remote_code: off by default; only turn it on for a folder you trust.
        dtype: ``"float32"`` or ``"bfloat16"``; ``None`` takes the model's preference
            (bf16 for EmbeddingGemma) where the device runs it natively, else float32.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] = DEFAULT_DENSE_MODEL,
        *,
        device: str | None = None,
        batch_size: int = 64,
        normalize: bool = True,
        query_prompt: str | None = None,
        document_prompt: str | None = None,
        trust_remote_code: bool = False,
        max_seq_length: int | None = None,
        dtype: DType | None = None,
    ) -> None:
        self.resolved: ResolvedModel = resolve_model(model)
        if self.resolved.kind != "dense":
            raise ValueError(
                f"model {self.resolved.name!r} is a {self.resolved.kind} model; a dense "
                f"encoder needs a sentence-transformers bi-encoder such as 'minilm'"
            )
        self.batch_size = batch_size
        self.normalize = normalize
        self._device = device
        self._trust_remote_code = trust_remote_code
        self._max_seq_length = max_seq_length
        self.dtype: DType = choose_dtype(dtype or self.resolved.dtype, device)
        self._query_prompt = query_prompt
        self._document_prompt = document_prompt
        self._model: SentenceTransformer | None = None

    @property
    def name(self) -> str:
        """The registry name (or the folder path) of the model."""
        return self.resolved.name

    @property
    def fingerprint(self) -> str:
        """Hash of the weights, recorded in index manifests."""
        return self.resolved.fingerprint

    @property
    def model(self) -> SentenceTransformer:
        """The underlying ``SentenceTransformer``, loaded on first use."""
        if self._model is None:
            import torch
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(
                str(self.resolved.path),
                device=self._device,
                trust_remote_code=self._trust_remote_code,
                local_files_only=True,
                model_kwargs={"dtype": getattr(torch, self.dtype)},
            )
            if self._max_seq_length is not None:
                self._model.max_seq_length = self._max_seq_length
        return self._model

    @property
    def dimension(self) -> int:
        """Embedding dimension."""
        getter = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        dim = getter()
        if dim is None:  # pragma: no cover - only for exotic models
            dim = int(self.encode_queries(["dimension probe"]).shape[1])
        return int(dim)

    def _prompt(self, explicit: str | None, key: str) -> dict[str, Any]:
        if explicit is not None:
            return {"prompt": explicit} if explicit else {}
        return {"prompt_name": key} if key in (self.model.prompts or {}) else {}

    def _encode(
        self, texts: list[str], prompt: dict[str, Any], progress: bool | None
    ) -> np.ndarray:
        if progress is None:
            progress = len(texts) >= _PROGRESS_THRESHOLD
        embeddings = self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=self.normalize,
            convert_to_numpy=True,
            show_progress_bar=progress,
            **prompt,
        )
        out = np.ascontiguousarray(embeddings, dtype=np.float32)
        if self.normalize and self.dtype != "float32":
            # Normalised in bf16, norms are off by ~1e-3; redo it in float32 for cosine.
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def encode_queries(
        self, queries: Sequence[str] | str, *, show_progress_bar: bool | None = None
    ) -> np.ndarray:
        """Embed queries, shape ``(n, dimension)``. Empty queries raise ``ValueError``."""
        texts = check_texts(queries, "query")
        return self._encode(texts, self._prompt(self._query_prompt, "query"), show_progress_bar)

    def encode_documents(
        self, documents: Sequence[str], *, show_progress_bar: bool | None = None
    ) -> np.ndarray:
        """Embed documents, shape ``(n, dimension)``; empty documents are allowed."""
        texts = [d if isinstance(d, str) else str(d) for d in documents]
        prompt = self._prompt(self._document_prompt, "document")
        return self._encode(texts, prompt, show_progress_bar)
