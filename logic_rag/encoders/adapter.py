"""LoRA adapter folders: a small trained delta that loads over a pinned base model.

Why a format of our own around PEFT's files: the models we ship (``logic-gemma``,
``logic-verifier``) must stay a few MB inside the repository while their bases are the
pinned copies the registry already checks. So a folder holds PEFT's ``adapter_config.json``
and ``adapter_model.safetensors`` (safetensors only, never a pickle), optionally the trained
weights of a new head (``head.safetensors``: a cross-encoder's classifier), and
``logic_rag_adapter.json`` naming the base by registry name and the SHA-256 of its weights,
so an adapter is never applied to weights it was not trained on. An adapter marked
``query_only`` changes the query tower alone: documents are embedded with the adapter
switched off, so indexes built with the base stay valid.

The adapter is injected with PEFT's low-level ``inject_adapter_in_model`` into the Hugging
Face model inside a sentence-transformers ``SentenceTransformer`` or ``CrossEncoder``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "ADAPTER_JSON",
    "ADAPTER_WEIGHTS",
    "HEAD_WEIGHTS",
    "AdapterError",
    "adapter_meta",
    "attach_adapter",
    "hf_model",
    "save_adapter",
    "set_adapter_enabled",
]

#: Marker and metadata of an adapter folder.
ADAPTER_JSON = "logic_rag_adapter.json"
#: PEFT's file names.
ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
#: Fully trained parameters outside the adapter (a new classification head).
HEAD_WEIGHTS = "head.safetensors"


class AdapterError(ValueError):
    """An adapter folder is incomplete, unreadable or made for other base weights."""


def adapter_meta(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """``logic_rag_adapter.json`` of ``folder`` (``base``, ``base_weights_sha256``, ``kind``,
    ``query_only``), or None when the folder is not an adapter folder."""
    path = Path(folder) / ADAPTER_JSON
    if not path.is_file():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AdapterError(f"{path}: unreadable ({exc})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("base"), str):
        raise AdapterError(f"{path}: expected an object naming its 'base' model")
    for name in (ADAPTER_CONFIG, ADAPTER_WEIGHTS):
        if not (Path(folder) / name).is_file():
            raise AdapterError(
                f"{Path(folder) / name} is missing: the adapter folder is incomplete"
            )
    return meta


def hf_model(model: Any) -> Any:
    """The Hugging Face model inside a ``SentenceTransformer`` / ``CrossEncoder``."""
    first = model[0]
    inner = getattr(first, "auto_model", None)
    if inner is None:
        raise AdapterError(f"{type(first).__name__} holds no Hugging Face model to adapt")
    return inner


def _lora_config(folder: Path) -> Any:
    from peft import LoraConfig

    try:
        raw = json.loads((folder / ADAPTER_CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AdapterError(f"{folder / ADAPTER_CONFIG}: unreadable ({exc})") from None
    if not isinstance(raw, dict) or raw.get("peft_type", "LORA") != "LORA":
        raise AdapterError(f"{folder / ADAPTER_CONFIG}: not a LoRA adapter configuration")
    known = set(LoraConfig.__dataclass_fields__)
    return LoraConfig(**{k: v for k, v in raw.items() if k in known and k != "peft_type"})


def attach_adapter(model: Any, folder: str | os.PathLike[str], *, merge: bool = False) -> None:
    """Inject the LoRA adapter of ``folder`` (and its head, if any) into ``model``.

    ``merge`` folds the adapter into the base weights (PEFT's ``merge``): the same outputs at
    the base's cost per token, for a model that never needs the adapter switched off (a
    cross-encoder verifier); a query-only encoder keeps it separate to embed documents
    without it."""
    from peft import inject_adapter_in_model, set_peft_model_state_dict
    from safetensors.torch import load_file

    root = Path(folder)
    inner = hf_model(model)
    inject_adapter_in_model(_lora_config(root), inner)
    state = load_file(str(root / ADAPTER_WEIGHTS), device="cpu")
    result = set_peft_model_state_dict(inner, state)
    if result.unexpected_keys:
        raise AdapterError(
            f"{root / ADAPTER_WEIGHTS} holds {len(result.unexpected_keys)} tensors this base "
            f"has no place for (e.g. {result.unexpected_keys[0]}): it was made for another base"
        )
    head = root / HEAD_WEIGHTS
    if head.is_file():
        missing, unexpected = inner.load_state_dict(
            load_file(str(head), device="cpu"), strict=False
        )
        if unexpected:
            raise AdapterError(f"{head}: tensors this base has no place for: {unexpected[:3]}")
    # The adapter runs in the base's dtype; only its own tensors are cast (casting the whole
    # model would also round float32 buffers such as rotary frequencies, and move outputs).
    dtype = next(p.dtype for n, p in inner.named_parameters() if "lora_" not in n)
    for name, param in inner.named_parameters():
        if "lora_" in name and param.dtype != dtype:
            param.data = param.data.to(dtype)
    if merge:
        from peft.tuners.tuners_utils import BaseTunerLayer

        for module in inner.modules():
            if isinstance(module, BaseTunerLayer):
                module.merge()


def set_adapter_enabled(model: Any, enabled: bool) -> None:
    """Switch every LoRA layer of ``model`` on or off (off: the base's own outputs)."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    for module in hf_model(model).modules():
        if isinstance(module, BaseTunerLayer):
            module.enable_adapters(enabled)


def save_adapter(
    model: Any,
    folder: str | os.PathLike[str],
    meta: dict[str, Any],
    *,
    head: Sequence[str] = (),
) -> None:
    """Write the adapter of ``model`` into ``folder`` (which must exist): PEFT's config and
    weights, the parameters whose names contain one of ``head`` into ``head.safetensors``,
    and ``meta`` as ``logic_rag_adapter.json``."""
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    root = Path(folder)
    inner = hf_model(model)
    configs = getattr(inner, "peft_config", None) or {}
    if "default" not in configs:
        raise AdapterError("the model carries no LoRA adapter to save")
    config = configs["default"].to_dict()
    config["base_model_name_or_path"] = meta.get("base")
    config["target_modules"] = sorted(config.get("target_modules") or [])
    (root / ADAPTER_CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True, default=str))
    state = {k: v.detach().contiguous().cpu() for k, v in get_peft_model_state_dict(inner).items()}
    save_file(state, str(root / ADAPTER_WEIGHTS))
    if head:
        tensors = {
            k: v.detach().contiguous().cpu()
            for k, v in inner.state_dict().items()
            if any(h in k for h in head) and "lora_" not in k
        }
        save_file(tensors, str(root / HEAD_WEIGHTS))
    (root / ADAPTER_JSON).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
