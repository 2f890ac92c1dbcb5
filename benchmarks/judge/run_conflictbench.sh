#!/usr/bin/env bash
# Regenerate the ConflictBench results: build the bench from the shared data, score the
# test split with the gold labels (sanity: detection F1 must be 1.0), with the default
# judge when models/default-judge exists, and with every judge given as an argument
# NAME="PIPELINE FLAGS", then refill benchmarks/results/judge/conflictbench.md and the plot.
#
#   benchmarks/judge/run_conflictbench.sh
#   benchmarks/judge/run_conflictbench.sh "deberta-v3-mnli=--judge nli --judge-arg model=/models/deberta-v3-large-mnli"
#
# Environment: CONFLICTSCORE (the command, default .venv/bin/conflictscore), SPLIT (default
# test), CONFLICTSCORE_DATA (the shared data folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
CS=${CONFLICTSCORE:-.venv/bin/conflictscore}
PY=${PYTHON:-.venv/bin/python}
SPLIT=${SPLIT:-test}
WORK=benchmarks/work
RES=benchmarks/results/judge
mkdir -p "$WORK" "$RES"

"$CS" bench build -o "$WORK/conflictbench.jsonl" --summary "$RES/conflictbench_stats.json"
# -o: each item's verdicts (kept under benchmarks/work/), --summary: the results recorded in benchmarks/results/
"$CS" bench run "$WORK/conflictbench.jsonl" --given-labels -q -o "$WORK/conflictbench_gold-labels-all.jsonl" \
  --summary "$RES/conflictbench_gold-labels-all.json"
"$CS" bench run "$WORK/conflictbench.jsonl" --split "$SPLIT" --given-labels -q -o "$WORK/conflictbench_gold-labels.jsonl" \
  --summary "$RES/conflictbench_gold-labels.json"

runs=()
if [ -d models/default-judge ]; then
  runs+=("default-judge=--judge nli --judge-arg model=models/default-judge")
fi
runs+=("$@")
for spec in "${runs[@]}"; do
  name=${spec%%=*}
  flags=${spec#*=}
  # shellcheck disable=SC2086  # flags are word-split on purpose
  "$CS" bench run "$WORK/conflictbench.jsonl" --split "$SPLIT" $flags -o "$WORK/conflictbench_$name.jsonl" \
    --summary "$RES/conflictbench_$name.json"
done
"$PY" -m benchmarks.judge.conflictbench_report
