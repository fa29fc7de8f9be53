#!/usr/bin/env bash
# Build llama-cpp-python from source (once) and install it into a virtualenv.
#
# Usage: bash scripts/llamacpp_build.sh [VENV]        (VENV defaults to .venv)
#
# Why from source, with these flags: PyPI ships llama-cpp-python as an sdist only, and a
# native build (-march=native) on this project's CPUs (AVX-512 / AMX) produces garbage and
# segfaults. AVX2/FMA/F16C without AVX-512 works. The build takes ~7.5 min on 2 cores, so
# the wheel is cached in ~/.cache/logic-rag/wheels (LOGIC_RAG_CACHE overrides the root) and
# a rerun installs the cached wheel in seconds.
#
# Never fatal: if the build fails the script says so and exits 0; the `qwen2.5-1.5b`
# generator then falls back to transformers (gguf_file=, bf16), which is slower but works.
# Set LOGIC_RAG_SKIP_LLAMACPP=1 to skip the build on purpose.
set -uo pipefail

VENV="${1:-.venv}"
VERSION="${LLAMACPP_VERSION:-0.3.36}"
CACHE_ROOT="${LOGIC_RAG_CACHE:-$HOME/.cache/logic-rag}"
WHEELS="$CACHE_ROOT/wheels"
PY="$VENV/bin/python"
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF"
# The flags are part of the cache key: a wheel built with other flags is never reused.
FLAGS_KEY="$(printf '%s' "$CMAKE_ARGS" | sha256sum | cut -c1-12)"
DEST="$WHEELS/llama-cpp-python-$VERSION-$FLAGS_KEY"

if [[ "${LOGIC_RAG_SKIP_LLAMACPP:-0}" == "1" ]]; then
    echo "llama-cpp-python: skipped (LOGIC_RAG_SKIP_LLAMACPP=1); qwen2.5-1.5b runs on transformers"
    exit 0
fi
if "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('llama-cpp-python') != '$VERSION')" 2>/dev/null; then
    echo "llama-cpp-python $VERSION already installed in $VENV"
    exit 0
fi

wheel="$(ls "$DEST"/llama_cpp_python-*.whl 2>/dev/null | head -1)"
if [[ -z "$wheel" ]]; then
    echo "llama-cpp-python $VERSION: building from source (~8 min on 2 cores), flags: $CMAKE_ARGS"
    mkdir -p "$WHEELS"
    tmp="$(mktemp -d "$WHEELS/.build.XXXXXX")"
    start=$(date +%s)
    if CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
        "$PY" -m pip wheel --quiet --no-deps --no-cache-dir -w "$tmp" "llama-cpp-python==$VERSION"; then
        rm -rf "$DEST" && mv "$tmp" "$DEST"
        echo "llama-cpp-python built in $(( $(date +%s) - start )) s, cached in $DEST"
        wheel="$(ls "$DEST"/llama_cpp_python-*.whl | head -1)"
    else
        rm -rf "$tmp"
        echo "WARNING: building llama-cpp-python failed; qwen2.5-1.5b falls back to transformers" >&2
        exit 0
    fi
fi
if ! "$PY" -m pip install --quiet "$wheel"; then
    echo "WARNING: installing $wheel failed; qwen2.5-1.5b falls back to transformers" >&2
    exit 0
fi
# A broken build (wrong SIMD flags) crashes on load, not on import: check it really runs.
if ! "$PY" -c "import llama_cpp; llama_cpp.llama_backend_init(); print('llama-cpp-python', llama_cpp.__version__, 'ok')"; then
    echo "WARNING: llama_cpp does not load; uninstalling it so transformers is used" >&2
    "$PY" -m pip uninstall --quiet --yes llama-cpp-python
fi
exit 0
