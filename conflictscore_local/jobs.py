"""File-level jobs behind the CLI: check, read and validate, score, write atomically, resume."""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

from .config import RunConfig
from .engine import Clock, Engine
from .errors import ConfigError, InputError
from .inputs import read_items
from .jsonl import InputStats
from .results import result_from_json
from .shards.split import Shard, shard_record
from .types import Item, ItemResult, Report
from .writing import (
    FINGERPRINT_FORMAT,
    OutputTarget,
    ResumableJsonlWriter,
    explain_fingerprint_change,
    same_file,
    write_json_atomic,
)

log = logging.getLogger(__name__)

EXIT_UNSCORED = 3
"""Exit status of a run that finished and wrote everything, but with more unscored judgments
than ``engine.max_unscored_share`` allows (a judge server down, a model answering nonsense)."""


def score_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    config: RunConfig | None = None,
    summary_path: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: bool = False,
    shard: Shard | None = None,
    report_path: str | os.PathLike[str] | None = None,
    clock: Clock = time.perf_counter,
) -> Report:
    """Score a JSONL file into OUTPUT (one line per item) and return the run's report.

    In this order, so that nothing is touched before everything is known to be right: the
    configuration and every backend's arguments are checked; OUTPUT, the summary, the HTML
    report the caller will write afterwards (``report_path``) and the cache are checked (none
    may be the input or each other, none a directory, each writable); every input line is
    validated; then OUTPUT is locked and scoring starts. OUTPUT appears only when the run
    finishes (rows accumulate in ``OUTPUT.partial``); ``resume`` keeps the rows of an
    interrupted run whose input bytes, result-changing settings and backend specs are the
    same, and scores only the remaining items. ``report.warnings`` lists what deserves a look
    (empty input, empty responses, too many unscored judgments), each also logged;
    :func:`too_many_unscored` says whether the last is the case. ``shard`` scores only that
    shard's items (``--shard I/N``); the summary, which it then needs, records it
    (``stages.shard``) for ``conflictscore merge``. ``clock`` times the run (``timing``).
    """
    t0 = clock()
    if shard is not None and summary_path is None:
        raise ConfigError(f"--shard {shard} needs --summary: `conflictscore merge` reads each shard's summary")
    notes = _Notes()
    with Engine(config if config is not None else RunConfig(), progress=progress, clock=clock) as engine:
        # every backend's arguments are checked: nothing touched yet
        check_destinations(input_path, output_path, summary_path, engine.config, report_path=report_path)
        inp = _read_input(input_path, shard, notes)
        done, new = _score_into(engine, inp, output_path, resume, notes)
        by_id = {r.item_id: r for r in done + new}
        report = engine.summarize([by_id[it.id] for it in inp.items])
    stages = {**report.stages, "input": _input_stage(inp)}
    if resume:
        stages["resumed_items"] = len(done)
    if shard is not None:
        stages["shard"] = shard_record(shard, input_sha256=inp.stats.sha256, input_items=inp.n_items,
                                       items=len(inp.items))
    unscored = _unscored_warning(report, engine.config.engine.max_unscored_share)
    if unscored is not None:
        notes.add(unscored)
    report = dataclasses.replace(report, stages=stages, warnings=tuple(notes),
                                 timing={**report.timing, "total_s": round(clock() - t0, 4)})
    if summary_path is not None:
        write_json_atomic(summary_path, report.to_json(), what="--summary")
    return report


class _Notes(list):
    """What deserves a look: kept for the summary's ``warnings`` and logged as it happens."""

    def add(self, message: str) -> None:
        self.append(message)
        log.warning(message)


@dataclass
class _Input:
    """A job's input as read: the items to score (the shard's), how many the file holds, what
    reading saw (sha256, lines), and the items with neither response nor claims."""

    path: str | os.PathLike[str]
    items: list[Item]
    n_items: int
    stats: InputStats
    empty: list[str]


def _read_input(path: str | os.PathLike[str], shard: Shard | None, notes: _Notes) -> _Input:
    """Every line validated before anything is written; empty input and empty responses noted."""
    stats = InputStats()
    items = read_items(path, stats=stats)
    empty = [it.id for it in items if it.claims is None and not it.response.strip()]
    _check_input(path, stats, len(items), empty, notes.add)
    return _Input(path, shard.select(items) if shard is not None else items, len(items), stats, empty)


