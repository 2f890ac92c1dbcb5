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
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, cast

from .._version import __version__
from ..core.errors import ConflictScoreError, InputError
from ..core.metrics import METRICS, nothing_scored, summarize_metrics
from ..formats.results import check_result_row, read_results
from ..formats.run_info import judge_info
from ..formats.summary import check_summary, is_bench_summary
from ..jobs import Input, Job, Output, write_text_atomic
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
                p = Path(folder) / n
                if p.suffix not in (".jsonl", ".json", ".html"):
                    continue
                try:
                    regular = stat.S_ISREG(p.stat().st_mode)
                except OSError:
                    continue  # a dangling link
                if not regular:  # a FIFO read would wait for a writer forever
                    log.warning(f"view: {p} is left out: not a regular file (a FIFO, a device or a socket)")
                    continue
                yield p


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
                if p.name.endswith(".scored.jsonl"):  # named as a run's scored file: say why it is not listed
                    log.warning(f"view: {p} is left out: its first line is not a scored result (damaged, or not one)")
                continue
            scored.setdefault(key, []).append(p)
        elif p.suffix == ".json" and _summary(p) is not None:
            summaries.setdefault(key, []).append(p)
        elif p.name.endswith(".summary.json"):
            log.warning(f"view: {p} is left out: not a summary this release reads (damaged, or not one)")
        elif p.suffix == ".html" and key not in reports:
            reports[key] = p
    runs: list[RunEntry] = []
    for key in sorted(set(scored) | set(summaries)):
        files = scored.get(key, [None])
        sums = summaries.get(key, [None])
        for i in range(max(len(files), len(sums))):
            f = files[i] if i < len(files) else None
            s = sums[i] if i < len(sums) else None
            runs.append(_entry(base, key, f, s, reports.get(key) if i == 0 else None))
    runs.sort(key=lambda r: r.data["date"], reverse=True)
    return runs


def _rel(base: Path, p: Path | None) -> str | None:
    return p.relative_to(base).as_posix() if p is not None else None


def _entry(
    base: Path, key: tuple[str, str], scored: Path | None, summary: Path | None, report: Path | None
) -> RunEntry:
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
            ci = {k: list(v) if v else None for k, v in summarize_metrics(results)["ci95"].items()}
        stages = s.get("stages") or {}
        data.update(
            kind="bench run" if is_bench_summary(s) else "score",
            n_items=n_items,
            input=(stages.get("input") or {}).get("file")
            or (os.path.basename(str(s["bench"].get("input"))) if is_bench_summary(s) else None),
            judge=judge_info(s.get("config")),
            started=s.get("started"),
            finished=s.get("finished"),
            no_score=nothing_scored(s.get("pairs")),
        )
    else:
        m = summarize_metrics(results or [])
        macro, ci = m["macro"], {k: list(v) if v else None for k, v in m["ci95"].items()}
        data.update(
            kind="scored file",
            n_items=m["n_items"],
            input=None,
            judge=None,
            started=None,
            finished=None,
            no_score=nothing_scored(m["pairs"]),
        )
    data["metrics"] = {k: {"label": METRICS[k].label, "macro": macro.get(k), "ci95": ci.get(k)} for k in SHOWN}
    if data["started"]:
        data.update(date=data["started"], dated_by="summary")
    else:  # an earlier release's summary, or a scored file alone: when its files last changed
        newest = max(p.stat().st_mtime for p in (scored, summary) if p is not None)
        data.update(
            date=datetime.datetime.fromtimestamp(newest, datetime.timezone.utc).isoformat(timespec="seconds"),
            dated_by="file time",
        )
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
    words += [
        "--label-a",
        shlex.quote(a["key"]),
        "--label-b",
        shlex.quote(b["key"]),
        "--report",
        shlex.quote(f"compare.{a['key']}.{b['key']}.html".replace("/", "_")),
    ]
    return " ".join(words)


