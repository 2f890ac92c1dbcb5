#!/usr/bin/env bash
# Rebuild the default judge (models/default-judge, v3) and its figures, exactly as committed:
#   1. `train-judge prepare`: the v3 training mix (the v2 sources, the trainable nli_extra sets,
#      label-symmetric generated pairs and off-topic negatives, rebalanced so that no surface
#      feature predicts a label), the held-out evaluation files and the anchors, from
#      ../shared/data only, with the leakage check (no training document or claim is an
#      evaluation or anchor text);
#   2. the base: judge v2, the committed checkpoint of commit 8824ff0 (recovered with git);
#   3. `train-judge fit` over the whole mix from v2: the schedule of 1 epoch at lr 4e-5, batch 32,
#      evaluated and checkpointed every quarter epoch on ConflictBench dev, the SciFact,
#      Check-COVID, Citation-Integrity and HealthVer dev files and the held-out VitaminC, ScoNe
#      and CAD-SNLI samples (the best by their mean pair macro-F1 is kept), saved in float16.
#      v3 ran it in sessions on a 2-core CPU (--stop-after 0.5, then --resume --stop-after 1: the
#      same schedule as one run; STOP_AFTER=0.5 ./build... then rerun the fit with --resume);
#      its best evaluation was the one at half an epoch, which is what was exported;
#   4. the document rule and thresholds: benchmarks/judge_eval.py compares the document rules
#      on the five dev sets, each with thresholds calibrated for it, and the best rule's
#      thresholds are written into the checkpoint's conflictscore.json;
#   5. evaluation: the dev sets and anchors (judge_eval.py), the checklist, ConflictBench test and
#      dev through `bench run` (the default pipeline with the embedding pruner, as v2 was measured),
#      then the card's tables (judge_card.py) and benchmarks/conflictbench.md.
#
#   models/build_default_judge.sh            (several hours on a 2-core CPU)
#   WITH_V31=1 models/build_default_judge.sh (also the compared v3.1 candidate: about 1.5 hours more)
#
# On a GPU box the same fit command with `--device cuda --bf16 --batch-size 64` trains in
# minutes; there, a DeBERTa-v3-base NLI checkpoint as --base (with `prepare --base` and
# `--max-length 512`) is the better judge.
# Environment: CONFLICTSCORE (default .venv/bin/conflictscore), PYTHON (default
# .venv/bin/python), CONFLICTSCORE_DATA (the shared data folder).
set -euo pipefail
cd "$(dirname "$0")/.."
CS=${CONFLICTSCORE:-.venv/bin/conflictscore}
PY=${PYTHON:-.venv/bin/python}
DATA=benchmarks/work/judge-data-v3
WORK=benchmarks/work
RES=benchmarks/results
export HF_HUB_OFFLINE=1

"$CS" train-judge prepare -o "$DATA" -q --max-length 192

# judge v2, the base, exactly as it was committed
V2=$WORK/judge-v2
mkdir -p "$V2"
for f in config.json conflictscore.json model.safetensors tokenizer.json tokenizer_config.json training.json README.md; do
  git show "8824ff0:models/default-judge/$f" > "$V2/$f"
done

DEV=(bench_dev scifact_dev check_covid_dev citint_dev healthver_dev)
EVAL=()
for s in "${DEV[@]}" vitaminc_dev scone_dev cad_dev; do EVAL+=("$DATA/$s.jsonl"); done
"$CS" train-judge fit --base "$V2" --train "$DATA/pairs.jsonl" "$DATA/bench_train.jsonl" --eval "${EVAL[@]}" \
  --epochs 1 --lr 4e-5 --batch-size 32 --max-length 192 --threads 2 --freeze-embeddings --calibrate --fp16-save \
  --eval-every 0.25 --patience 3 --seed 0 --stop-after "${STOP_AFTER:-1}" -o "$WORK/judge-v3"

ANCHORS=(anli taxinli control averitec nan_nli fever_symmetric conjnli cad_test)
# v2 on the same dev sets and anchors (its own thresholds and document rule, max)
"$PY" benchmarks/judge_eval.py --tag v2 --judge-arg model="$V2" --data "$DATA" --dev "${DEV[@]}" \
  --anchors "${ANCHORS[@]}" --anchor-sample 600
# v3: the document rules compared on the dev sets, the best one's thresholds and name written into
# its conflictscore.json (--apply-best), then the anchors under them; then install
"$PY" benchmarks/judge_eval.py --tag v3 --judge-arg model="$WORK/judge-v3" --data "$DATA" --dev "${DEV[@]}" \
  --anchors "${ANCHORS[@]}" --anchor-sample 600 --apply-best "$WORK/judge-v3"
# compared, not shipped: the calibration held to v2's false-positive rate on ConflictBench dev's control
# claims (judge_eval_v2.json; the rule and thresholds that gives are in judge_eval_v3-fpr.json)
V2_FPR=$("$PY" -c "import json; r = json.load(open('$RES/judge_eval_v2.json')); \
print(r['document_rules']['rules']['max']['sets']['bench_dev']['calibrated']['detection']['false_positive_rate'])")
"$PY" benchmarks/judge_eval.py --tag v3-fpr --judge-arg model="$WORK/judge-v3" --data "$DATA" --dev "${DEV[@]}" \
  --anchors "${ANCHORS[@]}" --anchor-sample 600 --max-fpr bench_dev="$V2_FPR"
