"""The HTML report: one self-contained page per run (summary, plots, every item).

``conflictscore report SCORED.jsonl --items INPUT.jsonl --summary SUMMARY.json -o report.html``,
``conflictscore score ... --report report.html`` and ``conflictscore bench run ... --report``
write it (the commands do: the runners hand them what they made). It reads rows and one summary
and imports no runner and no bench. Jinja2 and matplotlib are imported only while a report is rendered.
"""

from __future__ import annotations

from .data import ReportInputs, load_inputs
from .render import render_html, report_from_files, write_report

__all__ = ["ReportInputs", "load_inputs", "render_html", "report_from_files", "write_report"]
