"""In-process generation with transformers: the offline default (``smollm2-135m``).

Registry generators ship as GGUF files; transformers dequantises them on load
(``from_pretrained(folder, gguf_file=...)``, needs the ``gguf`` package). A loaded model is
cached per process and shared by every generator on the same weights, because loading is
the slow part and a RAG run builds the generator and the judge from the same name.

Batches are left-padded (decoder-only models continue from the right edge) and prompts
are grouped by length so that little compute goes to padding; answers come back in the
caller's order. Prompts longer than the context window lose their oldest tokens.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logic_rag.generators.base import (
    GeneratorError,
    build_messages,
    check_generate_args,
    choice_token_ids,
)

__all__ = ["TransformersGenerator", "load_causal_lm"]

_LOCKS: dict[int, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _load(
    path: str, gguf_file: str | None, device: str, dtype: str | None = None
) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    opts: dict[str, Any] = {"local_files_only": True}
    if gguf_file:
        opts["gguf_file"] = gguf_file
    model_opts: dict[str, Any] = {}
    if dtype is not None:
        import torch

        model_opts["dtype"] = getattr(torch, dtype)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, **opts)
        model = AutoModelForCausalLM.from_pretrained(path, **opts, **model_opts)
    except ImportError as exc:  # GGUF loading needs the optional `gguf` package
        raise GeneratorError(
            f"loading {path} failed: {exc}. GGUF models need `pip install gguf accelerate`"
        ) from exc
    tokenizer.padding_side = "left"
    tokenizer.truncation_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if getattr(tokenizer, "chat_template", None) is None:
        raise GeneratorError(
            f"{path} has no chat template; the generators format every prompt as a chat "
            f"turn, so use an instruction-tuned model"
        )
    return tokenizer, model.to(device).eval()


def load_causal_lm(model: str, device: str = "cpu", dtype: str | None = None) -> tuple[Any, Any]:
    """``(tokenizer, model)`` for a registry name or folder (loaded now; a
    :class:`TransformersGenerator` keeps what it loaded)."""
    from logic_rag.models import resolve_model

    resolved = resolve_model(model, kind="generator")
    # GGUF models are generators; an HF folder is one if its config names a causal LM (the
    # registry calls every non-GGUF folder "dense", exported generators included).
    if resolved.kind != "generator" and not _is_causal_lm(resolved.path):
        raise GeneratorError(
            f"model {model!r} is not a text generator (its config.json names no "
            f"*ForCausalLM architecture); use e.g. 'smollm2-135m' or 'qwen2.5-0.5b'"
        )
    return _load(str(resolved.path), resolved.gguf_file, device, dtype)


def _is_causal_lm(folder: Path) -> bool:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return any(str(a).endswith("ForCausalLM") for a in config.get("architectures") or [])


def _lock_for(model: Any) -> threading.Lock:
    """One lock per loaded model: generators sharing weights take turns (torch is not
    re-entrant on one module, and 2 cores gain nothing from interleaving)."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(id(model), threading.Lock())


