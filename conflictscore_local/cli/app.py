"""The ``conflictscore`` command: the command table, every command's exit statuses, logging for the length
of a command, and ``main``. Each command is a module of :mod:`conflictscore_local.cli` (``score.py``,
``backends.py``, ``bench.py``, ...) that parses its flags and calls one library function. The table
(:data:`COMMANDS`) holds each as a small :class:`Command` (its name, its line of help, where its parser is
built), and the registry's ``command`` namespace adds installed plugins' commands. Only the command a
command line names has its parser built, so its module is the only one imported: ``conflictscore --help``
and ``conflictscore backends`` import nothing of ``train-judge`` or ``bench`` (as vLLM's CLI does).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
import textwrap
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from .._version import __version__
from ..backends.registry import REGISTRY
from ..core.errors import BackendUnavailable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Command:
    """One subcommand of ``conflictscore``: its ``name``, its line of ``help`` (what ``conflictscore --help``
    lists, with nothing imported) and ``add``, the ``"module:function"`` that adds its parser to the
    subparsers and sets ``func`` on it (imported only when the command is named; its top-level parser gets
    this ``help``)."""

    name: str
    help: str
    add: str

    def adder(self) -> Callable[[Any], None]:
        """The function that adds this command's parser (its module imported now)."""
        module, _, attr = self.add.partition(":")
        return getattr(importlib.import_module(module), attr)


COMMANDS: dict[str, Any] = REGISTRY.provide(
    "command",
    {
        c.name: c
        for c in (
            Command(
                "score", "score responses against their documents (ConflictScore)", f"{__package__}.score:add_parser"
            ),
            Command(
                "backends",
                "list the registered backends of each role (installed plugins' too), what each does, its "
                "arguments with their defaults, ranges and help",
                f"{__package__}.backends:add_parser",
            ),
            Command(
                "bench",
                "ConflictBench: build the benchmark, measure conflict detection",
                f"{__package__}.bench:add_parser",
            ),
            Command(
                "train-judge",
                "build judge training data (prepare) and fine-tune a SUPPORT / CONTRADICT / IRRELEVANT judge (fit)",
                f"{__package__}.train_judge:add_parser",
            ),
            Command(
                "models",
                "recommended models: list, pull, verify, bundle / unpack for air-gapped boxes",
                f"{__package__}.models:add_parser",
            ),
            Command(
                "report", "write a self-contained HTML report of a scored file", f"{__package__}.report:add_parser"
            ),
            Command(
                "generate",
                "write a report per item under a prompting strategy (input for `score`)",
                f"{__package__}.experiments:add_generate_parser",
            ),
            Command(
                "regenerate",
                "Regenerated-RAG on TruthfulQA multiple choice: accuracy, fix and harm rates",
                f"{__package__}.experiments:add_regenerate_parser",
            ),
            Command(
                "merge",
                "combine the outputs of --shard I/N runs into one run's output and summary",
                f"{__package__}.merge:add_parser",
            ),
            Command(
                "compare",
                "compare two scored runs: paired differences with intervals and p-values, claims that changed",
                f"{__package__}.compare:add_parser",
            ),
            Command(
                "view",
                "an index page of every run under a folder, and a way to compare two",
                f"{__package__}.view:add_parser",
            ),
        )
    },
)
"""The command table, by name: the registry's ``command`` namespace (a plugin's entry point ``command.NAME =
module:add_parser`` adds one; its function adds its parser, help included)."""

SUBCOMMANDS = COMMANDS
"""The table's name until this release."""

EVERY = "*"
"""``build_parser(EVERY)``: every command's parser built (what the tests and the docs read)."""

EXIT_BAD_INPUT = 2

EXIT_COMMON = (
    "0 done; 2 bad input, configuration or destination (one line naming the file, line and field, "
    "or the flag and its range; nothing written); 1 a write or read the machine refused (a full disk), "
    "or a bug (a traceback: please report it); 130 interrupted; 141 stdout closed by its reader (| head)"
)
"""The exit statuses every command shares (docs/cli.md has the table); EXIT_MORE adds a command's own."""
EXIT_MORE = {
    "models verify": "4 verified, and the model failed: a file missing or not matching its lock, or a label map "
    "other than the manifest's",
}


def leaf_parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
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

    def error(self, message: str) -> Any:
        import difflib

        if message.startswith("unrecognized arguments: "):
            flags = [f for a in self._actions for f in a.option_strings if a.help != argparse.SUPPRESS]
            for word in message.removeprefix("unrecognized arguments: ").split():
                close = (
                    difflib.get_close_matches(word.split("=")[0], flags, n=1, cutoff=0.6)
                    if word.startswith("-")
                    else []
                )
                if close:
                    message += f" (did you mean {close[0]}?)"
                    break
        super().error(message)


