"""The scoring runner: the one way `score` and `bench run` (and any command that scores files)
check, read, score, write and resume.

:func:`run_scoring` takes the job (its inputs and outputs, :class:`~..jobs.Job`), a ``read`` hook
(the items to score: ``score`` reads JSONL items, ``bench run`` a ConflictBench selection) and a
``finish`` hook (what is written from the results: ``score``'s summary, ``bench run``'s summary with its
gold evaluation). A runner writes no page: a command that wants one hands in a :class:`~..jobs.Page`,
declared with the job's outputs and written by the command's own function inside the job. In this order, so that
nothing is touched
before everything is known to be right: every setting and backend argument is checked (the
engine is built); every destination is checked (none an input or another output, the cache of
the right schema, each writable) and locked; every input line is validated; then rows are
scored into the resumable output, and ``finish`` writes the rest.
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..core.errors import ConfigError, InputError
from ..core.types import ItemResult, Summary
from ..formats.results import result_from_json
from ..formats.summary import now_utc, write_summary
from ..formats.table import TablePaths
from ..jobs import (
    FINGERPRINT_FORMAT,
    Input,
    Job,
    Output,
    Page,
    ResumableJsonlWriter,
    explain_fingerprint_change,
    page_output,
)
from .checks import EXIT_UNSCORED  # noqa: F401 (commands read the exit status here, with the runner)
from .config import RunConfig
from .engine import Clock, Engine
from .reading import Notes, ScoringInput, read_input
from .shards import Shard, shard_record

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scored:
    """What a scoring run gives its ``finish`` hook: the input, its results in input order, the summary."""

    input: ScoringInput
    results: list[ItemResult]
    summary: Summary
    engine: Engine

    @property
    def report(self) -> Summary:
        """The old name of :attr:`summary`, until 0.3.0."""
        warnings.warn(
            "Scored.report is deprecated and will be removed in 0.3.0: use Scored.summary",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.summary


def run_scoring(
    job: Job,
    read: Callable[[Notes], ScoringInput],
    finish: Callable[[Scored], Any],
    *,
    config: RunConfig | None = None,
    rows: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: bool = False,
    clock: Clock = time.perf_counter,
    tables: TablePaths | None = None,
    sections: Callable[[ScoringInput, list[ItemResult]], dict[str, Any]] | None = None,
) -> Any:
    """Score what ``read`` gives under ``job`` and return what ``finish`` makes of it.

    ``rows`` (one of ``job``'s outputs, kind ``rows``) receives one line per item as it is
    scored (``OUTPUT.partial`` until the run ends); ``resume`` keeps the rows of an interrupted
    run whose input bytes, result-changing settings and backend specs are the same and scores
    only the rest. The summary's ``warnings`` list what deserves a look, each also logged: an
    empty input, empty responses, too many unscored judgments (:func:`too_many_unscored`).
    The judgment cache is one of the job's outputs (shared with other runs, checked for its
    schema before any work). ``clock`` times the run (``timing.total_s``). ``tables``: the CSV
    files of the results (one of the job's outputs each), written after ``finish``. The summary
    ``finish`` gets is whole, from the one builder: what reading saw, the shard record, the rows a
    resume kept, every warning and the wall time; ``sections(input, results)`` adds a ``bench run``'s
    ``bench`` and ``evaluation`` sections to it.
    """
    t0 = clock()
    started = now_utc()
    notes = Notes()
    with Engine(config if config is not None else RunConfig(), progress=progress, clock=clock) as engine:
        # every backend's arguments are checked: nothing touched yet
        job.outputs.extend(cache_output(engine.config))
        job.outputs.extend(tables.outputs() if tables is not None else [])
        with job:
            inp = read(notes)
            done, new = _score_into(engine, inp, rows, resume, notes)
            by_id = {r.item_id: r for r in done + new}
            results = [by_id[it.id] for it in inp.items]
            summary = engine.summarize(
                results,
                input=inp.record(),
                shard=_shard_record(inp),
                resumed_items=len(done) if resume else None,
                warnings=notes,
                started=t0,
                started_at=started,
                **(sections(inp, results) if sections is not None else {}),
            )
            done_with = finish(Scored(inp, results, summary, engine))
            if tables is not None:
                tables.write(results)
            return done_with


def _shard_record(inp: ScoringInput) -> dict[str, Any] | None:
    """The ``--shard`` record of a sharded run (``stages.shard``: what ``conflictscore merge`` checks), else None."""
    if inp.shard is None:
        return None
    sha = inp.stats.sha256 if inp.stats is not None and inp.stats.sha256 else _sha256(inp.path)
    return shard_record(inp.shard, input_sha256=sha, input_items=len(inp.all_ids), items=len(inp.items))


def cache_output(config: RunConfig) -> list[Output]:
    """The judgment cache as a job's output (shared with other runs, checked for its schema), if used."""
    if not config.cache.enabled:
        return []
    from ..formats.cache import check_cache_file

    return [
        Output(
            config.cache_path(),
            "judgment cache",
            kind="shared",
            check=check_cache_file,
            hint="choose another with --cache PATH",
        )
    ]


def score_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str] | None,
    *,
    config: RunConfig | None = None,
    summary_path: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: bool = False,
    shard: Shard | None = None,
    page: "Page[Scored] | None" = None,
    config_file: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    clock: Clock = time.perf_counter,
    tables: TablePaths | None = None,
) -> Summary:
    """Score a JSONL file into OUTPUT (one line per item), write the summary when asked, and return
    it (see :func:`run_scoring` for the order of things); ``page`` (``--report``: the command hands in the
    HTML report's writer) is called with the :class:`Scored` run (its summary as written) once OUTPUT and
    the summary are written.

    OUTPUT, the summary and the page may be none of the input, each other or OUTPUT's partial
    files; OUTPUT appears only when the run finishes. ``shard`` scores only that shard's items
    (``--shard I/N``); the summary, which it then needs, records it (``stages.shard``) for
    ``conflictscore merge``. ``config_file``: the file ``config`` was read from (``--config``),
    which no destination may be. ``limit`` scores only the first N items (of the shard, with
    ``shard``): a trial run on a large file (``--limit N``). ``tables``: CSV files of the results
    (``--csv``, ``--csv-pairs``); ``output_path`` may then be None (``-o x.csv``: no JSONL, no resume).
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive integer, got {limit}")
    refuse_stdout_rows(output_path, resume=resume, shard=shard)
    if output_path is None and (resume or shard is not None):
        raise ConfigError(
            f"{'--resume' if resume else f'--shard {shard}'} needs the per-item JSONL: write -o OUT.jsonl "
            "(with --csv OUT.csv, --report OUT.html for the others: an -o ending in .csv, .json or .html "
            "is written whole at the end, which cannot be resumed or merged)"
        )
    if shard is not None and summary_path is None:
        raise ConfigError(f"--shard {shard} needs --summary: `conflictscore merge` reads each shard's summary")
    job = Job(
        [Input(input_path, "the input file"), Input(config_file, "the --config file")],
        [
            Output(
                None if str(output_path) == "-" else output_path,
                "output (-o)",
                "OUTPUT (-o)",
                kind="rows",
                replaces="scoring would overwrite the items",
                hint="choose another OUTPUT",
            ),
            Output(summary_path, "--summary"),
            page_output(page),
        ],
    )

    def finish(run: Scored) -> Summary:
        if summary_path is not None:
            write_summary(summary_path, run.summary)
        if page is not None:
            page.write(run)
        return run.summary

    return run_scoring(
        job,
        lambda notes: read_input(input_path, shard, notes, limit),
        finish,
        config=config,
        rows=output_path,
        resume=resume,
        progress=progress,
        clock=clock,
        tables=tables,
    )


def refuse_stdout_rows(output_path: str | os.PathLike[str] | None, *, resume: bool, shard: Shard | None) -> None:
    """``-o -`` (the rows on stdout) with ``--resume`` or ``--shard``: refused, saying why (exit 2)."""
    if str(output_path) == "-" and (resume or shard is not None):
        raise ConfigError(
            f"{'--resume' if resume else f'--shard {shard}'} needs the per-item JSONL in a file: -o - "
            "streams the rows to stdout, which keeps nothing to "
            f"{'resume from' if resume else 'merge'}; write -o OUT.jsonl"
        )


def _score_into(
    engine: Engine, inp: ScoringInput, rows: str | os.PathLike[str] | None, resume: bool, notes: Notes
) -> tuple[list[ItemResult], list[ItemResult]]:
    """Score the input's items, into ``rows`` through the locked, resumable writer when given:
    the rows an interrupted run left (``resume``, same fingerprint) and the rows scored now."""
    if rows is None:
        return [], list(engine.score(inp.items))
    sha = inp.stats.sha256 if inp.stats is not None and inp.stats.sha256 else None
    fingerprint = {
        "format": FINGERPRINT_FORMAT,
        "input": {"sha256": sha or _sha256(inp.path)},
        **engine.fingerprint(inp.items),
    }
    wanted = {it.id for it in inp.items}
    writer = ResumableJsonlWriter(
        rows,
        resume=resume,
        fingerprint=fingerprint,
        keep=lambda r: r.get("id") in wanted,
        explain=explain_fingerprint_change,
        verbatim=True,
    )
    with writer:
        if resume and not writer.resumed:
            notes.add(f"--resume: no interrupted run of {rows} to resume; scoring every item")
        _note_dropped(writer.dropped_ids, inp, notes)
        done = _parse_done(writer)
        done_ids = {r.item_id for r in done}
        todo = [it for it in inp.items if it.id not in done_ids]
        if writer.resumed:
            _say_what_was_kept(engine, len(done), len(todo))
        new: list[ItemResult] = []
        try:
            for r in engine.score(todo):
                writer.write(r.to_json())
                new.append(r)
        except KeyboardInterrupt as stop:  # what is kept, for the line that says how to go on
            stop.kept_items = len(done) + writer.written  # type: ignore[attr-defined]  # rows written, not appended
            stop.partial = str(writer.partial)  # type: ignore[attr-defined]
            if not hasattr(stop, "judgments_cached"):
                stop.judgments_cached = (  # type: ignore[attr-defined]  # carried on the interrupt to the command
                    engine.counts["passage_pairs_judged"] if engine.config.cache.enabled else 0
                )
            raise
    return done, new


def _say_what_was_kept(engine: Engine, kept: int, todo: int) -> None:
    """``--resume: kept 6 items and 174 judgments; 144 items to go``: the items read back, and the judgments
    the items left to score find in the cache (counted at the first step's lookups, before any is judged)."""
    if not todo:
        log.info(f"--resume: kept {kept} items; none to go")
        return

    def said(cached: int, to_judge: int) -> None:
        engine.after_lookup = None
        judgments = f" and {cached} judgments" if engine.config.cache.enabled else ""
        log.info(
            f"--resume: kept {kept} items{judgments}; {todo} items to go"
            + ("" if engine.config.cache.enabled else " (no judgment cache: their judgments are made again)")
        )

    engine.after_lookup = said


def _sha256(path: str | os.PathLike[str]) -> str:
    from ..util.jsonl import file_sha256

    return file_sha256(path)


def _note_dropped(dropped: Sequence[Any], inp: ScoringInput, notes: Notes) -> None:
    """Say which recovered rows a resume left out: another shard's items, or items the input lacks."""
    known = set(inp.all_ids)
    elsewhere = [i for i in dropped if i in known]
    gone = len(dropped) - len(elsewhere)
    if elsewhere:
        notes.add(
            f"--resume: dropped {len(elsewhere)} finished rows of items outside shard {inp.shard} (the "
            "interrupted run was not sharded as this one is: those items belong to the other shards)"
            if inp.shard is not None
            else f"--resume: dropped {len(elsewhere)} finished rows of items this run does not score"
        )
    unselected = 0
    if gone and inp.file_ids is not None:
        in_file = set(inp.file_ids)
        unselected = sum(1 for i in dropped if i not in known and i in in_file)
        if unselected:
            notes.add(
                f"--resume: dropped {unselected} finished rows of items of {inp.path} outside this run's "
                "selection (the interrupted run selected others: another --split, --source or --limit)"
            )
    if gone - unselected:
        notes.add(f"--resume: dropped {gone - unselected} finished rows whose ids are not in {inp.path}")


def _parse_done(writer: ResumableJsonlWriter) -> list[ItemResult]:
    out = []
    for n, row in enumerate(writer.done, 1):
        try:
            out.append(result_from_json(row, path=str(writer.partial), line=n))
        except InputError as e:
            raise InputError(f"--resume: {e.reason}", path=e.path, line=e.line, field=e.field) from None
    return out
