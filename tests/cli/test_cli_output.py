"""One output discipline for every command: ``--json`` is JSON alone on stdout, ``-q`` leaves
stdout empty, warnings reach stderr either way; the library itself logs and never prints."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from conflictscore_local.cli import main

from .test_cli_score import WORKED, write_jsonl

PACKAGE = Path(__file__).resolve().parents[2] / "conflictscore_local"
EMPTY_RESPONSE = {"id": "blank", "response": "", "documents": [{"id": "d", "text": "x"}]}


@pytest.fixture
def scored(tmp_path: Path) -> dict[str, Path]:
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED, EMPTY_RESPONSE])
    paths = {"input": inp, "output": tmp_path / "o.jsonl", "summary": tmp_path / "s.json"}
    assert main(["score", str(inp), "-o", str(paths["output"]), "--summary", str(paths["summary"]), "-q"]) == 0
    return paths


def commands(p: dict[str, Path], tmp_path: Path) -> dict[str, list[str]]:
    return {
        "score": ["score", str(p["input"]), "-o", str(tmp_path / "again.jsonl"), "--no-cache"],
        "report": ["report", str(p["output"]), "--items", str(p["input"]), "-o", str(tmp_path / "r.html")],
        "backends": ["backends", "--role", "pruner"],
        "models list": ["models", "list"],
    }


def test_json_quiet_and_text_mean_the_same_for_every_command(
    scored: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    for name, args in commands(scored, tmp_path).items():
        assert main(args) == 0, name
        text = capsys.readouterr()
        assert text.out.strip(), name
        assert main(args + ["--json"]) == 0, name
        as_json = capsys.readouterr()
        json.loads(as_json.out)  # JSON and nothing else on stdout
        assert main(args + ["-q"]) == 0, name
        quiet = capsys.readouterr()
        assert quiet.out == "", name
        if name == "score":  # a warning goes to stderr whatever stdout carries
            warning = "warning: 1 item(s) have an empty response and no claims"
            assert all(warning in e for e in (text.err, as_json.err, quiet.err))


def test_a_note_shows_without_q_and_warnings_always(capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    from conflictscore_local.cli import command_logging

    log = logging.getLogger("conflictscore_local.test")
    for quiet in (False, True):
        with command_logging(quiet):
            log.info("a note")
            log.warning("a warning")
        assert capsys.readouterr().err == ("" if quiet else "a note\n") + "warning: a warning\n"
    assert logging.getLogger("conflictscore_local").handlers == []  # left as it was found


def _prints(tree: ast.AST) -> list[int]:
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print"
    ]


def test_the_library_never_prints_outside_the_command_line() -> None:
    face = {"cli/app.py", "cli/text.py"}  # the command table and what commands print
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in face:
            continue
        lines = _prints(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[rel] = lines
    assert found == {}
