#!/usr/bin/env bash
# Build judge v5.1 (tag v51) and its figures, and put it through the gate against the default it would replace
# (v5); with SHIP=1 a candidate that passes is packed into models/default-judge. Two stages, as FactCG trains its checkers: general inference first, then
# documents and conflicts on the examples the first stage gets wrong. v5.1 is v5's recipe with stage 1 trained
# for two epochs instead of one (v5's stage-1 loss was still falling when its one-epoch schedule ended) and
# evaluated every half epoch instead of every quarter, both fits with --bf16 on a CPU with native bf16
# (FIT_ARGS=--bf16). v5's own build, which also evaluated v3 beside it, is
# `git show 8f5fa77:models/build_default_judge.sh`.
#   1. `train-judge prepare --stage general`: the general NLI mix (LingNLI, MPE, RTE's entailments, Fool Me
#      Twice dev, SICK, e-SNLI dev, FEVER's supported pairs and the general parts of nli_extra), leak-checked
#      against every evaluation and anchor text (e-SNLI test, TaxiNLI, ANLI, MPE test, FM2 test, ...), rebalanced
#      so that no negation cue or digit predicts a label;
#   2. stage 1: `train-judge fit` from judge v3 (the committed checkpoint of commit dfcddc8, recovered with git)
#      for STAGE1_EPOCHS epochs over that mix, its word embeddings packed to int8 rows and frozen first
#      (--int8-embeddings: the shipped file stores exactly what was trained), evaluated every half epoch on
#      held-out LingNLI, MPE dev, CAD-SNLI dev, VitaminC and ScoNe;
#   3. `train-judge prepare` (mix v5): the document-level sets whole (HealthVer, SciFact, Check-COVID,
#      Citation-Integrity train), FactCG's CG2C pairs (claims held out as cg2c_dev), VitaminC, label-symmetric
#      generated pairs (numbers, units, negation, entities, subjects, compound claims), off-topic negatives,
#      ConflictBench train, and every evaluation and anchor file;
#   4. `train-judge mine`: the document pairs stage 1 gets wrong, a quarter of those it gets right, and 8,000
#      stage-1 pairs to rehearse;
#   5. stage 2: `train-judge fit` from stage 1 for one epoch over the mined pairs and ConflictBench train,
#      evaluated every half epoch on the document dev sets (and LingNLI, to see forgetting), thresholds
#      calibrated for the record;
#   6. the decision rule: benchmarks/judge/judge_eval.py compares the document rules and, for the best one, plain
#      arg-max against the calibrated thresholds on the dev sets; benchmarks/judge/judge_decision.py keeps arg-max
#      unless the thresholds raise the mean dev macro-F1 and keep every sanity pair arg-max gets right, and
#      writes the rule into the checkpoint's conflictscore.json;
#   7. evaluation of NEW with the commands v3 and PREV were evaluated with when PREV was built: the anchors
#      (e-SNLI test, TaxiNLI, MPE test, FM2 test whole, the others sampled), the sanity checklist, the behavioural
#      checklist, ConflictBench test and dev through `bench run` (and PREV's test run again, for the pairing),
#      the cost per pair of v3, PREV and NEW;
#   8. the gate (benchmarks/judge/judge_ship.py): NEW can ship only when it is higher than PREV on the sanity
#      checklist and the general anchors and not lower on ConflictBench test detection F1 beyond a paired
#      bootstrap's noise; with SHIP=1 it is then packed into models/default-judge (`train-judge pack`: int8
#      embedding rows, float16 rest: ~34 MB), whose card's COLUMNS and prose are then set by hand and its tables
#      refilled (judge_card.py); benchmarks/results/judge/conflictbench.md and leakage.md are refilled either way.
#
#   FIT_ARGS=--bf16 models/build_default_judge.sh   (stage 1 is 7,144 steps of 32 pairs: at the --bf16 rates
#       of benchmarks/results/judge/train_throughput-*.md about an hour on 2 cores, stage 2 half that, the
#       evaluations another half hour; float32 is 1.6x slower)
#
# After a ship, set COLUMNS in benchmarks/judge/judge_card.py to end with NEW: judge_card refuses to fill the
# card of a checkpoint whose training.json is not default-judge-NEW_training.json.
#
# Each fit resumes where it stopped (RESUME=1 models/build_default_judge.sh continues the stage whose
# OUTPUT/last/ exists). FIT_ARGS is added to both fits, after their own options (so it overrides them): on a CPU
# with native bf16 (AMX, AVX512-BF16) FIT_ARGS=--bf16 trains about 1.6x as fast (python -m
# benchmarks.judge.train_throughput measures it: docs/training.md); on a GPU box FIT_ARGS="--device cuda --bf16
# --batch-size 64". A resumed fit needs the same FIT_ARGS.
# Environment: CONFLICTSCORE (default .venv/bin/conflictscore), PYTHON (default .venv/bin/python),
# CONFLICTSCORE_DATA (the shared data folder), THREADS (default 2), FIT_ARGS (default none), NEW (default v51),
# PREV (default v5: models/default-judge as committed at PREV_COMMIT, default 8f5fa77), STAGE1_EPOCHS (default 2),
# STAGE1_EVAL_EVERY (default 0.5), SHIP (1: pack NEW into models/default-judge when it passes the gate; default 0).
set -euo pipefail
cd "$(dirname "$0")/.."
CS=${CONFLICTSCORE:-.venv/bin/conflictscore}
PY=${PYTHON:-.venv/bin/python}
THREADS=${THREADS:-2}
read -r -a FIT_EXTRA <<< "${FIT_ARGS:-}"
NEW=${NEW:-v51}                      # the judge this builds (its work folders and result files carry the tag)
PREV=${PREV:-v5}                     # the default it would replace: models/default-judge as committed
STAGE1_EPOCHS=${STAGE1_EPOCHS:-2}    # v5: 1 (loss still falling at its end); v5.1: 2
STAGE1_EVAL_EVERY=${STAGE1_EVAL_EVERY:-0.5}
WORK=benchmarks/work
RES=benchmarks/results/judge
GENERAL=$WORK/judge-data-v5-general  # the two mixes are v5's, unchanged
DATA=$WORK/judge-data-v5
S1=$WORK/judge-$NEW-stage1
OUT=$WORK/judge-$NEW
export HF_HUB_OFFLINE=1

