"""Flags every command shares, below every command: the pipeline and its configuration
(``--config``, ``--judge``, ``--judge-arg``, ``--set`` ...), ``--shard I/N``, ``--json`` / ``-q``, and
numeric flags with their range (:func:`add_number`: NaN, infinity and out-of-range values are
refused by argparse, exit 2, before anything runs)."""

from __future__ import annotations

import argparse
import json
import logging
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ..backends.arguments import Range, field_range
from ..core.errors import ConfigError, ConflictScoreError
from ..core.sampling import SELECTIONS
from ..pipeline.config import SEED_MAX, STAGES, RunConfig, SampleConfig, apply_overrides, load_config, parse_assignment
from ..pipeline.shards import Shard

log = logging.getLogger(__name__)

LIMIT = Range(1)
"""``--limit N``, ``--questions N``: at least one."""
SEED = Range(0, SEED_MAX)


class NumberArg:
    """argparse ``type=`` of a numeric flag: ``kind`` (``int`` or ``float``) within ``range``."""

    def __init__(self, kind: type, range: Range):
        self.kind, self.range = kind, range
        self.__name__ = kind.__name__

    def __call__(self, text: str) -> Any:
        integer = self.kind is int
        try:
            value = self.kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {self.range.text(integer)}, got {text!r}") from None
        if not self.range.holds(value):
            raise argparse.ArgumentTypeError(f"must be {self.range.text(integer)}, got {text}")
        return value


def add_number(p: Any, flag: str, kind: type, range: Range, *, help: str, **kw: Any) -> None:
    """A numeric flag whose help states its range and whose value argparse checks against it."""
    p.add_argument(flag, type=NumberArg(kind, range), help=f"{help} [{range.text(kind is int)}]", **kw)


class Deprecated(argparse.Action):
    """An old spelling of a flag, kept for one release: it stores into ``dest`` (appending to a
    list for a flag of ``nargs``, the value itself for a flag of one value) and records itself, so
    that the command warns (:func:`warn_deprecated`) once logging is set up. ``new`` is the
    spelling to use (the docs' table of old spellings lists it); ``use``, when given, writes it
    out for the parsed arguments (``None``: no warning, the command refuses them and says why)."""

    def __init__(
        self,
        option_strings: list[str],
        dest: str,
        *,
        new: str,
        use: Callable[[argparse.Namespace], str | None] | None = None,
        **kw: Any,
    ) -> None:
        self.new, self.use = new, use
        super().__init__(option_strings, dest, **kw)

    def __call__(
        self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: str | None = None
    ) -> None:
        if self.nargs is None:
            setattr(namespace, self.dest, values)
        else:
            previous = getattr(namespace, self.dest, None)
            values = list(values) if isinstance(values, (list, tuple)) else [values]
            setattr(namespace, self.dest, [*(previous or []), *values])
        used = getattr(namespace, "deprecated_flags", None) or []
        namespace.deprecated_flags = [*used, (option_string, self.use or self.new)]


def add_deprecated(p: Any, old: str, new: str, dest: str, **kw: Any) -> None:
    """``old`` as a hidden, warning alias of ``new`` (which stores into ``dest``: a list when
    ``nargs`` is given, else one value); ``use=``: see :class:`Deprecated`."""
    p.add_argument(old, action=Deprecated, new=new, dest=dest, help=argparse.SUPPRESS, **kw)


def warn_deprecated(args: argparse.Namespace) -> None:
    """One warning per old flag spelling the command line used."""
    for old, new in dict(getattr(args, "deprecated_flags", None) or []).items():
        use = new(args) if callable(new) else new
        if use is not None:
            log.warning(f"{old} is deprecated and will be removed in the next release: use {use}")


def add_per_item_alias(p: Any, old: str, dest: str, *, metavar: str) -> None:
    """``old``: the per-item output's flag of a command whose ``-o`` was its results JSON until
    this release (``bench run --predictions``, ``regenerate --trace``); see :func:`per_item_outputs`."""

    def use(args: argparse.Namespace) -> str | None:
        if args.summary is not None:
            return None  # refused by per_item_outputs, which says why
        return (
            f"-o {shlex.quote(getattr(args, dest))} --summary {shlex.quote(args.output)} (-o is now the per-item "
            f"output and --summary the results JSON; given with {old}, -o is still read as the results JSON "
            "in this release)"
        )

    add_deprecated(p, old, f"-o {metavar} --summary SUMMARY.json", dest, use=use, metavar=metavar)


