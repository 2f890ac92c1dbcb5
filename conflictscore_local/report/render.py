"""Render the report: Jinja2 template, inline CSS and JavaScript, embedded plots and data.

The page needs nothing but itself: styles, script, plots (SVG data URIs) and data are in
the file. The summary, tables and plots are plain HTML, so they paint before any script
runs. Per-item records travel as gzip-compressed JSON in base64 (decompressed by the
browser's ``DecompressionStream``): at 10,000 ConflictBench items they are 3.3× smaller
than plain JSON, base64 included (``benchmarks/speed/report_scale.py``).
The index the item table sorts and filters on stays plain JSON, so the table is ready as
soon as it is parsed and the details follow.
"""

from __future__ import annotations

import base64
import datetime
import gzip
import json
import os
from importlib import resources
from typing import Any, Mapping

from .._version import __version__
from ..formats.inputs import read_items
from ..formats.run_info import judge_info
from ..jobs import Input, Job, Output, scrub, write_text_atomic
from ..util.extras import requires
from .data import Evaluator, ItemsReader, ReportInputs, bench_section, item_records, load_inputs, summary_section
from .plots import MISSING_MATPLOTLIB, make_plots, matplotlib_available

PAGE_SIZE = 50


def _environment() -> Any:
    jinja2 = requires("jinja2", "the HTML report", package="Jinja2")
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("conflictscore_local.report", "templates"),
        autoescape=jinja2.select_autoescape(default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.policies["json.dumps_kwargs"] = {"separators": (",", ":"), "ensure_ascii": False, "sort_keys": False}
    env.filters["num"] = _num
    return env


def _num(v: Any, digits: int = 3) -> str:
    """A metric for display: fixed decimals, an en dash for an undefined value."""
    if v is None:
        return "–"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    return f"{v:,}" if isinstance(v, int) else f"{v:.{digits}f}"


def _static(name: str) -> str:
    return resources.files("conflictscore_local.report").joinpath("static", name).read_text(encoding="utf-8")


def pack_details(details: list[dict[str, Any]]) -> str:
    """Per-item records as base64 of gzip-compressed compact JSON (``mtime=0``: same data, same bytes)."""
    raw = json.dumps(details, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def render_html(inputs: ReportInputs, *, title: str | None = None) -> str:
    """The report page for ``inputs`` as one self-contained HTML string."""
    from markupsafe import Markup

    env = _environment()
    # what the program wrote of its own passes the redaction point (a summary's config holds what backends
    # resolved); the user's items and their results are shown as they are (their notes were redacted as made)
    summary, bench = scrub([summary_section(inputs), bench_section(inputs)])
    index, details = item_records(inputs)
    have_plots = matplotlib_available()
    plots = make_plots(index, bench) if have_plots else []
    names = dict(inputs.names)
    page = env.get_template("report.html.j2").render(
        title=title or f"ConflictScore report: {names.get('scored', 'results')}",
        names=names,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        version=__version__,
        summary=summary,
        config_json=json.dumps(summary["config"], indent=2, ensure_ascii=False) if summary["config"] else "",
        stages_json=json.dumps(summary["stages"], indent=2, ensure_ascii=False) if summary["stages"] else "",
        bench=bench,
        plots=plots,
        plots_missing=None if have_plots else MISSING_MATPLOTLIB,
        index=index,
        details_packed=pack_details(details),
        meta={
            "page_size": PAGE_SIZE,
            "has_items": inputs.items is not None,
            "has_gold": any("tp" in r for r in index),
            "metrics": [{"key": m["key"], "code": m["code"]} for m in summary["metrics"]],
            "csv": csv_meta(inputs),
        },
        judge=judge_info(summary["config"]),
        css=Markup(_static("report.css")),
        js=Markup(_static("common.js") + "\n" + _static("report.js")),
    )
    return page


INDEX_KEYS = {"id": "id", "n_claims": "nc", "claims_total": "nt", "n_conflicted": "nk", "n_unscored": "nu"}
"""The item index's key of each non-metric column of :func:`~conflictscore_local.formats.table.item_columns`."""


def csv_meta(inputs: ReportInputs) -> dict[str, Any]:
    """What the page's "download CSV" buttons write: file names, and each column of the item table
    (:mod:`conflictscore_local.formats.table`'s names) with the index key it reads; the pair columns."""
    from ..core.metrics import METRICS
    from ..formats.table import PAIR_COLUMNS, item_columns

    stem = os.path.splitext(inputs.names.get("scored") or inputs.names.get("items") or "results")[0]
    columns = [[c, METRICS[c].code if c in METRICS else INDEX_KEYS[c]] for c in item_columns(inputs.results)]
    return {
        "items": f"{stem}.items.csv",
        "pairs": f"{stem}.pairs.csv",
        "columns": columns,
        "pair_columns": list(PAIR_COLUMNS),
    }


def write_report(path: str | os.PathLike[str], inputs: ReportInputs, *, title: str | None = None) -> int:
    """Render ``inputs`` and write the page atomically to ``path``; returns its size in bytes."""
    page = render_html(inputs, title=title)
    return write_text_atomic(path, page, what="report", verbatim=True)  # its config redacted by render_html


def report_from_files(
    scored: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    items: str | os.PathLike[str] | None = None,
    summary: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    title: str | None = None,
    read: ItemsReader = read_items,
    evaluate: Evaluator | None = None,
) -> int:
    """Write the report of a scored file (the ``-o`` output of ``score`` or ``bench run``).

    ``items`` is the run's input (response and document texts; ConflictBench items add gold
    labels), read by ``read``; ``summary`` the run's summary, as a path or a mapping; ``evaluate``
    measures the items against their gold where the summary has no evaluation (see
    :func:`~.data.load_inputs`). Returns the page's size in bytes.
    """
    given = None if summary is None or isinstance(summary, Mapping) else summary
    job = Job(
        [Input(scored, "SCORED (the scored file)"), Input(items, "--items"), Input(given, "--summary")],
        [Output(output, "-o")],
    )
    with job:
        inputs = load_inputs(scored, items=items, summary=summary, read=read, evaluate=evaluate)
        return write_report(output, inputs, title=title)