resume() { [ -d "$1/last" ] && echo --resume || true; }

# judge v3, the base, exactly as it was committed
V3=$WORK/judge-v3
if [ ! -f "$V3/model.safetensors" ]; then
  mkdir -p "$V3"
  for f in config.json conflictscore.json model.safetensors tokenizer.json tokenizer_config.json training.json; do
    git show "dfcddc8:models/default-judge/$f" > "$V3/$f"
  done
fi
# the default it would replace, as committed (read from git, so a rebuild after it shipped still compares)
PREV_DIR=$WORK/judge-$PREV-shipped
if [ ! -f "$PREV_DIR/model.packed.safetensors" ]; then
  rm -rf "$PREV_DIR" && mkdir -p "$PREV_DIR"
  git archive "${PREV_COMMIT:-8f5fa77}" models/default-judge | tar -x -C "$PREV_DIR" --strip-components=2
fi

# the mixes are v5's: their records must be the committed ones (the card reads those, judge_card.MIX)
same_mix() { cmp -s "$1" "$2" || { echo "$1 differs from $2: the v5 mix changed" >&2; exit 1; }; }
[ -f "$GENERAL/general.jsonl" ] || "$CS" train-judge prepare --stage general -o "$GENERAL" -q
same_mix "$GENERAL/data.json" "$RES/default-judge-v5-general_data.json"
if [ ! -f "$S1/training.json" ]; then
  # shellcheck disable=SC2046
  "$CS" train-judge fit --base "$V3" --train "$GENERAL/general.jsonl" \
    --eval "$GENERAL/lingnli_dev.jsonl" "$GENERAL/mpe_dev.jsonl" "$GENERAL/cad_dev.jsonl" "$GENERAL/vitaminc_dev.jsonl" \
           "$GENERAL/scone_dev.jsonl" \
    --epochs "$STAGE1_EPOCHS" --lr 4e-5 --batch-size 32 --max-length 192 --threads "$THREADS" --int8-embeddings \
    --eval-every "$STAGE1_EVAL_EVERY" --patience 4 --seed 0 ${FIT_EXTRA[@]+"${FIT_EXTRA[@]}"} $(resume "$S1") -o "$S1"