def build_parser(command: str | None = EVERY) -> argparse.ArgumentParser:
    """The ``conflictscore`` parser with ``command``'s own parser built (:data:`EVERY`: every command's; None:
    none, each command a stub with its help, what ``--help`` lists). A command's module is imported only to
    build its parser; a plugin's that fails to import is left out with a warning."""
    parser = Parser(
        prog="conflictscore",
        description="ConflictScore, locally: measure how an LLM answer handles conflicting evidence "
        "in its grounding documents, with open-weights judges and no network.",
        epilog=TOP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = REGISTRY["command"]  # the table above and installed plugins' commands
    for name in commands.names():
        target = commands.table()[name]
        help = target.help if isinstance(target, Command) else f"a command of the plugin {commands.plugin(name)}"
        if command not in (EVERY, name):
            sub.add_parser(name, help=help, add_help=False)  # a stub: listed, built when named
            continue
        try:
            add: Callable[[Any], None] = target.adder() if isinstance(target, Command) else commands.get(name)
        except ModuleNotFoundError as e:  # a built-in command whose module is not in this version
            if not isinstance(target, Command) or not (e.name and target.add.startswith(e.name)):
                raise
            continue
        except BackendUnavailable as e:  # its module is not in this version, or a plugin's fails to import
            if commands.plugin(name) is not None:
                log.warning(f"{e}; left out")
            continue
        add(_WithHelp(sub, help) if isinstance(target, Command) else sub)
    _finish_help(parser)
    return parser


class _WithHelp:
    """The subparsers a built-in command adds its parser to, given the table's line of help."""

    def __init__(self, sub: Any, help: str):
        self._sub, self._help = sub, help

    def add_parser(self, name: str, **kw: Any) -> argparse.ArgumentParser:
        return self._sub.add_parser(name, help=self._help, **kw)


def named_command(words: Sequence[str]) -> str | None:
    """The command a command line names (its first word that is no flag), if it is one of the table's."""
    first = next((w for w in words if not w.startswith("-")), None)
    return first if first is not None and first in REGISTRY["command"].names() else None


class _Lines(logging.Formatter):
    """What the library logs, as the command shows it on stderr: ``warning: ...`` or the note itself."""

    def format(self, record: logging.LogRecord) -> str:
        from ..jobs import scrub_text

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
    from ..jobs import forget_secrets

    forget_secrets()  # a run redacts the secrets it holds itself, none an earlier run in this process held
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(named_command(words))
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
            from .flags import warn_deprecated

            warn_deprecated(args)
            return int(args.func(args) or 0)
        except KeyboardInterrupt as stop:
            print(interrupted(args, stop), file=sys.stderr)
            return 130
        except Exception as e:
            from ..jobs import failure

            known = failure(e)
            if known is None:
                raise  # a bug: the traceback is what a report of it needs
            status, line = known
            if isinstance(e, BrokenPipeError):
                _stdout_to_devnull()
            if line is not None:
                print(f"conflictscore {args.command}: error: {line}", file=sys.stderr)
            return status


def interrupted(args: argparse.Namespace, stop: KeyboardInterrupt) -> str:
    """The line Ctrl-C ends a command with: what an interrupted run kept (its rows, in OUTPUT.partial, and
    the judgments it made, in the cache) and ``--resume`` where the command has it; just that it stopped
    where it has none (``view --serve``)."""
    said = f"conflictscore {args.command}: interrupted"
    cached = getattr(stop, "judgments_cached", 0)
    output = str(getattr(args, "output", None) or "")
    if not hasattr(args, "resume") or not output.lower().endswith(".jsonl"):  # no rows to resume from
        return said + (
            f"; {cached} judgments kept in the judgment cache: a rerun does not make them again" if cached else ""
        )
    kept = getattr(stop, "kept_items", None)
    if kept is None:
        return f"{said}; rerun with --resume to continue"
    judgments = f" and {cached} judgments in the judgment cache" if cached else ""
    partial = getattr(stop, "partial", "OUTPUT.partial")
    return f"{said}; kept {kept} items in {partial}{judgments}: rerun with --resume to continue"


EXIT_UNLOADS: tuple[str, ...] = ("torch",)
"""Libraries whose teardown at interpreter exit :func:`run` skips: unloading PyTorch's modules and
operator registrations, after every output is written, takes about a tenth of a one-item run's
wall time on a 2-core CPU (``benchmarks/results/speed/start_time-avx2.md`` times both exits)."""
EXIT_SHUTS_DOWN: tuple[str, ...] = (
    "ray",
    "vllm",
    "multiprocessing.popen_spawn_posix",
    "multiprocessing.popen_fork",
    "multiprocessing.popen_forkserver",
)
"""Modules whose presence means something still runs beside this process that the interpreter's
exit handlers stop (Ray's workers, vLLM's engine processes, a ``multiprocessing`` child): with any of
them loaded, :func:`run` exits the ordinary way."""


def run() -> None:
    """The ``conflictscore`` process: :func:`main`, then the exit (:func:`exit_process`)."""
    exit_process(main())


def exit_process(code: int) -> None:
    """End the process with ``code``. Where PyTorch was loaded and nothing runs beside the main
    thread (no other non-daemon thread, none of :data:`EXIT_SHUTS_DOWN` imported), logging and the
    standard streams are flushed and the process ends at once (``os._exit``), without the
    interpreter's teardown of modules: every file a command writes is closed and every cache row
    committed before :func:`main` returns. Elsewhere, ``sys.exit(code)``."""
    import threading

    busy = [t.name for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if busy or not any(m in sys.modules for m in EXIT_UNLOADS) or any(m in sys.modules for m in EXIT_SHUTS_DOWN):
        sys.exit(code)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (| head), a closed stream
            pass
    os._exit(code)


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
    run()
