"""Fine-tune a transformers encoder as a SUPPORT / CONTRADICT / IRRELEVANT judge with ``transformers.Trainer``.

The Trainer runs the loop (AdamW, linear schedule with warm-up, length-grouped batches,
bf16 autocast, evaluation and checkpoints every epoch or share of one, resume, early stopping with the best
epoch kept); this module supplies what is the judge's own:

- inputs encoded by :func:`conflictscore_local.judge.nli.encode_pairs` and long documents
  split within :func:`conflictscore_local.judge.nli.passage_budget`, as the ``nli`` judge does;
- the class-weighted loss, which stops the run with :class:`TrainingDiverged` as soon as it
  is not finite;
- evaluation through the judge's decision rule and the engine's aggregation
  (:mod:`.evaluate`), early stopping on the mean pair macro-F1 of the eval sets;
- float32 master weights whatever dtype the base was saved in (:func:`.model.load_classifier`).

The output is a checkpoint the ``nli`` judge loads as is: ``config.id2label`` = SUPPORT /
CONTRADICT / IRRELEVANT, the tokenizer, safetensors weights, ``conflictscore.json``
(window, thresholds) and ``training.json`` (data, hashes, counts, options, versions,
metrics per epoch, timings).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..backends.arguments import check_ranges, ranged
from ..core.chunk import Chunker
from ..core.errors import ConfigError
from ..core.types import LABELS
from ..jobs import Input, Job, Output, write_json_atomic
from ..judge.nli import CALIBRATION_FILE, CALIBRATION_FORMAT, DEFAULT_CLAIM_ROOM, encode_pairs, passage_budget
from ..util.devices import check_device, native_cpu_bf16, torch_device
from ..util.paths import portable
from .data import ID2LABEL, LABEL2ID, EvalSet, label_counts, read_eval_set, read_training_data
from .evaluate import calibrate, evaluate
from .model import add_lora, cut_layers, freeze_word_embeddings, load_classifier, pack_word_embeddings, resolve_base

TRAINING_RECORD = "training.json"
STATE_DIR = "last"
FINGERPRINT_FILE = "fingerprint.json"
CLASS_WEIGHTS = ("balanced", "none")
CLAIM_ROOM = DEFAULT_CLAIM_ROOM
DEVICES = ("auto", "cpu", "cuda")
logger = logging.getLogger(__name__)


class TrainingDiverged(RuntimeError):
    """The training loss stopped being finite; the run stops at that step."""


@dataclass(frozen=True)
class TrainOptions:
    """Everything that decides a training run (the flags of ``train-judge fit``)."""

    base: str
    train: tuple[str, ...]
    eval: tuple[str, ...]
    output: str
    epochs: int = ranged(3, 1, 100_000, what="--epochs")
    lr: float = ranged(3e-5, 0.0, 1.0, low_open=True, what="--lr")
    batch_size: int = ranged(16, 1, 1_000_000, what="--batch-size")
    eval_batch_size: int = ranged(64, 1, 1_000_000, what="--eval-batch-size")
    max_length: int = ranged(256, 2 * CLAIM_ROOM, 1_000_000, what="--max-length")
    seed: int = ranged(0, 0, 2**32 - 1, what="--seed")
    warmup: float = ranged(0.06, 0.0, 1.0, high_open=True, what="--warmup")
    weight_decay: float = ranged(0.01, 0.0, 10.0, what="--weight-decay")
    patience: int = ranged(2, 1, 100_000, what="--patience")
    class_weights: str = "balanced"
    freeze_embeddings: bool = False
    int8_embeddings: bool = False
    max_train_pairs: int | None = ranged(None, 1, None, what="--max-train-pairs")
    calibrate: bool = False
    fp16_save: bool = False
    resume: bool = False
    keep_state: bool = False
    allow_eval_splits: bool = False
    device: str = "auto"
    bf16: bool = False
    threads: int | None = ranged(None, 1, 4096, what="--threads")
    eval_every: float = ranged(1.0, 0.0, 1.0, low_open=True, what="--eval-every")
    stop_after: float | None = ranged(None, 0.0, 100_000.0, low_open=True, what="--stop-after")
    layers: int | None = ranged(None, 1, 4096, what="--layers")
    lora: int | None = ranged(None, 1, 4096, what="--lora")

    def __post_init__(self) -> None:
        for name in ("train", "eval"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))
        check_ranges(self, where="train-judge fit")
        checks = [
            (
                self.class_weights in CLASS_WEIGHTS,
                f"--class-weights {self.class_weights!r}; allowed: {', '.join(CLASS_WEIGHTS)}",
            ),
            (bool(self.train), "--train needs at least one file"),
            (bool(self.eval), "--eval needs at least one file"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ConfigError(msg)
        try:
            check_device(self.device)
        except ValueError as e:
            raise ConfigError(f"--{e}") from None
        if self.device not in DEVICES:
            raise ConfigError(
                f"--device {self.device!r}: training runs on a CUDA GPU or the CPU; "
                f"allowed: {', '.join(DEVICES)} (choose a GPU with CUDA_VISIBLE_DEVICES)"
            )

    def fingerprint(self) -> dict[str, Any]:
        """The options a resumed run must share with the interrupted one."""
        skip = {"resume", "keep_state", "calibrate", "fp16_save", "threads", "stop_after"}
        return {k: v for k, v in dataclasses.asdict(self).items() if k not in skip}


def make_chunker(tokenizer: Any, max_length: int) -> Chunker:
    """The engine's chunker within the ``nli`` judge's passage budget for this window."""
    count, budget = passage_budget(tokenizer, max_length, CLAIM_ROOM)
    return Chunker(max_tokens=budget, count=count)


def class_weights(labels: Sequence[int], mode: str) -> list[float]:
    """Loss weights per label: inverse frequency scaled to mean 1 over present labels."""
    counts = [sum(1 for x in labels if x == i) for i in range(len(LABELS))]
    if mode == "none":
        return [1.0] * len(LABELS)
    present = [c for c in counts if c]
    return [len(labels) / (len(present) * c) if c else 0.0 for c in counts]


class _Callbacks:
    """Timing per evaluation (training time since the previous one, evaluation time), a line per
    evaluation, the caller's hook (called once that evaluation's checkpoint is on disk, so an
    interrupted run can resume from it), and ``stop_after``: the run ends after the first
    evaluation at or beyond that epoch, its schedule still that of the whole run."""

    def __init__(
        self,
        say: Callable[[str], None],
        hook: Callable[[int, dict[str, Any]], None] | None,
        stop_after: float | None = None,
        log_progress: bool = False,
    ):
        from transformers import TrainerCallback

        from ..util.progress import LogBar, NoBar

        outer = self

        class CB(TrainerCallback):
            def on_train_begin(self, args, state, control, **kw):  # noqa: ANN001, ANN003
                outer.t0 = time.perf_counter()
                if log_progress:  # no terminal: a log line every $CONFLICTSCORE_PROGRESS_S seconds
                    outer.steps = LogBar(
                        max(outer.last_step(args, state) - state.global_step, 0), "steps", "train-judge fit"
                    )
                if outer.reached(state.epoch):  # resumed at the stop: nothing more to learn (the Trainer
                    control.should_training_stop = outer.past_stop = True  # runs one step before it looks;
                    # that update is dropped when the best checkpoint is loaded at the end)

            def on_step_end(self, args, state, control, **kw):  # noqa: ANN001, ANN003
                outer.steps.update(1)
                outer.mark(control)

            def on_train_end(self, args, state, control, **kw):  # noqa: ANN001, ANN003
                outer.steps.close()

            def on_epoch_end(self, args, state, control, **kw):  # noqa: ANN001, ANN003
                outer.mark(control)

            def on_evaluate(self, args, state, control, metrics=None, **kw):  # noqa: ANN001, ANN003
                epoch = round(state.epoch or 0, 2)
                epoch = int(epoch) if epoch == int(epoch) else epoch
                loss = next((h["loss"] for h in reversed(state.log_history) if "loss" in h), None)
                outer.last = {
                    "epoch": epoch,
                    "train_loss": round(loss, 5) if loss is not None else None,
                    "train_s": round(outer.train_s, 1),
                    "eval_s": round(time.perf_counter() - outer.t1, 1),
                    "eval": {k.removeprefix("eval_"): v for k, v in (metrics or {}).items()},
                }
                state.log_history.append({"conflictscore_epoch": outer.last})
                outer.say(
                    f"epoch {epoch}: loss {loss if loss is None else round(loss, 4)}, eval macro-F1 "
                    f"{outer.last['eval'].get('macro_f1', float('nan')):.4f} "
                    f"({outer.last['train_s']:.0f}s train, {outer.last['eval_s']:.0f}s eval)"
                )
                outer.t0 = time.perf_counter()
                if outer.reached(state.epoch):
                    outer.say(
                        f"train-judge: stopping after epoch {epoch} (--stop-after {outer.stop_after:g}); "
                        "--resume with a later --stop-after continues the same schedule"
                    )
                    control.should_training_stop = True

            def on_save(self, args, state, control, **kw):  # noqa: ANN001, ANN003
                if outer.hook is not None and outer.last is not None:
                    outer.hook(outer.last["epoch"], outer.last)

        self.say, self.hook, self.stop_after = say, hook, stop_after
        self.steps: Any = NoBar()
        self.past_stop = False
        self.t0 = self.t1 = time.perf_counter()
        self.train_s = 0.0
        self.last: dict[str, Any] | None = None
        self.callback = CB()

    def last_step(self, args: Any, state: Any) -> int:
        """The step the run ends at: the schedule's last, or with ``stop_after`` the first
        evaluation at or beyond it (what the step log counts to, so its ETA is the run's)."""
        if self.stop_after is None or not state.num_train_epochs or not state.max_steps:
            return int(state.max_steps)
        per_epoch = state.max_steps / state.num_train_epochs
        by_steps = str(getattr(getattr(args, "eval_strategy", None), "value", getattr(args, "eval_strategy", None)))
        every = getattr(args, "eval_steps", None) if by_steps == "steps" else None
        every = every or per_epoch
        evals = math.ceil(round((self.stop_after - 1e-3) * per_epoch / every, 9))
        return int(min(state.max_steps, math.ceil(evals * every)))

    def reached(self, epoch: float | None) -> bool:
        """True once training has reached ``stop_after`` (an epoch count; rounding of the
        Trainer's fractional epochs allowed)."""
        return self.stop_after is not None and (epoch or 0) >= self.stop_after - 1e-3

    def mark(self, control: Any) -> None:
        """The training segment ends where the Trainer is about to evaluate (never past the stop)."""
        if self.past_stop:
            control.should_evaluate = control.should_save = control.should_log = False
        if control.should_evaluate:
            self.train_s = time.perf_counter() - self.t0
            self.t1 = time.perf_counter()


def _split_probs(probs: Any, sets: Sequence[EvalSet]) -> list[Any]:
    out, start = [], 0
    for ev in sets:
        out.append(probs[start : start + len(ev.passages)])
        start += len(ev.passages)
    return out


def _eval_summary(metrics: Sequence[Mapping[str, Any]], sets: Sequence[EvalSet]) -> dict[str, float]:
    """Flat figures for the Trainer's logs: the mean pair macro-F1 (early stopping) and each set's."""
    out = {"macro_f1": sum(m["macro_f1"] for m in metrics) / len(metrics)}
    for ev, m in zip(sets, metrics):
        out[f"{ev.name}_macro_f1"] = m["macro_f1"]
        if "detection" in m:
            out[f"{ev.name}_detection_f1"] = m["detection"]["f1"] or 0.0
    return out


@dataclass
class _Data:
    """What a run reads: tokenizer and passage splitting, training pairs, eval sets, their record."""

    tokenizer: Any
    examples: list[Any]
    train_files: list[dict[str, Any]]
    sets: list[EvalSet]
    eval_files: list[dict[str, Any]]
    fingerprint: dict[str, Any]
    weights: list[float]


MODEL_FILES = ("config.json", "model.safetensors", CALIBRATION_FILE, TRAINING_RECORD)
"""What a finished checkpoint holds: a folder with one of them is a model ``fit`` will not replace."""


def check_output_folder(folder: Path, *, resume: bool = False) -> None:
    """``ConfigError`` unless ``fit -o`` may write into ``folder``: missing, empty, or holding only the
    state of an interrupted run (``last/``); never a trained model nor a folder of other files.
    ``resume`` continues the run whose state ``last/`` holds, whatever it already exported."""
    if not folder.is_dir():
        return
    names = sorted(p.name for p in folder.iterdir())
    if resume and STATE_DIR in names:
        return
    model = [n for n in names if n in MODEL_FILES]
    if model:
        raise ConfigError(
            f"-o {folder} holds a trained model ({', '.join(model)}): fitting would replace it; "
            "choose a new or empty folder (or delete that one first)"
        )
    other = [n for n in names if n != STATE_DIR]
    if other:
        shown = ", ".join(other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3 else "")
        raise ConfigError(
            f"-o {folder} is not empty and was not written by train-judge fit (it holds {shown}); "
            "choose a new or empty folder"
        )


def _load_data(opts: TrainOptions, base_path: str) -> _Data:
    """The training pairs and eval sets, split and encoded as the ``nli`` judge will see them."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base_path)
    chunker = make_chunker(tokenizer, opts.max_length)
    examples, train_files = read_training_data(opts.train, chunker, allow_eval_splits=opts.allow_eval_splits)
    if opts.max_train_pairs is not None and len(examples) > opts.max_train_pairs:
        examples = random.Random(opts.seed).sample(examples, opts.max_train_pairs)
    sets, eval_files = [], []
    for path in opts.eval:
        ev, rec = read_eval_set(path, chunker)
        sets.append(ev)
        eval_files.append({**rec, "path": portable(rec["path"])})
    names = [ev.name for ev in sets]
    if len(set(names)) != len(names):
        raise ConfigError(
            f"--eval: two eval files share the name {sorted(n for n in names if names.count(n) > 1)[0]!r}; "
            "eval sets are reported by file name"
        )
    train_files = [{**f, "path": portable(f["path"])} for f in train_files]
    fingerprint = json.loads(
        json.dumps(
            {**opts.fingerprint(), "data": [f["sha256"] for f in train_files] + [f["sha256"] for f in eval_files]}
        )
    )
    weights = class_weights([e.label for e in examples], opts.class_weights)
    return _Data(tokenizer, examples, train_files, sets, eval_files, fingerprint, weights)


def _state_dir(opts: TrainOptions, fingerprint: dict[str, Any]) -> Path:
    """``OUTPUT/last/``: checked against the fingerprint on ``--resume``, emptied otherwise."""
    state_dir = Path(opts.output) / STATE_DIR
    if opts.resume:
        saved = (
            json.loads((state_dir / FINGERPRINT_FILE).read_text()) if (state_dir / FINGERPRINT_FILE).is_file() else None
        )
        if saved != fingerprint:
            raise ConfigError(
                f"--resume: {state_dir} was written by a run with other options or data; "
                "rerun with the same ones, or without --resume to start over"
            )
    elif state_dir.exists():
        shutil.rmtree(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(state_dir / FINGERPRINT_FILE, fingerprint)
    return state_dir


def _datasets(opts: TrainOptions, data: _Data) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Encoded training rows, and eval rows sorted by length (less padding) whose ``labels`` are
    ``[unit gold label, row index]``: the Trainer computes metrics only with labels, in its
    sampler's order, and the index maps each prediction back to its row."""
    examples, sets = data.examples, data.sets
    feats, _ = encode_pairs(data.tokenizer, [e.passage for e in examples], [e.claim for e in examples], opts.max_length)
    train_ds = [{**f, "labels": e.label} for f, e in zip(feats, examples)]
    eval_feats, _ = encode_pairs(
        data.tokenizer, [p for ev in sets for p in ev.passages], [c for ev in sets for c in ev.claims], opts.max_length
    )
    unit_gold = [ev.labels[u] for ev in sets for u in range(len(ev)) for _ in range(ev.offsets[u], ev.offsets[u + 1])]
    order = sorted(range(len(eval_feats)), key=lambda i: len(eval_feats[i]["input_ids"]))
    return train_ds, [{**eval_feats[i], "labels": [unit_gold[i], i]} for i in order]


def _probs(predictions: Any, label_ids: Any, sets: Sequence[EvalSet]) -> list[Any]:
    """Per eval set, the rows' class probabilities in row order (predictions come in the
    sampler's order; column 1 of the labels is the row index)."""
    import numpy as np
    import torch

    x = torch.softmax(torch.as_tensor(np.asarray(predictions), dtype=torch.float32), dim=-1).numpy().astype(np.float64)
    probs = np.empty_like(x)
    probs[np.asarray(label_ids)[:, 1].astype(int)] = x
    return _split_probs(probs, sets)


def _trainer(
    opts: TrainOptions,
    data: _Data,
    model: Any,
    datasets: tuple[list[Any], list[Any]],
    state_dir: Path,
    callbacks: list[Any],
    progress: bool,
    seen: dict[str, Any],
) -> Any:
    """The ``transformers.Trainer`` of this run: the judge's loss, metrics and schedule."""
    import torch
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    loss_weight = torch.tensor(data.weights, dtype=torch.float32)
    sets = data.sets

    class JudgeTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # noqa: ANN001
            target = inputs.pop("labels")
            target = target[:, 0] if target.dim() == 2 else target  # eval rows carry their index too
            outputs = model(**inputs)
            logits = outputs.logits.float()
            loss = torch.nn.functional.cross_entropy(logits, target, weight=loss_weight.to(logits.device))
            if not torch.isfinite(loss):
                raise TrainingDiverged(
                    f"train-judge: the training loss is {loss.item()} at step {self.state.global_step + 1} "
                    f"(epoch {1 + int(self.state.epoch or 0)}); stopped. Lower --lr, check the base checkpoint's "
                    f"weights for NaN/inf, or train without --bf16"
                )
            return (loss, outputs) if return_outputs else loss

    def compute_metrics(pred: Any) -> dict[str, float]:
        probs = _probs(pred.predictions, pred.label_ids, sets)
        seen["probs"] = probs  # the last evaluation's probabilities, reused when it was the best one
        return _eval_summary([evaluate(p, ev) for p, ev in zip(probs, sets)], sets)

    train_ds, eval_ds = datasets
    # evaluate and checkpoint each epoch, or every share of one (a killed run loses less, and
    # early stopping sees the curve more often)
    steps_per_epoch = math.ceil(len(train_ds) / opts.batch_size)
    strategy = "epoch" if opts.eval_every >= 1 else "steps"
    every = max(1, math.ceil(opts.eval_every * steps_per_epoch)) if strategy == "steps" else None
    args = TrainingArguments(
        output_dir=str(state_dir),
        num_train_epochs=opts.epochs,
        learning_rate=opts.lr,
        per_device_train_batch_size=opts.batch_size,
        per_device_eval_batch_size=opts.eval_batch_size,
        warmup_steps=math.ceil(opts.warmup * opts.epochs * steps_per_epoch),
        weight_decay=opts.weight_decay,
        lr_scheduler_type="linear",
        max_grad_norm=1.0,
        seed=opts.seed,
        data_seed=opts.seed,
        train_sampling_strategy="group_by_length",
        eval_strategy=strategy,
        save_strategy=strategy,
        logging_strategy=strategy,
        eval_steps=every,
        save_steps=every,
        logging_steps=every,
        load_best_model_at_end=True,
        metric_for_best_model="macro_f1",
        greater_is_better=True,
        save_total_limit=2,
        bf16=opts.bf16,
        # the device util.devices.torch_device picks (auto: CUDA when there is a GPU, else the CPU), said to the
        # Trainer: left to itself with no GPU it refuses --bf16 ("doesn't support bf16/gpu") and on MPS/XPU it
        # would pick a device the rest of the engine never uses
        use_cpu=torch_device(opts.device).type == "cpu",
        report_to="none",
        disable_tqdm=not progress,
        dataloader_num_workers=0,
    )
    trainer = JudgeTrainer(
        model=model,
        args=args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        processing_class=data.tokenizer,
        data_collator=DataCollatorWithPadding(data.tokenizer),
        compute_metrics=compute_metrics,
        callbacks=callbacks,
    )
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # without bars it print()s every log dict: stdout is the command's
    return trainer


def _export(
    opts: TrainOptions,
    trainer: Any,
    data: _Data,
    eval_ds: list[Any],
    probs: list[Any] | None,
    say: Callable[[str], None],
    *,
    base_path: str,
    base_layers: int,
    kept: list[int] | None,
) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]:
    """Write the best checkpoint into ``OUTPUT`` (weights, tokenizer, ``conflictscore.json``
    with the calibrated thresholds); returns its eval figures, the calibration and the judge config.
    A LoRA run writes the whole judge (the adapter merged) and, in ``OUTPUT/delta/``, only what
    differs from the base (:mod:`..models.derive`): the LoRA factors and the head."""
    sets = data.sets
    model = trainer.model.float()
    model.eval()
    if probs is None:
        pred = trainer.predict(eval_ds)
        probs = _probs(pred.predictions, pred.label_ids, sets)
    factors = None
    if opts.lora is not None:
        from ..models.derive import lora_factors

        factors = lora_factors(model)
        model = model.merge_and_unload()
    best_eval = {ev.name: evaluate(p, ev) for p, ev in zip(probs, sets)}
    judge_cfg: dict[str, Any] = {"format": CALIBRATION_FORMAT, "max_length": opts.max_length, "claim_room": CLAIM_ROOM}
    calibration = None
    if opts.calibrate:
        cal = calibrate(probs, sets)
        calibration = {
            **dataclasses.asdict(cal),
            "grid": [min(cal.grid), max(cal.grid), len(cal.grid)],
            "eval": {ev.name: evaluate(p, ev, cal.thresholds) for p, ev in zip(probs, sets)},
        }
        if cal.thresholds is not None:
            judge_cfg["thresholds"] = cal.thresholds
        say(
            f"calibration ({cal.objective}): argmax {cal.score if cal.thresholds is None else cal.argmax_score:.4f} -> "
            + (f"{cal.score:.4f} with {cal.thresholds}" if cal.thresholds else "no threshold pair beats argmax")
        )
    out_dir = Path(opts.output)
    if opts.fp16_save:
        model.half()
    model.config.id2label, model.config.label2id = dict(ID2LABEL), dict(LABEL2ID)
    model.save_pretrained(out_dir)
    data.tokenizer.model_max_length = opts.max_length  # the judge's window defaults to it
    data.tokenizer.save_pretrained(out_dir)
    write_json_atomic(out_dir / CALIBRATION_FILE, judge_cfg)
    if factors is not None:
        _write_delta(opts, out_dir, model, factors, base_path, base_layers, kept)
    return best_eval, calibration, judge_cfg


