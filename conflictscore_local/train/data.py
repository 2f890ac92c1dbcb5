"""Training and evaluation files: plain pairs and ConflictBench items, read into what the loop needs.

A line of a training or eval file is a plain pair ``{"claim", "passage", "label"}`` or a
ConflictBench item (``bench build`` output, or an evaluation split written by
``train-judge prepare``). Items are expanded with the judge's own passage splitting: for
training, one passage per claim × document (:func:`expand_item`); for evaluation, every
passage, so a unit (claim × document) is judged as a run judges it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..core.chunk import Chunker
from ..core.errors import InputError
from ..core.types import CONTRADICT, LABELS, SUPPORT, Document, Item, Label, normalize_label
from ..formats.inputs import parse_item, parse_label_matrix
from ..util.jsonl import file_sha256, iter_jsonl
from .pairs import content_words

ID2LABEL: dict[int, Label] = dict(enumerate(LABELS))
LABEL2ID: dict[str, int] = {lab: i for i, lab in ID2LABEL.items()}


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

    name: str = ""
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
        raise err(None, 'expected a JSON object: a pair {"claim", "passage", "label"} or a ConflictBench item')
    if "gold_labels" in obj:
        return _parse_bench(obj, err, path=path, line=line)
    missing = [k for k in ("claim", "passage", "label") if k not in obj]
    if missing:
        raise err(
            missing[0],
            'missing: a pair needs "claim", "passage" and "label" '
            '(a ConflictBench item needs "claims", "documents" and "gold_labels")',
        )
    for k in ("claim", "passage"):
        if not isinstance(obj[k], str) or not obj[k].strip():
            raise err(k, "expected a non-empty string")
    try:
        label = normalize_label(obj["label"])
    except ValueError as e:
        raise err("label", str(e)) from None
    return Example(obj["claim"], obj["passage"], LABEL2ID[label])


def _parse_bench(
    obj: dict[str, Any], err: Callable[[str | None, str], InputError], *, path: str, line: int
) -> BenchRecord:
    item = parse_item(obj, path=path, line=line)
    if item.claims is None:
        raise err("claims", "missing: a ConflictBench item needs its claims")
    gold = parse_label_matrix(obj["gold_labels"], len(item.claims), len(item.documents), "gold_labels", err)
    derived = tuple(SUPPORT in r and CONTRADICT in r for r in gold)
    conflicted = obj.get("gold_conflicted", list(derived))
    if (
        not isinstance(conflicted, list)
        or len(conflicted) != len(gold)
        or not all(isinstance(c, bool) for c in conflicted)
    ):
        raise err("gold_conflicted", f"expected {len(gold)} booleans (one per claim)")
    split = obj.get("split")
    if split is not None and not isinstance(split, str):
        raise err("split", "expected a string")
    return BenchRecord(item, gold, tuple(conflicted), split)


def iter_records(path: str) -> Iterator[tuple[int, Example | BenchRecord]]:
    """(line number, record) for every non-blank line of a JSONL file."""
    for n, obj in iter_jsonl(path):
        yield n, parse_record(obj, path=path, line=n)


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
    cw = content_words(claim)
    return max(candidates, key=lambda i: (len(cw & content_words(passages[i])), -i))


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


def label_counts(labels: Sequence[int]) -> dict[str, int]:
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
                    path=path,
                    line=line,
                    field="split",
                )
            got, s = expand_item(rec, chunker)
            examples.extend(got)
            n_items += 1
            skipped += s
        if len(examples) == start:
            raise InputError("no training pairs in this file", path=path)
        records.append(
            {
                "path": path,
                "sha256": file_sha256(path),
                "pairs_given": n_pairs,
                "bench_items": n_items,
                "examples": len(examples) - start,
                "passages_left_out": skipped,
                "labels": label_counts([e.label for e in examples[start:]]),
            }
        )
    return examples, records


def read_eval_set(path: str, chunker: Chunker) -> tuple[EvalSet, dict[str, Any]]:
    """The eval units of a file: every passage of every document is judged, as in a run."""
    ev = EvalSet(name=Path(path).stem)
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
        "path": path,
        "sha256": file_sha256(path),
        "pairs_given": n_pairs,
        "bench_items": n_items,
        "units": len(ev),
        "passages": len(ev.passages),
        "claims_with_conflict_gold": len(ev.conflicted),
        "labels": label_counts(ev.labels),
    }
    return ev, record