@dataclass(frozen=True)
class PerItemOutputs:
    """The per-item output and the results JSON a command line names, and the flags it named them
    by (what error messages say): ``-o`` and ``--summary``, or the old spellings of this release."""

    output: str | None
    summary: str | None
    output_flag: str = "-o"
    summary_flag: str = "--summary"


def per_item_outputs(args: argparse.Namespace, old: str, dest: str) -> PerItemOutputs:
    """``-o`` / ``--summary`` of ``bench run`` and ``regenerate``, with the transitional rule of
    this release, so that no old command line silently changes meaning: with the old per-item
    flag (``old``, stored in ``dest``) ``-o`` is still the results JSON; an ``-o`` ending in
    ``.json`` with neither ``--summary`` nor the old flag is too (and no per-item file is
    written), with a warning naming the new form; otherwise ``-o`` is the per-item JSONL."""
    legacy = getattr(args, dest, None)
    if legacy is not None:
        if args.summary is not None:
            raise ConfigError(
                f"{old} (deprecated) with --summary: -o would be the per-item output and the results "
                f"JSON at once; write -o {shlex.quote(legacy)} --summary {shlex.quote(args.summary)} "
                f"without {old}"
            )
        return PerItemOutputs(legacy, args.output, old, "-o")
    if args.summary is None and args.output.lower().endswith(".json"):
        jsonl = shlex.quote(str(Path(args.output).with_suffix(".jsonl")))
        log.warning(
            f"-o {args.output} (a .json file) is read as the results JSON, as before this release, and no "
            "per-item output is written: -o is now the per-item output (JSONL) and --summary the results JSON; "
            f"write -o {jsonl} --summary {shlex.quote(args.output)}"
        )
        return PerItemOutputs(None, args.output, summary_flag="-o")
    return PerItemOutputs(args.output, args.summary)


SHARD_HELP = (
    "score only shard I of N (1 <= I <= N): the items whose id hashes to it (sha256), the same on "
    "every machine; combine the shards with `conflictscore merge`"
)


def shard_arg(text: str) -> Shard:
    """argparse ``type=`` for ``--shard``: the message of a bad value says the form."""
    try:
        return Shard.parse(text)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--shard ")) from None


def add_shard_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shard", metavar="I/N", type=shard_arg, help=SHARD_HELP)


def add_output_args(p: argparse.ArgumentParser, *, json_help: str = "the result as JSON") -> None:
    """``--json`` and ``-q``, meaning the same for every command: ``--json`` prints the command's
    result as JSON on stdout and nothing else there; ``-q`` prints nothing on stdout but that,
    and shows no progress bars and no notes; warnings and errors go to stderr either way."""
    p.add_argument("--json", action="store_true", help=f"print {json_help} on stdout, and nothing else there")
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars, no notes, no text on stdout (warnings and errors still on stderr)",
    )


def show_progress(args: argparse.Namespace) -> bool:
    """Progress for a command, unless ``-q``: bars on a terminal, a log line every
    ``$CONFLICTSCORE_PROGRESS_S`` seconds elsewhere (:mod:`conflictscore_local.util.progress`)."""
    return not getattr(args, "quiet", False)