DELTA_DIR = "delta"


def _write_delta(
    opts: TrainOptions,
    out_dir: Path,
    model: Any,
    factors: Mapping[str, Any],
    base_path: str,
    base_layers: int,
    kept: list[int] | None,
) -> None:
    """``OUTPUT/delta/``: what a LoRA judge adds to its base, with the judge's small files beside it."""
    from ..backends.modelstore.lock import sha256_file
    from ..models.derive import ASSEMBLED_WEIGHTS, write_delta
    from .model import MPNET_MANIFEST, head_modules

    heads = tuple(f"{m}." for m in head_modules(model))
    full = {k: v for k, v in model.state_dict().items() if k.startswith(heads)}
    delta = out_dir / DELTA_DIR
    base = MPNET_MANIFEST if opts.base == "mpnet" else opts.base
    write_delta(
        delta,
        base=base,
        base_sha256=sha256_file(Path(base_path) / ASSEMBLED_WEIGHTS),
        base_layers=base_layers,
        kept=kept if kept is not None else list(range(base_layers)),
        factors=factors,
        full=full,
    )
    for f in sorted(out_dir.iterdir()):
        if f.is_file() and f.name != "model.safetensors":
            shutil.copyfile(f, delta / f.name)


def train(
    opts: TrainOptions,
    *,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
    on_epoch_end: Callable[[int, dict[str, Any]], None] | None = None,
    log_progress: bool = False,
) -> dict[str, Any]:
    """Run a training job end to end and return its ``training.json`` record.

    Before any work, ``OUTPUT`` is checked (:func:`check_output_folder`; not a training or eval
    file). Every evaluation leaves a Trainer checkpoint (model, optimizer, scheduler, RNG state) in
    ``OUTPUT/last/``, so ``resume=True`` continues from the last one and ends with the same
    weights as an uninterrupted run. The best evaluation by mean eval pair macro-F1 is exported
    to ``OUTPUT``; ``last/`` is removed at the end unless ``keep_state``. Progress lines go
    to ``log`` (default: this module's logger). ``progress``: the Trainer's bars (a terminal);
    ``log_progress``: instead, a log line of steps, rate and ETA every ``$CONFLICTSCORE_PROGRESS_S``
    seconds (no terminal: a log file, CI).
    """
    job = Job(
        [*(Input(p, "the --train file") for p in opts.train), *(Input(p, "the --eval file") for p in opts.eval)],
        [
            Output(
                opts.output,
                "-o",
                kind="dir",
                check=lambda d: check_output_folder(d, resume=opts.resume),
                hint="choose a new or empty folder",
            )
        ],
    )
    with job:
        return _train(opts, progress=progress, log=log, on_epoch_end=on_epoch_end, log_progress=log_progress)


