"""File-level jobs behind the CLI: read and validate, score, write atomically, resume."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from typing import Any, Callable

from .config import RunConfig
from .engine import Engine
from .errors import ConfigError, InputError
from .io import ResumableJsonlWriter, file_sha256, read_items, result_from_json, write_json_atomic
from .shards.split import Shard, shard_record
from .types import ItemResult, Report


def score_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    config: RunConfig | None = None,
    summary_path: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: bool = False,
    shard: Shard | None = None,
    warn: Callable[[str], Any] = lambda m: print(f"warning: {m}", file=sys.stderr),
) -> Report:
    """Score a JSONL file into OUTPUT (one line per item) and return the run's report.

    Every input line is validated before any model loads. OUTPUT appears only when the
    run finishes (rows accumulate in ``OUTPUT.partial``); ``resume`` keeps the rows of an
    interrupted run with the same configuration and the same input bytes, and scores only
    the remaining items. ``shard`` scores only that shard's items (``--shard I/N``); the
    summary, which it then needs, records it for ``conflictscore merge``.
    """
    t0 = time.perf_counter()
    if shard is not None and summary_path is None:
        raise ConfigError(f"--shard {shard} needs --summary: `conflictscore merge` reads each shard's summary")
    items = read_items(input_path)
    n_input = len(items)
    if shard is not None:
        items = shard.select(items)
    config = config if config is not None else RunConfig()
    fingerprint = {"input_sha256": file_sha256(input_path), "config": config.to_json()}
    wanted = {it.id for it in items}
    with Engine(config, progress=progress) as engine:  # bad backend names fail before any file is touched
        writer = ResumableJsonlWriter(
            output_path, resume=resume, fingerprint=fingerprint, keep=lambda r: r.get("id") in wanted
        )
        with writer:
            if resume and not writer.resumed:
                warn(f"--resume: no interrupted run of {output_path} to resume; scoring every item")
            if writer.dropped:
                warn(f"--resume: dropped {writer.dropped} finished rows whose ids are not in {input_path}")
            done = _parse_done(writer)
            done_ids = {r.item_id for r in done}
            new: list[ItemResult] = []
            for r in engine.score([it for it in items if it.id not in done_ids]):
                writer.write(r.to_json())
                new.append(r)
        by_id = {r.item_id: r for r in done + new}
        results = [by_id[it.id] for it in items]
        report = engine.summarize(results, timing={"total_s": round(time.perf_counter() - t0, 4)})
    if resume:
        report = dataclasses.replace(report, stages={**report.stages, "resumed_items": len(done)})
    if shard is not None:
        record = shard_record(shard, input_sha256=fingerprint["input_sha256"], input_items=n_input, items=len(items))
        report = dataclasses.replace(report, stages={**report.stages, "shard": record})
    if summary_path is not None:
        write_json_atomic(summary_path, report.to_json())
    return report


def _parse_done(writer: ResumableJsonlWriter) -> list[ItemResult]:
    out = []
    for n, row in enumerate(writer.done, 1):
        try:
            out.append(result_from_json(row))
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise InputError(f"--resume: not a scored result ({type(e).__name__}: {e})", path=str(writer.partial),
                             line=n) from None
    return out

