"""The scoring runner: the one way `score` and `bench run` (and any command that scores files)
check, read, score, write and resume.

:func:`run_scoring` takes the job (its inputs and outputs, :class:`~.jobs.Job`), a ``read`` hook
(the items to score: ``score`` reads JSONL items, ``bench run`` a ConflictBench selection) and a
``finish`` hook (what is written from the results: ``score``'s summary, ``bench run``'s summary with its
gold evaluation). A runner writes no page: a command that wants one hands in a :class:`~.jobs.Page`,
declared with the job's outputs and written by the command's own function inside the job. In this order, so that nothing is touched
before everything is known to be right: every setting and backend argument is checked (the
engine is built); every destination is checked (none an input or another output, the cache of
the right schema, each writable) and locked; every input line is validated; then rows are
scored into the resumable output, and ``finish`` writes the rest.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .config import RunConfig
from .engine import Clock, Engine
from ..core.errors import ConfigError, InputError
from ..formats.inputs import InputShapes, read_items
from ..jobs import (
    FINGERPRINT_FORMAT,
    Input,
    Job,
    Output,
    Page,
    ResumableJsonlWriter,
    explain_fingerprint_change,
    page_output,
    write_json_atomic,
)
from ..util.jsonl import InputStats
from ..formats.results import result_from_json
from .shards import Shard, shard_record
from ..core.types import Item, ItemResult, Summary
from ..formats.table import TablePaths

log = logging.getLogger(__name__)

EXIT_UNSCORED = 3
"""Exit status of a run that finished and wrote everything, but with more unscored judgments
than ``engine.max_unscored_share`` allows (a judge server down, a model answering nonsense)."""


class Notes(list):
    """What deserves a look: kept for the summary's ``warnings`` and logged as it happens."""

    def add(self, message: str) -> None:
        self.append(message)
        log.warning(message)


