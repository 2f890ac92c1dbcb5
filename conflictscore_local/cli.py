"""The ``conflictscore`` command: argument parsing only; the work is in the library.

Subcommands live beside the code they drive and register here by module path, so
``conflictscore --help`` imports none of them (and no torch).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import sys
import textwrap
import warnings
from typing import Any, Callable, Iterator, Sequence

from . import __version__
from .cli_flags import (LIMIT, add_gate_arg, add_number, add_output_args, add_pipeline_args, add_shard_arg,
                        add_table_args, config_from_args, show_progress, table_paths, warn_deprecated)
from .cli_text import emit, format_report, gate_failures
from .registry import ROLES
from .errors import ConflictScoreError

# name → "module:function" adding the subparser; the function sets ``func`` on it.
SUBCOMMANDS: dict[str, str] = {
    "score": "conflictscore_local.cli:add_score_parser",
    "backends": "conflictscore_local.cli:add_backends_parser",
    "bench": "conflictscore_local.bench.cli:add_parser",
    "train-judge": "conflictscore_local.train.cli:add_parser",
    "models": "conflictscore_local.models.cli:add_parser",
    "report": "conflictscore_local.report.cli:add_parser",
    "generate": "conflictscore_local.experiments.cli:add_generate_parser",
    "regenerate": "conflictscore_local.experiments.cli:add_regenerate_parser",
    "merge": "conflictscore_local.shards.cli:add_parser",
    "compare": "conflictscore_local.compare.cli:add_parser",
    "view": "conflictscore_local.report.cli:add_view_parser",
}

EXIT_BAD_INPUT = 2

SCORE_EPILOG = """\
input format (JSONL, one item a line; RAGAS rows (user_input, response, retrieved_contexts) and DeepEval
rows (input, actual_output, retrieval_context) are read too):
  {"id": "q1", "question": "...", "response": "...",      id optional: line-N
   "documents": [{"id": "d1", "text": "..."}, ...],       or plain strings: ids d0, d1, ...
   "claims": ["..."],                      optional: skips decomposition
   "labels": [["SUPPORT", "CONTRADICT", ...], ...]}   optional: labels[i][j] = claim i vs document j; skips judging

examples:
  conflictscore score examples/items.jsonl -o scored.jsonl --summary summary.json
  conflictscore score items.jsonl -o out.jsonl --judge nli --judge-arg model=./my-judge --pruner none
  conflictscore score items.jsonl -o out.jsonl --judge-arg model=deberta-v3-large-nli   (a name from `conflictscore models list`)
  conflictscore score items.jsonl -o out.jsonl --config run.toml --set chunk.max_tokens=256 --resume
  conflictscore score items.jsonl -o out.jsonl --config previous_summary.json   (replay a run)
  conflictscore score items.jsonl -o out.jsonl --summary summary.json --report report.html   (HTML report)
  conflictscore score items.jsonl --shard 2/4 -o out.2.jsonl --summary out.2.json   (one of four shards; see merge)
  conflictscore score ragas.jsonl -o out.csv          (RAGAS or DeepEval rows; one CSV row per item, no JSONL)
  conflictscore score items.jsonl -o out.jsonl --csv items.csv --csv-pairs pairs.csv   (tables beside the JSONL)
  conflictscore score items.jsonl -o out.jsonl --fail-if "cs_c>0.3" --fail-if "micro.cs_c>0.25"   (CI gate: exit 4)

exit status: 0 done; 2 bad input or configuration (the message names file, line and field), an OUTPUT that
  would overwrite the input or is being written by another run, a --resume that would mix results;
  3 finished and written, but more judgments unscored than engine.max_unscored_share allows, or more
  sentences the seq2seq / llm decomposer could not split than engine.max_fallback_share;
  4 finished and written, and a --fail-if condition held (one line each on stderr; 3 goes first);
  1 a write that failed (a full disk: the rows so far stay in OUTPUT.partial, rerun with --resume);
  130 interrupted (rerun with --resume); 141 stdout closed by its reader (| head).
