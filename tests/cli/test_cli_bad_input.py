"""Bad input, settings and paths: exit 2 with a message naming what is wrong, never a traceback,
and nothing written or destroyed. One table, each case a few small generated files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from conflictscore_local.cli import main

from .test_cli_score import WORKED, write_jsonl


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[Path], list[str]]  # builds the files in the folder, returns the arguments after "score"
    message: str  # must appear in the error (after "{tmp}" is replaced by the folder)


def items(tmp: Path, *rows: object) -> str:
    return str(write_jsonl(tmp / "in.jsonl", list(rows)))


def raw(tmp: Path, text: str, name: str = "in.jsonl") -> str:
    (tmp / name).write_text(text + "\n", encoding="utf-8")
    return str(tmp / name)


def labelled(tmp: Path, *extra: str) -> list[str]:
    return [items(tmp, WORKED), "-o", str(tmp / "out.jsonl"), *extra]


def with_file(tmp: Path, name: str, data: bytes | str, *extra: str) -> list[str]:
    path = tmp / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return labelled(tmp, *[a.replace("{file}", str(path)) for a in extra])


def mkdir(tmp: Path, name: str) -> Path:
    (tmp / name).mkdir()
    return tmp / name


def blocker(tmp: Path) -> Path:
    """A regular file standing where a folder would have to be."""
    (tmp / "blocker").write_text("a file, not a folder\n")
    return tmp / "blocker"


DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * 5000
ONE_DOC = {
    "id": "a",
    "response": "r",
    "documents": [{"id": "d", "text": "t"}],
    "claims": ["c"],
    "labels": [["SUPPORT"]],
}

CASES = [
    # -- input lines -------------------------------------------------------------------
    Case(
        "huge integer",
        lambda t: [
            raw(t, '{"id": "a", "response": "r", "documents": [], "n": ' + HUGE + "}"),
            "-o",
            str(t / "out.jsonl"),
        ],
        "{tmp}/in.jsonl:1: invalid JSON: Exceeds the limit (4300 digits) for integer string conversion",
    ),
    Case(
        "nested 100,000 deep",
        lambda t: [raw(t, DEEP), "-o", str(t / "out.jsonl")],
        "{tmp}/in.jsonl:1: invalid JSON: arrays or objects nested too deeply",
    ),
    Case(
        "lone surrogate in a claim",
        lambda t: [raw(t, json.dumps(ONE_DOC).replace('["c"]', '["c\\ud800"]')), "-o", str(t / "out.jsonl")],
        "{tmp}/in.jsonl:1: field 'claims[0]': lone surrogate \\ud800 at character 1",
    ),
    Case(
        "lone surrogate in a document id",
        lambda t: [raw(t, json.dumps(ONE_DOC).replace('"id": "d"', '"id": "\\udc80"')), "-o", str(t / "out.jsonl")],
        "{tmp}/in.jsonl:1: field 'documents[0].id': lone surrogate \\udc80",
    ),
    Case(
        "lone surrogate in a response",
        lambda t: [raw(t, json.dumps(ONE_DOC).replace('"r"', '"ok \\ud83d"')), "-o", str(t / "out.jsonl")],
        "{tmp}/in.jsonl:1: field 'response': lone surrogate \\ud83d at character 3",
    ),
    Case(
        "replayed summary with a huge integer",
        lambda t: [
            items(t, WORKED),
            "-o",
            str(t / "out.jsonl"),
            "--resume",
            "--config",
            raw(t, '{"config": {"run": {"engine": {"seed": ' + HUGE + "}}}}", "s.json"),
        ],
        "{tmp}/s.json: cannot read as JSON: Exceeds the limit (4300 digits)",
    ),
    # -- configuration -------------------------------------------------------------------
    Case(
        "TOML that is not UTF-8",
        lambda t: with_file(t, "run.toml", b"[judge]\nname = 'nli\xff'\n", "--config", "{file}"),
        "{tmp}/run.toml: not UTF-8 text (byte 20: invalid start byte); TOML files are UTF-8",
    ),
    Case(
        "TOML nested too deeply",
        lambda t: with_file(t, "run.toml", "x = " + DEEP, "--config", "{file}"),
        "{tmp}/run.toml: invalid TOML: arrays or tables nested too deeply",
    ),
    Case(
        "TOML huge integer",
        lambda t: with_file(t, "run.toml", "[engine]\nseed = " + HUGE, "--config", "{file}"),
        "{tmp}/run.toml: invalid TOML: Exceeds the limit (4300 digits)",
    ),
    Case(
        "replayed summary that is not UTF-8",
        lambda t: with_file(t, "s.json", b'{"config": "\xff"}', "--config", "{file}"),
        "{tmp}/s.json: cannot read as JSON: 'utf-8' codec can't decode byte 0xff",
    ),
    Case(
        "replayed summary nested too deeply",
        lambda t: with_file(t, "s.json", DEEP, "--config", "{file}"),
        "{tmp}/s.json: cannot read as JSON: nested too deeply",
    ),
    Case(
        "unknown judge argument on labelled input",
        lambda t: labelled(t, "--judge-arg", "bogus=1"),
        "judge 'nli': unknown argument 'bogus'; allowed: model, revision",
    ),
    Case(
        "unknown generator argument of the llm decomposer",
        lambda t: labelled(t, "--decomposer", "llm", "--decomposer-arg", 'generator_args={"modle": "x"}'),
        "generator 'openai' (generator_args): unknown argument 'modle'; allowed: base_url, model",
    ),
    Case(
        "threshold above 1",
        lambda t: labelled(t, "--set", "aggregate.threshold=7.5"),
        "--set: [aggregate]: threshold (a probability) must be a finite number in [0, 1], got 7.5",
    ),
    Case(
        "threshold below 0",
        lambda t: labelled(t, "--set", "aggregate.threshold=-1"),
        "threshold (a probability) must be a finite number in [0, 1], got -1.0",
    ),
    Case(
        "threshold NaN",
        lambda t: labelled(t, "--set", "aggregate.threshold=NaN"),
        "--set: [aggregate]: argument 'threshold': expected a finite number, got nan",
    ),
    Case(
        "threshold NaN in TOML",
        lambda t: with_file(t, "run.toml", "[aggregate]\nthreshold = nan\n", "--config", "{file}"),
        "{tmp}/run.toml: [aggregate]: argument 'threshold': expected a finite number, got nan",
    ),
    Case(
        "step_items 0",
        lambda t: labelled(t, "--set", "engine.step_items=0"),
        "--set: [engine]: step_items must be an integer in [1, 10000000], got 0",
    ),
    Case(
        "step_items negative",
        lambda t: labelled(t, "--set", "engine.step_items=-4"),
        "step_items must be an integer in [1, 10000000], got -4",
    ),
    Case(
        "step_items of 5000 digits",
        lambda t: labelled(t, "--set", "engine.step_items=" + HUGE),
        "[engine]: argument 'step_items': expected an integer, got '99999999999999",
    ),
    Case(
        "bootstrap negative",
        lambda t: labelled(t, "--set", "engine.bootstrap=-5"),
        "[engine]: bootstrap (0: no intervals) must be an integer in [0, 1000000], got -5",
    ),
    Case(
        "seed negative",
        lambda t: labelled(t, "--set", "engine.seed=-1"),
        "[engine]: seed must be an integer in [0, 9223372036854775807], got -1",
    ),
    Case(
        "checkpoint 0 seconds",
        lambda t: labelled(t, "--set", "engine.checkpoint_s=0"),
        "checkpoint_s (seconds) must be a finite number in [0.001, 86400], got 0.0",
    ),
    Case(
        "unscored share above 1",
        lambda t: labelled(t, "--set", "engine.max_unscored_share=2"),
        "max_unscored_share must be a finite number in [0, 1], got 2.0",
    ),
    Case(
        "chunk of 3 tokens",
        lambda t: labelled(t, "--set", "chunk.max_tokens=3"),
        "[chunk]: max_tokens (or leave it unset: the judge's window) must be an integer in [8, 1000000], got 3",
    ),
    # -- destinations ----------------------------------------------------------------------
    Case(
        "output is the input",
        lambda t: [items(t, WORKED), "-o", str(t / "in.jsonl")],
        "output (-o) {tmp}/in.jsonl is the input file: scoring would overwrite the items",
    ),
    Case(
        "output is the input by another name",
        lambda t: [items(t, WORKED), "-o", str(t / "." / "in.jsonl")],
        "is the input file",
    ),
    Case(
        "summary is the output",
        lambda t: labelled(t, "--summary", str(t / "out.jsonl")),
        "--summary {tmp}/out.jsonl is OUTPUT (-o): writing it would replace that file",
    ),
    Case(
        "report is the input",
        lambda t: labelled(t, "--report", str(t / "in.jsonl")),
        "--report {tmp}/in.jsonl is the input file: writing it would replace that file",
    ),
    Case(
        "report is the summary",
        lambda t: labelled(t, "--summary", str(t / "s.json"), "--report", str(t / "s.json")),
        "--report {tmp}/s.json is --summary",
    ),
    Case(
        "report is a directory",
        lambda t: labelled(t, "--report", str(mkdir(t, "repdir"))),
        "--report {tmp}/repdir is a directory; name a file",
    ),
    Case(
        "summary is the input",
        lambda t: labelled(t, "--summary", str(t / "in.jsonl")),
        "--summary {tmp}/in.jsonl is the input file",
    ),
    Case(
        "output is a directory",
        lambda t: [items(t, WORKED), "-o", str(mkdir(t, "outdir"))],
        "output (-o) {tmp}/outdir is a directory; name a file",
    ),
    Case(
        "summary is a directory",
        lambda t: labelled(t, "--summary", str(mkdir(t, "sumdir"))),
        "--summary {tmp}/sumdir is a directory; name a file",
    ),
    Case(
        "cache is a directory",
        lambda t: labelled(t, "--cache", str(mkdir(t, "cachedir"))),
        "judgment cache {tmp}/cachedir is a directory; name a file (--cache PATH) or use --no-cache",
    ),
    Case(
        "output under a file",
        lambda t: [items(t, WORKED), "-o", str(blocker(t) / "out.jsonl")],
        "output (-o) {tmp}/blocker/out.jsonl: Not a directory",
    ),
    Case(
        "summary under a file",
        lambda t: labelled(t, "--summary", str(blocker(t) / "sub" / "s.json")),
        "--summary {tmp}/blocker/sub/s.json: Not a directory",
    ),
    Case(
        "cache under a file",
        lambda t: labelled(t, "--cache", str(blocker(t) / "j.sqlite")),
        "judgment cache {tmp}/blocker/j.sqlite: {tmp}/blocker is not a directory",
    ),
    Case(
        "cache is the input",
        lambda t: labelled(t, "--cache", str(t / "in.jsonl")),
        "judgment cache {tmp}/in.jsonl is the input file",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_exits_2_with_a_message_and_touches_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture, case: Case
):
    args = case.make(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert main(["score", *args, "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("conflictscore score: error: ") and "Traceback" not in err
    assert case.message.replace("{tmp}", str(tmp_path)) in err, err
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # nothing written, nothing replaced, no .partial left
