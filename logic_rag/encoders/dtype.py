"""Which torch dtype to run a model in: bf16 where the hardware has it, else float32.

EmbeddingGemma was trained in bf16; in float16 its activations overflow (NaN embeddings),
and on CPUs without bf16 instructions bf16 is emulated and slower than float32. So a
model that prefers bf16 gets it only where the device supports it natively: CUDA devices
that report bf16 support, CPUs with AVX512-BF16 or AMX-BF16. ``LOGIC_RAG_DTYPE``
(``float32`` or ``bfloat16``) overrides the choice.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Literal

__all__ = ["DType", "cpu_has_bf16", "choose_dtype"]

DType = Literal["float32", "bfloat16"]

_CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


@functools.lru_cache(maxsize=1)
def cpu_has_bf16() -> bool:
    """True when this CPU executes bf16 natively (Linux ``/proc/cpuinfo`` flags)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[-1].split())
            return any(flag in flags for flag in _CPU_BF16_FLAGS)
    return False


def choose_dtype(preferred: DType, device: str | None = None) -> DType:
    """``preferred`` if the device runs it natively, else float32 (never float16)."""
    override = os.environ.get("LOGIC_RAG_DTYPE", "").strip().lower()
    if override:
        if override not in ("float32", "bfloat16"):
            raise ValueError(
                f"LOGIC_RAG_DTYPE={override!r}: use 'float32' or 'bfloat16' (float16 breaks "
                f"bf16-trained models such as EmbeddingGemma)"
            )
        return override  # type: ignore[return-value]
    if preferred == "float32":
        return "float32"
    if device is not None and device.startswith("cuda"):
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    if device in (None, "cpu") and _cuda_default():
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    return "bfloat16" if cpu_has_bf16() else "float32"


def _cuda_default() -> bool:
    import torch

    return bool(torch.cuda.is_available())
