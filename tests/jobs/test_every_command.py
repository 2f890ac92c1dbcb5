"""Every command × every destination collision × every numeric flag out of range, from one table.

Each command that reads or writes files is listed once with the files it reads and writes and
how its command line names them; the cases are generated: each destination pointed at every
other path of the command (an input, another destination, another destination's ``.partial``
file), at a directory (or, for a folder destination, at a file), and every numeric flag of every
command (found in the parser, so a new flag is covered by itself) given values outside its range.
Each must be refused with exit 2, one message naming the path or the flag, and every file as it
was. A command that is missing from the table fails :func:`test_the_table_covers_every_command`.
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.backends.arguments import number_kind, numeric_fields
from conflictscore_local.cli import build_parser, main
from conflictscore_local.cli.flags import NumberArg
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.pipeline.config import _SECTIONS

from .test_hostile import RAMDOCS_ROW, bench_file, files, labelled, locked_model, train_files, truthfulqa, write_jsonl


@dataclass(frozen=True)
class Command:
    """A command of the table: ``make(tmp)`` writes its inputs and returns every path by role
    (inputs and destinations); ``args(paths)`` is its command line; ``reads`` and ``writes`` name
    the roles; ``folders`` the destinations that are folders; ``shared`` those that are not locked
    or replaced (the judgment cache), which must still be no other path."""

    name: str
    make: Callable[[Path], dict[str, Path]]
    args: Callable[[dict[str, Path]], list[str]]
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    folders: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    ok: bool = True  # whether the command as made runs to the end here (checked once, with exit 0)


def run_toml(t: Path) -> Path:
    (t / "run.toml").write_text("[engine]\nseed = 3\n")
    return t / "run.toml"


def score_paths(t: Path) -> dict[str, Path]:
    return {
        "INPUT": labelled(t / "in.jsonl"),
        "--config": run_toml(t),
        "-o": t / "out.jsonl",
        "--summary": t / "s.json",
        "--report": t / "r.html",
        "--cache": t / "c.sqlite",
        "--csv": t / "t.csv",
        "--csv-pairs": t / "pairs.csv",
    }


def view_paths(t: Path) -> dict[str, Path]:
    p = score_paths(folder(t / "runs"))
    assert main(["score", str(p["INPUT"]), "-o", str(p["-o"]), "--summary", str(p["--summary"]), "-q"]) == 0
    return {"DIR": t / "runs", "-o": t / "view.html"}


def merge_paths(t: Path) -> dict[str, Path]:
    p = {"INPUT": labelled(t / "in.jsonl", 8)}
    for i in (1, 2):
        o, s = t / f"o{i}.jsonl", t / f"s{i}.json"
        assert main(["score", str(p["INPUT"]), "--shard", f"{i}/2", "-o", str(o), "--summary", str(s), "-q"]) == 0
        p[f"--outputs {i}"], p[f"--summaries {i}"] = o, s
    return {**p, "-o": t / "m.jsonl", "--summary": t / "m.json", "--report": t / "m.html"}


def report_paths(t: Path) -> dict[str, Path]:
    p = score_paths(t)
    assert main(["score", str(p["INPUT"]), "-o", str(p["-o"]), "--summary", str(p["--summary"]), "-q"]) == 0
    return {"SCORED": p["-o"], "--items": p["INPUT"], "--summary": p["--summary"], "-o": t / "page.html"}


def compare_paths(t: Path) -> dict[str, Path]:
    p = report_paths(t)
    p["B.jsonl"] = t / "b.jsonl"
    assert main(["score", str(p["--items"]), "-o", str(p["B.jsonl"]), "--set", "aggregate.keep_both=true", "-q"]) == 0
    return {
        "A.jsonl": p["SCORED"],
        "B.jsonl": p["B.jsonl"],
        "--summary-a": p["--summary"],
        "-o": t / "c.json",
        "--report": t / "c.html",
        "--csv": t / "c.csv",
    }


def folder(path: Path) -> Path:
    path.mkdir()
    return path


def model_folder(t: Path) -> dict[str, Path]:
    return {"NAME|DIR": locked_model(t / "alpha"), "-o": t / "alpha.tar"}


def bundle_tar(t: Path) -> dict[str, Path]:
    p = model_folder(t)
    assert main(["models", "bundle", str(p["NAME|DIR"]), "-o", str(p["-o"]), "-q"]) == 0
    return {"FILE.tar": p["-o"], "--to": t / "store"}


def fit_paths(t: Path) -> dict[str, Path]:
    train, evals = train_files(t)
    return {"--train": train, "--eval": evals, "-o": t / "judge"}


DEAD = "http://127.0.0.1:9/v1"  # nothing listens: a command that got as far as a request would fail
GENERATOR = ["--generator", "openai", "--generator-arg", f"base_url={DEAD}", "--generator-arg", "max_retries=0"]

COMMANDS = [
    Command(
        "score",
        score_paths,
        lambda p: [
            "score",
            str(p["INPUT"]),
            "--config",
            str(p["--config"]),
            "-o",
            str(p["-o"]),
            "--summary",
            str(p["--summary"]),
            "--report",
            str(p["--report"]),
            "--cache",
            str(p["--cache"]),
            "--csv",
            str(p["--csv"]),
            "--csv-pairs",
            str(p["--csv-pairs"]),
            "-q",
        ],
        ("INPUT", "--config"),
        ("-o", "--summary", "--report", "--cache", "--csv", "--csv-pairs"),
        shared=("--cache",),
    ),
    Command(
        "bench run",
        lambda t: {
            "INPUT": bench_file(t / "bench.jsonl"),
            "--config": run_toml(t),
            "-o": t / "p.jsonl",
            "--summary": t / "r.json",
            "--report": t / "r.html",
            "--cache": t / "c.sqlite",
        },
        lambda p: [
            "bench",
            "run",
            str(p["INPUT"]),
            "--given-labels",
            "--config",
            str(p["--config"]),
            "-o",
            str(p["-o"]),
            "--summary",
            str(p["--summary"]),
            "--report",
            str(p["--report"]),
            "--cache",
            str(p["--cache"]),
            "-q",
        ],
        ("INPUT", "--config"),
        ("-o", "--summary", "--report", "--cache"),
        shared=("--cache",),
    ),
    Command(
        "bench build",
        lambda t: {
            "--source": write_jsonl(t / "ramdocs.jsonl", [RAMDOCS_ROW]),
            "-o": t / "bench.jsonl",
            "--summary": t / "stats.json",
        },
        lambda p: [
            "bench",
            "build",
            "--source",
            "ramdocs",
            "--source",
            f"ramdocs={p['--source']}",
            "-o",
            str(p["-o"]),
            "--summary",
            str(p["--summary"]),
            "-q",
        ],
        ("--source",),
        ("-o", "--summary"),
    ),
    Command(
        "merge",
        merge_paths,
        lambda p: [
            "merge",
            str(p["INPUT"]),
            "--outputs",
            str(p["--outputs 1"]),
            str(p["--outputs 2"]),
            "--summaries",
            str(p["--summaries 1"]),
            str(p["--summaries 2"]),
            "-o",
            str(p["-o"]),
            "--summary",
            str(p["--summary"]),
            "--report",
            str(p["--report"]),
            "-q",
        ],
        ("INPUT", "--outputs 1", "--outputs 2", "--summaries 1", "--summaries 2"),
        ("-o", "--summary", "--report"),
    ),
    Command(
        "report",
        report_paths,
        lambda p: [
            "report",
            str(p["SCORED"]),
            "--items",
            str(p["--items"]),
            "--summary",
            str(p["--summary"]),
            "-o",
            str(p["-o"]),
            "-q",
        ],
        ("SCORED", "--items", "--summary"),
        ("-o",),
    ),
    Command(
        "compare",
        compare_paths,
        lambda p: [
            "compare",
            str(p["A.jsonl"]),
            str(p["B.jsonl"]),
            "--summary-a",
            str(p["--summary-a"]),
            "-o",
            str(p["-o"]),
            "--report",
            str(p["--report"]),
            "--csv",
            str(p["--csv"]),
            "-q",
        ],
        ("A.jsonl", "B.jsonl", "--summary-a"),
        ("-o", "--report", "--csv"),
    ),
    Command("view", view_paths, lambda p: ["view", str(p["DIR"]), "-o", str(p["-o"]), "-q"], ("DIR",), ("-o",)),
    Command(
        "generate",
        lambda t: {"ITEMS": labelled(t / "items.jsonl"), "-o": t / "g.jsonl"},
        lambda p: ["generate", str(p["ITEMS"]), "--strategy", "standard", "-o", str(p["-o"]), *GENERATOR, "-q"],
        ("ITEMS",),
        ("-o",),
        ok=False,
    ),
    Command(
        "regenerate",
        lambda t: {
            "--truthfulqa": truthfulqa(t),
            "--config": run_toml(t),
            "-o": t / "t.jsonl",
            "--summary": t / "r.json",
            "--cache": t / "c.sqlite",
        },
        lambda p: [
            "regenerate",
            "--truthfulqa",
            str(p["--truthfulqa"]),
            "--conditions",
            "closed-book",
            "--config",
            str(p["--config"]),
            "-o",
            str(p["-o"]),
            "--summary",
            str(p["--summary"]),
            "--cache",
            str(p["--cache"]),
            *GENERATOR,
            "-q",
        ],
        ("--truthfulqa", "--config"),
        ("-o", "--summary", "--cache"),
        shared=("--cache",),
        ok=False,
    ),
    Command(
        "train-judge prepare",
        lambda t: {"--data-dir": folder(t / "data"), "-o": t / "prepared"},
        lambda p: ["train-judge", "prepare", "--data-dir", str(p["--data-dir"]), "-o", str(p["-o"])],
        ("--data-dir",),
        ("-o",),
        folders=("-o",),
        ok=False,
    ),
    Command(
        "train-judge fit",
        fit_paths,
        lambda p: [
            "train-judge",
            "fit",
            "--base",
            "minilm",
            "--train",
            str(p["--train"]),
            "--eval",
            str(p["--eval"]),
            "-o",
            str(p["-o"]),
            "-q",
        ],
        ("--train", "--eval"),
        ("-o",),
        folders=("-o",),
        ok=False,
    ),
    Command(
        "train-judge delta",
        lambda t: {"CHECKPOINT": model_folder(t), "-o": t / "delta"},
        lambda p: ["train-judge", "delta", str(p["CHECKPOINT"]), "-o", str(p["-o"]), "-q"],
        ("CHECKPOINT",),
        ("-o",),
        folders=("-o",),
        ok=False,
    ),
    Command(
        "train-judge mine",
        lambda t: {"--model": folder(t / "stage1"), "--pairs": train_files(t)[0], "-o": t / "hard.jsonl"},
        lambda p: [
            "train-judge",
            "mine",
            "--model",
            str(p["--model"]),
            "--pairs",
            str(p["--pairs"]),
            "-o",
            str(p["-o"]),
            "-q",
        ],
        ("--model", "--pairs"),
        ("-o",),
        ok=False,
    ),
    Command(
        "train-judge pack",
        lambda t: {"CHECKPOINT": locked_model(t / "alpha"), "-o": t / "packed"},
        lambda p: ["train-judge", "pack", str(p["CHECKPOINT"]), "-o", str(p["-o"]), "-q"],
        ("CHECKPOINT",),
        ("-o",),
        folders=("-o",),
        ok=False,
    ),
    Command(
        "models bundle",
        model_folder,
        lambda p: ["models", "bundle", str(p["NAME|DIR"]), "-o", str(p["-o"]), "-q"],
        ("NAME|DIR",),
        ("-o",),
    ),
    Command(
        "models unpack",
        bundle_tar,
        lambda p: ["models", "unpack", str(p["FILE.tar"]), "--to", str(p["--to"]), "-q"],
        ("FILE.tar",),
        ("--to",),
        folders=("--to",),
    ),
    Command(
        "models pull",
        lambda t: {"--to": t / "pulled"},
        lambda p: ["models", "pull", "deberta-v3-large-nli", "--to", str(p["--to"]), "-q"],
        (),
        ("--to",),
        folders=("--to",),
        ok=False,
    ),
]
WRITES_NOTHING = {"backends", "models list", "models show", "models verify"}
"""Commands that read no file a user names and write none (verify reads a folder it never changes)."""


def leaf_commands() -> dict[str, argparse.ArgumentParser]:
    """Every runnable command of the parser, by its words (``bench run``), with its parser."""
    out: dict[str, argparse.ArgumentParser] = {}

    def walk(p: argparse.ArgumentParser, words: list[str]) -> None:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out[" ".join(words)] = p
        for a in subs:
            for name, child in a.choices.items():
                walk(child, words + [name])

    walk(build_parser(), [])
    return out


def test_the_table_covers_every_command() -> None:
    assert set(leaf_commands()) == {c.name for c in COMMANDS} | WRITES_NOTHING


@dataclass(frozen=True)
class Clash:
    command: Command
    dest: str
    target: str  # a role, "its own .partial", "a directory" or "a file"

    @property
    def id(self) -> str:
        return f"{self.command.name}: {self.dest} = {self.target}"


def clashes() -> list[Clash]:
    out = []
    for c in COMMANDS:
        for dest in c.writes:
            others = [r for r in (*c.reads, *c.writes) if r != dest]
            out += [Clash(c, dest, r) for r in others]
            out += [
                Clash(c, dest, f"{r}.partial")
                for r in c.writes
                if r != dest and r not in c.shared + c.folders and dest not in c.folders
            ]
            out.append(Clash(c, dest, "a file" if dest in c.folders else "a directory"))
    return out


@pytest.mark.parametrize("clash", clashes(), ids=lambda x: x.id)
def test_every_destination_clash_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], clash: Clash, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFLICTSCORE_MODELS", str(tmp_path / "models-store"))
    paths = clash.command.make(tmp_path)
    if clash.target == "a directory":
        (tmp_path / "a-folder").mkdir()
        aim = tmp_path / "a-folder"
    elif clash.target == "a file":
        aim = tmp_path / "a-file"
        aim.write_text("mine\n")
    elif clash.target.endswith(".partial"):
        aim = Path(str(paths[clash.target.removesuffix(".partial")]) + ".partial")
    else:
        aim = paths[clash.target]
    args = clash.command.args({**paths, clash.dest: aim})
    capsys.readouterr()
    before = files(tmp_path)
    try:
        rc = main(args)
    except SystemExit as e:
        rc = int(e.code or 0)
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err, err
    assert str(aim) in err or str(aim.resolve()) in err, err  # the message names the path
    assert files(tmp_path) == before


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.ok], ids=lambda c: c.name)
def test_each_command_of_the_table_runs_as_made(tmp_path: Path, command: Command) -> None:
    """The control of the cases above: unchanged, each command succeeds (so a refusal is the clash's)."""
    assert main(command.args(command.make(tmp_path))) == 0


def bad_values(number: NumberArg) -> list[str]:
    """Values outside ``number``'s range: just past each bound, NaN, infinities, a word."""
    r, out = number.range, ["nan", "inf", "-inf", "lots"]
    step = 1 if number.kind is int else 1e-9
    if r.low is not None:
        out.append(str(r.low if r.low_open else (r.low - step if number.kind is float else int(r.low) - 1)))
    if r.high is not None:
        out.append(
            str(
                r.high
                if r.high_open
                else (r.high + max(step, abs(r.high) * 1e-9) if number.kind is float else int(r.high) + 1)
            )
        )
    return out


def numeric_flags() -> list[tuple[str, str, str]]:
    out = []
    for name, p in leaf_commands().items():
        for a in p._actions:
            if isinstance(a.type, NumberArg):
                out += [(name, a.option_strings[-1], v) for v in bad_values(a.type)]
    return out


def test_every_numeric_flag_declares_its_range() -> None:
    bare = [
        (name, a.option_strings) for name, p in leaf_commands().items() for a in p._actions if a.type in (int, float)
    ]
    assert bare == []
    assert {name for name, _, _ in numeric_flags()} >= {
        "generate",
        "regenerate",
        "bench run",
        "train-judge fit",
        "train-judge prepare",
    }


@pytest.mark.parametrize("command, flag, value", numeric_flags(), ids=lambda x: str(x))
def test_every_numeric_flag_refuses_values_out_of_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, flag: str, value: str
) -> None:
    table = {c.name: c for c in COMMANDS}
    args = table[command].args(table[command].make(tmp_path))
    capsys.readouterr()
    before = files(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(args + [f"{flag}={value}"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"argument {flag}" in err and "Traceback" not in err, err
    assert files(tmp_path) == before


# -- the configuration: every numeric field of every section and backend has a range -------------


def config_classes() -> list[tuple[str, type]]:
    out = [(f"[{name}]", cls) for name, cls in _SECTIONS.items()]
    for role in registry.ROLES:
        for name in registry.available(role):
            out.append((f"{role} {name}", registry.resolve(role, name).Config))
    from conflictscore_local.bench.sources import BENCH_SOURCES

    out += [(f"source {s.name}", s.Options) for s in BENCH_SOURCES.values()]
    return out


def test_every_numeric_config_field_declares_its_range() -> None:
    missing = [(where, name) for where, cls in config_classes() for name, _, r in numeric_fields(cls) if r is None]
    assert missing == []


REQUIRED = {
    "decomposer seq2seq": {"model": "m"},
    "judge vllm": {"model": "m"},
    "judge openai": {},
    "generator vllm": {"model": "m"},
    "generator transformers": {"model": "m"},
}


def field_cases() -> list[tuple[str, type, str, Any]]:
    out = []
    for where, cls in config_classes():
        for name, hint, r in numeric_fields(cls):
            integer = number_kind(hint) is int
            bad: list[Any] = [math.nan, math.inf, "-inf"]
            if r.low is not None:
                bad.append(r.low if r.low_open else (r.low - 1 if integer else r.low - 1e-6))
            if r.high is not None:
                bad.append(r.high if r.high_open else (r.high + 1 if integer else r.high * (1 + 1e-6) + 1e-6))
            out += [(where, cls, name, v) for v in bad]
    return out


@pytest.mark.parametrize(
    "where, cls, name, value", field_cases(), ids=lambda x: str(x) if not isinstance(x, type) else ""
)
def test_every_numeric_config_field_refuses_values_out_of_range(where: str, cls: type, name: str, value: Any) -> None:
    from conflictscore_local.backends.arguments import make_config

    with pytest.raises(ConfigError, match=name):
        make_config(cls, {**REQUIRED.get(where, {}), name: value}, where=where)


@pytest.mark.parametrize("section, name", [(s, n) for s, cls in _SECTIONS.items() for n, _, _ in numeric_fields(cls)])
def test_a_run_setting_out_of_range_stops_score_before_any_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], section: str, name: str
) -> None:
    p = score_paths(tmp_path)
    before = files(tmp_path)
    r = next(r for n, _, r in numeric_fields(_SECTIONS[section]) if n == name)
    value = r.low - 1 if r.low is not None else r.high + 1
    assert main(["score", str(p["INPUT"]), "-o", str(p["-o"]), "--set", f"{section}.{name}={value}", "-q"]) == 2
    err = capsys.readouterr().err
    assert f"[{section}]: " in err and " must be " in err and files(tmp_path) == before


def test_the_documented_ranges_are_the_declared_ones() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "reliability.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+\.\w+)` \| ([^|]+) \|$", doc, re.M))
    declared = {
        f"{s}.{n}": r.text(number_kind(h) is int) for s, cls in _SECTIONS.items() for n, h, r in numeric_fields(cls)
    }
    assert set(rows) == set(declared)
    for key, text in declared.items():
        assert rows[key].strip().startswith(text), key
