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


@pytest.mark.parametrize(("argv", "usage", "hint"), [
    (["score", "x.jsonl", "-o", "y.jsonl", "--sumary", "s.json"], "usage: conflictscore score",
     "conflictscore score: error: unrecognized arguments: --sumary s.json (did you mean --summary?)"),
    (["bench", "run", "x.jsonl", "-o", "y.jsonl", "--splt", "test"], "usage: conflictscore bench run",
     "conflictscore bench run: error: unrecognized arguments: --splt test (did you mean --split?)"),
    (["compare", "a", "b", "--zzz"], "usage: conflictscore compare",
     "conflictscore compare: error: unrecognized arguments: --zzz\n"),
])
def test_a_flag_error_shows_the_commands_usage_and_did_you_mean(argv: list[str], usage: str, hint: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert status(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(usage) and hint in err


def test_every_backend_has_a_one_line_description(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backends", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    about = {f"{role}/{name}": e.get("description") for role, names in listing.items() for name, e in names.items()
             if "unavailable" not in e}
    assert about["judge/nli"] == "SUPPORT / CONTRADICT / IRRELEVANT from a local sequence classifier, batched."
    assert about["pruner/none"] == "Keeps every pair: the exhaustive claims × documents matrix."
    assert all(about.values()), [k for k, v in about.items() if not v]
    assert main(["backends", "--role", "pruner"]) == 0
    assert "  none         Keeps every pair: the exhaustive claims × documents matrix.\n" in capsys.readouterr().out
