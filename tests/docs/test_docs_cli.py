"""docs/cli.md's flag tables are the parsers' own: every shared flag, exactly the commands that have it."""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

import pytest

from conflictscore_local.cli import build_parser, leaf_parsers, main
from conflictscore_local.cli.flags import Deprecated

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def parser_flags() -> tuple[dict[str, set[str]], dict[str, tuple[str, set[str]]]]:
    """Each visible flag → the commands that have it; each deprecated spelling → (new, commands)."""
    flags: dict[str, set[str]] = collections.defaultdict(set)
    old: dict[str, tuple[str, set[str]]] = {}
    for path, parser, _ in leaf_parsers(build_parser()):
        for action in parser._actions:
            for flag in action.option_strings:
                if flag in ("-h", "--help"):
                    continue
                if isinstance(action, Deprecated):
                    old.setdefault(flag, (action.new, set()))[1].add(" ".join(path))
                elif action.help != argparse.SUPPRESS:
                    flags[flag].add(" ".join(path))
    return flags, old


def table(heading: str | None) -> list[list[str]]:
    text = PAGE.read_text(encoding="utf-8")
    if heading:
        text = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    else:
        text = text.split("\n## ", 1)[0]
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines() if line.startswith("|")
    ]
    return rows[2:]


def test_the_flag_table_is_the_parsers() -> None:
    flags, _ = parser_flags()
    listed: set[str] = set()
    for cells in table(None):
        names = re.findall(r"`(-[-\w]+)`", cells[0])
        commands = {c.strip() for c in cells[-1].split(",")}
        assert names, cells
        for name in names:
            listed.add(name)
            assert flags.get(name) == commands, (
                f"docs/cli.md says {name} is on {sorted(commands)}; "
                f"the parsers have it on {sorted(flags.get(name, ()))}"
            )
    shared = {f for f, cmds in flags.items() if len(cmds) > 1}
    assert shared <= listed, f"shared flags missing from docs/cli.md: {sorted(shared - listed)}"


def test_the_old_spellings_table_is_the_parsers() -> None:
    _, old = parser_flags()
    rows = {
        re.findall(r"`(-[-\w]+)`", r[0])[0]: (r[1].strip("`"), {c.strip() for c in r[2].split(",")})
        for r in table("Old spellings")
    }
    assert rows == old


def test_every_command_help_has_examples_and_exit_statuses() -> None:
    for path, parser, _ in leaf_parsers(build_parser()):
        text = parser.format_help()
        assert "\nexit status: 0 " in text, f"`conflictscore {' '.join(path)} --help` states no exit statuses"
        assert parser.description, f"`conflictscore {' '.join(path)} --help` has no description"
        assert "\nexamples:\n" in text, f"`conflictscore {' '.join(path)} --help` shows no examples"


@pytest.mark.parametrize(
    ("argv", "old", "new"),
    [
        (["bench", "build", "--only", "nope", "-o", "x.jsonl"], "--only", "--source NAME"),
        (["bench", "run", "missing.jsonl", "--source-filter", "nope", "-o", "x.jsonl"], "--source-filter", "--source"),
        (["bench", "build", "--source", "nope", "--stats", "s.json", "-o", "x.jsonl"], "--stats", "--summary"),
        (
            [
                "regenerate",
                "--truthfulqa",
                "missing.csv",
                "--sample",
                "3",
                "--generator",
                "openai",
                "--no-cache",
                "-o",
                "x.jsonl",
            ],
            "--sample",
            "--questions",
        ),
    ],
)
def test_old_spellings_warn_and_still_work(
    argv: list[str],
    old: str,
    new: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2  # the value reaches the new flag: 'nope' is refused as a source, or the file is missing
    err = capsys.readouterr().err
    assert f"warning: {old} is deprecated and will be removed in the next release: use {new}" in err
    assert "nope" in err or "missing.jsonl" in err or "missing.csv: cannot open" in err
