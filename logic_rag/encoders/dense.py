"""Dense bi-encoder over sentence-transformers.

Queries and documents may carry different prompts (``query_prompt`` /
``document_prompt``, defaulting to the prompts stored in the model's config, if any);
embeddings are L2-normalised by default so inner product is cosine similarity, which is
what the FAISS indexes assume. sentence-transformers already sorts each call's texts by
length before batching (less padding), and shows a progress bar on long inputs.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from logic_rag.encoders.dtype import DType, choose_dtype
from logic_rag.errors import LogicRagError
from logic_rag.models import ResolvedModel, default_dense_model, resolve_model

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sentence_transformers import SentenceTransformer

__all__ = [
    "DenseEncoder",
    "ModelLoadError",
    "bound_texts",
    "check_texts",
    "check_unicode",
    "is_out_of_memory",
    "model_load_error",
]

log = logging.getLogger(__name__)

#: Inputs at least this long get a progress bar unless the caller says otherwise.
_PROGRESS_THRESHOLD = 2048
#: Characters kept per model token before tokenizing: a text is cut at
#: ``max_seq_length * CHARS_PER_TOKEN`` characters. The model reads at most
#: ``max_seq_length`` tokens anyway and natural text averages 4-6 characters per token, so
#: the cut changes no vector in practice; it stops one huge text (tokenized whole before
#: truncation) from setting the memory and time of a whole call.
CHARS_PER_TOKEN = 16
#: Texts tokenized per call when measuring lengths (memory stays per chunk, not per corpus).
_LENGTH_CHUNK = 1024
#: Padded token positions per forward pass on CPUs: 4,096 keeps MiniLM's attention maps
#: near 50 MB for 256-token texts; short texts still go 64 (``batch_size``) at a time.
_BATCH_TOKENS = 4096


class ModelLoadError(LogicRagError, ValueError):
    """A model folder could not be loaded (unreadable files, refused pickle, bad config)."""


#: What loaders say when a mapping or an allocation is refused: safetensors'
#: ``MemoryError("Cannot allocate memory (os error 12)")`` (mmap under ``ulimit -v``),
#: torch's "unable to mmap ... Cannot allocate memory (12)" and "DefaultCPUAllocator:
#: can't allocate memory", "mmap failed", C++'s ``std::bad_alloc``, CUDA's "out of memory".
_OUT_OF_MEMORY = (
    "cannot allocate memory",
    "can't allocate memory",
    "os error 12",
    "mmap failed",
    "bad_alloc",
    "out of memory",
)


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether loading failed for lack of (virtual) memory rather than a bad folder."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    text = str(exc).lower()
    return any(sign in text for sign in _OUT_OF_MEMORY)


def model_load_error(path: object, exc: BaseException) -> ModelLoadError:
    """The :class:`ModelLoadError` for a failed load of the model in ``path``.

    Lack of memory (an ``mmap`` of the weights refused under ``ulimit -v``, say) is told
    apart from a folder that is not a sentence-transformers model, since each needs the
    opposite fix.
    """
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    cause = f"{type(exc).__name__}: {first}" if first != type(exc).__name__ else first
    if is_out_of_memory(exc):
        return ModelLoadError(
            f"cannot load the model in {path}: it needs more (virtual) memory than this "
            f"process may use ({cause}); free memory or raise the limit (`ulimit -v`, the "
            f"container's memory limit), or use a smaller model"
        )
    return ModelLoadError(
        f"cannot load the model in {path} ({cause}); use a folder with safetensors weights "
        f"written by sentence-transformers"
    )


def check_unicode(text: str, what: str) -> str:
    """``text`` if it is valid Unicode; a lone surrogate (``"\\ud800"``) raises ValueError.

    Lone surrogates come from JSON escapes such as ``"\\ud800"`` or from command-line
    bytes that are not UTF-8; tokenizers cannot encode them.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{what} is not valid Unicode: it holds {text[exc.start]!r} (a lone surrogate, "
            f"from invalid UTF-8 or a broken \\u escape) at character {exc.start}"
        ) from None
    return text


