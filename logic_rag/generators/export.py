"""Export a packaged GGUF generator to an HF-format folder (safetensors + tokenizer).

vLLM loads HF model folders; the registry's generators ship as GGUF files. transformers can
read GGUF (dequantising it), so the export is: ``from_pretrained(gguf_file=...)`` then
``save_pretrained`` in float32 (Q4 dequantised values are exact in float32; bfloat16 would
round them again). It runs once per model into ``<cache>/hf/<name>``, built in a
temporary sibling folder and renamed into place, so a killed export never leaves a
half-written folder that vLLM would try to load.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from logic_rag.generators.base import GeneratorError

__all__ = ["export_hf", "export_dir"]


def export_dir(name: str = "smollm2-135m") -> Path:
    """Where :func:`export_hf` puts (or has put) the HF folder for ``name``."""
    from logic_rag.models import MODELS, resolve_model
    from logic_rag.paths import cache_dir

    if name.lower() in MODELS:
        folder = name.lower()
    else:
        resolved = resolve_model(name)  # a local GGUF folder: name it by its weights
        folder = f"{resolved.path.name}-{resolved.fingerprint[:12]}"
    return cache_dir() / "hf" / folder


def export_hf(name: str = "smollm2-135m") -> Path:
    """An HF-format folder for a generator, exporting it from GGUF on first use.

    ``name`` is a registry short name or a local folder. A folder that is already in HF
    format (``config.json`` and no GGUF) is returned as it is.
    """
    from logic_rag.models import resolve_model

    resolved = resolve_model(name)
    if resolved.gguf_file is None:
        if (resolved.path / "config.json").is_file():
            return resolved.path
        raise GeneratorError(f"{resolved.path} is neither an HF model folder nor a GGUF model")
    target = export_dir(name)
    if (target / "config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        _convert(resolved.path, resolved.gguf_file, tmp / "model")
        try:
            os.replace(tmp / "model", target)
        except OSError:
            if not (target / "config.json").is_file():  # not a concurrent exporter's win
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _convert(folder: Path, gguf_file: str, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    opts = {"gguf_file": gguf_file, "local_files_only": True}
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, **opts)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, **opts)
    except ImportError as exc:
        raise GeneratorError(
            f"reading {folder / gguf_file} needs the `gguf` package: pip install gguf ({exc})"
        ) from exc
    if getattr(tokenizer, "chat_template", None) is None:
        raise GeneratorError(f"{folder / gguf_file} carries no chat template; cannot export")
    # transformers dequantises GGUF completely on load but still marks the model as
    # "quantized with gguf" and refuses to save it; the weights are plain float32 tensors.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    with open(out / "logic_rag_export.json", "w", encoding="utf-8") as handle:
        json.dump({"source": str(folder / gguf_file), "dtype": "float32"}, handle, indent=2)
