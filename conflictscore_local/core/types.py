"""The data model: one frozen dataclass per thing that flows through the pipeline.

items → claims → passages → pairs → judgments → per-claim verdicts → metrics → summary.
Everything here is plain Python and imports nothing from the package (the leaf every other
module builds on). ``to_json`` writes the output format and ``from_json`` reads it back, beside
it; an item's metrics are never read back but recomputed from its verdicts, by the function
the reader hands ``ItemResult.from_json`` (see :mod:`conflictscore_local.formats.results`).
"""

from __future__ import annotations

import math
import warnings as _warnings
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Iterator, Literal, Mapping, Sequence

Label = Literal["SUPPORT", "CONTRADICT", "IRRELEVANT"]
SUPPORT: Label = "SUPPORT"
CONTRADICT: Label = "CONTRADICT"
IRRELEVANT: Label = "IRRELEVANT"
LABELS: tuple[Label, ...] = (SUPPORT, CONTRADICT, IRRELEVANT)

Provenance = Literal["judge", "pruned", "given", "cache"]
PROVENANCES: tuple[Provenance, ...] = ("judge", "pruned", "given", "cache")


def normalize_label(value: object) -> Label:
    """Map ``support`` / ``Support`` / ``SUPPORT`` to the canonical label; ``ValueError`` otherwise."""
    if isinstance(value, str):
        up = value.strip().upper()
        if up in LABELS:
            return up
    raise ValueError(f"unknown label {value!r}; allowed: {', '.join(LABELS)} (any case)")


@dataclass(frozen=True)
class Document:
    """A grounding document; any extra input fields are kept in ``meta``.

    ``reliability`` (0–1, optional) weighs the document in the weighted metrics
    (``cs_c_weighted``, ``cs_r_weighted``); the standard metrics never read it.
    """

    id: str
    text: str
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    reliability: float | None = None


@dataclass(frozen=True)
class Item:
    """One response to score against its documents.

    ``claims`` given → decomposition is skipped; ``labels`` given (needs claims) →
    judging is skipped: ``labels[i][j]`` is claim i against ``documents[j]``.
    """

    id: str
    response: str
    documents: tuple[Document, ...]
    question: str | None = None
    claims: tuple[str, ...] | None = None
    labels: tuple[tuple[Label, ...], ...] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Claim:
    """An atomic claim of an item's response; ``span`` is its character range in the response."""

    item_id: str
    index: int
    text: str
    span: tuple[int, int] | None = None


@dataclass(frozen=True)
class Passage:
    """A window of a document small enough for the judge; ``span`` is its character range."""

    item_id: str
    doc_id: str
    index: int
    text: str
    span: tuple[int, int] | None = None


@dataclass(frozen=True)
class Pair:
    """A claim against one passage; ``similarity`` is set by the pruner."""

    claim: Claim
    passage: Passage
    similarity: float | None = None


@dataclass(frozen=True)
class Judgment:
    """The label of one pair. ``label is None`` means unscored, with the reason in ``note``.

    ``decided_by`` names the judge of a cascade that gave the label (``"first"``,
    ``"second"``; None for a judge that is not a cascade); ``rule`` the rule that turned the
    probabilities into the label (``thresholds S>=0.45 C>=0.30``, ``argmax``, ``reply text``:
    :func:`~.labels.rule_text`; None for a label no judge decided).
    """

    pair: Pair
    label: Label | None
    probs: Mapping[str, float] | None = None
    source: Provenance = "judge"
    note: str | None = None
    decided_by: str | None = None
    rule: str | None = None

    @property
    def scored(self) -> bool:
        return self.label is not None

    def prob(self, label: Label) -> float:
        """Probability of ``label``: from ``probs`` when known, else 1.0 for the chosen label."""
        if self.probs is not None and label in self.probs:
            return float(self.probs[label])
        return 1.0 if self.label == label else 0.0