class TransformersGenerator:
    """A registry name or local model folder, generating in this process.

    ``batch_size`` prompts go through ``model.generate`` together; ``context_window``
    bounds prompt plus answer (older prompt tokens are cut first); ``dtype`` (e.g.
    ``"bfloat16"``) overrides the weights' load dtype (GGUF dequantises to float32).
    """

    def __init__(
        self,
        model: str = "smollm2-135m",
        *,
        batch_size: int = 8,
        context_window: int = 2048,
        device: str = "cpu",
        dtype: str | None = None,
    ) -> None:
        if batch_size < 1 or context_window < 2:
            raise ValueError("batch_size must be >= 1 and context_window >= 2")
        self.model = model
        self.batch_size = batch_size
        self.context_window = context_window
        self.device = device
        self.dtype = dtype
        self.name = f"transformers:{model}"
        self._loaded: tuple[Any, Any] | None = None

    def __repr__(self) -> str:
        return f"TransformersGenerator({self.model!r}, batch_size={self.batch_size})"

    def load(self) -> tuple[Any, Any]:
        """The tokenizer and model, loaded on first use and kept by this generator."""
        if self._loaded is None:
            self._loaded = load_causal_lm(self.model, self.device, self.dtype)
        return self._loaded

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        system: str | None = None,
    ) -> list[str]:
        batch = check_generate_args(prompts, max_tokens, temperature)
        if not batch:
            return []
        if max_tokens >= self.context_window:
            raise ValueError(
                f"max_tokens={max_tokens} leaves no room for the prompt in a "
                f"{self.context_window}-token context window"
            )
        tokenizer, model = self.load()
        texts = [
            tokenizer.apply_chat_template(
                build_messages(p, system), add_generation_prompt=True, tokenize=False
            )
            for p in batch
        ]
        # Similar lengths together: less padding, and results do not depend on the order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[str] = [""] * len(texts)
        with _lock_for(model):
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                answers = self._generate_chunk(
                    tokenizer, model, [texts[i] for i in chunk], max_tokens, temperature
                )
                for i, answer in zip(chunk, answers, strict=True):
                    out[i] = answer
        return out

    def _generate_chunk(
        self, tokenizer: Any, model: Any, texts: list[str], max_tokens: int, temperature: float
    ) -> list[str]:
        import torch

        enc = tokenizer(
            texts,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.context_window - max_tokens,
            add_special_tokens=False,  # the chat template already placed them
        ).to(self.device)
        sampling: dict[str, Any] = (
            {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
            if temperature == 0
            else {"do_sample": True, "temperature": float(temperature)}
        )
        with torch.inference_mode():
            generated = model.generate(
                **enc,
                max_new_tokens=max_tokens,
                pad_token_id=tokenizer.pad_token_id,
                **sampling,
            )
        new = generated[:, enc["input_ids"].shape[1] :]
        return [t.strip() for t in tokenizer.batch_decode(new, skip_special_tokens=True)]

    def choice_logprobs(
        self, prompts: Sequence[str], choices: Sequence[str], *, system: str | None = None
    ) -> Any:
        """Exact first-token log-probabilities of each choice (see ``ScoresChoices``).

        One forward pass per batch of ``batch_size`` prompts; the log-softmax of the logits
        at the last prompt position is read at every token that starts a choice. Exact: no
        floor values are needed here.
        """
        import numpy as np

        batch = check_generate_args(prompts, 1, 0.0)
        tokenizer, model = self.load()
        keys, ids = choice_token_ids(
            choices,
            lambda text: tokenizer.encode(text, add_special_tokens=False),
            lambda token: tokenizer.decode([token]),
        )
        out = np.zeros((len(batch), len(keys)), dtype=np.float64)
        if not batch:
            return out
        texts = [
            tokenizer.apply_chat_template(
                build_messages(p, system), add_generation_prompt=True, tokenize=False
            )
            for p in batch
        ]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with _lock_for(model):
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                logprobs = self._next_token_logprobs(tokenizer, model, [texts[i] for i in chunk])
                for row, i in enumerate(chunk):
                    for j, candidates in enumerate(ids):
                        out[i, j] = float(np.logaddexp.reduce(logprobs[row, candidates]))
        return out

    def _next_token_logprobs(self, tokenizer: Any, model: Any, texts: list[str]) -> Any:
        """``(len(texts), vocab)`` float64 log-softmax of the next token after each text."""
        import torch

        enc = tokenizer(
            texts,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=self.context_window - 1,
            add_special_tokens=False,
        ).to(self.device)
        mask = enc["attention_mask"]
        # Left padding: positions count real tokens only, so a padded prompt sees the same
        # positions as the prompt alone (generate() does this itself; forward() does not).
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            # logits_to_keep=1: the vocabulary projection of the last position only (the
            # others are never read; on a long prompt they are most of the memory).
            logits = model(
                input_ids=enc["input_ids"],
                attention_mask=mask,
                position_ids=positions,
                logits_to_keep=1,
            ).logits[:, -1, :]
        return torch.log_softmax(logits.double(), dim=-1).cpu().numpy()

    def as_llm(self, **options: Any) -> Any:
        """A LlamaIndex ``LLM`` over this generator (see :class:`GeneratorLLM`)."""
        from logic_rag.generators.llm_adapter import GeneratorLLM

        options.setdefault("context_window", self.context_window)
        return GeneratorLLM(self, **options)
