"""``build_bench``: every selected source loaded into one list of ConflictBench items."""

from __future__ import annotations

import logging
import os
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..backends.arguments import make_config
from ..core.errors import ConfigError, InputError
from ..jobs import Input, Job, Output, dumps, write_json_atomic, write_jsonl_atomic, write_stdout
from ..util.locations import DATA_ENV, default_data_dir
from .leakage import bench_leaks, check_disjoint, separate_splits
from .sources import BENCH_SOURCES, DEFAULT_SOURCES

log = logging.getLogger(__name__)


def data_folder(data_dir: str | Path | None = None) -> Path:
    """``data_dir``, else :func:`default_data_dir`; ``ConfigError`` when that folder does not exist."""
    base = Path(data_dir).expanduser() if data_dir is not None else default_data_dir()
    if not base.is_dir():
        how = "--data-dir" if data_dir is not None else f"${DATA_ENV}" if os.environ.get(DATA_ENV) else "default"
        raise ConfigError(f"data folder {base} ({how}) does not exist; pass --data-dir DIR or set {DATA_ENV}")
    return base


def default_source_file(name: str, data_dir: str | Path | None = None) -> Path:
    """Where source ``name`` is read from when no ``--source`` names its file: in the data folder."""
    default = BENCH_SOURCES[name].default_path
    if default is None:
        raise ConfigError(f"source {name!r} has no file in the shared data; give one with --source {name}=PATH")
    return data_folder(data_dir) / default


def _check_names(names: Iterable[str], what: str) -> None:
    for n in names:
        if n not in BENCH_SOURCES:
            raise ConfigError(f"{what}: unknown source {n!r}; allowed: {', '.join(BENCH_SOURCES)}")


def build_bench(
    data_dir: str | Path | None = None,
    only: Sequence[str] | None = None,
    sources: Mapping[str, str | Path] | None = None,
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    leak_free: bool = True,
) -> list[dict[str, Any]]:
    """Build ConflictBench items (JSON-ready dicts) from the public source files.

    ``only`` names the sources to build (default: every source with a file in the shared
    data, plus any named in ``sources``); ``sources`` maps a source name to a file (or
    directory) that replaces its default path; ``options`` maps a source name to its
    options (e.g. ``{"climate_fever": {"max_entropy": 0.7}}``). A selected source whose
    file is missing is an error naming the source and the path.

    Items are split by claim or question (``split_for``); with ``leak_free`` (the default)
    train items then lose every document and claim that a dev or test item uses
    (:func:`~conflictscore_local.bench.leakage.separate_splits`), and the build fails if any
    is left. ``leak_free=False`` gives the claim-only split (to measure what it leaked).
    """
    sources = dict(sources or {})
    options = dict(options or {})
    _check_names(sources, "--source")
    _check_names(options, "--source-opt")
    if only is not None:
        _check_names(only, "--source")
        for what, given in (("--source", sources), ("--source-opt", options)):
            extra = [n for n in given if n not in only]
            if extra:
                raise ConfigError(f"{what} {', '.join(extra)}: not selected by --source {' '.join(only)}")
        names = list(dict.fromkeys(only))
    else:
        names = list(DEFAULT_SOURCES) + [n for n in sources if n not in DEFAULT_SOURCES]
    opts = {n: make_config(BENCH_SOURCES[n].Options, options.get(n, {}), where=f"source {n!r}") for n in names}
    items: list[dict[str, Any]] = []
    for name in names:
        src = BENCH_SOURCES[name]
        # the data folder is looked for only here: a build that names every file needs none
        path = Path(sources[name]) if name in sources else default_source_file(name, data_dir)
        if not path.exists():
            raise InputError(
                f"source {name!r}: file not found (give another with --source {name}=PATH, "
                f"or name only the others with --source NAME ...)",
                path=str(path),
            )
        loaded = list(src.read(path, opts[name]))
        if not loaded:
            log.warning(
                f"source {name!r} ({path}) holds no item: nothing of it is in the bench (an empty or truncated file?)"
            )
        items.extend(loaded)
    dup = [k for k, c in Counter(it["id"] for it in items).items() if c > 1]
    if dup:
        raise InputError(f"duplicate item id {dup[0]!r} across the selected sources")
    if leak_free:
        items, _ = separate_splits(items)
        check_disjoint(bench_leaks(items), what="bench build")
    return items


def bench_stats(items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts of items, claims, conflicted claims and pairs by source, conflict type and split."""
    out: dict[str, Any] = {}
    for it in items:
        n_claims = len(it["claims"])
        n_conf = sum(it["gold_conflicted"])
        n_pairs = n_claims * len(it["documents"])
        for axis, key in (
            ("total", "all"),
            ("source", it["source"]),
            ("conflict_type", it["conflict_type"]),
            ("split", it["split"]),
            ("source_split", f"{it['source']}/{it['split']}"),
        ):
            c = out.setdefault(axis, {}).setdefault(key, Counter())
            c.update(items=1, claims=n_claims, conflicted=n_conf, pairs=n_pairs)
            for row in it["gold_labels"]:
                c.update(row)
    return {axis: {k: dict(v) for k, v in sorted(d.items())} for axis, d in out.items()}


def write_bench(
    output: str | os.PathLike[str],
    *,
    data_dir: str | Path | None = None,
    only: Sequence[str] | None = None,
    sources: Mapping[str, str] | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    stats_path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """``bench build`` as a job: every source file it will read and both destinations (``-o``, ``--summary``)
    checked before any work, the items written atomically; returns the statistics (:func:`bench_stats`)."""
    sources = dict(sources or {})
    reads = [
        Input(path, f"the source file of {name} (--source)", "dir" if Path(path).is_dir() else "file")
        for name, path in sources.items()
    ]
    for name in only or DEFAULT_SOURCES:  # and those the data folder gives
        if name in BENCH_SOURCES and name not in sources:
            try:
                path = default_source_file(name, data_dir)
            except ConfigError:
                continue  # build_bench says why, naming the source
            reads.append(Input(path, f"the source file of {name}", "dir" if path.is_dir() else "file"))
    to_stdout = str(output) == "-"  # the items on stdout (-o -)
    with Job(
        reads + [Input(data_dir, "--data-dir", "dir")],
        [Output(None if to_stdout else output, "-o"), Output(stats_path, "--summary")],
    ):
        items = build_bench(data_dir, only=only, sources=sources, options=options)
        if to_stdout:
            write_stdout("".join(dumps(item, verbatim=True) + "\n" for item in items))
        else:
            write_jsonl_atomic(output, items, what="-o", verbatim=True)
        stats = bench_stats(items)
        if stats_path:
            write_json_atomic(stats_path, stats, what="--summary")
    return stats