@dataclass(frozen=True)
class DocJudgment:
    """The label of a claim against a whole document, decided from its passages' judgments.

    ``passage`` is the index of the passage that decided the label (None for a one-passage
    document) and ``passage_span`` its character range in the document, so a reader of the
    output (the HTML report) can show the deciding text without re-chunking; ``n_passages``
    how many passages were looked at; ``both`` marks a document that supports and
    contradicts the claim and is counted on both sides. ``weight`` is the document's
    reliability when the item gives any (else None); ``decided_by`` the cascade judge whose
    passage judgment decided the label; ``rule`` the rule that judgment's label came from
    (which part of it gave the label: :func:`~.labels.decided` of ``probs`` and ``rule``).
    """

    doc_id: str
    label: Label | None
    probs: Mapping[str, float] | None
    source: Provenance
    passage: int | None = None
    n_passages: int = 1
    similarity: float | None = None
    note: str | None = None
    both: bool = False
    passage_span: tuple[int, int] | None = None
    weight: float | None = None
    decided_by: str | None = None
    rule: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "doc_id": self.doc_id,
            "label": self.label,
            "probs": dict(self.probs) if self.probs is not None else None,
            "source": self.source,
        }
        if self.passage is not None:
            out["passage"] = self.passage
        if self.passage_span is not None:
            out["passage_span"] = list(self.passage_span)
        if self.n_passages != 1:
            out["n_passages"] = self.n_passages
        if self.similarity is not None:
            out["similarity"] = round(float(self.similarity), 6)
        if self.note is not None:
            out["note"] = self.note
        if self.both:
            out["both"] = True
        if self.weight is not None:
            out["weight"] = self.weight
        if self.decided_by is not None:
            out["decided_by"] = self.decided_by
        if self.rule is not None:
            out["rule"] = self.rule
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "DocJudgment":
        """The document judgment of its output JSON (inverse of :meth:`to_json`)."""
        span = d.get("passage_span")
        return cls(
            doc_id=d["doc_id"],
            label=d["label"],
            probs=d.get("probs"),
            source=d["source"],
            passage=d.get("passage"),
            n_passages=d.get("n_passages", 1),
            similarity=d.get("similarity"),
            note=d.get("note"),
            both=d.get("both", False),
            passage_span=tuple(span) if span else None,
            weight=d.get("weight"),
            decided_by=d.get("decided_by"),
            rule=d.get("rule"),
        )


@dataclass(frozen=True)
class ClaimVerdict:
    """D+(c), D−(c) and the rest for one claim, with the document judgments behind them.

    ``min_side_weight`` is set when the item's documents carry reliability weights (the
    judgments' ``weight``): the least weight each side needs for ``weighted_conflicted``.
    """

    claim: Claim
    support: tuple[str, ...]
    contradict: tuple[str, ...]
    irrelevant: tuple[str, ...]
    unscored: tuple[str, ...]
    judgments: tuple[DocJudgment, ...]
    min_side_weight: float | None = None

    @property
    def conflicted(self) -> bool:
        """Some document supports the claim and a *different* one contradicts it.

        ConflictBench's gold definition. Only ``aggregate.keep_both`` can put one document in
        both D+ and D−; such a document alone does not make the claim conflicted.
        """
        return any(s != c for s in self.support for c in self.contradict)

    @property
    def evidenced(self) -> bool:
        return bool(self.support) or bool(self.contradict)

    @property
    def ratio(self) -> float | None:
        """|D−| / (|D+| + |D−|), or None when no document takes a side."""
        n = len(self.support) + len(self.contradict)
        return len(self.contradict) / n if n else None

    @property
    def weighted(self) -> bool:
        """Whether the claim's documents carry reliability weights."""
        return self.min_side_weight is not None

    def side_weight(self, doc_ids: Sequence[str]) -> float:
        """Σ w_d over ``doc_ids`` (a document without a weight counts 1.0)."""
        w = {j.doc_id: j.weight for j in self.judgments}
        return math.fsum(1.0 if w.get(d) is None else float(w[d]) for d in doc_ids)  # type: ignore[arg-type]  # w[d] is not None here

    @property
    def weighted_conflicted(self) -> bool | None:
        """Conflicted, and each side carries weight ≥ ``min_side_weight`` (None when unweighted)."""
        if self.min_side_weight is None:
            return None
        m = self.min_side_weight
        return self.conflicted and self.side_weight(self.support) >= m and self.side_weight(self.contradict) >= m

    @property
    def weighted_ratio(self) -> float | None:
        """Σ_{D−} w / (Σ_{D+} w + Σ_{D−} w): None when unweighted or when the sides weigh nothing.

        :attr:`ratio` with each document counted by its weight (a ``both`` document on both
        sides, as there), so with every weight 1 it is :attr:`ratio`."""
        if self.min_side_weight is None:
            return None
        con = self.side_weight(self.contradict)
        total = self.side_weight(self.support) + con
        return con / total if total > 0 else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.claim.text,
            "support": list(self.support),
            "contradict": list(self.contradict),
            "irrelevant": list(self.irrelevant),
            "conflicted": self.conflicted,
            "ratio": self.ratio,
            "judgments": [j.to_json() for j in self.judgments],
        }
        if self.unscored:
            out["unscored"] = list(self.unscored)
        if self.claim.span is not None:
            out["span"] = list(self.claim.span)
        if self.min_side_weight is not None:
            out["min_side_weight"] = self.min_side_weight
        return out

    @classmethod
    def from_json(cls, item_id: str, index: int, d: Mapping[str, Any]) -> "ClaimVerdict":
        """The verdict of claim ``index`` of item ``item_id`` from its output JSON (inverse of :meth:`to_json`)."""
        span = d.get("span")
        return cls(
            claim=Claim(item_id, index, d["text"], tuple(span) if span else None),
            support=tuple(d["support"]),
            contradict=tuple(d["contradict"]),
            irrelevant=tuple(d["irrelevant"]),
            unscored=tuple(d.get("unscored", ())),
            judgments=tuple(DocJudgment.from_json(j) for j in d["judgments"]),
            min_side_weight=d.get("min_side_weight"),
        )