"""


def add_score_parser(sub: Any) -> None:
    p = sub.add_parser(
        "score",
        help="score responses against their documents (ConflictScore)",
        description="Decompose each response into claims, judge every claim against every document, "
        "and report CS-C (share of conflicted claims), CS-R (contradiction ratio of conflicted claims), "
        "cs_r_evidenced and the pooled support rate.",
        epilog=SCORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", metavar="INPUT", help="items, JSONL")
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT", help="per-item results, JSONL (written atomically)")
    p.add_argument("--summary", metavar="SUMMARY.json", help="dataset metrics, pair counts, timing, config, versions")
    p.add_argument("--resume", action="store_true", help="keep the finished items of an interrupted run; score the rest")
    p.add_argument("--report", metavar="REPORT.html",
                   help="also write a self-contained HTML report (see `conflictscore report --help`)")
    add_number(p, "--limit", int, LIMIT, metavar="N", help="only the first N items (of the shard, with --shard): a trial run")
    add_output_args(p, json_help="the summary as JSON")
    add_table_args(p)
    add_gate_arg(p)
    add_shard_arg(p)
    add_pipeline_args(p)
    p.set_defaults(func=cmd_score)


def cmd_score(args: argparse.Namespace) -> int:
    from .gate import check_run
    from .run_info import judge_text
    from .scoring import EXIT_UNSCORED, score_file, too_many_fallbacks, too_many_unscored

    cfg = config_from_args(args)
    tables, output = table_paths(args, args.output)
    report = score_file(args.input, output, config=cfg, summary_path=args.summary,
                        resume=args.resume, progress=show_progress(args), report_path=args.report,
                        shard=args.shard, config_file=args.config, limit=args.limit, tables=tables)
    judge = judge_text(report.config)
    if not tables.to_stdout:
        emit(args, report.to_json(), lambda: "\n".join([format_report(report), *([judge] if judge else []),
                                                        *([f"report {args.report}"] if args.report else [])]))
    if too_many_unscored(report, cfg) or too_many_fallbacks(report, cfg):
        return EXIT_UNSCORED
    return gate_failures(args, check_run(args.fail_if, report.to_json()))


def add_backends_parser(sub: Any) -> None:
    p = sub.add_parser("backends", help="list the registered backends of each role, their arguments, defaults "
                       "and the range of each numeric one", epilog=BACKENDS_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--role", choices=ROLES, help="only this role (generator: the backends of generate and regenerate)")
    add_output_args(p, json_help="each backend's arguments and defaults as JSON")
    p.set_defaults(func=cmd_backends)


def cmd_backends(args: argparse.Namespace) -> int:
    import dataclasses

    from . import registry
    from .arguments import argument_defaults, number_kind, numeric_fields

    listing: dict[str, dict[str, Any]] = {}
    for role in [args.role] if args.role else ROLES:
        listing[role] = {}
        for name in registry.available(role):
            try:
                cls = registry.resolve(role, name)
                config = cls.Config
                defaults = argument_defaults(config)
                listing[role][name] = {"about": _about(cls), "args": {k: None if v is dataclasses.MISSING else v for k, v in defaults.items()},
                                       "required": [k for k, v in defaults.items() if v is dataclasses.MISSING],
                                       "ranges": {k: r.text(number_kind(h) is int) for k, h, r in numeric_fields(config)
                                                  if r is not None}}
            except ConflictScoreError as e:
                listing[role][name] = {"unavailable": str(e)}

    def text() -> str:
        lines = []
        for role, names in listing.items():
            lines.append(f"{role}:")
            for name, entry in names.items():
                if "unavailable" in entry:
                    lines.append(f"  {name:12} (unavailable: {entry['unavailable']})")
                    continue
                shown = [(k if k in entry["required"] else f"{k}={v!r}")
                         + (f" ({entry['ranges'][k].removeprefix('an integer ').removeprefix('a finite number ')})"
                            if k in entry["ranges"] else "") for k, v in entry["args"].items()]
                lines.append(f"  {name:12} {entry['about']}" if entry["about"] else f"  {name}")
                lines.append(f"  {'':12} {', '.join(shown) or '(no arguments)'}")
        return "\n".join(lines)

    emit(args, json.loads(json.dumps(listing, default=str)), text)
    return 0


def _about(cls: type) -> str:
    """A backend's one-line description: the first sentence of its class docstring."""
    doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
    return doc.split(". ")[0].rstrip(".").replace("``", "") if doc else ""


EXIT_COMMON = ("0 done; 2 bad input, configuration or destination (one line naming the file, line and field, "
               "or the flag and its range; nothing written); 1 a write or read the machine refused (a full disk), "
               "or a bug (a traceback: please report it); 130 interrupted; 141 stdout closed by its reader (| head)")
"""The exit statuses every command shares (docs/cli.md has the table); EXIT_MORE adds a command's own."""
EXIT_MORE = {
    "models verify": "4 verified, and the model failed: a file missing or not matching its lock, or a label map "
                     "other than the manifest's",
}

BACKENDS_EPILOG = """examples:
  conflictscore backends                       every role's backends, their arguments and defaults
  conflictscore backends --role judge          only the judges
  conflictscore backends --role generator      the generators of `generate` and `regenerate`
  conflictscore backends --json | python -m json.tool
"""


def leaf_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """Every command's own parser (``("bench", "run")`` ...) with its one-line help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, child in action.choices.items():
                if any(isinstance(a, argparse._SubParsersAction) for a in child._actions):
                    yield from leaf_parsers(child, path + (name,))
                else:
                    yield path + (name,), child, helps.get(name, "")


def _finish_help(parser: argparse.ArgumentParser) -> None:
    """Every command's --help ends with its exit statuses (and starts with a description)."""
    for path, child, summary in leaf_parsers(parser):
        child.description = child.description or (summary[:1].upper() + summary[1:] + "." if summary else None)
        epilog = child.epilog or ""
        if "\nexit status:" not in "\n" + epilog:
            more = EXIT_MORE.get(" ".join(path))
            codes = EXIT_COMMON if more is None else EXIT_COMMON.replace("; 1 a write", f"; {more}; 1 a write", 1)
            text = textwrap.fill("exit status: " + codes, width=100, subsequent_indent="  ", break_on_hyphens=False)
            child.epilog = (epilog.rstrip("\n") + "\n\n" if epilog else "") + text + "\n"
            child.formatter_class = argparse.RawDescriptionHelpFormatter


