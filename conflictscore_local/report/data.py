"""What the HTML report shows, as plain data: the summary, the bench figures, one index row
and one detail record per item.

Inputs are the scored results, optionally the input items (response and document texts:
the scored output holds ids, spans and passage ranges, not text) and optionally the run's
summary (one schema, :mod:`..formats.summary`: a ``bench run``'s carries its ``evaluation`` against the
gold). Whatever the summary lacks is computed from the results with the same functions a run
uses, and the report says so; an evaluation of a bare scored file is the caller's (the
``report`` command has the bench compute it): the report knows no gold of its own.
Pure Python: no template engine, no plotting library.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..core.detection import DETECTION_METRICS, detection_counts
from ..core.errors import InputError
from ..core.labels import decided
from ..core.metrics import METRICS, bootstrap_ci, nothing_scored, pair_counts, shown_keys, summarize_metrics
from ..core.types import CONTRADICT, IRRELEVANT, SUPPORT, ClaimVerdict, DocJudgment, Item, ItemResult
from ..formats.inputs import read_items
from ..formats.results import check_summary_of, read_results
from ..formats.summary import check_summary, is_bench_summary, read_summary
from ..util.jsonl import file_sha256

PAIR_KEYS: tuple[str, ...] = ("total", "judged", "pruned", "cached", "given", "unscored")
LABEL_CODES: dict[str | None, str | None] = {SUPPORT: "S", CONTRADICT: "C", IRRELEVANT: "I", None: None}
PROB_DIGITS = 4
VALUE_DIGITS = 6

log = logging.getLogger(__name__)


@dataclass
class ReportInputs:
    """Everything one report is made from; ``names`` are the file names shown in the header,
    ``paths`` the files as given (error messages name them); ``evaluation``: the scored items measured
    against their gold (a summary's ``evaluation`` section), when the summary has none."""

    results: Sequence[ItemResult]
    items: Mapping[str, Item] | None = None
    summary: Mapping[str, Any] | None = None
    names: Mapping[str, str] = field(default_factory=dict)
    paths: Mapping[str, str] = field(default_factory=dict)
    evaluation: Mapping[str, Any] | None = None


ItemsReader = Callable[[str | os.PathLike[str]], list[Item]]
"""Reads a report's ITEMS file (``read_items``; the ``report`` command hands in the bench's, which checks gold)."""
Evaluator = Callable[[Sequence[Item], Sequence[ItemResult]], Mapping[str, Any] | None]
"""Measures the scored items against their gold: an ``evaluation`` section, or None when they carry none."""


def load_inputs(
    scored: str | os.PathLike[str],
    *,
    items: str | os.PathLike[str] | None = None,
    summary: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    read: ItemsReader = read_items,
    evaluate: Evaluator | None = None,
) -> ReportInputs:
    """Read the files of a report: SCORED (score output), ITEMS (its input, read by ``read``), SUMMARY (a
    path or a mapping, in any release's schema); ``evaluate`` measures the items against their gold
    when the summary holds no evaluation."""
    for p in (scored, items):
        if p is not None and not os.path.isfile(p):
            raise InputError("no such file", path=str(p))
    results = read_results(scored)
    paths = {"scored": str(scored)}
    summ: Mapping[str, Any] | None
    if summary is None or isinstance(summary, Mapping):
        summ = check_summary(summary, "summary") if summary is not None else None
    else:
        summ = read_summary(summary)
        paths["summary"] = str(summary)
    if summ is not None:  # the headline numbers come from it: they must be this run's
        check_summary_of(summ, results, summary_path=paths.get("summary", "summary"), scored_path=str(scored))
    by_id: dict[str, Item] | None = None
    if items is not None:
        paths["items"] = str(items)
        by_id = {it.id: it for it in read(items)}
        recorded = (summ or {}).get("bench", {}).get("input_sha256") if summ else None
        if recorded and recorded != file_sha256(items):
            log.warning(
                f"{items} differs from the input the bench run recorded (sha256 {recorded[:12]}…); "
                "texts shown may not be what was judged"
            )
    names = {k: os.path.basename(v) for k, v in paths.items()}
    evaluation = None
    if evaluate is not None and by_id is not None and not (summ or {}).get("evaluation"):
        scored_items = [by_id[r.item_id] for r in results if r.item_id in by_id]
        if scored_items and len(scored_items) == len(results):
            evaluation = evaluate(scored_items, results)
    return ReportInputs(results, by_id, summ, names, paths, evaluation)


# -- summary ---------------------------------------------------------------------------


def _ci_pairs(ci: Mapping[str, Any]) -> dict[str, list[float] | None]:
    return {k: (list(v) if v is not None else None) for k, v in ci.items()}


def summary_section(inputs: ReportInputs) -> dict[str, Any]:
    """The headline numbers: taken from the summary where it has them, else computed from the results."""
    results = inputs.results
    s = dict(inputs.summary or {})
    computed: list[str] = []
    engine = (s.get("config") or {}).get("run", {}).get("engine", {})
    seed, n_resamples = int(engine.get("seed", 0)), int(engine.get("bootstrap", 1000))

    if not s:
        m = summarize_metrics(results, seed=seed, n_resamples=n_resamples)
        n_items, n_claims = m["n_items"], m["n_claims"]
        macro, micro, ci, pairs = m["macro"], m["micro"], _ci_pairs(m["ci95"]), m["pairs"]
        computed = ["all"]
        kind = "results"
    else:
        kind = "bench" if is_bench_summary(s) else "score"
        n_items, n_claims, macro, micro = s["n_items"], s["n_claims"], s["macro"], s["micro"]
        ci = s.get("ci95")  # type: ignore[assignment]  # a summary's ci95: the same mapping, or None (checked below)
        pairs = s.get("pairs")
        if ci is None:
            ci = _ci_pairs(bootstrap_ci([r.metrics for r in results], seed=seed, n_resamples=n_resamples))
            computed.append("ci95")
    if pairs is None:
        pairs = pair_counts(results)
        computed.append("pairs")
    metrics = [
        {
            "key": k,
            "label": m.label,
            "column": m.column,
            "code": m.code,
            "help": m.help,
            "macro": macro.get(k),
            "micro": micro.get(k),
            "ci": ci.get(k),
        }
        for k, m in METRICS.items()
        if not m.optional or k in macro  # the weighted metrics only where documents carry reliability
    ]
    return {
        "kind": kind,
        "n_items": n_items,
        "n_claims": n_claims,
        "metrics": metrics,
        "pairs": [{"key": k, "value": pairs.get(k)} for k in PAIR_KEYS if k in pairs],
        "no_score": nothing_scored(pairs),
        "computed": computed,
        "timing": s.get("timing") or {},
        "config": s.get("config") or {},
        "versions": s.get("versions") or {},
        "stages": s.get("stages") or {},
        "bench_info": s.get("bench") or {},
    }


def bench_section(inputs: ReportInputs) -> dict[str, Any] | None:
    """Detection P/R/F1 per conflict type, the pair confusion matrix: the summary's ``evaluation``, or the
    one computed for the inputs (:attr:`ReportInputs.evaluation`), else None."""
    recorded = (inputs.summary or {}).get("evaluation")
    ev, computed = (recorded, False) if recorded else (inputs.evaluation, True)
    if not ev or "detection" not in ev or "pairs" not in ev:
        return None
    metrics = [{"key": k, "label": m.label, "help": m.help} for k, m in DETECTION_METRICS.items()]
    return {"detection": ev["detection"], "pairs": ev["pairs"], "computed": computed, "metrics": metrics}


# -- items -----------------------------------------------------------------------------


def _round(v: float | None, digits: int = VALUE_DIGITS) -> float | None:
    return None if v is None else round(float(v), digits)


def _locate_spans(verdicts: Sequence[ClaimVerdict], response: str | None) -> list[list[int] | None]:
    """Each claim's span in the response: as recorded, else the claim's exact text found after
    the previous claim (given claims carry no span); None when it is not there."""
    out: list[list[int] | None] = []
    pos = 0
    for v in verdicts:
        span = v.claim.span
        if span is None and response:
            at = response.find(v.claim.text, pos)
            if at < 0:
                at = response.find(v.claim.text)
            span = (at, at + len(v.claim.text)) if at >= 0 else None
        if span is not None:
            if response is not None and not (0 <= span[0] <= span[1] <= len(response)):
                raise InputError(
                    f"item {v.claim.item_id!r}: claim {v.claim.index} has span {list(span)} outside "
                    f"its response of {len(response)} characters: the items file is not this run's input"
                )
            pos = max(pos, span[1])
        out.append(list(span) if span is not None else None)
    return out


def _cell(dj: DocJudgment, gold: str | None) -> dict[str, Any]:
    c: dict[str, Any] = {"l": LABEL_CODES[dj.label], "s": dj.source}
    if dj.probs is not None:
        c["p"] = [_round(dj.probs.get(k), PROB_DIGITS) for k in (SUPPORT, CONTRADICT, IRRELEVANT)]
    if dj.passage is not None:
        c["k"] = dj.passage
    if dj.n_passages != 1:
        c["n"] = dj.n_passages
    if dj.passage_span is not None:
        c["a"] = list(dj.passage_span)
    if dj.similarity is not None:
        c["m"] = _round(dj.similarity, PROB_DIGITS)
    if dj.note:
        c["t"] = dj.note
    if dj.both:
        c["b"] = 1
    if dj.decided_by is not None:
        c["d"] = dj.decided_by
    if dj.rule is not None:
        c["r"] = dj.rule
        if (why := decided(dj.probs, dj.rule)) is not None:
            c["w"] = why
    if gold is not None:
        c["g"] = LABEL_CODES[gold]
    return c


def item_records(inputs: ReportInputs) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One index row (what the table sorts and filters on) and one detail record per item."""
    index: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    items = inputs.items
    shown = shown_keys([r.metrics for r in inputs.results])
    for r in inputs.results:
        it = items.get(r.item_id) if items is not None else None
        if items is not None and it is None:
            raise InputError(
                f"no item with id {r.item_id!r} (scored in {inputs.paths.get('scored', 'SCORED')}): "
                "give the input file of this run",
                path=inputs.paths.get("items"),
            )
        if it is not None:
            doc_ids = [d.id for d in it.documents]
        else:
            doc_ids = list(dict.fromkeys(j.doc_id for v in r.verdicts for j in v.judgments))
        col = {d: n for n, d in enumerate(doc_ids)}
        gold = it.meta.get("gold_labels") if it is not None else None
        n_claims = r.claims_total if r.claims_total is not None else len(r.verdicts)
        if gold is not None and len(gold) != n_claims:
            raise InputError(
                f"item {r.item_id!r}: {n_claims} claims but gold_labels has {len(gold)} "
                "rows: the scored file is not from these bench items",
                path=inputs.paths.get("items"),
            )
        gold_conf = it.meta.get("gold_conflicted") if it is not None else None
        cells: list[list[dict[str, Any] | None]] = []
        for i, v in enumerate(r.verdicts):
            row: list[dict[str, Any] | None] = [None] * len(doc_ids)
            for dj in v.judgments:
                if dj.doc_id not in col:
                    raise InputError(
                        f"item {r.item_id!r}: claim {i} is judged against document {dj.doc_id!r}, "
                        f"which the item does not have (documents: {', '.join(doc_ids)})",
                        path=inputs.paths.get("items"),
                    )
                n = col[dj.doc_id]
                row[n] = _cell(dj, gold[v.claim.index][n] if gold is not None else None)
            cells.append(row)
        response = it.response if it is not None else None
        spans = _locate_spans(r.verdicts, response)
        claims = []
        for i, v in enumerate(r.verdicts):
            c: dict[str, Any] = {"x": v.claim.text, "a": spans[i], "k": int(v.conflicted)}
            if r.claims_total is not None:
                c["n"] = v.claim.index + 1  # its number among all the item's claims (a sampled run)
            if v.ratio is not None:
                c["r"] = _round(v.ratio)
            if gold_conf is not None:
                c["g"] = int(bool(gold_conf[v.claim.index]))
            if v.weighted:
                c["wk"] = int(bool(v.weighted_conflicted))
                if v.weighted_ratio is not None:
                    c["wr"] = _round(v.weighted_ratio)
            claims.append(c)
        row_ix: dict[str, Any] = {
            "id": r.item_id,
            "nc": r.metrics.n_claims,
            **{METRICS[k].code: _round(r.metrics.get(k)) for k in shown},
            "nk": sum(v.conflicted for v in r.verdicts),
            "nu": sum(j.label is None for v in r.verdicts for j in v.judgments),
        }
        if r.claims_total is not None:
            row_ix["nt"] = r.claims_total
        if gold_conf is not None:
            counts = detection_counts((bool(gold_conf[v.claim.index]), v.conflicted) for v in r.verdicts)
            row_ix.update(
                tp=counts["tp"],
                fp=counts["fp"],
                fn=counts["fn"],
                ty=it.meta.get("conflict_type"),  # type: ignore[union-attr]  # it is None only without gold
                so=it.meta.get("source"),  # type: ignore[union-attr]  # (as above)
            )
        index.append(row_ix)
        detail: dict[str, Any] = {"docs": doc_ids, "claims": claims, "cells": cells}
        weights = {j.doc_id: j.weight for v in r.verdicts for j in v.judgments if j.weight is not None}
        if weights:
            detail["dw"] = [weights.get(d) for d in doc_ids]
        if it is not None:
            detail["r"] = it.response
            detail["dt"] = [d.text for d in it.documents]
            if it.question:
                detail["q"] = it.question
        details.append(detail)
    return index, details
