"""What the HTML report shows, as plain data: the summary, the bench figures, one index row
and one detail record per item.

Inputs are the scored results, optionally the input items (response and document texts:
the scored output holds ids, spans and passage ranges, not text) and optionally the run's
summary (a ``score`` summary or a ``bench run`` results file). Whatever the summary lacks
is computed from the results with the same functions a run uses, and the report says so.
Pure Python: no template engine, no plotting library.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..bench.metrics import detection_counts
from ..errors import InputError
from ..inputs import read_items
from ..jsonl import file_sha256
from ..metrics import METRICS, bootstrap_ci, pair_counts, shown_keys, summarize_metrics
from ..results import check_summary, check_summary_of, is_bench_results, load_summary, read_results
from ..types import CONTRADICT, IRRELEVANT, SUPPORT, ClaimVerdict, DocJudgment, Item, ItemResult

PAIR_KEYS: tuple[str, ...] = ("total", "judged", "pruned", "cached", "given", "unscored")
LABEL_CODES: dict[str | None, str | None] = {SUPPORT: "S", CONTRADICT: "C", IRRELEVANT: "I", None: None}
PROB_DIGITS = 4
VALUE_DIGITS = 6

log = logging.getLogger(__name__)


@dataclass
class ReportInputs:
    """Everything one report is made from; ``names`` are the file names shown in the header,
    ``paths`` the files as given (error messages name them)."""

    results: Sequence[ItemResult]
    items: Mapping[str, Item] | None = None
    summary: Mapping[str, Any] | None = None
    names: Mapping[str, str] = field(default_factory=dict)
    paths: Mapping[str, str] = field(default_factory=dict)


def load_items(path: str | os.PathLike[str]) -> list[Item]:
    """Input items for a report; ConflictBench items (with ``gold_labels``) get their gold checked."""
    items = read_items(path)
    if any("gold_labels" in it.meta for it in items):
        from ..bench.gold import load_bench_items

        items = load_bench_items(path)
    return items


def load_inputs(
    scored: str | os.PathLike[str],
    *,
    items: str | os.PathLike[str] | None = None,
    summary: str | os.PathLike[str] | Mapping[str, Any] | None = None,
) -> ReportInputs:
    """Read the files of a report: SCORED (score output), ITEMS (its input), SUMMARY (a path or a mapping)."""
    for p in (scored, items):
        if p is not None and not os.path.isfile(p):
            raise InputError("no such file", path=str(p))
    results = read_results(scored)
    paths = {"scored": str(scored)}
    summ: Mapping[str, Any] | None
    if summary is None or isinstance(summary, Mapping):
        summ = summary
        if summ is not None:
            check_summary(summ, "summary")
    else:
        summ = load_summary(summary)
        paths["summary"] = str(summary)
    if summ is not None:  # the headline numbers come from it: they must be this run's
        check_summary_of(summ, results, summary_path=paths.get("summary", "summary"), scored_path=str(scored))
    by_id: dict[str, Item] | None = None
    if items is not None:
        paths["items"] = str(items)
        by_id = {it.id: it for it in load_items(items)}
        recorded = (summ or {}).get("bench", {}).get("input_sha256") if summ else None
        if recorded and recorded != file_sha256(items):
            log.warning(f"{items} differs from the input the bench run recorded (sha256 {recorded[:12]}…); "
                 "texts shown may not be what was judged")
    names = {k: os.path.basename(v) for k, v in paths.items()}
    return ReportInputs(results, by_id, summ, names, paths)


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
        macro, micro, ci, pairs = m["macro"], m["micro"], _ci_pairs(m["ci95"]), m["pairs"]  # type: ignore[arg-type]
        computed = ["all"]
        kind = "results"
    elif is_bench_results(s):
        kind = "bench"
        n_items, n_claims = s["bench"]["n_items"], s["bench"]["n_claims"]
        macro, micro = s["conflictscore"]["macro"], s["conflictscore"]["micro"]
        pairs = s.get("engine_pairs")
        ci = _ci_pairs(bootstrap_ci([r.metrics for r in results], seed=seed, n_resamples=n_resamples))
        computed.append("ci95")
    else:
        kind = "score"
        n_items, n_claims, macro, micro = s["n_items"], s["n_claims"], s["macro"], s["micro"]
        ci = s.get("ci95")
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
        "computed": computed,
        "timing": s.get("timing") or {},
        "config": s.get("config") or {},
        "versions": s.get("versions") or {},
        "stages": s.get("stages") or {},
        "bench_info": s.get("bench") or {},
    }


def bench_section(inputs: ReportInputs) -> dict[str, Any] | None:
    """Detection P/R/F1 per conflict type, the pair confusion matrix: from a bench results file, or
    computed with ``bench run``'s own ``evaluate`` when every scored item has gold labels."""
    s = inputs.summary
    if s is not None and is_bench_results(s):
        return {"detection": s["detection"], "pairs": s["pairs"], "computed": False}
    if inputs.items is None:
        return None
    golds = [inputs.items[r.item_id] for r in inputs.results if r.item_id in inputs.items]
    if not golds or len(golds) != len(inputs.results) or not all("gold_labels" in it.meta for it in golds):
        return None
    from ..bench.gold import evaluate

    ev = evaluate(golds, inputs.results)
    return {"detection": ev["detection"], "pairs": ev["pairs"], "computed": True}


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
                raise InputError(f"item {v.claim.item_id!r}: claim {v.claim.index} has span {list(span)} outside "
                                 f"its response of {len(response)} characters: the items file is not this run's input")
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
            raise InputError(f"no item with id {r.item_id!r} (scored in {inputs.paths.get('scored', 'SCORED')}): "
                             "give the input file of this run", path=inputs.paths.get("items"))
        if it is not None:
            doc_ids = [d.id for d in it.documents]
        else:
            doc_ids = list(dict.fromkeys(j.doc_id for v in r.verdicts for j in v.judgments))
        col = {d: n for n, d in enumerate(doc_ids)}
        gold = it.meta.get("gold_labels") if it is not None else None
        n_claims = r.claims_total if r.claims_total is not None else len(r.verdicts)
        if gold is not None and len(gold) != n_claims:
            raise InputError(f"item {r.item_id!r}: {n_claims} claims but gold_labels has {len(gold)} "
                             "rows: the scored file is not from these bench items", path=inputs.paths.get("items"))
        gold_conf = it.meta.get("gold_conflicted") if it is not None else None
        cells: list[list[dict[str, Any] | None]] = []
        for i, v in enumerate(r.verdicts):
            row: list[dict[str, Any] | None] = [None] * len(doc_ids)
            for dj in v.judgments:
                if dj.doc_id not in col:
                    raise InputError(f"item {r.item_id!r}: claim {i} is judged against document {dj.doc_id!r}, "
                                     f"which the item does not have (documents: {', '.join(doc_ids)})",
                                     path=inputs.paths.get("items"))
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
            row_ix.update(tp=counts["tp"], fp=counts["fp"], fn=counts["fn"],
                          ty=it.meta.get("conflict_type"), so=it.meta.get("source"))  # type: ignore[union-attr]
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
