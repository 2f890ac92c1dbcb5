#!/usr/bin/env bash
# GPU check for a machine with a CUDA GPU and no network, in under 10 minutes:
#   - the nli judge (transformers, bf16) on a DeBERTa-v3-large-shaped classifier (random weights);
#   - the vllm judge on a Qwen3-32B-shaped model (load_format="dummy", ~64 GB bf16), prefix caching on and off;
#   - the default judge and the DeBERTa-v3-large-shaped classifier through LLM.classify (the nli judge's
#     runtime=vllm) against runtime=torch on the same GPU;
#   (the same runs as benchmarks/vllm_cpu.py on the CPU: cross-encoder on vLLM vs torch, prefix caching on vs off,
#   engine load time: each case records load_s)
# each printing pairs/s and the share of the GPU's dense bf16 peak (FLOPs per pair × pairs/s ÷ peak).
# Models and tokenizers are built locally (benchmarks/gpu_check.py); each case runs in its own
# process (a vLLM engine frees its GPU memory when its process ends) under its own time limit, and a
# failing case is reported without stopping the others.
#
# Then the peers and the roofline of benchmarks/throughput_peers.py on the GPU (CrossEncoder.predict, a
# transformers batch loop, the engine cold/pruned/warm, measured matmul peak and share of it), on the
# shipped default judge and ../shared/data, into benchmarks/results/throughput_peers_gpu-DATE.{json,md,png}
# (at most PEERS_TIMEOUT seconds, default 150).
#
#   benchmarks/gpu_check.sh [RESULTS.jsonl]     (default benchmarks/results/gpu_check-DATE.jsonl)
#   PYTHON=.venv/bin/python BUDGET_S=570 CASE_TIMEOUT=240 PEAK_TFLOPS=989 benchmarks/gpu_check.sh
#   benchmarks/gpu_check.sh --dry-run           on a CPU: checks this script and runs the peers on tiny sizes
# Cases run in order of importance; each gets at most CASE_TIMEOUT seconds and what is left of BUDGET_S.
set -uo pipefail
START=$SECONDS
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
PEERS_TIMEOUT=${PEERS_TIMEOUT:-150}
PEERS_ARGS=(--rag 24 --pooled 8x32 --long 12 --growth 1,2,4,8 --growth-items 6)
if [ "${1:-}" = "--dry-run" ]; then
  bash -n "$0" || exit 1
  "$PY" benchmarks/gpu_check.py --help > /dev/null || exit 1
  DRY=${TMPDIR:-/tmp}/conflictscore-gpu-check-dry
  mkdir -p "$DRY"
  HF_HUB_OFFLINE=1 timeout 300 "$PY" benchmarks/throughput_peers.py --device cpu --out "$DRY/throughput_peers" \
      --rag 1 --pooled 1x3 --long 1 --growth 1 --growth-items 1 > "$DRY/peers.log" 2>&1 \
    || { echo "dry run: the peers failed (see $DRY/peers.log)" >&2; exit 1; }
  echo "dry run ok: the script parses, gpu_check.py starts, the peers ran on the CPU ($DRY/throughput_peers.md);"
  echo "on a GPU the peers run as: $PY benchmarks/throughput_peers.py --device cuda ${PEERS_ARGS[*]}"
  exit 0
fi
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
  left=$((BUDGET_S - PEERS_TIMEOUT - (SECONDS - START)))  # the peers' time is kept for them
  limit=$((left < CASE_TIMEOUT ? left : CASE_TIMEOUT))
  if [ "$limit" -lt 30 ]; then
    echo "{\"case\": \"$case\", \"error\": \"skipped: the ${BUDGET_S}s budget is spent\"}" >> "$OUT"; continue
  fi
  echo "== $case (at most ${limit}s)" >&2
  timeout --kill-after=15 "$limit" "$PY" benchmarks/gpu_check.py case "$case" --workdir "$WORK" --json "$OUT" "${PEAK[@]}" \
    || { rc=$?; [ $rc -ge 124 ] && echo "{\"case\": \"$case\", \"error\": \"timed out after ${limit}s\"}" >> "$OUT"; }
done
left=$((BUDGET_S - (SECONDS - START)))
limit=$((left < PEERS_TIMEOUT ? left : PEERS_TIMEOUT))
if [ "$limit" -ge 60 ]; then
  echo "== peers and roofline (at most ${limit}s)" >&2
  timeout --kill-after=15 "$limit" "$PY" benchmarks/throughput_peers.py --device cuda \
      --out "benchmarks/results/throughput_peers_gpu-$(date -u +%F)" "${PEERS_ARGS[@]}" >&2 \
    || echo "{\"case\": \"peers\", \"error\": \"exit $? (124: timed out after ${limit}s)\"}" >> "$OUT"
else
  echo "{\"case\": \"peers\", \"error\": \"skipped: the ${BUDGET_S}s budget is spent\"}" >> "$OUT"
fi
"$PY" benchmarks/gpu_check.py report --json "$OUT" | tee -a "${OUT%.jsonl}.txt"
