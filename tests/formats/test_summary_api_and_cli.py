"""One summary whichever way a run is made: ``Engine().score_all`` plus the library's writer
(``formats.summary.write_summary``) and ``conflictscore score --summary`` write the same bytes for the same
run. Only what is legitimately the run's own is normalised: ``timing`` (wall-clock seconds, and the rate
derived from them). Everything else (metrics, intervals, counts, the input record, warnings, config,
versions, each backend's spec and counters) must be equal to the byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.cli import main
from conflictscore_local.formats.summary import write_summary

from ..pipeline.test_engine import RuleJudge

ROOT = Path(__file__).resolve().parents[2]

RUN_SPECIFIC = ("timing", "started", "finished")
"""The summary's fields that differ between two runs of the same thing: wall-clock seconds (and the rate
derived from them), when the run started and finished. Nothing else is normalised."""

ITEMS = [
    {
        "id": "a",
        "question": "q",
        "response": "r",
        "claims": ["The sky is blue.", "Grass is red."],
        "documents": [
            {"id": "d1", "text": "yes: the sky is blue"},
            {"id": "d2", "text": "no: grass is red"},
            {"id": "d3", "text": "nothing here"},
        ],
    },
    {"id": "b", "response": "", "documents": [{"id": "d", "text": "t"}]},  # empty response: a warning
    {"id": "c", "response": "r", "claims": ["Water is wet."], "documents": []},  # no documents: a warning
    {"id": "d", "response": "r", "claims": ["Ice is cold."], "documents": [{"id": "x", "text": "??? unreadable"}]},
]


def normalised(path: Path) -> bytes:
    """The summary file's bytes with the run-specific fields (:data:`RUN_SPECIFIC`) set to null, the rest as
    written (key order and formatting included)."""
    data = json.loads(path.read_bytes())
    for key in RUN_SPECIFIC:
        assert key in data, key
        data[key] = None
    return json.dumps(data, indent=1).encode()


def write_items(path: Path) -> Path:
    path.write_text("".join(json.dumps(it) + "\n" for it in ITEMS) + "\n", encoding="utf-8")  # and a blank line
    return path


def test_the_api_and_the_cli_write_the_same_summary(tmp_path: Path, register_backend: Any) -> None:
    register_backend("judge", "rule", RuleJudge)
    items = write_items(tmp_path / "items.jsonl")
    assert (
        main(
            [
                "score",
                str(items),
                "-o",
                str(tmp_path / "cli.jsonl"),
                "--summary",
                str(tmp_path / "cli.json"),
                "--judge",
                "rule",
                "--pruner",
                "none",
                "--no-cache",
                "-q",
            ]
        )
        == 3
    )  # 1 of 7 judgments unscored
    config = RunConfig().updated({"judge": {"name": "rule"}, "pruner": {"name": "none"}, "cache": {"enabled": False}})
    with Engine(config) as engine:
        results, summary = engine.score_all(items)
    write_summary(tmp_path / "api.json", summary)
    cli, api = json.loads((tmp_path / "cli.json").read_text()), json.loads((tmp_path / "api.json").read_text())
    assert normalised(tmp_path / "api.json") == normalised(tmp_path / "cli.json")
    # what the comparison covers, spelled out: the input as read, the warnings, the counts
    assert api["stages"]["input"] == {
        "lines": 5,
        "blank_lines": 1,
        "items": 4,
        "empty_responses": 1,
        "no_documents": 1,
        "file": "items.jsonl",
        "shape": "conflictscore",
    }
    assert [w.split(":")[0] for w in api["warnings"]] == [
        "1 item(s) have an empty response and no claims, so no claims and no metrics",
        "1 item(s) have no documents, so none of their claims can be supported or contradicted (CS-C 0 by "
        "construction, support rate 0)",
        "1 of 7 judgments (14.3%) are UNSCORED, above engine.max_unscored_share=0.1",
    ]
    assert api["pairs"] == cli["pairs"] and api["pairs"]["unscored"] == 1
    assert "total_s" in api["timing"] and "total_s" in cli["timing"]
    assert [r.to_json() for r in results] == [json.loads(x) for x in (tmp_path / "cli.jsonl").read_text().splitlines()]


@pytest.mark.slow  # the shipped default judge, loaded twice
def test_with_the_default_judge_a_command_process_and_the_api_agree(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CONFLICTSCORE_NLI_RUNTIME": "torch"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "conflictscore_local.cli",
            "score",
            str(items),
            "-o",
            str(tmp_path / "cli.jsonl"),
            "--summary",
            str(tmp_path / "cli.json"),
            "--no-cache",
            "-q",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    with Engine(RunConfig().updated({"cache": {"enabled": False}})) as engine:
        _, summary = engine.score_all(str(items))
    write_summary(tmp_path / "api.json", summary)
    assert normalised(tmp_path / "api.json") == normalised(tmp_path / "cli.json")
