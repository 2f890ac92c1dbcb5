"""``bench run``: score ConflictBench items through the normal engine and measure detection."""

from __future__ import annotations

import dataclasses
import datetime
import os
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..config import RunConfig
from ..engine import Engine
from ..errors import ConfigError, InputError
from ..inputs import parse_label_matrix, read_items
from ..jsonl import file_sha256
from ..paths import portable
from ..shards.split import Shard, shard_record
from ..types import CONTRADICT, IRRELEVANT, LABELS, SUPPORT, Item, ItemResult, Report
from ..writing import write_json_atomic, write_jsonl_atomic
from .items import CONFLICT_TYPES
from .metrics import grouped_detection, pair_metrics
from .split import SPLITS

DETECTION_GROUPS: tuple[str, ...] = ("conflict_type", "source", "variant", "split")


def _item_lines(path: str | os.PathLike[str]) -> list[int]:
    """The line number of each item, in the order ``read_items`` returns them (blank lines skipped)."""
    with open(path, encoding="utf-8") as fh:
        return [n for n, raw in enumerate(fh, 1) if raw.strip()]


def _check_gold(item: Item, path: str, line: int) -> Item:
    """The item with its gold fields validated and its gold labels in canonical spelling."""

    def err(field: str, msg: str) -> InputError:
        return InputError(f"item {item.id!r}: {msg}", path=path, line=line, field=field)

    m = item.meta
    if item.labels is not None:
        raise err("labels", "a ConflictBench item must not carry 'labels' (they would skip judging); "
                            "use --given-labels to score the gold labels")
    if item.claims is None:
        raise err("claims", "missing (ConflictBench items give their claims)")
    if "gold_labels" not in m:
        raise err("gold_labels", "missing (claims × documents gold labels)")
    gold = parse_label_matrix(m["gold_labels"], len(item.claims), len(item.documents), "gold_labels", err)
    conf = m.get("gold_conflicted")
    derived = [SUPPORT in row and CONTRADICT in row for row in gold]
    if conf != derived:
        raise err("gold_conflicted", f"{conf!r} disagrees with gold_labels, which give {derived!r}")
    if m.get("conflict_type") not in CONFLICT_TYPES:
        raise err("conflict_type", f"{m.get('conflict_type')!r}; allowed: {', '.join(CONFLICT_TYPES)}")
    if m.get("split") not in SPLITS:
        raise err("split", f"{m.get('split')!r}; allowed: {', '.join(SPLITS)}")
    if not isinstance(m.get("source"), str):
        raise err("source", "missing (the name of the source data set)")
    return dataclasses.replace(item, meta={**m, "gold_labels": [list(row) for row in gold]})


def load_bench_items(
    path: str | os.PathLike[str],
    *,
    split: str | None = None,
    limit: int | None = None,
    source_filter: Sequence[str] | None = None,
) -> list[Item]:
    """Read and validate ConflictBench items; keep ``split`` and ``source_filter``, then the first ``limit``."""
    p = str(path)
    items = [_check_gold(it, p, line) for it, line in zip(read_items(p), _item_lines(p))]
    if split is not None:
        items = [it for it in items if it.meta["split"] == split]
    if source_filter:
        items = [it for it in items if it.meta["source"] in source_filter]
    if limit is not None:
        items = items[:limit]
    return items


def with_gold_labels(items: Iterable[Item]) -> list[Item]:
    """The items with their gold labels given as ``labels``: scoring them checks the aggregation."""
    return [
        dataclasses.replace(it, labels=tuple(tuple(row) for row in it.meta["gold_labels"]))  # type: ignore[misc]
        for it in items
    ]


def evaluate(items: Sequence[Item], results: Sequence[ItemResult]) -> dict[str, Any]:
    """Pair metrics, grouped detection metrics, unscored and pruning counts of scored items."""
    pairs: list[tuple[str, str | None]] = []
    rows: list[dict[str, Any]] = []
    pruned = {"pairs": 0, **{lab: 0 for lab in LABELS}}
    claims_unscored = 0
    for it, res in zip(items, results):
        if res.item_id != it.id:
            raise ValueError(f"result {res.item_id!r} does not belong to item {it.id!r}")
        doc_index = {d.id: j for j, d in enumerate(it.documents)}
        m = it.meta
        for i, v in enumerate(res.verdicts):
            gold_row = m["gold_labels"][i]
            for dj in v.judgments:
                gold = gold_row[doc_index[dj.doc_id]]
                pairs.append((gold, dj.label))
                if dj.source == "pruned":
                    pruned["pairs"] += 1
                    pruned[gold] += 1
            claims_unscored += bool(v.unscored)
            rows.append({
                "gold": bool(m["gold_conflicted"][i]), "pred": v.conflicted, "conflict_type": m["conflict_type"],
                "source": m["source"], "split": m["split"],
                "variant": f"{m['source']}/{m['variant'].split(':')[-1]}" if m.get("variant") else None,
            })
    pm = pair_metrics(pairs)
    return {
        "pairs": pm,
        "detection": grouped_detection(rows, DETECTION_GROUPS),
        "unscored": {"pairs": pm["unscored"], "claims_with_unscored_documents": claims_unscored},
        "pruning": {
            "pairs_pruned": pruned["pairs"],
            "gold_support_pruned": pruned[SUPPORT],
            "gold_contradict_pruned": pruned[CONTRADICT],
            "gold_irrelevant_pruned": pruned[IRRELEVANT],
        },
    }