def _train(
    opts: TrainOptions,
    *,
    progress: bool,
    log: Callable[[str], None] | None,
    on_epoch_end: Callable[[int, dict[str, Any]], None] | None,
    log_progress: bool = False,
) -> dict[str, Any]:
    """The body of :func:`train`, once its job holds the output folder."""
    import torch
    from transformers import EarlyStoppingCallback

    from ..util.environment import versions

    say = log or logger.info
    t_start = time.perf_counter()
    if opts.resume and not any((Path(opts.output) / STATE_DIR).glob("checkpoint-*")):
        raise ConfigError(f"--resume: no saved epoch in {Path(opts.output) / STATE_DIR}; run without --resume to start")
    threads = opts.threads or len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    base_path = resolve_base(opts.base)
    data = _load_data(opts, base_path)
    labels = [e.label for e in data.examples]
    say(
        f"train-judge: {len(data.examples)} training pairs {label_counts(labels)}, {len(data.sets)} eval sets "
        f"({sum(len(ev) for ev in data.sets)} units, {sum(len(ev.passages) for ev in data.sets)} passages), "
        f"{threads} threads"
    )
    if opts.bf16 and torch_device(opts.device).type == "cpu":
        native, why = native_cpu_bf16()
        if not native:  # a warning, not a note: shown under -q too (log is the channel for notes)
            logger.warning(f"train-judge: --bf16: {why}; drop --bf16 to train faster (docs/training.md, 'How fast')")
    state_dir = _state_dir(opts, data.fingerprint)

    random.seed(opts.seed)
    torch.manual_seed(opts.seed)
    model, head = load_classifier(base_path)
    base_layers = model.config.num_hidden_layers
    kept = cut_layers(model, opts.layers) if opts.layers is not None else None
    if opts.int8_embeddings:
        pack_word_embeddings(model)
    frozen = freeze_word_embeddings(model) if opts.freeze_embeddings or opts.int8_embeddings else 0
    if opts.lora is not None:
        model = add_lora(model, opts.lora)
        frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    datasets = _datasets(opts, data)
    seen: dict[str, Any] = {}
    callbacks = _Callbacks(say, on_epoch_end, opts.stop_after, log_progress=log_progress and not progress)
    trainer = _trainer(
        opts,
        data,
        model,
        datasets,
        state_dir,
        [EarlyStoppingCallback(early_stopping_patience=opts.patience), callbacks.callback],
        progress,
        seen,
    )
    if opts.resume:
        say(f"train-judge: resuming from {state_dir}")
    result = trainer.train(resume_from_checkpoint=True if opts.resume else None)
    history = [h["conflictscore_epoch"] for h in trainer.state.log_history if "conflictscore_epoch" in h]
    best_epoch = max(history, key=lambda h: (h["eval"]["macro_f1"], -h["epoch"]))["epoch"]
    last_is_best = best_epoch == history[-1]["epoch"] and "probs" in seen
    best_eval, calibration, judge_cfg = _export(
        opts,
        trainer,
        data,
        datasets[1],
        seen["probs"] if last_is_best else None,
        say,
        base_path=base_path,
        base_layers=base_layers,
        kept=kept,
    )
    train_s = sum(h["train_s"] for h in history)
    record = {
        "base": {
            "arg": opts.base,
            "path": portable(base_path),
            "head": head,
            "frozen_parameters": frozen,
            "trainable_parameters": trainable,
            "layers": base_layers,
            "kept_layers": kept if kept is not None else list(range(base_layers)),
            "lora_rank": opts.lora,
        },
        "options": {
            **dataclasses.asdict(opts),
            "train": [portable(p) for p in opts.train],
            "eval": [portable(p) for p in opts.eval],
            "output": portable(opts.output),
        },
        "seed": opts.seed,
        "device": str(trainer.args.device),
        "threads": threads,
        "trainer": "transformers.Trainer",
        "train_files": data.train_files,
        "eval_files": data.eval_files,
        "train_labels": label_counts(labels),
        "class_weights": dict(zip(LABELS, [round(w, 4) for w in data.weights])),
        "history": history,
        "best_epoch": best_epoch,
        "best": best_eval,
        "calibration": calibration,
        "judge_config": judge_cfg,
        "saved_dtype": "float16" if opts.fp16_save else "float32",
        "train_pairs_per_s": round(trainer.state.global_step * opts.batch_size / train_s, 2) if train_s else None,
        "trainer_metrics": {k: v for k, v in result.metrics.items() if isinstance(v, (int, float))},
        "wall_s": round(time.perf_counter() - t_start, 1),
        "epochs_s": round(sum(h["train_s"] + h["eval_s"] for h in history), 1),
        "versions": versions(),
    }
    record = portable(record)  # no machine path in a committed record (nor in what is returned)
    write_json_atomic(Path(opts.output) / TRAINING_RECORD, record)
    if opts.lora is not None:
        shutil.copyfile(Path(opts.output) / TRAINING_RECORD, Path(opts.output) / DELTA_DIR / TRAINING_RECORD)
    if not opts.keep_state:
        shutil.rmtree(state_dir)
    say(
        f"train-judge: best epoch {best_epoch} (mean eval macro-F1 "
        f"{next(h for h in history if h['epoch'] == best_epoch)['eval']['macro_f1']:.4f}); checkpoint in {opts.output}"
    )
    return record