@dataclass(frozen=True)
class ItemMetrics:
    """Per-item metric values, keyed and ordered as the metric table lists them
    (:mod:`conflictscore_local.core.metrics`); None where a value is undefined. ``m.cs_c`` reads
    ``m.values["cs_c"]``."""

    n_claims: int
    values: Mapping[str, float | None] = field(default_factory=dict, hash=False)

    def __getattr__(self, name: str) -> float | None:
        values = self.__dict__.get("values")
        if values is None or name.startswith("__") or name not in values:
            raise AttributeError(f"{type(self).__name__} has no metric {name!r}")
        return values[name]

    def get(self, key: str) -> float | None:
        """The value of metric ``key`` (None when undefined or not computed)."""
        return self.values.get(key)

    def to_json(self) -> dict[str, Any]:
        return {"n_claims": self.n_claims, **self.values}


@dataclass(frozen=True)
class ItemResult:
    """One output line: the verdict of every claim of an item and the item's metrics.

    ``claims_total`` is set when only some claims were scored (``--claims-per-item``): how
    many the item had; each scored claim then records its ``index`` among them.
    """

    item_id: str
    verdicts: tuple[ClaimVerdict, ...]
    metrics: ItemMetrics
    claims_total: int | None = None

    def to_json(self) -> dict[str, Any]:
        claims = [v.to_json() for v in self.verdicts]
        out: dict[str, Any] = {"id": self.item_id, "claims": claims}
        if self.claims_total is not None:
            for v, c in zip(self.verdicts, claims):
                c["index"] = v.claim.index
            out["claims_total"] = self.claims_total
        out["metrics"] = self.metrics.to_json()
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any], metrics: Callable[[Sequence[ClaimVerdict]], ItemMetrics]) -> "ItemResult":
        """One output line read back; ``metrics`` recomputes the item's metrics from its verdicts
        (the file's own numbers are not trusted)."""
        verdicts = tuple(ClaimVerdict.from_json(d["id"], c.get("index", i), c) for i, c in enumerate(d["claims"]))
        return cls(d["id"], verdicts, metrics(verdicts), d.get("claims_total"))


REDUCTIONS: tuple[str, ...] = ("rows", "sum", "first", "cat", "min", "max", "section")
"""How a summary field combines over the shards of one run (torchmetrics' ``dist_reduce_fx``): ``rows``
recomputed from the concatenated rows (metrics, intervals, counts, the evaluation); ``sum`` added leaf by
leaf (seconds, counters); ``first`` the first shard's (what every shard must share: config, versions);
``cat`` every shard's, in order (warnings); ``min`` / ``max`` the least / greatest a shard gives (when the
run started and finished); ``section`` field by field, as the section's own class declares (``stages``:
:class:`Stages`)."""


def _reduced(kind: str, **kw: Any) -> Any:
    """A field that declares how it reduces over shards (one of :data:`REDUCTIONS`: the summary's reducer,
    :func:`conflictscore_local.formats.summary.reductions`, refuses any other, naming the allowed kinds)."""
    return field(metadata={"reduce": kind}, **kw)