fi

[ -f "$DATA/pairs.jsonl" ] || "$CS" train-judge prepare --mix v5 -o "$DATA" -q --max-length 192
same_mix "$DATA/data.json" "$RES/default-judge-v5_data.json"
MINED=$DATA/stage2-$NEW.jsonl
[ -f "$MINED" ] || "$CS" train-judge mine --model "$S1" --pairs "$DATA/pairs.jsonl" \
  --keep-correct 0.25 --replay "$GENERAL/general.jsonl" --replay-pairs 8000 --threads "$THREADS" -o "$MINED"

DEV=(bench_dev scifact_dev check_covid_dev citint_dev healthver_dev cg2c_dev)
EVAL=()
for s in "${DEV[@]}" vitaminc_dev cad_dev; do EVAL+=("$DATA/$s.jsonl"); done
EVAL+=("$GENERAL/lingnli_dev.jsonl")
if [ ! -f "$OUT/training.json" ]; then
  # shellcheck disable=SC2046
  "$CS" train-judge fit --base "$S1" --train "$MINED" "$DATA/bench_train.jsonl" \
    --eval "${EVAL[@]}" --epochs 1 --lr 3e-5 --batch-size 32 --max-length 192 --threads "$THREADS" --int8-embeddings \
    --calibrate --eval-every 0.5 --patience 4 --seed 0 ${FIT_EXTRA[@]+"${FIT_EXTRA[@]}"} $(resume "$OUT") -o "$OUT"
fi
cp "${MINED%.jsonl}.mine.json" "$RES/default-judge-${NEW}_mine.json"
cp "$S1/training.json" "$RES/default-judge-$NEW-stage1_training.json"
cp "$OUT/training.json" "$RES/default-judge-${NEW}_training.json"

ANCHORS=(esnli_test taxinli anli mpe_test fm2_test fever_symmetric conjnli cad_test nan_nli control averitec)
WHOLE=(esnli_test taxinli mpe_test fm2_test)   # the targets are stated on these: judged whole, the rest sampled
# the document rules on the dev sets (each with thresholds calibrated for it), the best rule written into the
# checkpoint with its thresholds (--apply-best)
"$PY" -m benchmarks.judge.judge_eval --tag "$NEW" --judge-arg model="$OUT" --data "$DATA" --dev "${DEV[@]}" \
  --anchors "${ANCHORS[@]}" --anchor-sample 600 --anchor-whole "${WHOLE[@]}" --apply-best "$OUT" \
  --threads "$THREADS"
# the decision: arg-max unless those thresholds raise the mean dev macro-F1 and break no sanity pair
"$PY" -m benchmarks.judge.judge_sanity --judge-arg model="$OUT" --tag "$NEW-thresholds" --no-leak-check
"$PY" -m benchmarks.judge.judge_sanity --judge-arg model="$OUT" --judge-arg calibration=false --tag "$NEW-argmax" \
  --no-leak-check
"$PY" -m benchmarks.judge.judge_decision --eval "$RES/judge_eval_$NEW.json" --sanity "$RES/judge_sanity_$NEW-thresholds.json" \
  --sanity-argmax "$RES/judge_sanity_$NEW-argmax.json" --model "$OUT" --tag "$NEW" --apply