def check_texts(texts: Sequence[str] | str, what: str = "query") -> list[str]:
    """Validate texts: a list of non-empty, valid-Unicode strings (a single string is wrapped)."""
    if isinstance(texts, str):
        texts = [texts]
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"{what} {i} is {type(text).__name__}, expected str")
        if not text.strip():
            raise ValueError(f"{what} {i} is empty or whitespace; pass text with at least one word")
        check_unicode(text, f"{what} {i}")
    return out


def _token_lengths(model: Any, texts: list[str]) -> list[int]:
    """Tokens per text after truncation; character counts if there is no tokenizer."""
    tokenizer = getattr(model, "tokenizer", None)
    limit = getattr(model, "max_seq_length", None) or 512
    if tokenizer is None or not texts:
        return [min(len(t) // 4 + 2, limit) for t in texts]
    lengths: list[int] = []
    for start in range(0, len(texts), _LENGTH_CHUNK):
        chunk = texts[start : start + _LENGTH_CHUNK]
        ids = tokenizer(chunk, truncation=True, max_length=limit)["input_ids"]
        lengths.extend(len(row) for row in ids)
    return lengths


def bound_texts(texts: Sequence[str], max_chars: int) -> tuple[list[str], int, int]:
    """``texts`` cut to ``max_chars`` characters each, the number cut and the longest length."""
    if max_chars <= 0:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    out: list[str] = []
    cut = longest = 0
    for text in texts:
        if len(text) > max_chars:
            cut += 1
            longest = max(longest, len(text))
            text = text[:max_chars]
        out.append(text)
    return out, cut, longest


def _token_batches(
    lengths: Sequence[int], max_texts: int, max_tokens: int = _BATCH_TOKENS
) -> list[tuple[int, int]]:
    """``(start, stop)`` batches of texts sorted longest first: at most ``max_texts`` texts
    and ``max_tokens`` padded tokens each (at least one text)."""
    batches = []
    start = 0
    while start < len(lengths):
        size = max(1, min(max_texts, max_tokens // max(lengths[start], 1)))
        batches.append((start, min(start + size, len(lengths))))
        start += size
    return batches


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _pooling_mode(config: Any) -> str | None:
    """The pooling of a sentence-transformers Pooling config, e.g. ``"mean"`` or ``"cls"``."""
    if not isinstance(config, dict):
        return None
    if isinstance(config.get("pooling_mode"), str):
        return config["pooling_mode"]
    modes = sorted(
        key.removeprefix("pooling_mode_").removesuffix("_token").removesuffix("_tokens")
        for key, value in config.items()
        if key.startswith("pooling_mode_") and value is True
    )
    return "+".join(modes) or None


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
        max_chars: characters of each text kept before tokenizing (queries, documents,
            rerank candidates); ``None`` is ``max_seq_length *`` :data:`CHARS_PER_TOKEN`.
            Cuts are counted in :attr:`texts_cut` and logged.
        max_batch_tokens: padded token positions per forward pass. ``None``: 4,096 on a
            CPU (bounded attention memory); on an accelerator no cap below ``batch_size``
            full-length texts, since a GPU wants whole batches (with the CPU cap, MiniLM
            ran about 27 world documents per pass instead of 64 on an H200).
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        device: str | None = None,
        batch_size: int = 64,
        normalize: bool = True,
        query_prompt: str | None = None,
        document_prompt: str | None = None,
        trust_remote_code: bool = False,
        max_seq_length: int | None = None,
        dtype: DType | None = None,
        max_chars: int | None = None,
        max_batch_tokens: int | None = None,
    ) -> None:
        self.resolved: ResolvedModel = resolve_model(
            default_dense_model() if model is None else model, kind="dense"
        )
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
        if max_chars is not None and max_chars <= 0:
            raise ValueError(f"max_chars must be positive, got {max_chars}")
        self._max_chars = max_chars
        if max_batch_tokens is not None and max_batch_tokens < 1:
            raise ValueError(f"max_batch_tokens must be positive, got {max_batch_tokens}")
        self._max_batch_tokens = max_batch_tokens
        #: Texts cut to :attr:`max_chars` so far, and the longest one seen (for reports).
        self.texts_cut = 0
        self.longest_cut = 0
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
    def config(self) -> dict[str, Any]:
        """What besides the weights decides the embeddings, read from the model folder.

        Modules (e.g. Transformer, Pooling, Normalize), pooling mode, maximum sequence
        length, lower-casing, the effective query and document prompts, and whether
        embeddings are L2-normalised. Recorded in index manifests next to the weights
        hash: two folders with the same weights but CLS pooling or a query prompt embed
        differently, and are refused as query encoders of each other's indexes.
        """
        root = Path(self.resolved.path)
        modules = _read_json(root / "modules.json")
        names: list[str] | None = None
        pooling = None
        if isinstance(modules, list):
            names = []
            for module in modules:
                if not isinstance(module, dict):
                    continue
                kind = str(module.get("type", "")).rsplit(".", 1)[-1]
                names.append(kind)
                if kind == "Pooling" and isinstance(module.get("path"), str):
                    pooling = _pooling_mode(_read_json(root / module["path"] / "config.json"))
        bert = _read_json(root / "sentence_bert_config.json")
        bert = bert if isinstance(bert, dict) else {}
        st = _read_json(root / "config_sentence_transformers.json")
        st = st if isinstance(st, dict) else {}
        prompts = st.get("prompts") if isinstance(st.get("prompts"), dict) else {}
        default = st.get("default_prompt_name")

        def effective(explicit: str | None, key: str) -> str:
            if explicit is not None:
                return explicit
            if isinstance(prompts.get(key), str):
                return prompts[key]
            if isinstance(default, str) and isinstance(prompts.get(default), str):
                return prompts[default]
            return ""

        max_len = (
            self._max_seq_length if self._max_seq_length is not None else bert.get("max_seq_length")
        )
        return {
            "modules": names,
            "pooling": pooling,
            "max_seq_length": max_len,
            "do_lower_case": bool(bert.get("do_lower_case", False)),
            "query_prompt": effective(self._query_prompt, "query"),
            "document_prompt": effective(self._document_prompt, "document"),
            "normalize": bool(self.normalize),
        }

    @property
    def config_fingerprint(self) -> str:
        """SHA-256 of :attr:`config` (canonical JSON)."""
        blob = json.dumps(self.config, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def model(self) -> SentenceTransformer:
        """The underlying ``SentenceTransformer``, loaded on first use.

        A folder that cannot be loaded (a pickled checkpoint that torch refuses to
        unpickle, a broken config) raises :class:`ModelLoadError`; pickles are never
        loaded, and ``trust_remote_code`` stays off unless asked for.
        """
        if self._model is None:
            import torch
            from sentence_transformers import SentenceTransformer

            try:
                self._model = SentenceTransformer(
                    str(self.resolved.path),
                    device=self._device,
                    trust_remote_code=self._trust_remote_code,
                    local_files_only=True,
                    model_kwargs={"dtype": getattr(torch, self.dtype)},
                )
            except (
                pickle.UnpicklingError,
                OSError,
                ValueError,
                RuntimeError,
                KeyError,
                MemoryError,
            ) as exc:
                raise model_load_error(self.resolved.path, exc) from None
            if self.resolved.adapter is not None:
                from logic_rag.encoders.adapter import AdapterError, attach_adapter

                try:
                    attach_adapter(self._model, self.resolved.adapter)
                except (AdapterError, OSError, RuntimeError) as exc:
                    raise model_load_error(self.resolved.adapter, exc) from None
            if self._max_seq_length is not None:
                self._model.max_seq_length = self._max_seq_length
        return self._model

    @property
    def query_only(self) -> bool:
        """True for a query-tower adapter: documents are embedded by the base alone, so
        indexes built with the base serve this model unchanged."""
        if self.resolved.adapter is None:
            return False
        from logic_rag.encoders.adapter import adapter_meta

        meta = adapter_meta(self.resolved.adapter) or {}
        return bool(meta.get("query_only"))

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

    @property
    def max_chars(self) -> int:
        """Characters of each text kept before tokenizing (see ``max_chars`` above)."""
        if self._max_chars is not None:
            return self._max_chars
        limit = getattr(self.model, "max_seq_length", None) or 512
        return int(limit) * CHARS_PER_TOKEN

    def _prompt(self, explicit: str | None, key: str) -> dict[str, Any]:
        if explicit is not None:
            return {"prompt": explicit} if explicit else {}
        return {"prompt_name": key} if key in (self.model.prompts or {}) else {}

    def _encode(
        self,
        texts: list[str],
        prompt: dict[str, Any],
        progress: bool | None,
        label: str = "texts",
    ) -> np.ndarray:
        """Embed in batches of similar length, each at most ``batch_size`` texts and
        :data:`_BATCH_TOKENS` padded tokens (a long text among short ones, such as a long
        query with its many atoms, would otherwise pad the whole batch: attention memory
        grows with batch x length^2). The progress bar counts texts and is named ``label``
        (the indexing phase: "documents", "sentences"), not sentence-transformers' batches."""
        if progress is None:
            progress = len(texts) >= _PROGRESS_THRESHOLD
        model = self.model
        texts, cut, longest = bound_texts(texts, self.max_chars)
        if cut:
            self.texts_cut += cut
            self.longest_cut = max(self.longest_cut, longest)
            log.info(
                "logic-rag: %d of %d texts longer than %d characters were cut to %d before "
                "tokenizing (longest: %d; the model reads %d tokens)",
                cut,
                len(texts),
                self.max_chars,
                self.max_chars,
                longest,
                getattr(model, "max_seq_length", 0) or 0,
            )
        lengths = _token_lengths(model, texts)
        order = np.argsort([-n for n in lengths], kind="stable")
        batches: Any = _token_batches(
            [lengths[i] for i in order], self.batch_size, self._batch_tokens(model)
        )
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc=label, unit=label.rstrip("s") or "text")
        out: np.ndarray | None = None
        for start, stop in batches:
            rows = order[start:stop]
            embeddings = model.encode(
                [texts[i] for i in rows],
                batch_size=len(rows),
                normalize_embeddings=self.normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
                **prompt,
            )
            if out is None:
                out = np.empty((len(texts), embeddings.shape[1]), dtype=np.float32)
            out[rows] = embeddings
            if bar is not None:
                bar.update(len(rows))
        if bar is not None:
            bar.close()
        if out is None:  # no texts
            return np.ascontiguousarray(
                model.encode([], convert_to_numpy=True, **prompt), dtype=np.float32
            )
        if self.normalize and self.dtype != "float32":
            # Normalised in bf16, norms are off by ~1e-3; redo it in float32 for cosine.
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def encode_queries(
        self, queries: Sequence[str] | str, *, show_progress_bar: bool | None = None
    ) -> np.ndarray:
        """Embed queries, shape ``(n, dimension)``. Empty queries raise ``ValueError``."""
        texts = check_texts(queries, "query")
        prompt = self._prompt(self._query_prompt, "query")
        return self._encode(texts, prompt, show_progress_bar, "queries")

    def _batch_tokens(self, model: Any) -> int:
        """Padded tokens per forward pass: the setting, else the device's default."""
        if self._max_batch_tokens is not None:
            return self._max_batch_tokens
        if str(getattr(model, "device", "cpu")).startswith("cpu"):
            return _BATCH_TOKENS
        return self.batch_size * (getattr(model, "max_seq_length", None) or 512)

    def encode_documents(
        self,
        documents: Sequence[str],
        *,
        show_progress_bar: bool | None = None,
        progress_label: str = "documents",
    ) -> np.ndarray:
        """Embed documents, shape ``(n, dimension)``; empty documents are allowed.

        A document that is not valid Unicode (a lone surrogate) raises ``ValueError``.
        ``progress_label`` names the progress bar (``"sentences"`` for sentence vectors).
        """
        texts = [d if isinstance(d, str) else str(d) for d in documents]
        for i, text in enumerate(texts):
            check_unicode(text, f"document {i}")
        prompt = self._prompt(self._document_prompt, "document")
        if not self.query_only:
            return self._encode(texts, prompt, show_progress_bar, progress_label)
        from logic_rag.encoders.adapter import set_adapter_enabled

        set_adapter_enabled(self.model, False)
        try:
            return self._encode(texts, prompt, show_progress_bar, progress_label)
        finally:
            set_adapter_enabled(self.model, True)
