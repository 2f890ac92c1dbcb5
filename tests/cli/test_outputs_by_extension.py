"""``-o`` picks the format from its extension, as promptfoo reads it (``.jsonl`` the rows, ``.json`` one JSON
document, ``.csv`` a table, ``.html`` the page), refuses one it does not write naming those it does, the same
on every command that takes ``-o``; and every command that writes a table writes it to stdout with ``-o -``
(``compare --json -q`` and ``compare -o - -q`` included)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main

LABELLED = [
    {
        "id": "a",
        "response": "c1. c2.",
        "claims": ["c1", "c2"],
        "documents": ["one", "two"],
        "labels": [["SUPPORT", "CONTRADICT"], ["SUPPORT", "IRRELEVANT"]],
    },
    {"id": "b", "response": "c3.", "claims": ["c3"], "documents": ["three"], "labels": [["CONTRADICT"]]},
]
OTHER = [{**LABELLED[0], "labels": [["SUPPORT", "IRRELEVANT"], ["SUPPORT", "IRRELEVANT"]]}, LABELLED[1]]


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_score_writes_what_the_extension_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = write(tmp_path / "in.jsonl", LABELLED)
    rc, _, _ = run(capsys, "score", str(items), "-o", str(tmp_path / "rows.jsonl"), "-q")
    assert rc == 0
    rows = [json.loads(x) for x in (tmp_path / "rows.jsonl").read_text().splitlines()]
    rc, _, _ = run(capsys, "score", str(items), "-o", str(tmp_path / "rows.json"), "-q")
    assert rc == 0 and json.loads((tmp_path / "rows.json").read_text()) == rows  # the same rows, one array
    rc, _, _ = run(capsys, "score", str(items), "-o", str(tmp_path / "items.csv"), "-q")
    assert rc == 0 and (tmp_path / "items.csv").read_text().splitlines()[0].startswith("id,n_claims,cs_c")
    rc, out, _ = run(capsys, "score", str(items), "-o", str(tmp_path / "page.html"))
    page = (tmp_path / "page.html").read_text()
    assert rc == 0 and page.startswith("<!doctype html>") and "conflictscore-local" in page
    assert out.rstrip().endswith(f"report {tmp_path / 'page.html'}")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "in.jsonl",
        "items.csv",
        "page.html",
        "rows.json",
        "rows.jsonl",
    ]  # nothing beside what was named
    rc, _, err = run(capsys, "score", str(items), "-o", str(tmp_path / "rows.json"), "--resume", "-q")
    assert rc == 2 and "--resume needs the per-item JSONL: write -o OUT.jsonl" in err


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("res.txt", ".txt is not a format this command writes"),
        ("results", "no extension to pick the format by"),
    ],
)
def test_score_refuses_an_extension_it_does_not_write_naming_those_it_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, says: str
) -> None:
    items = write(tmp_path / "in.jsonl", LABELLED)
    rc, out, err = run(capsys, "score", str(items), "-o", str(tmp_path / name), "-q")
    assert rc == 2 and out == ""
    assert err == (
        f"conflictscore score: error: -o {tmp_path / name}: {says}; allowed: .jsonl (the per-item rows, "
        "one JSON object a line), .json (the per-item rows as one JSON array), .csv (one row per item), "
        ".html (the HTML report), - (stdout)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_every_command_that_takes_o_refuses_an_unknown_extension(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = tmp_path / "a.jsonl"
    assert (
        main(
            [
                "score",
                str(write(tmp_path / "in.jsonl", LABELLED)),
                "-o",
                str(a),
                "--summary",
                str(tmp_path / "a.json"),
                "-q",
            ]
        )
        == 0
    )
    (tmp_path / "runs").mkdir()
    commands = {
        "score": ["score", str(tmp_path / "in.jsonl")],
        "bench run": ["bench", "run", str(tmp_path / "in.jsonl")],
        "bench build": ["bench", "build", "--source", "ramdocs"],
        "merge": ["merge", str(tmp_path / "in.jsonl"), "--outputs", str(a), "--summaries", str(tmp_path / "a.json")],
        "compare": ["compare", str(a), str(a)],
        "report": ["report", str(a)],
        "view": ["view", str(tmp_path / "runs")],
        "generate": ["generate", str(tmp_path / "in.jsonl"), "--strategy", "standard", "--generator", "openai"],
        "regenerate": ["regenerate", "--truthfulqa", str(tmp_path / "tqa.csv"), "--generator", "openai"],
        "models bundle": ["models", "bundle", "default-judge"],
    }
    allowed = {
        "score": ".jsonl",
        "bench run": ".jsonl",
        "bench build": ".jsonl",
        "merge": ".jsonl",
        "compare": ".json",
        "report": ".html",
        "view": ".html",
        "generate": ".jsonl",
        "regenerate": ".jsonl",
        "models bundle": ".tar",
    }
    before = sorted(p.name for p in tmp_path.iterdir())
    for name, args in commands.items():
        rc, out, err = run(capsys, *args, "-o", str(tmp_path / "out.txt"), "-q")
        assert rc == 2 and out == "", (name, err)
        assert f"-o {tmp_path / 'out.txt'}" in err and allowed[name] in err and "Traceback" not in err, (name, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written anywhere


def test_compare_writes_the_page_for_html_and_prints_json_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["score", str(write(tmp_path / "in.jsonl", LABELLED)), "-o", str(a), "-q"]) == 0
    assert main(["score", str(write(tmp_path / "in2.jsonl", OTHER)), "-o", str(b), "-q"]) == 0
    rc, _, _ = run(capsys, "compare", str(a), str(b), "-o", str(tmp_path / "c.json"), "-q")
    assert rc == 0
    written = json.loads((tmp_path / "c.json").read_text())
    for args in (["--json", "-q"], ["-o", "-", "-q"], ["--json"], ["-o", "-"]):
        rc, out, err = run(capsys, "compare", str(a), str(b), *args)
        assert rc == 0, (args, err)
        assert json.loads(out) == written, args  # the comparison, and nothing else, on stdout
    rc, out, _ = run(capsys, "compare", str(a), str(b), "-o", str(tmp_path / "c.html"), "-q")
    assert rc == 0 and out == "" and (tmp_path / "c.html").read_text().startswith("<!doctype html>")
    rc, _, err = run(capsys, "compare", str(a), str(b), "-q")
    assert rc == 2 and "nothing to write or print: -q with no -o COMPARE.json (- for stdout), --json" in err
    rc, out, _ = run(capsys, "compare", str(a), str(b), "--csv", "-", "-q")
    assert rc == 0 and out.startswith("id,")


def test_score_and_merge_write_their_rows_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = write(tmp_path / "in.jsonl", LABELLED)
    rc, out, _ = run(capsys, "score", str(items), "-o", "-", "-q")
    assert rc == 0 and [json.loads(x)["id"] for x in out.splitlines()] == ["a", "b"]
    for i in (1, 2):
        assert (
            main(
                [
                    "score",
                    str(items),
                    "--shard",
                    f"{i}/2",
                    "-o",
                    str(tmp_path / f"p{i}.jsonl"),
                    "--summary",
                    str(tmp_path / f"s{i}.json"),
                    "-q",
                ]
            )
            == 0
        )
    capsys.readouterr()
    rc, merged, err = run(
        capsys,
        "merge",
        str(items),
        "--outputs",
        str(tmp_path / "p1.jsonl"),
        str(tmp_path / "p2.jsonl"),
        "--summaries",
        str(tmp_path / "s1.json"),
        str(tmp_path / "s2.json"),
        "-o",
        "-",
        "-q",
    )
    assert rc == 0, err
    assert [json.loads(x) for x in merged.splitlines()] == [json.loads(x) for x in out.splitlines()]


def test_bench_build_writes_its_items_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conflictscore_local.bench import default_data_dir

    data = default_data_dir()
    if data is None or not (Path(data) / "ramdocs").is_dir():
        pytest.skip("the public data folder (../shared/data or $CONFLICTSCORE_DATA) is not here")
    rc, _, _ = run(capsys, "bench", "build", "--source", "ramdocs", "-o", str(tmp_path / "b.jsonl"), "-q")
    assert rc == 0
    rc, out, _ = run(capsys, "bench", "build", "--source", "ramdocs", "-o", "-", "-q")
    assert rc == 0 and out == (tmp_path / "b.jsonl").read_text()