def run_bench(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    config: RunConfig | None = None,
    split: str | None = None,
    limit: int | None = None,
    source_filter: Sequence[str] | None = None,
    given_labels: bool = False,
    predictions_path: str | os.PathLike[str] | None = None,
    report_path: str | os.PathLike[str] | None = None,
    progress: bool = False,
    shard: Shard | None = None,
) -> dict[str, Any]:
    """Score a ConflictBench file with the engine and write the results JSON atomically.

    Claims are given, so nothing is decomposed; judgments go through the judgment cache,
    so an interrupted run resumes by rerunning it. Paths in the results are written
    repository-relative (:func:`~conflictscore_local.paths.portable`). ``given_labels`` scores the gold labels
    instead of judging (a check of the aggregation: detection F1 must be 1.0).
    ``report_path`` also writes the HTML report, gold labels beside the predictions.
    ``shard`` scores only that shard of the selected items (after split, source filter and
    limit); it needs ``predictions_path``, which ``conflictscore merge`` combines.
    """
    t0 = time.perf_counter()
    if shard is not None and predictions_path is None:
        raise ConfigError(f"--shard {shard} needs --predictions: `conflictscore merge` combines the shards' "
                          "per-item results with their results JSON")
    items = load_bench_items(input_path, split=split, limit=limit, source_filter=source_filter)
    selected = len(items)
    if shard is not None:
        items = shard.select(items)
    if not items:
        why = f" / --shard {shard} (use fewer shards)" if shard is not None and selected else ""
        raise InputError(f"no item left after --split / --source-filter / --limit{why}", path=str(input_path))
    scored = with_gold_labels(items) if given_labels else items
    with Engine(config if config is not None else RunConfig(), progress=progress) as engine:
        results = list(engine.score(scored))
        report = engine.summarize(results, timing={"total_s": round(time.perf_counter() - t0, 4)})
    record = None
    if shard is not None:
        record = shard_record(shard, input_sha256=file_sha256(input_path), input_items=selected, items=len(items))
    out = bench_results(items, results, report, input_path=input_path, split=split, limit=limit,
                        source_filter=source_filter, given_labels=given_labels, shard=record)
    write_json_atomic(output_path, out)
    if predictions_path is not None:
        write_jsonl_atomic(predictions_path, (r.to_json() for r in results))
    if report_path is not None:
        from ..report import ReportInputs, write_report

        paths = {"items": str(input_path), "summary": str(output_path)}
        if predictions_path is not None:
            paths["scored"] = str(predictions_path)
        names = {k: Path(v).name for k, v in paths.items()}
        write_report(report_path, ReportInputs(results, {it.id: it for it in items}, out, names, paths),
                     title=f"ConflictBench report: {Path(input_path).name}")
    return out


def bench_results(
    items: Sequence[Item],
    results: Sequence[ItemResult],
    report: Report,
    *,
    input_path: str | os.PathLike[str],
    split: str | None,
    limit: int | None,
    source_filter: Sequence[str] | None,
    given_labels: bool,
    shard: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The results JSON of scored ConflictBench items (``bench run``'s, and ``merge``'s for
    bench shards), with no machine paths in it."""
    bench: dict[str, Any] = {
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "input": str(Path(input_path).resolve()),
        "input_sha256": file_sha256(input_path),
        "split": split,
        "limit": limit,
        "source_filter": list(source_filter) if source_filter else None,
        "given_labels": given_labels,
        "n_items": len(items),
        "n_claims": report.n_claims,
    }
    if shard is not None:
        bench["shard"] = dict(shard)
    out = {
        "bench": bench,
        **evaluate(items, results),
        "engine_pairs": dict(report.pairs),
        "conflictscore": {"macro": dict(report.macro), "micro": dict(report.micro)},
        "timing": dict(report.timing),
        "config": dict(report.config),
        "versions": dict(report.versions),
        "stages": dict(report.stages),
    }
    return portable(out)  # results get committed and compared across machines: no machine paths


def format_results(res: dict[str, Any]) -> str:
    """A short text table of a run's results for the terminal."""

    def f(v: Any) -> str:
        return "   -  " if v is None else f"{v:6.3f}"

    b, pm, det = res["bench"], res["pairs"], res["detection"]
    judge = res["config"].get("run", {}).get("judge", {}).get("name", "?")
    lines = [
        f"ConflictBench  items {b['n_items']}  claims {b['n_claims']}  split {b['split'] or 'all'}  "
        f"judge {'gold labels' if b['given_labels'] else judge}",
        f"pairs  accuracy {f(pm['accuracy'])} (coverage {f(pm['coverage'])}, unscored as wrong "
        f"{f(pm['accuracy_all'])})  macro-F1 {f(pm['macro_f1'])}  unscored {pm['unscored']}  "
        f"pruned {res['pruning']['pairs_pruned']} (gold SUPPORT {res['pruning']['gold_support_pruned']}, "
        f"CONTRADICT {res['pruning']['gold_contradict_pruned']})",
        f"{'detection':28}{'P':>7}{'R':>7}{'F1':>7}{'FPR':>7}{'claims':>8}{'gold+':>7}",
    ]
    groups = [("overall", det["overall"])]
    groups += [(f"type {k}", v) for k, v in det["by_conflict_type"].items()]
    groups += [(f"source {k}", v) for k, v in det["by_source"].items()]
    for name, m in groups:
        lines.append(f"{name:28}{f(m['precision']):>7}{f(m['recall']):>7}{f(m['f1']):>7}"
                     f"{f(m['false_positive_rate']):>7}{m['n_claims']:>8}{m['n_gold_conflicted']:>7}")
    return "\n".join(lines)
