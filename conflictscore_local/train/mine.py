"""Hard-example mining for a judge's second stage (``conflictscore train-judge mine``).

FactCG trains its document stage on the examples a first-stage model gets wrong. ``mine`` judges every
plain pair of the given files with a checkpoint (the ``nli`` judge's own input encoding, arg-max of its
probabilities, float32) and writes the pairs it gets wrong, a seeded share of those it gets right (so that
what the model knows is rehearsed, not forgotten), and optionally a seeded sample of replay pairs (the first
stage's own data) — one plain-pair JSONL file that ``train-judge fit --train`` reads, beside a record of the
error rate per source, kind and label.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..core.errors import ConfigError, InputError
from ..core.types import LABELS, normalize_label
from ..jobs import write_json_atomic, write_jsonl_atomic
from ..util.jsonl import file_sha256, iter_jsonl
from ..util.paths import portable

RECORD_SUFFIX = ".mine.json"


@dataclass(frozen=True)
class MineOptions:
    """What decides a mining run (the flags of ``train-judge mine``)."""

    model: str
    pairs: tuple[str, ...]
    output: str
    keep_correct: float = 0.25
    replay: tuple[str, ...] = ()
    replay_pairs: int = 0
    max_length: int | None = None
    batch_size: int = 64
    seed: int = 0
    threads: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.keep_correct <= 1:
            raise ConfigError(f"--keep-correct {self.keep_correct}: a share, between 0 and 1")
        if self.replay_pairs < 0:
            raise ConfigError(f"--replay-pairs {self.replay_pairs}: must be >= 0")
        if self.replay_pairs and not self.replay:
            raise ConfigError("--replay-pairs needs --replay FILE (the pairs to sample from)")
        if self.batch_size < 1:
            raise ConfigError(f"--batch-size {self.batch_size}: must be >= 1")
        if not self.output.endswith(".jsonl"):
            raise ConfigError(f"-o {self.output}: the mined pairs are JSONL; name a .jsonl file")


def _read_pairs(paths: Sequence[str]) -> list[dict[str, Any]]:
    """Every plain pair of the files, as given (``claim``, ``passage``, ``label``, and ``source``/``kind``
    when present); a ConflictBench item or a bad pair is an error naming file, line and field."""
    out: list[dict[str, Any]] = []
    for path in paths:
        n_before = len(out)
        for line, obj in iter_jsonl(path):
            if not isinstance(obj, dict) or "gold_labels" in obj:
                raise InputError(
                    'expected a plain pair {"claim", "passage", "label"}: mining reads pairs, not '
                    "ConflictBench items (give those to fit directly)",
                    path=path,
                    line=line,
                )
            for k in ("claim", "passage"):
                if not isinstance(obj.get(k), str) or not obj[k].strip():
                    raise InputError("expected a non-empty string", path=path, line=line, field=k)
            try:
                label = normalize_label(obj.get("label"))
            except ValueError as e:
                raise InputError(str(e), path=path, line=line, field="label") from None
            out.append(
                {
                    "claim": obj["claim"],
                    "passage": obj["passage"],
                    "label": label,
                    "source": obj.get("source", Path(path).stem),
                    "kind": obj.get("kind", "pair"),
                }
            )
        if len(out) == n_before:
            raise InputError("no pairs in this file", path=path)
    return out


def record_path(output: str | Path) -> Path:
    """Where the record of mined pairs ``output`` lies: ``NAME.mine.json`` beside ``NAME.jsonl``."""
    return Path(str(output).removesuffix(".jsonl") + RECORD_SUFFIX)


def _window(model_dir: Path) -> int:
    """The checkpoint's judge window (its ``conflictscore.json``), else its tokenizer's limit."""
    from ..judge.nli import CALIBRATION_FILE

    cfg = model_dir / CALIBRATION_FILE
    if cfg.is_file():
        return int(json.loads(cfg.read_text(encoding="utf-8"))["max_length"])
    raise ConfigError(f"{model_dir}: no {CALIBRATION_FILE} (not a train-judge fit output); give --max-length")


def predict(
    model_dir: str,
    pairs: Sequence[dict[str, Any]],
    *,
    max_length: int | None = None,
    batch_size: int = 64,
    threads: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[str]:
    """The checkpoint's arg-max label of each pair (float32, the ``nli`` judge's encoding)."""
    import os

    import torch
    from transformers import AutoTokenizer

    from ..judge.nli import encode_pairs
    from .data import ID2LABEL
    from .model import load_classifier

    torch.set_num_threads(threads or len(os.sched_getaffinity(0)))
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    window = max_length or _window(Path(model_dir))
    model, _ = load_classifier(model_dir)
    model.eval()
    feats, _ = encode_pairs(tokenizer, [p["passage"] for p in pairs], [p["claim"] for p in pairs], window)
    order = sorted(range(len(feats)), key=lambda i: len(feats[i]["input_ids"]))
    preds: list[str] = [""] * len(feats)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            batch = tokenizer.pad([feats[i] for i in idx], return_tensors="pt")
            logits = model(**batch).logits
            for i, k in zip(idx, logits.argmax(dim=-1).tolist()):
                preds[i] = ID2LABEL[k]
            if progress is not None:
                progress(len(idx))
    return preds


def mine(opts: MineOptions, *, bar: Callable[[int], Any] | None = None) -> dict[str, Any]:
    """Write the mined pairs to ``opts.output`` and their record beside it (``NAME.mine.json``); return the
    record. ``bar(total)``: a progress bar (:func:`..util.progress.bar`) for the pairs judged."""
    t0 = time.perf_counter()
    pairs = _read_pairs(opts.pairs)
    progress = bar(len(pairs)) if bar is not None else None
    try:
        preds = predict(
            opts.model,
            pairs,
            max_length=opts.max_length,
            batch_size=opts.batch_size,
            threads=opts.threads,
            progress=progress.update if progress is not None else None,
        )
    finally:
        if progress is not None:
            progress.close()
    rng = random.Random(opts.seed)
    wrong = [p for p, y in zip(pairs, preds) if y != p["label"]]
    right = [p for p, y in zip(pairs, preds) if y == p["label"]]
    kept_right = rng.sample(right, round(opts.keep_correct * len(right)))
    replay: list[dict[str, Any]] = []
    if opts.replay_pairs:
        pool = _read_pairs(opts.replay)
        replay = [
            {**p, "kind": f"replay:{p['kind']}"}
            for p in (pool if len(pool) <= opts.replay_pairs else rng.sample(pool, opts.replay_pairs))
        ]
    out = [*({**p, "kind": f"hard:{p['kind']}"} for p in wrong), *kept_right, *replay]
    rng.shuffle(out)
    write_jsonl_atomic(Path(opts.output), out)

    errors: dict[str, Counter[str]] = {}
    totals: dict[str, Counter[str]] = {}
    for p, y in zip(pairs, preds):
        key = f"{p['source']} ({p['kind']})"
        totals.setdefault(key, Counter())[p["label"]] += 1
        if y != p["label"]:
            errors.setdefault(key, Counter())[p["label"]] += 1
    confusion = Counter(f"{p['label']}->{y}" for p, y in zip(pairs, preds))
    record = {
        "model": portable(opts.model),
        "options": {
            "keep_correct": opts.keep_correct,
            "replay_pairs": opts.replay_pairs,
            "seed": opts.seed,
            "max_length": opts.max_length,
            "batch_size": opts.batch_size,
        },
        "inputs": [{"path": portable(p), "sha256": file_sha256(p)} for p in opts.pairs],
        "replay": [{"path": portable(p), "sha256": file_sha256(p)} for p in opts.replay],
        "pairs": len(pairs),
        "wrong": len(wrong),
        "error_rate": round(len(wrong) / len(pairs), 4),
        "confusion": {f"{g}->{y}": confusion[f"{g}->{y}"] for g in LABELS for y in LABELS},
        "by_source": {
            k: {
                "pairs": sum(totals[k].values()),
                "wrong": sum(errors.get(k, Counter()).values()),
                "error_rate": round(sum(errors.get(k, Counter()).values()) / sum(totals[k].values()), 4),
            }
            for k in sorted(totals)
        },
        "written": {
            "hard": len(wrong),
            "correct_kept": len(kept_right),
            "replay": len(replay),
            "all": len(out),
            "labels": dict(Counter(p["label"] for p in out)),
        },
        "output": {"path": Path(opts.output).name, "sha256": file_sha256(opts.output)},
        "wall_s": round(time.perf_counter() - t0, 1),
    }
    write_json_atomic(record_path(opts.output), record)
    return record


__all__ = ["MineOptions", "mine", "predict", "record_path"]