def add_pipeline_args(p: argparse.ArgumentParser) -> None:
    """Flags that choose and configure the pipeline; shared by ``score`` and ``bench run``."""
    g = p.add_argument_group("pipeline (flags override --config)")
    g.add_argument("--config", metavar="FILE", help="TOML config file, or a summary JSON of an earlier run to replay")
    for stage in STAGES:
        extra = "; 'none' judges every pair" if stage == "pruner" else ""
        g.add_argument(f"--{stage}", metavar="NAME", help=f"{stage} backend (see `conflictscore backends`){extra}")
        g.add_argument(
            f"--{stage}-arg",
            metavar="KEY=VALUE",
            action="append",
            default=[],
            help=f"an argument of the {stage} backend (repeatable; VALUE read as JSON when it parses)",
        )
    add_number(
        g,
        "--claims-per-item",
        int,
        field_range(SampleConfig, "claims_per_item"),
        metavar="K",
        help="judge at most K claims of each item (sample.claims_per_item; default 0: every claim); the "
        "summary says how many were scored of how many, with the estimator's interval",
    )
    g.add_argument(
        "--claim-selection",
        metavar="RULE",
        choices=SELECTIONS,
        help="which K claims (sample.selection): first, longest, salient (numbers, dates, names and the "
        "question's words: the most checkable) or random (seeded by engine.seed); default first",
    )
    g.add_argument(
        "--set",
        metavar="SECTION.KEY=VALUE",
        action="append",
        default=[],
        help="any config value, e.g. chunk.max_tokens=256, aggregate.keep_both=true",
    )
    g.add_argument(
        "--cache", metavar="PATH", help="judgment cache file (default ~/.cache/conflictscore/judgments.sqlite)"
    )
    g.add_argument("--no-cache", action="store_true", help="neither read nor write the judgment cache")


def add_seed_arg(p: argparse.ArgumentParser) -> None:
    """``--seed N`` of ``score`` and ``bench run``: ``engine.seed`` (the bootstrap intervals, random claim
    selection), recorded in the summary's configuration like any setting."""
    add_number(
        p,
        "--seed",
        int,
        SEED,
        metavar="N",
        dest="engine_seed",
        help="seed of the bootstrap intervals and of --claim-selection random (engine.seed; default 0)",
    )


def _seed_set(assignments: list[str]) -> str | None:
    """The last ``--set engine.seed=...`` of a command line, if any."""
    found = [a for a in assignments if a.partition("=")[0].strip() == "engine.seed"]
    return found[-1] if found else None


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """One :class:`RunConfig` from the embedded defaults, ``--config`` and the flags."""
    cfg = _load_any_config(args.config) if args.config else load_config()
    data: dict[str, dict[str, Any]] = {}
    for stage in STAGES:
        name = getattr(args, stage)
        body: dict[str, Any] = {}
        if name:
            body["name"] = name
        for a in getattr(args, f"{stage}_arg"):
            k, v = parse_assignment(a, flag=f"--{stage}-arg")
            body[k] = v
        if body:
            data[stage] = body
    if getattr(args, "claims_per_item", None) is not None:
        data.setdefault("sample", {})["claims_per_item"] = args.claims_per_item
    if getattr(args, "claim_selection", None) is not None:
        data.setdefault("sample", {})["selection"] = args.claim_selection
    seed = getattr(args, "engine_seed", None)
    if seed is not None:
        also = _seed_set(args.set)
        if also is not None and also.partition("=")[2].strip() != str(seed):
            raise ConfigError(f"--seed {seed} and --set {also}: two seeds; give one of them")
        data.setdefault("engine", {})["seed"] = seed
    if args.cache:
        data["cache"] = {"path": args.cache}
    if args.no_cache:
        data.setdefault("cache", {})["enabled"] = False
    cfg = cfg.updated(data, where="command line")
    return apply_overrides(cfg, args.set)


def _check_version(path: str, versions: Any) -> None:
    """Warn when a replayed summary was written by another major version (its settings and
    backends may mean other things there) or says nothing of its version."""
    from .._version import __version__

    theirs = versions.get("conflictscore-local") if isinstance(versions, dict) else None
    if not isinstance(theirs, str):
        log.warning(
            f"--config {path}: the summary records no conflictscore-local version; replayed as if it were "
            f"{__version__}'s"
        )
    elif theirs.split(".")[0] != __version__.split(".")[0]:
        log.warning(
            f"--config {path} was written by conflictscore-local {theirs}, this is {__version__}: another "
            "major version, whose settings and backends may mean other things; check the replayed run"
        )


def _load_any_config(path: str) -> RunConfig:
    if path.endswith(".json"):
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except OSError as e:
            raise ConflictScoreError(f"{path}: cannot read: {e.strerror}") from None
        except RecursionError:
            raise ConflictScoreError(f"{path}: cannot read as JSON: nested too deeply") from None
        except ValueError as e:  # not JSON, not UTF-8, or an integer too long to convert
            raise ConflictScoreError(f"{path}: cannot read as JSON: {str(e).split('; use sys.')[0]}") from None
        run = data.get("config", {}).get("run") if isinstance(data, dict) else None
        if not isinstance(run, dict):
            raise ConflictScoreError(f"{path}: not a summary JSON (no config.run to replay)")
        _check_version(path, data.get("versions"))
        return RunConfig.from_mapping(run, where=path)
    return RunConfig.from_toml(path)