def render_view(
    root: str | os.PathLike[str],
    *,
    page_dir: str | os.PathLike[str] | None = None,
    serve: bool = False,
    found: list[RunEntry] | None = None,
) -> str:
    """The index page of the runs under ``root`` (``found``: those :func:`find_runs` found, else found now);
    links are relative to ``page_dir`` (the page's folder)."""
    from markupsafe import Markup

    from .render import _environment, _static

    runs = [r.record() for r in (find_runs(root) if found is None else found)]
    where = os.path.relpath(root, page_dir) if page_dir is not None else "."
    for r in runs:
        r["links"] = {
            k: Path(os.path.normpath(os.path.join(where, r[k]))).as_posix()
            for k in ("scored", "summary", "report")
            if r.get(k)
        }
    return (
        _environment()
        .get_template("view.html.j2")
        .render(
            title=f"ConflictScore runs: {Path(root).resolve().name}",
            runs=runs,
            version=__version__,
            metric_keys=SHOWN,
            created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            meta={"serve": serve, "where": where, "runs": runs},
            root=str(root),
            css=Markup(_static("report.css") + "\n" + _static("view.css")),
            js=Markup(_static("view.js")),
        )
    )


def write_view(
    root: str | os.PathLike[str], output: str | os.PathLike[str], *, found: list[RunEntry] | None = None
) -> int:
    """Write the index page of ``root``'s runs (``found``, else found now) to ``output`` atomically; returns
    how many runs it lists. The run files the page lists are inputs: an ``output`` that is one of them is refused."""
    base = Path(root)
    found = find_runs(root) if found is None else found
    listed = [
        Input(base / f, f"a run file it lists ({f})")
        for r in found
        for f in (r.scored, r.summary, r.report)
        if f is not None
    ]
    job = Job(
        [Input(root, "DIR", kind="dir"), *listed],
        [
            Output(
                output,
                "-o",
                replaces=("writing the page there would replace that file"),
                hint="choose another path for the page",
            )
        ],
    )
    with job:
        page = render_view(root, page_dir=os.path.dirname(os.path.abspath(output)), found=found)
        write_text_atomic(output, page, what="-o")
    return page.count('class="run-row"')


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The ``Host`` header values (with or without the server's port) :func:`serve` answers on a loopback address:
a web page the user visits that rebinds its own name to 127.0.0.1 (DNS rebinding) sends its own name, refused."""


def _host_allowed(header: str | None, names: frozenset[str], port: int) -> bool:
    if not header:
        return False
    host = header.strip().lower()
    name, sep, given = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not sep:
        name = host
    elif given != str(port):
        return False
    return name in names


def _regular(path: Path) -> int | None:
    """An open descriptor of ``path`` when it is a regular file (a FIFO or a device is never opened for
    reading, which could wait forever), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def serve(
    root: str | os.PathLike[str], *, port: int = 0, host: str = "127.0.0.1", found: list[RunEntry] | None = None
) -> Any:
    """An HTTP server (not yet serving: call ``serve_forever``) on ``host`` only: ``/`` the index
    (found again on every load), ``/compare?a=KEY&b=KEY`` the comparison page of two listed runs
    (made in memory), ``/PATH`` a run file the index lists (its scored file, summary or report, at its path
    relative to ``root``) when its real path is inside ``root`` (a symbolic link leaving it is not followed);
    every other path is 404 (no folder listing, no other file), a path that is not one is 400. ``found``: the
    runs listed first (else found now).

    Only requests whose ``Host`` is ``127.0.0.1``, ``localhost`` or ``[::1]`` (alone or with the port) are
    answered (:data:`LOOPBACK_HOSTS`; 421 otherwise), which keeps a page rebinding its name to 127.0.0.1 out.
    A ``host`` that is not a loopback address (bound on purpose) is accepted as a ``Host`` too (alone or with
    the port); any machine that reaches that address then reads the runs."""
    import http.server
    import urllib.parse

    from ..compare.files import compare_files
    from ..formats.inputs import read_items
    from .compare import render_compare

    base = Path(root).resolve()
    names = set(LOOPBACK_HOSTS)
    if host not in ("127.0.0.1", "localhost", "::1"):
        names.add(f"[{host.lower()}]" if ":" in host else host.lower())
    listed: dict[str, dict[str, Path]] = {"files": {}}  # what the last listing names: replaced whole, never edited

    def listing(runs: list[RunEntry] | None = None) -> list[RunEntry]:
        runs = find_runs(base) if runs is None else runs
        listed["files"] = {f: base / f for r in runs for f in (r.scored, r.summary, r.report) if f is not None}
        return runs

    def run_file(rel: str) -> int | None:
        """An open descriptor of the listed run file at ``rel``, or None (not listed, outside ``root``, not a file)."""
        if rel not in listed["files"]:
            listing()  # a run written since the index was loaded
        where = listed["files"].get(rel)
        if where is None:
            return None
        try:
            real = where.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if base not in real.parents:
            return None
        return _regular(real)

    class Handler(http.server.BaseHTTPRequestHandler):
        server_version = "conflictscore-view"

        def log_message(self, format: str, *args: Any) -> None:
            log.info("view: " + format % args)

        def _page(self, status: int, html: str, *, ctype: str = "text/html; charset=utf-8") -> None:
            body = html.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def _missing(self, status: int = 404, why: str = "not found") -> None:
            self._page(status, f"<!doctype html><title>{why}</title><p>{why}")

        def do_GET(self) -> None:
            port = cast("tuple[str, int]", self.server.server_address)[1]  # a TCP server's address: (host, port)
            if not _host_allowed(self.headers.get("Host"), frozenset(names), port):
                return self._missing(421, "this server answers only requests to 127.0.0.1 or localhost")
            raw = self.path.split("#", 1)[0]
            target, _, query = raw.partition("?")
            if not target.startswith("/"):
                return self._missing(400, "bad request")
            try:
                path = urllib.parse.unquote(target, errors="strict")
            except UnicodeDecodeError:
                return self._missing(400, "bad request")
            if "\x00" in path:
                return self._missing(400, "bad request")
            if path in ("/", "/index.html"):
                return self._page(200, render_view(base, page_dir=base, serve=True, found=listing()))
            if path == "/compare":
                q = urllib.parse.parse_qs(query)
                runs = {r.key: r for r in listing()}
                a, b = (runs.get((q.get(k) or [""])[0]) for k in ("a", "b"))
                if a is None or b is None or a.scored is None or b.scored is None:
                    return self._page(404, "<!doctype html><title>not found</title><p>no such pair of scored runs")
                same = a.data.get("input_file") if a.data.get("input_file") == b.data.get("input_file") else None
                try:
                    done = compare_files(
                        base / a.scored,
                        base / b.scored,
                        None,
                        labels=(a.key, b.key),
                        summary_a=base / a.summary if a.summary else None,
                        summary_b=base / b.summary if b.summary else None,
                        items=base / same if same else None,
                    )
                    items = {it.id: it for it in read_items(base / same)} if same else None
                    return self._page(200, render_compare(done.result, done.a.results, done.b.results, items=items))
                except ConflictScoreError as e:
                    return self._page(400, f"<!doctype html><title>cannot compare</title><p>{_escape(str(e))}")
            fd = run_file(path[1:])
            if fd is None:
                return self._missing()
            with os.fdopen(fd, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                self.send_response(200)
                self.send_header("Content-Type", _CONTENT_TYPES.get(Path(path).suffix, "application/octet-stream"))
                self.send_header("Content-Length", str(size))
                self.send_header("X-Content-Type-Options", "nosniff")
                self.end_headers()
                shutil.copyfileobj(fh, self.wfile)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            import sys

            e = sys.exc_info()[1]
            if isinstance(e, (ConnectionError, TimeoutError)):  # the browser went away: nothing to say
                log.info(f"view: {client_address[0]}: {e}")
                return
            super().handle_error(request, client_address)

    listing(found)
    return Server((host, port), Handler)


_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".jsonl": "text/plain; charset=utf-8",
}


def _escape(text: str) -> str:
    import html

    return html.escape(text)


__all__ = ["RunEntry", "compare_command", "find_runs", "render_view", "report_beside", "serve", "stem", "write_view"]
