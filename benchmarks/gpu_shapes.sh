#!/bin/bash
# The benchmark report on a GPU box that cannot receive our weights (no hub, small transfers).
#
# Here:   python -m benchmarks.shapes strip "$(python -c 'from logic_rag.models import
#         resolve_model; print(resolve_model("minilm").path)')" .gpu/models/minilm
#         (likewise embeddinggemma-300m -> .gpu/models/gemma, and the Qwen GGUF with --gguf
#         -> .gpu/models/qwen15); wheels the box lacks (faiss-cpu, bm25s, jsonschema and its
#         deps) in .gpu/whl; QUEST-attr's two files in .gpu/data/quest/attr.
# There:  bash benchmarks/gpu_shapes.sh   (results in $OUT/gpu-results.tgz)
#
# Random weights: keep the timings only (see benchmarks/README.md, "On a GPU").
set -u
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
OUTD=${OUT:-/tmp/out}
RES=$(mktemp -d)
mkdir -p "$OUTD"
trap 'tar czf "$OUTD/gpu-results.tgz" -C "$RES" .' EXIT
if [ -d .gpu/whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/whl/*.whl || exit 3
  export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}
else
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
# An uninstalled checkout: the install maps evals/ to logic_rag.evals.
[ -e logic_rag/evals ] || ln -s ../evals logic_rag/evals
export LOGIC_RAG_DATA=${LOGIC_RAG_DATA:-$PWD/.gpu/data}
DEV=${DEV:-cuda}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$RES/gpu.txt" 2>&1
for m in minilm gemma; do
  [ -f .gpu/models/$m/model.safetensors ] || python3 -m benchmarks.shapes fill .gpu/models/$m
done
[ -f .gpu/models/qwen15/model.safetensors ] ||
  python3 -m benchmarks.shapes fill .gpu/models/qwen15 --dtype bfloat16
M=.gpu/models/minilm G=.gpu/models/gemma Q=transformers:.gpu/models/qwen15
run() {
  local name=$1 limit=$2
  shift 2
  SECONDS=0
  timeout "$limit" python3 -m benchmarks.run --device "$DEV" "$@" --out "$RES/$name.json" \
    > "$RES/$name.log" 2>&1
  echo "$name: rc $? in $SECONDS s"
}
run minilm-dense "${T1:-90}" --only dense --dense-model $M
run minilm-logic "${T2:-90}" --only logic --logic-model $M
run quality "${T3:-120}" --only quality --logic-model $M --llm-verifier $Q
run verifiers "${T4:-60}" --only verifiers --dense-model $M --llm-verifier $Q
run gemma-logic "${T5:-120}" --only logic --logic-model $G --logic-sample 2000