OUTPUT_KINDS: dict[str, str] = {
    ".jsonl": "the per-item rows, one JSON object a line",
    ".json": "one JSON document",
    ".csv": "a CSV table",
    ".html": "the HTML page",
    ".tar": "a tar archive",
    ".tar.gz": "a gzipped tar archive",
}
"""What an output's extension says it is (as promptfoo reads ``-o``); each command allows some of them."""


def output_kind(
    path: str | None,
    allowed: tuple[str, ...],
    *,
    flag: str = "-o",
    stdout: bool = False,
    says: Mapping[str, str] | None = None,
) -> str | None:
    """The extension of ``path`` among ``allowed`` (case ignored; None for no path), ``-`` for stdout when the
    command streams there (``stdout``), ``.jsonl`` for a device or a FIFO (``/dev/stdout``: rows streamed
    to it); anything else is refused, naming the allowed extensions and what each writes (``says`` overrides
    :data:`OUTPUT_KINDS`; exit 2, nothing written)."""
    import os
    import stat

    if path is None:
        return None
    if path == "-" and stdout:
        return "-"
    name = str(path).lower()
    found = next((e for e in sorted(allowed, key=len, reverse=True) if name.endswith(e)), None)
    if found is not None:
        return found
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = 0
    if (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)) and ".jsonl" in allowed:
        return ".jsonl"
    if stat.S_ISDIR(mode):
        return allowed[0]  # the destination check says what is wrong ("is a directory; name a file")
    ext = os.path.splitext(str(path))[1]
    names = [f"{e} ({(says or {}).get(e, OUTPUT_KINDS[e])})" for e in allowed] + (["- (stdout)"] if stdout else [])
    what = f"{ext} is not a format this command writes" if ext else "no extension to pick the format by"
    raise ConfigError(f"{flag} {path}: {what}; allowed: {', '.join(names)}")


def add_table_args(p: argparse.ArgumentParser, *, pairs: bool = True) -> None:
    """``--csv`` (one row per item: its metrics) and ``--csv-pairs`` (one per claim × document); ``-`` is stdout."""
    p.add_argument(
        "--csv",
        metavar="ITEMS.csv",
        help="also write one CSV row per item (its metrics; - for stdout); "
        "an -o ending in .csv writes that table instead of the JSON",
    )
    if pairs:
        p.add_argument(
            "--csv-pairs",
            metavar="PAIRS.csv",
            help="also write one CSV row per claim × document: the "
            "claim, the document id, the label, its probabilities, the deciding passage's span",
        )


def table_paths(args: argparse.Namespace, output: str | None) -> tuple[Any, str | None]:
    """The tables a command line asks for, and its main output: an ``-o`` ending in ``.csv`` is the
    item table (written instead of the command's JSON or JSONL, as promptfoo reads ``-o``), one ending in
    ``.html`` the page (``--report``, then nothing else is written there)."""
    from ..formats.table import TablePaths, is_csv

    items, flag = args.csv, "--csv"
    if is_csv(output):
        if items is not None:
            raise ConfigError(
                f"-o {output} and --csv {items}: an -o ending in .csv is the item table already; give one of them"
            )
        items, flag, output = output, "-o", None
    elif output is not None and str(output).lower().endswith(".html") and hasattr(args, "report"):
        if args.report is not None:
            raise ConfigError(
                f"-o {output} and --report {args.report}: an -o ending in .html is the page already; give one of them"
            )
        args.report, output = output, None
    tables = TablePaths(items, getattr(args, "csv_pairs", None), flag)
    _one_thing_on_stdout(args, tables)
    return tables, output