# v3 and PREV were evaluated on the same dev sets and anchors when PREV was built (judge_eval_v3-v5data.json,
# judge_eval_v5.json, judge_sanity_*, judge_checklist_*, conflictbench_default-judge-*): only the new judge here
"$PY" -m benchmarks.judge.judge_sanity --judge-arg model="$OUT" --tag "$NEW" --no-leak-check
"$PY" -m benchmarks.judge.judge_checklist --judge-arg model="$OUT" --tag "$NEW"
[ -f "$WORK/conflictbench.jsonl" ] || "$CS" bench build -o "$WORK/conflictbench.jsonl" --summary "$RES/conflictbench_stats.json" -q
for split in test dev; do
  sfx=$([ "$split" = dev ] && echo "-dev" || echo "")
  "$CS" bench run "$WORK/conflictbench.jsonl" --split "$split" --judge nli --judge-arg model="$OUT" \
    --pruner embedding --no-cache -q -o "$WORK/conflictbench_$NEW$sfx.jsonl" \
    --summary "$RES/conflictbench_default-judge-$NEW$sfx.json"
done
# PREV's claims on test, for the paired comparison; the gate's F1 figures are the recorded summaries, so say
# when this run's detection differs from PREV's recorded one (another CPU can move a borderline pair)
"$CS" bench run "$WORK/conflictbench.jsonl" --split test --judge nli --judge-arg model="$PREV_DIR" \
  --pruner embedding --no-cache -q -o "$WORK/conflictbench_$PREV.jsonl" --summary "$WORK/conflictbench_$PREV.summary.json"
"$PY" - "$WORK/conflictbench_$PREV.summary.json" "$RES/conflictbench_default-judge-$PREV.json" <<'PY'
import sys
from conflictscore_local.formats.summary import read_summary
now, rec = (read_summary(p)["evaluation"]["detection"]["overall"] for p in sys.argv[1:])
if now != rec:
    print(f"warning: {sys.argv[1]} detection {now} differs from the recorded {sys.argv[2]}: {rec}", file=sys.stderr)
PY
"$PY" -m benchmarks.judge.judge_pair_cost --judge v3="$V3" --judge "$PREV=$PREV_DIR" --judge "$NEW=$OUT" --data "$DATA" \
  --pairs 256 --repeats 5 --threads "$THREADS" --out "$RES/judge_pair_cost_v3-$NEW"

# the gate: NEW passes when it is higher than PREV on the sanity pairs and the general anchors and not lower on
# ConflictBench test detection F1 beyond a paired bootstrap's noise (benchmarks/judge/judge_ship.py says why).
# Passing is necessary, not sufficient: the pack into models/default-judge happens only with SHIP=1, after
# someone has read the verdict beside ConflictBench dev (v5.1 passed it with lower test and dev F1 than v5 and
# was held back: models/default-judge/README.md)
"$PY" -m benchmarks.judge.conflictbench_report             # refill the tables in benchmarks/results/judge/conflictbench.md
"$PY" -m benchmarks.judge.leakage --data-json "$DATA/data.json"
if "$PY" -m benchmarks.judge.judge_ship --new "$NEW" --old "$PREV" --bench "$WORK/conflictbench.jsonl" \
     --run "$NEW=$WORK/conflictbench_$NEW.jsonl" --run "$PREV=$WORK/conflictbench_$PREV.jsonl"; then
  if [ "${SHIP:-0}" = 1 ]; then
    rm -rf models/default-judge.new
    "$CS" train-judge pack "$OUT" -o models/default-judge.new -q
    cp models/default-judge/README.md models/default-judge.new/   # the card (its tables are refilled next)
    rm -rf models/default-judge && mv models/default-judge.new models/default-judge
    echo "packed $NEW into models/default-judge: set COLUMNS in benchmarks/judge/judge_card.py to end with" \
      "\"$NEW\" and its prose, then run python -m benchmarks.judge.judge_card" >&2
  else
    echo "$NEW passed the gate; not packed (SHIP=1 packs it into models/default-judge)" >&2
  fi
else
  echo "$NEW did not pass the gate: benchmarks/results/judge/judge_ship_$NEW.json" >&2
fi