@dataclass
class ScoringInput:
    """A run's input as read: the items to score (a shard's, for ``--shard``), every id the file
    holds, what reading saw (sha256, lines; ``stats`` None when the reader keeps no counts), the
    items with neither response nor claims, the shard, and the items with no document."""

    path: str | os.PathLike[str]
    items: list[Item]
    all_ids: list[str]
    stats: InputStats | None = None
    empty: list[str] = field(default_factory=list)
    shard: Shard | None = None
    no_documents: list[str] = field(default_factory=list)
    shapes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scored:
    """What a scoring run gives its ``finish`` hook: the input, its results in input order, the summary."""

    input: ScoringInput
    results: list[ItemResult]
    summary: Summary
    engine: Engine

    @property
    def report(self) -> Summary:
        """The old name of :attr:`summary` (kept for one release)."""
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
) -> Any:
    """Score what ``read`` gives under ``job`` and return what ``finish`` makes of it.

    ``rows`` (one of ``job``'s outputs, kind ``rows``) receives one line per item as it is
    scored (``OUTPUT.partial`` until the run ends); ``resume`` keeps the rows of an interrupted
    run whose input bytes, result-changing settings and backend specs are the same and scores
    only the rest. The summary's ``warnings`` list what deserves a look, each also logged: an
    empty input, empty responses, too many unscored judgments (:func:`too_many_unscored`).
    The judgment cache is one of the job's outputs (shared with other runs, checked for its
    schema before any work). ``clock`` times the run (``timing.total_s``). ``tables``: the CSV
    files of the results (one of the job's outputs each), written after ``finish``.
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
            summary = engine.summarize(results)
            stages = dict(summary.stages)
            if inp.stats is not None:
                stages["input"] = {"lines": inp.stats.lines, "blank_lines": inp.stats.blank_lines,
                                   "items": len(inp.all_ids), "empty_responses": len(inp.empty),
                                   "no_documents": len(inp.no_documents), "file": os.path.basename(str(inp.path)),
                                   **({"format": inp.stats.format} if inp.stats.format != "jsonl" else {}),
                                   **inp.shapes}
            if resume:
                stages["resumed_items"] = len(done)
            for loud in (cascade_warning(summary), _unscored_warning(summary, engine.config.engine.max_unscored_share),
                         _fallback_warning(summary, engine.config.engine.max_fallback_share)):
                if loud is not None:
                    notes.add(loud)
            summary = dataclasses.replace(summary, stages=stages, warnings=tuple(notes),
                                          timing={**summary.timing, "total_s": round(clock() - t0, 4)},
                                          started=started, finished=now_utc())
            done_with = finish(Scored(inp, results, summary, engine))
            if tables is not None:
                tables.write(results)
            return done_with


def now_utc() -> str:
    """The time now, UTC, ISO 8601 to the second (a summary's ``started`` / ``finished``)."""
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def cache_output(config: RunConfig) -> list[Output]:
    """The judgment cache as a job's output (shared with other runs, checked for its schema), if used."""
    if not config.cache.enabled:
        return []
    from ..formats.cache import check_cache_file

    return [Output(config.cache_path(), "judgment cache", kind="shared", check=check_cache_file,
                   hint="choose another with --cache PATH")]


def score_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
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
        raise ConfigError(f"{'--resume' if resume else f'--shard {shard}'} needs the per-item JSONL: write -o OUT.jsonl "
                          "(with --csv OUT.csv, --report OUT.html for the others: an -o ending in .csv, .json or .html "
                          "is written whole at the end, which cannot be resumed or merged)")
    if shard is not None and summary_path is None:
        raise ConfigError(f"--shard {shard} needs --summary: `conflictscore merge` reads each shard's summary")
    job = Job([Input(input_path, "the input file"), Input(config_file, "the --config file")], [
        Output(None if str(output_path) == "-" else output_path, "output (-o)", "OUTPUT (-o)", kind="rows",
               replaces="scoring would overwrite the items", hint="choose another OUTPUT"),
        Output(summary_path, "--summary"),
        page_output(page),
    ])

    def finish(run: Scored) -> Summary:
        summary = run.summary
        if shard is not None:
            record = shard_record(shard, input_sha256=run.input.stats.sha256,  # type: ignore[union-attr]
                                  input_items=len(run.input.all_ids), items=len(run.input.items))
            summary = dataclasses.replace(summary, stages={**summary.stages, "shard": record})
        if summary_path is not None:
            write_json_atomic(summary_path, summary.to_json(), what="--summary")
        if page is not None:
            page.write(dataclasses.replace(run, summary=summary))
        return summary

    return run_scoring(job, lambda notes: read_input(input_path, shard, notes, limit), finish, config=config,
                       rows=output_path, resume=resume, progress=progress, clock=clock, tables=tables)


def refuse_stdout_rows(output_path: str | os.PathLike[str] | None, *, resume: bool, shard: Shard | None) -> None:
    """``-o -`` (the rows on stdout) with ``--resume`` or ``--shard``: refused, saying why (exit 2)."""
    if str(output_path) == "-" and (resume or shard is not None):
        raise ConfigError(f"{'--resume' if resume else f'--shard {shard}'} needs the per-item JSONL in a file: -o - "
                          "streams the rows to stdout, which keeps nothing to "
                          f"{'resume from' if resume else 'merge'}; write -o OUT.jsonl")


def read_input(path: str | os.PathLike[str], shard: Shard | None, notes: Notes,
               limit: int | None = None) -> ScoringInput:
    """Every line of a `score` input validated before anything is written; an empty input and
    empty responses noted; with ``limit``, only the first N items (of the shard) are scored."""
    stats = InputStats()
    shapes = InputShapes(warn=notes.add)
    items = read_items(path, stats=stats, shapes=shapes)
    read_as = shapes.described()
    if read_as is not None or stats.format != "jsonl":
        source = "one JSON array" if stats.format == "json" else "JSON Lines"
        log.info(f"{path}: {len(items)} items read from {source}, as {read_as or 'conflictscore items'}")
    empty = [it.id for it in items if it.claims is None and not it.response.strip()]
    _check_input(path, stats, len(items), empty, notes.add)
    # with claims to judge (or a response to find them in) but nothing to judge them against
    no_documents = [it.id for it in items if not it.documents and (it.claims if it.claims is not None
                                                                    else it.response.strip())]
    if no_documents:
        notes.add(f"{len(no_documents)} item(s) have no documents, so none of their claims can be supported or "
                  f"contradicted (CS-C 0 by construction, support rate 0): {_shown(no_documents)}")
    chosen = shard.select(items) if shard is not None else items
    if limit is not None and len(chosen) > limit:
        log.info(f"--limit {limit}: scoring the first {limit} of {len(chosen)} items")
        chosen = chosen[:limit]
    return ScoringInput(path, chosen, [it.id for it in items], stats, empty, shard, no_documents, shapes.record())


def _score_into(
    engine: Engine, inp: ScoringInput, rows: str | os.PathLike[str] | None, resume: bool, notes: Notes
) -> tuple[list[ItemResult], list[ItemResult]]:
    """Score the input's items, into ``rows`` through the locked, resumable writer when given:
    the rows an interrupted run left (``resume``, same fingerprint) and the rows scored now."""
    if rows is None:
        return [], list(engine.score(inp.items))
    sha = inp.stats.sha256 if inp.stats is not None and inp.stats.sha256 else None
    fingerprint = {"format": FINGERPRINT_FORMAT, "input": {"sha256": sha or _sha256(inp.path)},
                   **engine.fingerprint(inp.items)}
    wanted = {it.id for it in inp.items}
    writer = ResumableJsonlWriter(rows, resume=resume, fingerprint=fingerprint,
                                  keep=lambda r: r.get("id") in wanted, explain=explain_fingerprint_change)
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
            stop.kept_items = len(done) + len(new)  # type: ignore[attr-defined]
            stop.partial = str(writer.partial)  # type: ignore[attr-defined]
            if not hasattr(stop, "judgments_cached"):
                stop.judgments_cached = (engine.counts["passage_pairs_judged"]  # type: ignore[attr-defined]
                                         if engine.config.cache.enabled else 0)
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
        log.info(f"--resume: kept {kept} items{judgments}; {todo} items to go"
                 + ("" if engine.config.cache.enabled else " (no judgment cache: their judgments are made again)"))

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
        notes.add(f"--resume: dropped {len(elsewhere)} finished rows of items outside shard {inp.shard} (the "
                  "interrupted run was not sharded as this one is: those items belong to the other shards)"
                  if inp.shard is not None else f"--resume: dropped {len(elsewhere)} finished rows of items "
                  "this run does not score")
    if gone:
        notes.add(f"--resume: dropped {gone} finished rows whose ids are not in {inp.path}")


def fallback_share(report: Summary) -> tuple[int, int]:
    """(sentences the seq2seq / llm decomposer fell back to spaCy for, sentences it generated for)."""
    counters = report.stages.get("decomposer") or {}
    fell = int(counters.get("llm_fallback", 0) or 0) + int(counters.get("fallback", 0) or 0)
    return fell, int(counters.get("sentences_generated", 0) or 0)


def too_many_fallbacks(report: Summary, config: RunConfig) -> bool:
    """Whether the decomposer fell back on more sentences than ``engine.max_fallback_share`` (exit status 3)."""
    fell, generated = fallback_share(report)
    return generated > 0 and fell / generated > config.engine.max_fallback_share


def _fallback_warning(report: Summary, limit: float) -> str | None:
    """The warning of a run whose decomposer fell back on more sentences than ``limit`` allows, else None."""
    fell, generated = fallback_share(report)
    if not generated or fell / generated <= limit:
        return None
    return (f"the decomposer fell back to spaCy's claims for {fell} of {generated} sentences ({fell / generated:.1%}), "
            f"above engine.max_fallback_share={limit:g}: its model or server did not give usable claims (is the "
            f"server up? see stages.decomposer for why). Exit status {EXIT_UNSCORED}.")


def cascade_warning(report: Summary) -> str | None:
    """The warning of a ``cascade`` run in which the second judge gave no label for some escalated
    pairs (its server down, replies it could not read), else None: how many of the escalations
    failed and their share, and what became of those pairs (``on_second_failure``)."""
    stats = report.stages.get("judge") or {}
    failed, escalated = int(stats.get("second_failed", 0) or 0), int(stats.get("escalated", 0) or 0)
    if not failed or not escalated:
        return None
    what = (f"the first judge's label was kept for them, as on_second_failure=keep_first asks "
            f"({stats.get('second_unscored_first_kept', 0)} kept)"
            if stats.get("on_second_failure") == "keep_first" else
            "they are UNSCORED (each note says why); rerun once the second judge answers (the first judge's "
            "labels come from the cache), or pass --judge-arg on_second_failure=keep_first to keep the first "
            f"judge's label instead. Exit status {EXIT_UNSCORED} when the unscored share is above "
            "engine.max_unscored_share")
    return (f"judge cascade: the second judge gave no label for {failed} of {escalated} escalated pairs "
            f"({failed / escalated:.1%}); {what}")


def _unscored_warning(report: Summary, limit: float) -> str | None:
    """The warning of a run with more unscored judgments than ``limit`` allows, else None."""
    share = unscored_share(report)
    if share <= limit:
        return None
    return (
        f"{report.pairs['unscored']} of {_judge_bound(report)} judgments ({share:.1%}) are UNSCORED, above "
        f"engine.max_unscored_share={limit:g}: the metrics leave them out and read as less conflict than there "
        "may be. Each one's note in OUTPUT says why (a server that did not answer, an unreadable reply); "
        f"rerun to retry them (scored ones come from the cache). Exit status {EXIT_UNSCORED}."
    )


def _check_input(path: Any, stats: InputStats, n_items: int, empty: list[str], note: Callable[[str], None]) -> None:
    if n_items == 0:
        if stats.format == "json":
            note(f"{path} holds an empty JSON array: no items to score")
        elif stats.lines == 0:
            note(f"{path} is empty: no items to score")
        else:
            note(f"{path} holds only blank lines ({stats.blank_lines}): no items to score")
    if empty:
        note(f"{len(empty)} item(s) have an empty response and no claims, so no claims and no metrics: {_shown(empty)}")


def _shown(ids: list[str]) -> str:
    """The first five ids, and how many more."""
    return ", ".join(repr(i) for i in ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def _judge_bound(report: Summary) -> int:
    """Claim × document judgments that needed the judge (judged now or earlier, from the cache)."""
    return int(report.pairs.get("judged", 0)) + int(report.pairs.get("cached", 0))


def unscored_share(report: Summary) -> float:
    """Unscored judgments over those that needed the judge (0.0 when none did)."""
    bound = _judge_bound(report)
    return int(report.pairs.get("unscored", 0)) / bound if bound else 0.0


def too_many_unscored(report: Summary, config: RunConfig) -> bool:
    """Whether the unscored share is above ``engine.max_unscored_share`` (exit status 3)."""
    return unscored_share(report) > config.engine.max_unscored_share


def _parse_done(writer: ResumableJsonlWriter) -> list[ItemResult]:
    out = []
    for n, row in enumerate(writer.done, 1):
        try:
            out.append(result_from_json(row, path=str(writer.partial), line=n))
        except InputError as e:
            raise InputError(f"--resume: {e.reason}", path=e.path, line=e.line, field=e.field) from None
    return out
