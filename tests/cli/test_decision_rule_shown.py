"""The decision rule is visible where a user reads labels: each row of ``--csv-pairs`` (``rule``, ``decided``),
each document judgment of the JSONL, the summary (``stages.labels.rules``: labels per part of the rule) and the
console; a rerun from the cache says the same. The ``nli`` judge on a tiny real checkpoint, through the CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from conflictscore_local.cli import main

ITEMS = [
    {
        "id": "water",
        "response": "Water boils at 100 °C at sea level. Ice is cold.",
        "claims": ["Water boils at 100 °C at sea level.", "Ice is cold."],
        "documents": ["At sea level, water boils at 100 degrees Celsius.", "Ice is frozen water.", "Paris is big."],
    }
]


def score(tmp_path: Path, name: str, model: Path, *judge_args: str) -> tuple[list[str], Path]:
    items = tmp_path / "in.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in ITEMS), encoding="utf-8")
    args = [
        "score",
        str(items),
        "-o",
        str(tmp_path / f"{name}.jsonl"),
        "--summary",
        str(tmp_path / f"{name}.json"),
        "--csv-pairs",
        str(tmp_path / f"{name}.pairs.csv"),
        "--pruner",
        "none",
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "--judge",
        "nli",
        "--judge-arg",
        f"model={model}",
    ]
    for a in judge_args:
        args += ["--judge-arg", a]
    return args, tmp_path


def run(capsys: pytest.CaptureFixture[str], args: list[str], tmp_path: Path, name: str) -> tuple[list[dict], dict, str]:
    assert main(args) == 0
    out = capsys.readouterr().out
    with open(tmp_path / f"{name}.pairs.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return rows, json.loads((tmp_path / f"{name}.json").read_text()), out


def expected(p: dict[str, float], t: dict[str, float] | None) -> tuple[str, str]:
    """The label and which part of the rule gave it, worked out here from the row's own probabilities."""
    if t is None:
        best = max(("SUPPORT", "CONTRADICT", "IRRELEVANT"), key=lambda k: p[k])
        return best, f"{best[0]} highest"
    s, c = p["SUPPORT"] >= t["SUPPORT"], p["CONTRADICT"] >= t["CONTRADICT"]
    if not (s or c):
        return "IRRELEVANT", "neither threshold"
    if s and c:
        higher = "SUPPORT" if p["SUPPORT"] >= p["CONTRADICT"] else "CONTRADICT"
        return higher, f"S>={t['SUPPORT']:.2f} and C>={t['CONTRADICT']:.2f}, {higher[0]} higher"
    return ("SUPPORT", f"S>={t['SUPPORT']:.2f}") if s else ("CONTRADICT", f"C>={t['CONTRADICT']:.2f}")


@pytest.mark.parametrize(
    ("judge_args", "thresholds", "rule"),
    [
        (
            ['thresholds={"SUPPORT": 0.5, "CONTRADICT": 0.0}'],
            {"SUPPORT": 0.5, "CONTRADICT": 0.0},
            "thresholds S>=0.50 C>=0.00",
        ),
        (["calibration=false"], None, "argmax"),
    ],
)
def test_each_label_carries_its_rule_and_what_decided_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tiny_nli_dir: Path,
    judge_args: list[str],
    thresholds: dict | None,
    rule: str,
) -> None:
    args, _ = score(tmp_path, "first", tiny_nli_dir, *judge_args)
    rows, summary, console = run(capsys, args, tmp_path, "first")
    assert len(rows) == 6
    for row in rows:
        p = {k.upper(): float(row[f"p_{k}"]) for k in ("support", "contradict", "irrelevant")}
        assert row["rule"] == rule
        assert (row["label"], row["decided"]) == expected(p, thresholds), row
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["decided"]] = counts.get(row["decided"], 0) + 1
    assert summary["stages"]["labels"]["rules"] == {rule: dict(sorted(counts.items()))}
    assert f"decision rule {rule}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())) in console
    scored = json.loads((tmp_path / "first.jsonl").read_text().splitlines()[0])
    doc = scored["claims"][0]["judgments"][0]
    assert doc["rule"] == rule and "decided" not in doc  # derived from the probabilities and the rule
    # the same run again: every judgment from the cache, each still naming its rule
    args, _ = score(tmp_path, "again", tiny_nli_dir, *judge_args)
    again, summary2, _ = run(capsys, args, tmp_path, "again")
    assert summary2["pairs"]["cached"] == 6
    assert [(r["rule"], r["decided"], r["source"]) for r in again] == [(r["rule"], r["decided"], "cache") for r in rows]