def _score_into(
    engine: Engine, inp: _Input, output_path: str | os.PathLike[str], resume: bool, notes: _Notes
) -> tuple[list[ItemResult], list[ItemResult]]:
    """Score the input's items into OUTPUT through a locked, resumable writer: the rows an
    interrupted run left (``resume``, same fingerprint) and the rows scored now."""
    fingerprint = {"format": FINGERPRINT_FORMAT, "input": {"sha256": inp.stats.sha256}, **engine.fingerprint(inp.items)}
    wanted = {it.id for it in inp.items}
    writer = ResumableJsonlWriter(output_path, resume=resume, fingerprint=fingerprint,
                                  keep=lambda r: r.get("id") in wanted, explain=explain_fingerprint_change)
    with writer:
        if resume and not writer.resumed:
            notes.add(f"--resume: no interrupted run of {output_path} to resume; scoring every item")
        if writer.dropped:
            notes.add(f"--resume: dropped {writer.dropped} finished rows whose ids are not in {inp.path}")
        done = _parse_done(writer)
        done_ids = {r.item_id for r in done}
        new: list[ItemResult] = []
        for r in engine.score([it for it in inp.items if it.id not in done_ids]):
            writer.write(r.to_json())
            new.append(r)
    return done, new


def _input_stage(inp: _Input) -> dict[str, Any]:
    """The summary's record of the input file."""
    return {"lines": inp.stats.lines, "blank_lines": inp.stats.blank_lines, "items": inp.n_items,
            "empty_responses": len(inp.empty)}


def _unscored_warning(report: Report, limit: float) -> str | None:
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


def check_destinations(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    summary_path: str | os.PathLike[str] | None,
    config: RunConfig,
    *,
    report_path: str | os.PathLike[str] | None = None,
) -> None:
    """:class:`ConfigError` when a run would destroy data or could not write its results.

    OUTPUT must not be the input; the summary (and the HTML report) must be none of input,
    OUTPUT, OUTPUT's partial files and each other; the cache none of them either. Each must be writable and not a
    directory. Devices, FIFOs and ``/dev/stdout`` are streamed to, so they are exempt from
    the same-file rule (``-o /dev/stdout`` with a terminal for input is fine).
    """
    from .cache import check_cache_path

    out = OutputTarget.of(output_path, what="output (-o)")
    if not out.stream and same_file(input_path, out.real):
        raise ConfigError(f"output (-o) {output_path} is the input file: scoring would overwrite the items; "
                          "choose another OUTPUT")
    out.check_writable(what="output (-o)")
    taken = {"the input file": input_path}
    if not out.stream:
        taken.update({"OUTPUT (-o)": out.real, "OUTPUT's .partial file": out.sibling(".partial"),
                      "OUTPUT's .partial.meta.json file": out.sibling(".partial.meta.json")})
    for flag, path in (("--summary", summary_path), ("--report", report_path)):
        if path is None:
            continue
        target = OutputTarget.of(path, what=flag)
        if not target.stream:
            for what, other in taken.items():
                if same_file(target.real, other):
                    raise ConfigError(f"{flag} {path} is {what}: writing it would replace that file; "
                                      "choose another path")
            taken[flag] = target.real
        target.check_writable(what=flag)
    if config.cache.enabled:
        cache = config.cache_path()
        for what, other in taken.items():
            if same_file(cache, other):
                raise ConfigError(f"judgment cache {cache} is {what}; choose another with --cache PATH")
        check_cache_path(cache)


def _check_input(path: Any, stats: InputStats, n_items: int, empty: list[str], note: Callable[[str], None]) -> None:
    if n_items == 0:
        if stats.lines == 0:
            note(f"{path} is empty: no items to score")
        else:
            note(f"{path} holds only blank lines ({stats.blank_lines}): no items to score")
    if empty:
        shown = ", ".join(repr(i) for i in empty[:5]) + (f" and {len(empty) - 5} more" if len(empty) > 5 else "")
        note(f"{len(empty)} item(s) have an empty response and no claims, so no claims and no metrics: {shown}")


def _judge_bound(report: Report) -> int:
    """Claim × document judgments that needed the judge (judged now or earlier, from the cache)."""
    return int(report.pairs.get("judged", 0)) + int(report.pairs.get("cached", 0))


def unscored_share(report: Report) -> float:
    """Unscored judgments over those that needed the judge (0.0 when none did)."""
    bound = _judge_bound(report)
    return int(report.pairs.get("unscored", 0)) / bound if bound else 0.0


def too_many_unscored(report: Report, config: RunConfig) -> bool:
    """Whether the unscored share is above ``engine.max_unscored_share`` (exit status 3)."""
    return unscored_share(report) > config.engine.max_unscored_share


def _parse_done(writer: ResumableJsonlWriter) -> list[ItemResult]:
    out = []
    for n, row in enumerate(writer.done, 1):
        try:
            out.append(result_from_json(row))
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise InputError(f"--resume: not a scored result ({type(e).__name__}: {e})", path=str(writer.partial),
                             line=n) from None
    return out
