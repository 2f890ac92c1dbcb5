"""The command line meets a newcomer: top-level examples, "did you mean" with the command's own usage,
one line on every backend."""

from __future__ import annotations

import json

import pytest

from conflictscore_local.cli import build_parser, main


def status(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:
        return int(e.code or 0)


def test_the_top_level_help_has_examples() -> None:
    text = build_parser().format_help()
    assert "\nexamples (the first ten minutes):\n" in text
    assert "conflictscore view out/" in text and '--fail-if "cs_c>0.3"' in text


@pytest.mark.parametrize(
    ("argv", "usage", "hint"),
    [
        (
            ["score", "x.jsonl", "-o", "y.jsonl", "--sumary", "s.json"],
            "usage: conflictscore score",
            "conflictscore score: error: unrecognized arguments: --sumary s.json (did you mean --summary?)",
        ),
        (
            ["bench", "run", "x.jsonl", "-o", "y.jsonl", "--splt", "test"],
            "usage: conflictscore bench run",
            "conflictscore bench run: error: unrecognized arguments: --splt test (did you mean --split?)",
        ),
        (
            ["compare", "a", "b", "--zzz"],
            "usage: conflictscore compare",
            "conflictscore compare: error: unrecognized arguments: --zzz\n",
        ),
    ],
)
def test_a_flag_error_shows_the_commands_usage_and_did_you_mean(
    argv: list[str], usage: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert status(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(usage) and hint in err


def test_every_backend_has_a_one_line_description(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backends", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    about = {
        f"{role}/{name}": e.get("description")
        for role, names in listing.items()
        for name, e in names.items()
        if "unavailable" not in e
    }
    assert about["judge/nli"] == "SUPPORT / CONTRADICT / IRRELEVANT from a local sequence classifier, batched."
    assert about["pruner/none"] == "Keeps every pair: the exhaustive claims × documents matrix."
    assert all(about.values()), [k for k, v in about.items() if not v]
    assert main(["backends", "--role", "pruner"]) == 0
    assert "  none         Keeps every pair: the exhaustive claims × documents matrix.\n" in capsys.readouterr().out


def imported_by(*argv: str) -> set[str]:
    """The modules a fresh ``conflictscore ARGV`` process has imported when it ends (its output discarded)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import contextlib, io, json, sys\n"
        f"sys.argv = ['conflictscore', *{list(argv)!r}]\n"
        "from conflictscore_local.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


HEAVY = ("torch", "transformers", "conflictscore_local.train.loop", "conflictscore_local.bench.build")


@pytest.mark.parametrize("argv", [["--help"], ["backends"], ["score", "--help"]])
def test_a_command_line_imports_only_what_it_names(argv: list[str]) -> None:
    """Only the named command's parser is built: --help imports no command module, `backends` and `score
    --help` theirs alone; none of them the training loop, the bench builder, torch or transformers."""
    modules = imported_by(*argv)
    assert [m for m in HEAVY if m in modules] == []
    commands = {
        m
        for m in modules
        if m.startswith("conflictscore_local.cli.")
        and m not in ("conflictscore_local.cli.app", "conflictscore_local.cli.flags", "conflictscore_local.cli.text")
    }
    assert commands == (
        {"conflictscore_local.cli.backends"}
        if argv == ["backends"]
        else {"conflictscore_local.cli.score"}
        if argv[0] == "score"
        else set()
    )


def test_the_top_level_help_is_the_same_with_every_command_built() -> None:
    """--help lists the table's stubs; with every command's parser built it reads the same: each command's
    line of help is the table's (one place for it)."""
    from conflictscore_local.cli.app import COMMANDS, EVERY, Command

    assert build_parser(None).format_help() == build_parser(EVERY).format_help()
    assert all(isinstance(c, Command) and c.help for c in COMMANDS.values())
    score = build_parser("score")
    assert score.format_help() == build_parser(None).format_help()
    sub = next(a for a in score._actions if a.dest == "command")
    assert sub.choices["score"].format_usage().startswith("usage: conflictscore score [-h]")
    assert sub.choices["bench"].format_usage() == "usage: conflictscore bench\n"  # a stub: built when named
