#!/usr/bin/env bash
# GPU check for a machine with a CUDA GPU and no network, in under 10 minutes:
#   - the nli judge (transformers, bf16) on a DeBERTa-v3-large-shaped classifier (random weights);
#   - the vllm judge on a Qwen3-32B-shaped model (load_format="dummy", ~64 GB bf16), prefix caching on and off;
#   - the default judge and the DeBERTa-v3-large-shaped classifier through LLM.classify (vllm judge,
#     mode=classify) against the nli judge on the same GPU;
# each printing pairs/s and the share of the GPU's dense bf16 peak (FLOPs per pair × pairs/s ÷ peak).
# Models and tokenizers are built locally (benchmarks/gpu_check.py); each case runs in its own
# process (a vLLM engine frees its GPU memory when its process ends) under its own time limit, and a
# failing case is reported without stopping the others.
#
#   benchmarks/gpu_check.sh [RESULTS.jsonl]     (default benchmarks/results/gpu_check-DATE.jsonl)
#   PYTHON=.venv/bin/python BUDGET_S=570 CASE_TIMEOUT=240 PEAK_TFLOPS=989 benchmarks/gpu_check.sh
# Cases run in order of importance; each gets at most CASE_TIMEOUT seconds and what is left of BUDGET_S.
set -uo pipefail
START=$SECONDS
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OUT=${1:-benchmarks/results/gpu_check-$(date -u +%F).jsonl}
CASE_TIMEOUT=${CASE_TIMEOUT:-240}
BUDGET_S=${BUDGET_S:-570}
WORK=${WORKDIR:-${TMPDIR:-/tmp}/conflictscore-gpu-check}
PEAK=()
[ -n "${PEAK_TFLOPS:-}" ] && PEAK=(--peak-tflops "$PEAK_TFLOPS")
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 CONFLICTSCORE_CACHE="$WORK/judgments.sqlite"

"$PY" benchmarks/gpu_check.py check "${PEAK[@]}" || exit 2
"$PY" benchmarks/gpu_check.py build --workdir "$WORK" || exit 1
: > "$OUT"
{
  echo "# gpu_check $(date -u +%FT%TZ) on $(hostname)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || true
  "$PY" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
  "$PY" -c 'import vllm; print("vllm", vllm.__version__)' 2>/dev/null || echo "vllm not installed: the vllm cases fail"
} | tee "${OUT%.jsonl}.txt"
for case in nli-deberta vllm-prefix-on vllm-prefix-off nli-default classify-default classify-deberta; do
  left=$((BUDGET_S - (SECONDS - START)))
  limit=$((left < CASE_TIMEOUT ? left : CASE_TIMEOUT))
  if [ "$limit" -lt 30 ]; then
    echo "{\"case\": \"$case\", \"error\": \"skipped: the ${BUDGET_S}s budget is spent\"}" >> "$OUT"; continue
  fi
  echo "== $case (at most ${limit}s)" >&2
  timeout --kill-after=15 "$limit" "$PY" benchmarks/gpu_check.py case "$case" --workdir "$WORK" --json "$OUT" "${PEAK[@]}" \
    || { rc=$?; [ $rc -ge 124 ] && echo "{\"case\": \"$case\", \"error\": \"timed out after ${limit}s\"}" >> "$OUT"; }
done
"$PY" benchmarks/gpu_check.py report --json "$OUT" | tee -a "${OUT%.jsonl}.txt"
