"""``conflictscore view DIR``: one page listing every run found under a folder, and a way to compare two.

A run is a scored file (the ``-o`` JSONL of ``score`` or ``bench run``), a summary (``--summary``
of either), or both: a summary and a scored file in the same folder go together when their names
share a stem (``x.scored.jsonl``, ``x.summary.json``, ``x.jsonl``, ``x.json``) and describe as many
items; an HTML report of the same stem (``x.report.html``, ``x.html``) is linked. Each row shows
when the run started and finished (as its summary records them; a run without them, its newest
file's modification time, marked so), the input, the judge, the items and macro CS-C, CS-R and support
rate with their 95% intervals (from the summary, else computed from the scored file; "no score" for a
run none of whose judgments got a label). Every column sorts and filters.

The page is self-contained and offline like the report. Statically, choosing two runs shows the
exact ``conflictscore compare`` command that makes their comparison page (with ``--items`` when both
read the same input file and it is under the folder, so the page shows responses and documents); under
``--serve`` (:func:`serve`, on 127.0.0.1 only) the same choice opens that page, made on request and never
written to disk.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from .._version import __version__
from ..core.errors import ConflictScoreError, InputError
from ..jobs import Input, Job, Output, write_text_atomic
from ..core.metrics import METRICS, nothing_scored, summarize_metrics
from ..formats.results import check_result_row, read_results
from ..formats.summary import check_summary, is_bench_summary
from ..formats.run_info import judge_info
from .runs import report_beside, stem

log = logging.getLogger(__name__)

SHOWN = ("cs_c", "cs_r", "support_rate")
"""The metrics a row shows, macro with its interval."""


@dataclass
class RunEntry:
    """One run found under the folder: its files (relative to it), what its summary says."""

    key: str
    folder: str
    scored: str | None = None
    summary: str | None = None
    report: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {"key": self.key, "scored": self.scored, "summary": self.summary, "report": self.report, **self.data}


def _files(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for n in sorted(names):
            if not n.startswith(".") and ".partial" not in n:
                yield Path(folder) / n


def _first_row(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    return json.loads(line)
    except (OSError, ValueError):
        return None
    return None


def _summary(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return check_summary(data, str(path))  # in this release's schema
    except (OSError, ValueError, InputError):
        return None


def find_runs(root: str | os.PathLike[str]) -> list[RunEntry]:
    """Every run under ``root``, newest first (see the module docstring for what makes one)."""
    base = Path(root)
    if not base.is_dir():
        raise InputError("not a folder", path=str(root))
    scored: dict[tuple[str, str], list[Path]] = {}
    summaries: dict[tuple[str, str], list[Path]] = {}
    reports: dict[tuple[str, str], Path] = {}
    for p in _files(base):
        rel_folder = str(p.parent.relative_to(base))
        key = (rel_folder, stem(p.name))
        if p.suffix == ".jsonl":
            row = _first_row(p)
            try:
                check_result_row(row)
            except InputError:
                continue
            scored.setdefault(key, []).append(p)
        elif p.suffix == ".json" and _summary(p) is not None:
            summaries.setdefault(key, []).append(p)
        elif p.suffix == ".html" and key not in reports:
            reports[key] = p
    runs: list[RunEntry] = []
    for key in sorted(set(scored) | set(summaries)):
        files = scored.get(key, [None])  # type: ignore[list-item]
        sums = summaries.get(key, [None])  # type: ignore[list-item]
        for i in range(max(len(files), len(sums))):
            f = files[i] if i < len(files) else None
            s = sums[i] if i < len(sums) else None
            runs.append(_entry(base, key, f, s, reports.get(key) if i == 0 else None))
    runs.sort(key=lambda r: r.data["date"], reverse=True)
    return runs


def _rel(base: Path, p: Path | None) -> str | None:
    return p.relative_to(base).as_posix() if p is not None else None


def _entry(base: Path, key: tuple[str, str], scored: Path | None, summary: Path | None, report: Path | None) -> RunEntry:
    data: dict[str, Any] = {}
    s = _summary(summary) if summary is not None else None
    results = None
    if scored is not None and (s is None or "ci95" not in s):
        try:
            results = read_results(scored)
        except ConflictScoreError as e:
            log.warning(f"view: {scored} is left out: {e}")
            scored, results = None, None
    if s is not None:
        body, n_items = s, s["n_items"]  # read in this release's schema (an earlier bench file renamed)
        if results is not None and len(results) != n_items:
            log.warning(f"view: {summary} describes {n_items} items but {scored} holds {len(results)}: listed apart")
        macro, ci = body["macro"], (body.get("ci95") or {})
        if not ci and results is not None:
            ci = {k: list(v) if v else None for k, v in summarize_metrics(results)["ci95"].items()}  # type: ignore[union-attr]
        stages = s.get("stages") or {}
        data.update(kind="bench run" if is_bench_summary(s) else "score", n_items=n_items,
                    input=(stages.get("input") or {}).get("file")
                    or (os.path.basename(str(s["bench"].get("input"))) if is_bench_summary(s) else None),
                    judge=judge_info(s.get("config")), started=s.get("started"), finished=s.get("finished"),
                    no_score=nothing_scored(s.get("pairs")))
    else:
        m = summarize_metrics(results or [])
        macro, ci = m["macro"], {k: list(v) if v else None for k, v in m["ci95"].items()}  # type: ignore[union-attr]
        data.update(kind="scored file", n_items=m["n_items"], input=None, judge=None, started=None, finished=None,
                    no_score=nothing_scored(m["pairs"]))  # type: ignore[arg-type]
    data["metrics"] = {k: {"label": METRICS[k].label, "macro": macro.get(k), "ci95": ci.get(k)} for k in SHOWN}
    if data["started"]:
        data.update(date=data["started"], dated_by="summary")
    else:  # an earlier release's summary, or a scored file alone: when its files last changed
        newest = max(p.stat().st_mtime for p in (scored, summary) if p is not None)
        data.update(date=datetime.datetime.fromtimestamp(newest, datetime.timezone.utc).isoformat(timespec="seconds"),
                    dated_by="file time")
    data["input_file"] = _input_file(base, key[0], data["input"])
    name = key[1] if key[0] == "." else f"{key[0]}/{key[1]}"
    return RunEntry(name, key[0], _rel(base, scored), _rel(base, summary), _rel(base, report), data)


def _input_file(base: Path, folder: str, name: str | None) -> str | None:
    """The run's input file, relative to ``base``, when its summary names one found beside the run or at the top
    of the folder (a summary records its input's name, not where it was)."""
    if not name or os.path.basename(name) != name:
        return None
    for where in dict.fromkeys((base / folder, base)):
        if (where / name).is_file():
            return _rel(base, where / name)
    return None


def compare_command(a: Mapping[str, Any], b: Mapping[str, Any], *, where: str = ".") -> str:
    """The exact ``conflictscore compare`` command for two run records (paths relative to ``where``)."""
    def path(p: str) -> str:
        return shlex.quote(os.path.normpath(os.path.join(where, p)))

    words = ["conflictscore", "compare", path(a["scored"]), path(b["scored"])]
    for side, run in (("a", a), ("b", b)):
        if run.get("summary"):
            words += [f"--summary-{side}", path(run["summary"])]
    if a.get("input_file") and a.get("input_file") == b.get("input_file"):
        words += ["--items", path(a["input_file"])]  # the page then shows responses and documents
    words += ["--label-a", shlex.quote(a["key"]), "--label-b", shlex.quote(b["key"]), "--report",
              shlex.quote(f"compare.{a['key']}.{b['key']}.html".replace("/", "_"))]
    return " ".join(words)


def render_view(root: str | os.PathLike[str], *, page_dir: str | os.PathLike[str] | None = None,
                serve: bool = False) -> str:
    """The index page of the runs under ``root``; links are relative to ``page_dir`` (the page's folder)."""
    from markupsafe import Markup

    from .render import _environment, _static

    runs = [r.record() for r in find_runs(root)]
    where = os.path.relpath(root, page_dir) if page_dir is not None else "."
    for r in runs:
        r["links"] = {k: Path(os.path.normpath(os.path.join(where, r[k]))).as_posix() for k in ("scored", "summary", "report")
                      if r.get(k)}
    return _environment().get_template("view.html.j2").render(
        title=f"ConflictScore runs: {Path(root).resolve().name}", runs=runs, version=__version__, metric_keys=SHOWN,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        meta={"serve": serve, "where": where, "runs": runs}, root=str(root),
        css=Markup(_static("report.css") + "\n" + _static("view.css")), js=Markup(_static("view.js")))


def write_view(root: str | os.PathLike[str], output: str | os.PathLike[str]) -> int:
    """Write the index page of ``root``'s runs to ``output`` atomically; returns how many runs it lists."""
    job = Job([Input(root, "DIR", kind="dir")], [Output(output, "-o")])
    with job:
        page = render_view(root, page_dir=os.path.dirname(os.path.abspath(output)))
        write_text_atomic(output, page, what="-o")
    return page.count('class="run-row"')


def serve(root: str | os.PathLike[str], *, port: int = 0, host: str = "127.0.0.1") -> Any:
    """An HTTP server (not yet serving: call ``serve_forever``) on ``host`` only: ``/`` the index
    (found again on every load), ``/compare?a=KEY&b=KEY`` the comparison page of two listed runs
    (made in memory), any other path a file under ``root``."""
    import http.server
    import urllib.parse

    from ..compare.files import compare_files
    from ..formats.inputs import read_items
    from .compare import render_compare

    base = Path(root).resolve()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, directory=str(base), **kw)

        def log_message(self, format: str, *args: Any) -> None:
            log.info("view: " + format % args)

        def _page(self, status: int, html: str) -> None:
            body = html.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            if url.path in ("/", "/index.html"):
                return self._page(200, render_view(base, page_dir=base, serve=True))
            if url.path == "/compare":
                q = urllib.parse.parse_qs(url.query)
                runs = {r.key: r for r in find_runs(base)}
                a, b = (runs.get((q.get(k) or [""])[0]) for k in ("a", "b"))
                if a is None or b is None or a.scored is None or b.scored is None:
                    return self._page(404, "<!doctype html><title>not found</title><p>no such pair of scored runs")
                same = a.data.get("input_file") if a.data.get("input_file") == b.data.get("input_file") else None
                try:
                    done = compare_files(base / a.scored, base / b.scored, None, labels=(a.key, b.key),
                                         summary_a=base / a.summary if a.summary else None,
                                         summary_b=base / b.summary if b.summary else None,
                                         items=base / same if same else None)
                    items = {it.id: it for it in read_items(base / same)} if same else None
                    return self._page(200, render_compare(done.result, done.a.results, done.b.results, items=items))
                except ConflictScoreError as e:
                    return self._page(400, f"<!doctype html><title>cannot compare</title><p>{_escape(str(e))}")
            return super().do_GET()

    return http.server.ThreadingHTTPServer((host, port), Handler)


def _escape(text: str) -> str:
    import html

    return html.escape(text)


__all__ = ["RunEntry", "compare_command", "find_runs", "render_view", "report_beside", "serve", "stem", "write_view"]