rm -rf models/default-judge.new && mkdir models/default-judge.new
for f in config.json conflictscore.json model.safetensors tokenizer.json tokenizer_config.json training.json; do
  cp "$WORK/judge-v3/$f" models/default-judge.new/
done
cp models/default-judge/README.md models/default-judge.new/   # the card (its tables are refilled below)
cp "$WORK/judge-v3/training.json" "$RES/default-judge-v3_training.json"
cp "$DATA/data.json" "$RES/default-judge-v3_data.json"
rm -rf models/default-judge && mv models/default-judge.new models/default-judge

for tag in v2 v3; do
  model=$([ "$tag" = v2 ] && echo "$V2" || echo models/default-judge)
  "$PY" benchmarks/judge_checklist.py --judge-arg model="$model" --tag "$tag"
done

"$CS" bench build -o "$WORK/conflictbench.jsonl" --summary "$RES/conflictbench_stats.json" -q
# v2's ConflictBench rows (conflictbench_default-judge-v2*.json) and dev-file runs (judge-v2/) were recorded
# with the same commands when v2 was the default (the v2 runs' --judge-arg model=benchmarks/work/judge-v2 gives them again)
"$CS" bench run "$WORK/conflictbench.jsonl" --split test --judge nli --pruner embedding --no-cache -q \
  -o "$WORK/conflictbench_default-judge.jsonl" --summary "$RES/conflictbench_default-judge.json"
"$CS" bench run "$WORK/conflictbench.jsonl" --split dev --judge nli --pruner embedding --no-cache -q \
  -o "$WORK/conflictbench_default-judge-dev.jsonl" --summary "$RES/conflictbench_default-judge-dev.json"
for split in test dev; do   # the compared calibration (judge_eval_v3-fpr) on ConflictBench, not shipped
  sfx=$([ "$split" = dev ] && echo "-dev" || echo "")
  "$CS" bench run "$WORK/conflictbench.jsonl" --split "$split" --judge nli \
    --judge-arg 'thresholds={"SUPPORT": 0.45, "CONTRADICT": 0.4}' --set aggregate.document_rule=on_topic \
    --pruner embedding --no-cache -q -o "$WORK/v3-fpr$sfx.jsonl" --summary "$RES/conflictbench_default-judge-v3-fpr$sfx.json"
done
# compared, not shipped: v3 trained on over a mix with compound claims and negated asides (judge_eval_v31,
# judge_checklist_v31, conflictbench_default-judge-v31*.json; the card's Limitations). The recorded run's data was
# made at commit 0fbb1a2, whose compose() gave IRRELEVANT twins to the SUPPORT compounds only; this code gives
# each label's compounds half (3f9081d), so a rebuild trains on a slightly different mix.
if [ "${WITH_V31:-0}" = 1 ]; then
  V31DATA=$WORK/judge-data-v31
  "$CS" train-judge prepare -o "$V31DATA" -q --max-length 192 --compose-per-kind 1000
  V31EVAL=()
  for s in "${DEV[@]}" vitaminc_dev scone_dev cad_dev; do V31EVAL+=("$V31DATA/$s.jsonl"); done
  "$CS" train-judge fit --base "$WORK/judge-v3" --train "$V31DATA/pairs.jsonl" "$V31DATA/bench_train.jsonl" \
    --eval "${V31EVAL[@]}" --epochs 1 --lr 2e-5 --batch-size 32 --max-length 192 --threads 2 --freeze-embeddings \
    --calibrate --fp16-save --eval-every 0.5 --patience 3 --seed 0 --max-train-pairs 24000 -o "$WORK/judge-v31"
  "$PY" benchmarks/judge_eval.py --tag v31 --judge-arg model="$WORK/judge-v31" --data "$V31DATA" --dev "${DEV[@]}" \
    --anchors "${ANCHORS[@]}" --anchor-sample 600 --apply-best "$WORK/judge-v31" --threads 2
  "$PY" benchmarks/judge_checklist.py --judge-arg model="$WORK/judge-v31" --tag v31
  for split in test dev; do
    sfx=$([ "$split" = dev ] && echo "-dev" || echo "")
    "$CS" bench run "$WORK/conflictbench.jsonl" --split "$split" --judge nli --judge-arg model="$WORK/judge-v31" \
      --pruner embedding --no-cache -q -o "$WORK/v31$sfx.jsonl" --summary "$RES/conflictbench_default-judge-v31$sfx.json"
  done
  cp "$WORK/judge-v31/training.json" "$RES/default-judge-v31_training.json"
  cp "$V31DATA/data.json" "$RES/default-judge-v31_data.json"
fi
"$PY" benchmarks/conflictbench_report.py             # refill the tables in benchmarks/conflictbench.md
"$PY" benchmarks/judge_card.py                       # the card's tables, from the files above
"$PY" benchmarks/leakage.py --data-json "$DATA/data.json"