def _one_thing_on_stdout(args: argparse.Namespace, tables: Any) -> None:
    """A table on stdout is all stdout holds: two tables there, or a table and ``--json``, would interleave
    (or one would be left out), so they are refused before any work."""
    on_stdout = [f for f, p in ((tables.items_flag, tables.items), ("--csv-pairs", tables.pairs)) if str(p) == "-"]
    if len(on_stdout) == 2:
        raise ConfigError(
            f"{on_stdout[0]} - and --csv-pairs -: two tables on stdout would run into each other; "
            "write one of them to a file"
        )
    if on_stdout and getattr(args, "json", False):
        raise ConfigError(
            f"{on_stdout[0]} - and --json both print on stdout; write the table to a file, or leave "
            "out --json (the summary can go to --summary SUMMARY.json)"
            if hasattr(args, "summary")
            else f"{on_stdout[0]} - and --json both print on stdout; write the table to a file, or "
            "leave out --json (-o COMPARE.json writes the comparison)"
        )


SCORE_OUTPUTS: dict[str, str] = {
    ".json": "the per-item rows as one JSON array",
    ".csv": "one row per item",
    ".html": "the HTML report",
}
"""What ``score``'s and ``bench run``'s ``-o`` extensions write (the rest as :data:`OUTPUT_KINDS` says)."""


def score_output(args: argparse.Namespace) -> tuple[Any, str | None]:
    """``score``'s ``-o`` by its extension: ``.jsonl`` the per-item rows (resumable), ``.json`` the same rows as
    one JSON array (written at the end), ``.csv`` the item table, ``.html`` the report, ``-`` the rows on
    stdout; the tables and the JSONL destination (None when -o is not JSONL)."""
    from dataclasses import replace

    kind = output_kind(args.output, (".jsonl", ".json", ".csv", ".html"), stdout=True, says=SCORE_OUTPUTS)
    tables, output = table_paths(args, args.output)
    if kind == ".json":
        tables, output = replace(tables, array=output), None
    return tables, output


def rows_to_stdout(args: argparse.Namespace, output: str | None, tables: Any = None) -> bool:
    """Whether ``-o -`` streams the per-item rows to stdout (then the command prints nothing else
    there); refused beside ``--json`` or a table on stdout, which would interleave with them."""
    if output != "-":
        return False
    if getattr(args, "json", False):
        summary = " or the summary to --summary SUMMARY.json" if hasattr(args, "summary") else ""
        raise ConfigError(f"-o - and --json both print on stdout; write the rows to a file (-o OUT.jsonl){summary}")
    if tables is not None and tables.to_stdout:
        raise ConfigError(
            "-o - and a table on stdout (--csv - or --csv-pairs -) would interleave; write one of them to a file"
        )
    return True


def add_gate_arg(p: argparse.ArgumentParser, *, compare: bool = False) -> None:
    """``--fail-if CONDITION`` (repeatable): exit status 4, one line per condition that held
    (:mod:`conflictscore_local.core.gate`); a condition that does not parse is refused by argparse (exit 2)."""
    from ..core.gate import parse_condition

    def condition(text: str) -> Any:
        try:
            return parse_condition(text, compare=compare)
        except ConfigError as e:
            raise argparse.ArgumentTypeError(str(e).removeprefix(f"--fail-if {text!r}: ")) from None

    example = (
        '"cs_c.diff>0.05" (judged on the paired interval: see docs/cli.md#ci-gate)'
        if compare
        else '"cs_c>0.3", "micro.support_rate<0.5"'
    )
    p.add_argument(
        "--fail-if",
        metavar="CONDITION",
        action="append",
        type=condition,
        default=[],
        help=f"exit with status 4 when the condition holds, e.g. {example}; repeatable",
    )


def input_after_nargs(args: argparse.Namespace, dest: str, flag_dest: str, metavar: str) -> None:
    """A positional argument that a ``nargs="+"`` flag before it swallowed (``bench run --source
    a b items.jsonl``): the flag's last value that names a file (or ends in ``.jsonl``) is the
    positional; with none, the error argparse would have given (exit 2)."""
    import os

    if getattr(args, dest) is not None:
        return
    values = getattr(args, flag_dest) or []
    if values and (values[-1].lower().endswith(".jsonl") or os.path.isfile(values[-1])):
        setattr(args, dest, values[-1])
        setattr(args, flag_dest, values[:-1] or None)
        return
    raise ConfigError(f"the following arguments are required: {metavar}")
