"""``conflictscore compare`` as a file job: read two scored runs (and their summaries), compare, write.

One job of the job layer (:mod:`conflictscore_local.jobs`): its inputs (two scored files, two
optional summaries) and outputs (the comparison JSON, and the page the command hands in: the HTML
page of :mod:`conflictscore_local.report.compare`) are declared once, so every destination is checked
against every input and against the other before anything is read, each output is locked while
the job runs and written atomically, and every byte passes the one redaction point.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, Mapping

from ..core.diff import ABSENT, leaf_differences
from ..core.errors import InputError
from ..core.types import ItemResult
from ..formats.results import check_summary_of, result_from_json
from ..formats.run_info import judge_info
from ..formats.summary import read_summary
from ..jobs import Input, Job, Output, Page, page_output, write_json_atomic
from ..util.jsonl import InputStats, iter_jsonl
from .core import ComparisonSettings, compare_results

log = logging.getLogger(__name__)

CONFIG_KEYS: tuple[str, ...] = ("run", "backends")
"""What of a summary's ``config`` the comparison diffs: the run settings and what each backend resolved."""


@dataclass
class Run:
    """One side of a comparison: its scored results, how to name it, and its summary if given."""

    label: str
    path: str
    results: list[ItemResult]
    sha256: str
    summary: Mapping[str, Any] | None = None
    summary_path: str | None = None

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "label": self.label,
            "file": os.path.basename(self.path),
            "sha256": self.sha256,
            "items": len(self.results),
            "claims": sum(len(r.verdicts) for r in self.results),
        }
        if self.summary_path is not None:
            out["summary"] = os.path.basename(self.summary_path)
        if self.summary is not None:
            out["judge"] = judge_info(self.summary.get("config"))
        return out


def read_run(path: str | os.PathLike[str], *, label: str, summary: str | os.PathLike[str] | None = None) -> Run:
    """A scored file (the OUTPUT of ``score`` or ``bench run``, or lines that hold one
    under ``"scored"``, as ``benchmarks/experiments/report_generation.py`` writes them), its items' metrics
    recomputed from the verdicts; every bad line and duplicate id an :class:`InputError`."""
    p = str(path)
    stats = InputStats()
    results: list[ItemResult] = []
    seen: dict[str, int] = {}
    for n, row in iter_jsonl(p, stats):
        body = row["scored"] if isinstance(row, dict) and isinstance(row.get("scored"), dict) else row
        result = result_from_json(body, path=p, line=n)
        if result.item_id in seen:
            raise InputError(
                f"duplicate id {result.item_id!r} (first on line {seen[result.item_id]})", path=p, line=n, field="id"
            )
        seen[result.item_id] = n
        results.append(result)
    summ = None
    if summary is not None:
        summ = read_summary(summary)
        check_summary_of(summ, results, summary_path=str(summary), scored_path=p)
    return Run(label, p, results, stats.sha256, summ, str(summary) if summary is not None else None)


def config_differences(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Where the two runs' recorded configurations differ (run settings, backends and their specs)."""
    if a is None or b is None:
        return []
    ca = {k: (a.get("config") or {}).get(k) for k in CONFIG_KEYS}
    cb = {k: (b.get("config") or {}).get(k) for k in CONFIG_KEYS}
    return [
        {"path": where, "a": None if x is ABSENT else x, "b": None if y is ABSENT else y}
        for where, x, y in leaf_differences(ca, cb)
    ]


@dataclass
class Comparison:
    """What :func:`compare_files` made: the comparison (as written) and the two runs it read."""

    result: dict[str, Any]
    a: Run
    b: Run


def compare_files(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    output: str | os.PathLike[str] | None,
    *,
    summary_a: str | os.PathLike[str] | None = None,
    summary_b: str | os.PathLike[str] | None = None,
    labels: tuple[str, str] = ("A", "B"),
    page: Page[Comparison] | None = None,
    settings: ComparisonSettings | None = None,
    csv_path: str | os.PathLike[str] | None = None,
    items: str | os.PathLike[str] | None = None,
) -> Comparison:
    """Compare run B against run A; write the comparison JSON to ``output`` and one CSV row per item
    to ``csv_path`` (``-``: stdout), each atomically, and call ``page`` (the command's HTML page,
    ``--report``) with the :class:`Comparison` (any may be None: the comparison is returned either
    way). ``items``: the runs' input, declared as an input of the job (the page shows its responses
    and documents).

    Every destination is checked before anything is read: none may be an input or the other
    (as files: another spelling or a link is caught), each writable and not being written by
    another run."""
    job = Job(
        [
            Input(a, "A (the baseline run)"),
            Input(b, "B (the run compared)"),
            Input(summary_a, "--summary-a"),
            Input(summary_b, "--summary-b"),
            Input(items, "--items"),
        ],
        [Output(output, "-o"), page_output(page), Output(csv_path if str(csv_path) != "-" else None, "--csv")],
    )
    with job:
        run_a = read_run(a, label=labels[0], summary=summary_a)
        run_b = read_run(b, label=labels[1], summary=summary_b)
        result = comparison(run_a, run_b, settings)
        if output is not None:
            write_json_atomic(output, result, what="comparison (-o)")
        if csv_path is not None:
            from ..formats.table import write_csv
            from .table import comparison_columns, comparison_records

            write_csv(
                csv_path,
                comparison_records(result, run_a.results, run_b.results),
                comparison_columns(result),
                what="--csv",
            )
        done = Comparison(result, run_a, run_b)
        if page is not None:
            page.write(done)
    return done


def comparison(run_a: Run, run_b: Run, settings: ComparisonSettings | None = None) -> dict[str, Any]:
    """:func:`~.core.compare_results` of two read runs, with what identifies each and how their configs differ."""
    result = compare_results(run_a.results, run_b.results, settings)
    items = result["items"]
    if items["only_a"] or items["only_b"]:
        log.warning(
            f"{items['only_a']} item(s) only in {run_a.label} and {items['only_b']} only in {run_b.label} "
            f"are left out; {items['matched']} items are compared"
        )
    if not items["matched"]:
        log.warning(f"no item id is in both {run_a.path} and {run_b.path}: nothing to compare")
    return {
        "format": result.pop("format"),
        "a": run_a.record(),
        "b": run_b.record(),
        **result,
        "config_differences": config_differences(run_a.summary, run_b.summary),
    }


__all__ = ["Comparison", "Run", "compare_files", "comparison", "config_differences", "read_run"]
