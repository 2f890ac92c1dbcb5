"""The small things a new user trips on: "did you mean" for a --fail-if metric (``csc`` → ``cs_c``) and for a
model name (``deberta-v3-large`` → ``deberta-v3-large-nli``), through the real command; and the README says how
long ``make test`` takes, from the recorded CI run, and links the speed page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conflictscore_local.cli import main

ROOT = Path(__file__).resolve().parents[2]


def one_item(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"id": "a", "response": "x", "claims": ["c"], "documents": ["d"]}) + "\n")
    return path


@pytest.mark.parametrize(
    ("condition", "says"),
    [
        ("csc>0.3", "unknown metric in 'csc' (did you mean cs_c?)"),
        ("CS-C>0.3", "not METRIC OP NUMBER (did you mean cs_c?)"),
        ("micro.suport_rate<0.5", "unknown metric in 'micro.suport_rate' (did you mean support_rate?)"),
        ("mikro.cs_c>0.1", "unknown scope in 'mikro.cs_c' (did you mean micro?)"),
    ],
)
def test_fail_if_names_the_metric_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], condition: str, says: str
) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["score", str(one_item(tmp_path)), "-o", str(tmp_path / "o.jsonl"), "--fail-if", condition, "-q"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert f"conflictscore score: error: argument --fail-if: {says}; allowed: " in err
    assert list(tmp_path.iterdir()) == [tmp_path / "in.jsonl"]


def test_compare_fail_if_names_the_metric_meant(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compare", "a.jsonl", "b.jsonl", "--fail-if", "csc.diff>0.05"])
    assert "unknown metric in 'csc.diff' (did you mean cs_c?); allowed: METRIC.diff" in capsys.readouterr().err


def test_a_model_name_close_to_a_known_one_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "score",
            str(one_item(tmp_path)),
            "-o",
            str(tmp_path / "o.jsonl"),
            "--judge-arg",
            "model=deberta-v3-large",
            "--no-cache",
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2
    assert (
        "judge nli: model 'deberta-v3-large' is neither a directory nor in the local Hugging Face cache, nor a "
        "model name from `conflictscore models list`; did you mean 'deberta-v3-large-nli'?"
    ) in err
    assert main(["models", "show", "qwen3-8"]) == 2
    assert "unknown model 'qwen3-8'; did you mean 'qwen3-8b'? known: " in capsys.readouterr().err
    assert main(["models", "show", "nothing-like-it"]) == 2
    assert "unknown model 'nothing-like-it'; known: " in capsys.readouterr().err


def test_the_readme_says_how_long_make_test_takes_from_the_recorded_run() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    recorded = (ROOT / "benchmarks" / "results" / "speed" / "ci_time.md").read_text(encoding="utf-8")
    newest = recorded.split("\n## ")[1]  # the first section is the newest run
    rows = [line for line in newest.splitlines() if re.match(r"\| \d+ \|", line)]
    last = [c.strip().strip("*") for c in rows[-1].strip("|").split("|")]
    whole, suite, vllm = last[-1], re.search(r"(\d+) s$", last[3]).group(1), re.search(r"(\d+) s", last[-2]).group(1)
    assert (
        f"({whole} on a 2-core Xeon, the main suite {suite} s of it, the vLLM tests {vllm} s: "
        "`benchmarks/results/speed/ci_time.md`)" in readme.replace("\n", " ")
    )
    assert "[Speed](docs/speed.md)" in readme