@dataclass(frozen=True)
class InputRecord:
    """``stages.input``: what reading the input saw, one shape whether the items came from a file
    (``score``, ``Engine.score_all(path)``) or from Python objects (then ``lines``, ``blank_lines`` and
    ``file`` are None). ``items``: how many the input holds; ``empty_responses``: items with neither a
    response nor claims; ``no_documents``: items with claims to judge and no document; ``shape``: the input
    shape read (``mixed``, with lines per shape in ``shapes``); ``ids_made`` / ``document_ids_made``: ids
    made for items and documents that had none; ``format``: ``jsonl``, or ``json`` for a file holding one
    JSON array (written only then)."""

    items: int = 0
    empty_responses: int = 0
    no_documents: int = 0
    lines: int | None = None
    blank_lines: int | None = None
    file: str | None = None
    shape: str = "conflictscore"
    shapes: Mapping[str, int] | None = None
    ids_made: int = 0
    document_ids_made: int = 0
    format: str = "jsonl"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "lines": self.lines,
            "blank_lines": self.blank_lines,
            "items": self.items,
            "empty_responses": self.empty_responses,
            "no_documents": self.no_documents,
            "file": self.file,
        }
        if self.format != "jsonl":
            out["format"] = self.format
        out["shape"] = self.shape
        if self.shapes:
            out["shapes"] = dict(self.shapes)
        if self.ids_made:
            out["ids_made"] = self.ids_made
        if self.document_ids_made:
            out["document_ids_made"] = self.document_ids_made
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "InputRecord":
        """A record read back (keys it does not know are left out)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(frozen=True, eq=False)
class Stages(Mapping[str, Any]):
    """The summary's ``stages`` section, declared: each entry with how it reduces over shards.

    ``decomposer``, ``pruner``, ``judge``: each backend's counters (its ``stats()``), summed; ``engine``:
    the engine's counters, summed; ``aggregate``: the document rule decided (``document_rule``,
    ``configured``); ``labels``: label counts and, per decision rule, how many labels each part of it gave
    (``rules``), recomputed from the rows; ``input``: what reading the input
    saw (:class:`InputRecord`, the first shard's: each read the whole file); ``resumed_items``: rows a
    ``--resume`` kept, summed; ``shard``: the ``--shard`` record (a merge writes its own); ``other``: entries
    of a plugin's stage or an earlier file, summed. It reads as the JSON object it writes (``stages["judge"]``,
    ``stages.get("input")``: plain dicts, absent entries left out) and is typed by attribute
    (``stages.input.items``)."""

    decomposer: Mapping[str, Any] | None = _reduced("sum", default=None)
    pruner: Mapping[str, Any] | None = _reduced("sum", default=None)
    judge: Mapping[str, Any] | None = _reduced("sum", default=None)
    engine: Mapping[str, Any] = _reduced("sum", default_factory=dict)
    aggregate: Mapping[str, Any] | None = _reduced("sum", default=None)
    labels: Mapping[str, Any] = _reduced("rows", default_factory=dict)
    input: InputRecord | None = _reduced("first", default=None)
    resumed_items: int | None = _reduced("sum", default=None)
    shard: Mapping[str, Any] | None = _reduced("rows", default=None)
    other: Mapping[str, Any] = _reduced("sum", default_factory=dict)

    def _value(self, key: str) -> Any:
        if key == "other" or key not in _STAGE_FIELDS:
            return self.other.get(key)
        value = getattr(self, key)
        if isinstance(value, InputRecord):
            return value.to_json()
        return dict(value) if isinstance(value, Mapping) else value

    def __getitem__(self, key: str) -> Any:
        value = self._value(key)
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        for key in _STAGE_FIELDS:
            if key != "other" and getattr(self, key) is not None:
                yield key
        yield from (k for k in self.other if k not in _STAGE_FIELDS)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def to_json(self) -> dict[str, Any]:
        return {k: self[k] for k in self}

    @classmethod
    def from_json(cls, d: "Mapping[str, Any] | Stages") -> "Stages":
        """The section of a summary read back, or of a mapping a caller made (entries it does not declare go
        to ``other``)."""
        if isinstance(d, Stages):
            return d
        known = {k: v for k, v in d.items() if k in _STAGE_FIELDS and k != "other"}
        if isinstance(known.get("input"), Mapping):
            known["input"] = InputRecord.from_json(known["input"])
        other = {**(d.get("other") or {}), **{k: v for k, v in d.items() if k not in _STAGE_FIELDS}}
        return cls(**known, other=other)

    def __repr__(self) -> str:
        return f"Stages({self.to_json()!r})"


_STAGE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Stages))


@dataclass(frozen=True)
class Summary:
    """The summary of a run (``--summary``): dataset metrics, pair counts, timing and the replayable config.

    ``sampling`` is set when only some claims of each item were scored (``--claims-per-item``):
    the rule, how many claims were scored of how many, the judge pairs not formed and the
    estimator's interval. A ``bench run`` adds ``bench`` (its input, split, filter and selection)
    and ``evaluation`` (pair metrics, detection per group, unscored and pruning counts against the
    gold). ``started`` / ``finished``: when the run began and ended (UTC, ISO 8601 to the second;
    ``conflictscore view`` lists runs by them, not by their files' times). Each field declares how it reduces
    over shards (``metadata["reduce"]``, one of :data:`REDUCTIONS`): ``Summary.reductions()``;
    :mod:`conflictscore_local.formats.summary` builds and merges by it, with one builder (``build_summary``)
    that takes everything a summary holds: nothing is added after.
    """

    n_items: int = _reduced("rows")
    n_claims: int = _reduced("rows")
    macro: Mapping[str, float | None] = _reduced("rows")
    micro: Mapping[str, float | None] = _reduced("rows")
    ci95: Mapping[str, tuple[float, float] | None] = _reduced("rows")
    pairs: Mapping[str, int] = _reduced("rows")
    timing: Mapping[str, float] = _reduced("sum", default_factory=dict)
    config: Mapping[str, Any] = _reduced("first", default_factory=dict)
    versions: Mapping[str, str] = _reduced("first", default_factory=dict)
    stages: Stages = _reduced("section", default_factory=Stages)
    warnings: tuple[str, ...] = _reduced("cat", default=())
    sampling: Mapping[str, Any] | None = _reduced("rows", default=None)
    bench: Mapping[str, Any] | None = _reduced("first", default=None)
    evaluation: Mapping[str, Any] | None = _reduced("rows", default=None)
    started: str | None = _reduced("min", default=None)
    finished: str | None = _reduced("max", default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.stages, Stages):
            object.__setattr__(self, "stages", Stages.from_json(self.stages))

    @classmethod
    def reductions(cls) -> dict[str, str | None]:
        """Field name → how it reduces over shards (see :data:`REDUCTIONS`)."""
        return {f.name: f.metadata.get("reduce") for f in fields(cls)}

    def to_json(self) -> dict[str, Any]:
        out = {
            "n_items": self.n_items,
            "n_claims": self.n_claims,
            "macro": dict(self.macro),
            "micro": dict(self.micro),
            "ci95": {k: (list(v) if v is not None else None) for k, v in self.ci95.items()},
            "pairs": dict(self.pairs),
            "timing": dict(self.timing),
            "config": dict(self.config),
            "versions": dict(self.versions),
            "stages": self.stages.to_json(),
            "warnings": list(self.warnings),
        }
        for key in ("sampling", "bench", "evaluation"):
            value = getattr(self, key)
            if value is not None:
                out[key] = dict(value)
        for key in ("started", "finished"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Summary":
        """A summary read back (as :func:`conflictscore_local.formats.summary.read_summary` checked and, for an
        older ``bench run`` results file, renamed it): ``ci95`` intervals as tuples."""
        ci = d.get("ci95") or {}
        return cls(
            n_items=d["n_items"],
            n_claims=d["n_claims"],
            macro=dict(d["macro"]),
            micro=dict(d["micro"]),
            ci95={k: (tuple(v) if v is not None else None) for k, v in ci.items()},
            pairs=dict(d.get("pairs") or {}),
            timing=dict(d.get("timing") or {}),
            config=dict(d.get("config") or {}),
            versions=dict(d.get("versions") or {}),
            stages=Stages.from_json(d.get("stages") or {}),
            warnings=tuple(d.get("warnings") or ()),
            sampling=d.get("sampling"),
            bench=d.get("bench"),
            evaluation=d.get("evaluation"),
            started=d.get("started"),
            finished=d.get("finished"),
        )


def __getattr__(name: str) -> Any:
    if name == "Report":  # the old name of Summary
        _warnings.warn(
            "Report is deprecated and will be removed in 0.3.0: use Summary (the same class)",
            DeprecationWarning,
            stacklevel=2,
        )
        return Summary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
