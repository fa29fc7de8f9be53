"""Our models' shapes with random weights: for timing on a machine the weights cannot reach.

A GPU box that reaches no hub, and takes a few dozen MB per transfer, cannot receive
EmbeddingGemma (1.2 GB) or Qwen2.5-1.5B (1.1 GB). Speed and memory depend on the shapes,
not on the values, so:

* ``strip SRC DST`` (here) copies a model folder without its weight files: configs,
  tokenizer and sentence-transformers module files. ``--gguf FILE`` takes the config and
  tokenizer out of a GGUF file instead (our Qwen copies are GGUF only).
* ``fill DST`` (there) writes random weights of the right shapes beside them: the
  transformer from its ``config.json`` (``AutoModel`` for a sentence-transformers folder,
  ``AutoModelForCausalLM`` for a generator), and each sentence-transformers ``Dense``
  module from its ``in_features`` / ``out_features``.

What such a model returns is meaningless; only timings and memory are kept from it.

    python -m benchmarks.shapes strip ~/.cache/logic-rag/models/embeddinggemma-300m shapes/gemma
    python -m benchmarks.shapes fill shapes/gemma --dtype bfloat16
"""

from __future__ import annotations

import argparse
import json
import lzma
import shutil
from collections.abc import Sequence
from pathlib import Path

__all__ = ["strip", "fill", "main"]

_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".onnx", ".h5", ".msgpack", ".ot")
_SKIP_DIRS = {"onnx", "openvino", ".cache"}
_COMPRESS_OVER = 4 << 20  # tokenizer.json files above this travel xz-compressed


def strip(src: Path, dst: Path, *, gguf: str | None = None) -> list[Path]:
    """Copy ``src`` to ``dst`` without weight files; large JSON files are xz-compressed."""
    dst.mkdir(parents=True, exist_ok=True)
    if gguf:
        from transformers import AutoConfig, AutoTokenizer

        AutoConfig.from_pretrained(src, gguf_file=gguf).save_pretrained(dst)
        AutoTokenizer.from_pretrained(src, gguf_file=gguf).save_pretrained(dst)
        (dst / "shapes_kind.txt").write_text("causal-lm\n", encoding="utf-8")
    else:
        for path in sorted(src.rglob("*")):
            rel = path.relative_to(src)
            if path.is_dir() or rel.parts[0] in _SKIP_DIRS or path.suffix in _WEIGHTS:
                continue
            target = dst / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    for path in sorted(dst.rglob("*.json")):
        if path.stat().st_size > _COMPRESS_OVER:
            packed = path.with_name(path.name + ".xz")
            packed.write_bytes(lzma.compress(path.read_bytes(), preset=9))
            path.unlink()
    return sorted(p for p in dst.rglob("*") if p.is_file())


def fill(folder: Path, *, dtype: str = "float32", seed: int = 0) -> None:
    """Write random weights of the shapes ``folder``'s configs describe."""
    import torch
    from safetensors.torch import save_file

    for packed in sorted(folder.rglob("*.json.xz")):
        packed.with_suffix("").write_bytes(lzma.decompress(packed.read_bytes()))
        packed.unlink()
    torch.manual_seed(seed)
    torch_dtype = getattr(torch, dtype)
    kind = folder / "shapes_kind.txt"
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(folder)
    causal = kind.is_file() and kind.read_text(encoding="utf-8").strip() == "causal-lm"
    factory = AutoModelForCausalLM if causal else AutoModel
    model = factory.from_config(config, dtype=torch_dtype)
    model.save_pretrained(folder)
    modules = folder / "modules.json"
    if modules.is_file():
        for module in json.loads(modules.read_text(encoding="utf-8")):
            if not module["type"].endswith("Dense"):
                continue
            sub = folder / module["path"]
            spec = json.loads((sub / "config.json").read_text(encoding="utf-8"))
            layer = torch.nn.Linear(spec["in_features"], spec["out_features"], spec["bias"])
            tensors = {
                f"linear.{k}": v.to(torch_dtype).contiguous() for k, v in layer.state_dict().items()
            }
            save_file(tensors, str(sub / "model.safetensors"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("strip", help="copy a model folder without its weights")
    s.add_argument("src", type=Path)
    s.add_argument("dst", type=Path)
    s.add_argument(
        "--gguf", default=None, help="GGUF file in SRC to take config and tokenizer from"
    )
    f = sub.add_parser("fill", help="write random weights of the configured shapes")
    f.add_argument("folder", type=Path)
    f.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    f.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "strip":
        for path in strip(args.src, args.dst, gguf=args.gguf):
            print(f"{path.stat().st_size:>12,}  {path}")
    else:
        fill(args.folder, dtype=args.dtype, seed=args.seed)
        print(f"random weights written in {args.folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