TOP_EPILOG = """\
examples (the first ten minutes):
  conflictscore score examples/items.jsonl -o out.jsonl --summary out.json --report out.html
  conflictscore score ragas.jsonl -o out.csv                  RAGAS / DeepEval rows in, one CSV row per item out
  conflictscore score items.jsonl -o out.jsonl --fail-if "cs_c>0.3"        a CI gate: exit 4 when it holds
  conflictscore compare a.jsonl b.jsonl --report compare.html              paired differences, claims that changed
  conflictscore view out/                                     every run under out/ on one page
  conflictscore backends --role judge                         the judges, their arguments and defaults

`conflictscore COMMAND --help` shows a command's flags, examples and exit statuses.
"""


class Parser(argparse.ArgumentParser):
    """argparse with "did you mean" for a misspelled flag (the closest of the command's own)."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        import difflib

        if message.startswith("unrecognized arguments: "):
            flags = [f for a in self._actions for f in a.option_strings if a.help != argparse.SUPPRESS]
            for word in message.removeprefix("unrecognized arguments: ").split():
                close = difflib.get_close_matches(word.split("=")[0], flags, n=1, cutoff=0.6) if word.startswith("-") else []
                if close:
                    message += f" (did you mean {close[0]}?)"
                    break
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="conflictscore",
        description="ConflictScore, locally: measure how an LLM answer handles conflicting evidence "
        "in its grounding documents, with open-weights judges and no network.",
        epilog=TOP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, target in SUBCOMMANDS.items():
        mod, _, fn = target.partition(":")
        try:
            add: Callable[[Any], None] = getattr(importlib.import_module(mod), fn)
        except ModuleNotFoundError as e:
            if e.name and mod.startswith(e.name):
                continue
            raise
        add(sub)
    _finish_help(parser)
    return parser


class _Lines(logging.Formatter):
    """What the library logs, as the command shows it on stderr: ``warning: ...`` or the note itself."""

    def format(self, record: logging.LogRecord) -> str:
        from .jobs import scrub_text

        text = scrub_text(record.getMessage())
        if record.levelno >= logging.ERROR:
            return f"error: {text}"
        return f"warning: {text}" if record.levelno >= logging.WARNING else text


@contextlib.contextmanager
def command_logging(quiet: bool) -> Iterator[None]:
    """The library's log on stderr for the length of one command: notes (``INFO``) unless
    ``-q``, warnings always; Python warnings (a library's ``UserWarning``) in the same one-line
    form, without the file and line; the logger is left as it was found afterwards."""
    logger = logging.getLogger("conflictscore_local")
    saved = logger.handlers[:], logger.level, logger.propagate
    shown = warnings.showwarning

    def show(message: Any, category: type, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        logger.warning(f"{category.__name__}: {message}")

    warnings.showwarning = show
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Lines())
    logger.handlers[:] = [handler]
    logger.setLevel(logging.WARNING if quiet else logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved[0], saved[1], saved[2]
        warnings.showwarning = shown


def _command_parser(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``argv`` names: its usage and flags are what an error shows."""
    for word in argv:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and word in subs[0].choices:
            parser = subs[0].choices[word]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from .jobs import forget_secrets

    forget_secrets()  # a run redacts the secrets it holds itself, none an earlier run in this process held
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(words)
    if extra:  # the command's own usage and "did you mean", not the top-level usage
        _command_parser(parser, words).error("unrecognized arguments: " + " ".join(extra))
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    quiet = bool(getattr(args, "quiet", False))
    if quiet or not sys.stderr.isatty():
        # model-loading bars of transformers / huggingface_hub, read when they are imported
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    with command_logging(quiet):
        try:
            warn_deprecated(args)
            return int(args.func(args) or 0)
        except KeyboardInterrupt:
            print("conflictscore: interrupted; rerun with --resume to continue", file=sys.stderr)
            return 130
        except Exception as e:
            from .jobs import failure

            known = failure(e)
            if known is None:
                raise  # a bug: the traceback is what a report of it needs
            status, line = known
            if isinstance(e, BrokenPipeError):
                _stdout_to_devnull()
            if line is not None:
                print(f"conflictscore {args.command}: error: {line}", file=sys.stderr)
            return status


def _stdout_to_devnull() -> None:
    """After the reader of stdout went away (``| head``): nothing more can reach it, and the
    interpreter's last flush must not fail again."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
