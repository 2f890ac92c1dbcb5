"""`score_file` as a scoring run: resume fingerprints that say what differs, warnings counted in the
summary, a loud exit status for unscored runs, timing over the whole run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main
from conflictscore_local.jobs import ResumableJsonlWriter

from ..cli.test_cli_score import WORKED, read_jsonl, write_jsonl
from .test_engine import RuleJudge

ITEMS = [
    {
        "id": f"i{k}",
        "response": "",
        "claims": [f"The bridge opened in {1930 + k}."],
        "documents": [
            {"id": "d1", "text": f"The bridge opened in {1930 + k}. It is red."},
            {"id": "d2", "text": "Cats purr when they are content."},
        ],
    }
    for k in range(3)
]


def interrupt_after(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    """Make the writer raise KeyboardInterrupt (Ctrl-C) once ``rows`` rows are written."""
    real = ResumableJsonlWriter.write
    written = []

    def write(self: ResumableJsonlWriter, row: Any) -> None:
        if len(written) == rows:
            raise KeyboardInterrupt
        written.append(row["id"])
        real(self, row)

    monkeypatch.setattr(ResumableJsonlWriter, "write", write)


@pytest.fixture
def interrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_nli_factory):
    """A run of the tiny nli judge (the default judge path pointed at it) cut after one item."""
    monkeypatch.setenv("CONFLICTSCORE_DEFAULT_JUDGE", str(tiny_nli_factory(seed=0)))
    inp = write_jsonl(tmp_path / "in.jsonl", ITEMS)
    args = [
        "score",
        str(inp),
        "-o",
        str(tmp_path / "out.jsonl"),
        "--pruner",
        "none",
        "--set",
        "engine.step_items=1",
        "--judge-arg",
        "device=cpu",
        "-q",
    ]
    with monkeypatch.context() as m:
        interrupt_after(m, 1)
        assert main(args) == 130
    assert [r["id"] for r in read_jsonl(tmp_path / "out.jsonl.partial")] == ["i0"]
    return args


def test_resume_refuses_another_judge_and_says_which_weights(
    interrupted, monkeypatch, tmp_path, tiny_nli_factory, capsys
):
    capsys.readouterr()
    monkeypatch.setenv("CONFLICTSCORE_DEFAULT_JUDGE", str(tiny_nli_factory(seed=1)))  # same config text, other weights
    assert main(interrupted + ["--resume"]) == 2
    err = capsys.readouterr().err
    assert "--resume: refusing to continue" in err and "backends differ: judge.model.weights_sha256: '" in err
    assert "input" not in err.split("refusing to continue")[1].split(";")[0]
    assert [r["id"] for r in read_jsonl(tmp_path / "out.jsonl.partial")] == ["i0"]  # untouched


def test_resume_names_the_changed_setting_or_the_changed_input(interrupted, tmp_path, capsys):
    capsys.readouterr()
    assert main(interrupted + ["--resume", "--set", "aggregate.threshold=0.5"]) == 2
    assert "settings differ: aggregate.threshold: 0.0 then, 0.5 now" in capsys.readouterr().err
    write_jsonl(tmp_path / "in.jsonl", ITEMS + [dict(ITEMS[0], id="new")])
    assert main(interrupted + ["--resume"]) == 2
    assert "the input file changed since (sha256 " in capsys.readouterr().err


def test_resume_accepts_what_changes_no_result(interrupted, tmp_path, monkeypatch, tiny_nli_factory):
    monkeypatch.chdir(tiny_nli_factory(seed=0).parent)
    monkeypatch.delenv("CONFLICTSCORE_DEFAULT_JUDGE")
    neutral = [
        "--cache",
        str(tmp_path / "elsewhere.sqlite"),
        "--judge-arg",
        "batch_size=3",
        "--judge-arg",
        "max_batch_tokens=999",
        "--set",
        "engine.step_items=7",
        "--set",
        "engine.bootstrap=0",
        "--set",
        "engine.checkpoint_s=5",
        "--judge-arg",
        f"model=./{tiny_nli_factory(seed=0).name}",
    ]
    with monkeypatch.context() as m:  # a second interruption, now with every neutral change
        interrupt_after(m, 1)
        assert main(interrupted + neutral + ["--resume"]) == 130
    assert (
        main(
            interrupted
            + [
                "--no-cache",
                "--resume",
                "--summary",
                str(tmp_path / "s.json"),
                "--judge-arg",
                f"model={tiny_nli_factory(seed=0)}",
            ]
        )
        == 0
    )
    assert [r["id"] for r in read_jsonl(tmp_path / "out.jsonl")] == ["i0", "i1", "i2"]
    assert json.loads((tmp_path / "s.json").read_text())["stages"]["resumed_items"] == 2


def test_warnings_for_empty_input_are_counted_in_the_summary(tmp_path: Path, capsys):
    for content, expected in (
        ("", "is empty: no items to score"),
        ("\n  \n\n", "holds only blank lines (3): no items to score"),
    ):
        inp = tmp_path / "in.jsonl"
        inp.write_text(content)
        assert (
            main(["score", str(inp), "-o", str(tmp_path / "o.jsonl"), "--summary", str(tmp_path / "s.json"), "-q"]) == 0
        )
        assert expected in capsys.readouterr().err
        s = json.loads((tmp_path / "s.json").read_text())
        assert s["n_items"] == 0 and len(s["warnings"]) == 1 and expected in s["warnings"][0]
        assert s["stages"]["input"]["items"] == 0 and (tmp_path / "o.jsonl").read_text() == ""


def test_empty_responses_are_warned_about_and_counted(tmp_path: Path, capsys, register_backend):
    register_backend("judge", "rule-test", RuleJudge)
    rows = [
        WORKED,
        {"id": "blank", "response": "  \n", "documents": [{"id": "d", "text": "t"}]},
        {"id": "none", "response": "", "documents": []},
        {"id": "given", "response": "", "claims": [], "documents": []},
    ]
    inp = write_jsonl(tmp_path / "in.jsonl", rows)
    (tmp_path / "in.jsonl").write_text(inp.read_text() + "\n")
    assert (
        main(
            [
                "score",
                str(inp),
                "-o",
                str(tmp_path / "o.jsonl"),
                "--summary",
                str(tmp_path / "s.json"),
                "--judge",
                "rule-test",
                "--pruner",
                "none",
                "-q",
            ]
        )
        == 0
    )
    msg = "2 item(s) have an empty response and no claims, so no claims and no metrics: 'blank', 'none'"
    assert msg in capsys.readouterr().err
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["warnings"] == [msg]
    assert s["stages"]["input"] == {
        "lines": 5,
        "blank_lines": 1,
        "items": 4,
        "empty_responses": 2,
        "no_documents": 0,
        "file": "in.jsonl",
        "shape": "conflictscore",
    }


def test_a_mostly_unscored_run_warns_loudly_exits_3_and_still_writes(tmp_path: Path, capsys, register_backend):
    register_backend("judge", "rule-test", RuleJudge)
    rows = [
        {
            "id": f"i{k}",
            "response": "",
            "claims": ["sky is blue"],
            "documents": [{"id": "a", "text": "???"}, {"id": "b", "text": "???" if k else "yes: sky is blue"}],
        }
        for k in range(3)
    ]
    inp = write_jsonl(tmp_path / "in.jsonl", rows)
    args = [
        "score",
        str(inp),
        "-o",
        str(tmp_path / "o.jsonl"),
        "--summary",
        str(tmp_path / "s.json"),
        "--judge",
        "rule-test",
        "--pruner",
        "none",
        "--no-cache",
        "-q",
    ]
    assert main(args) == 3
    err = capsys.readouterr().err
    assert "5 of 6 judgments (83.3%) are UNSCORED, above engine.max_unscored_share=0.1" in err
    assert [r["id"] for r in read_jsonl(tmp_path / "o.jsonl")] == ["i0", "i1", "i2"]
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["pairs"]["unscored"] == 5 and "UNSCORED" in s["warnings"][0]
    assert main(args + ["--set", "engine.max_unscored_share=0.9"]) == 0
    assert "UNSCORED" not in capsys.readouterr().err


def test_timing_covers_the_whole_run_bootstrap_included(tmp_path: Path, monkeypatch, clock: Any):
    from conflictscore_local.formats import summary as summary_mod
    from conflictscore_local.pipeline.scoring import score_file

    real = summary_mod.summarize_metrics

    def slow(*a: Any, **kw: Any) -> Any:  # the summary's bootstrap takes half a second
        clock.advance(0.5)
        return real(*a, **kw)

    monkeypatch.setattr(summary_mod, "summarize_metrics", slow)
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED])
    report = score_file(inp, tmp_path / "o.jsonl", summary_path=tmp_path / "s.json", clock=clock)
    assert report.timing["total_s"] == 0.5 and report.timing["aggregate_s"] == 0.0  # only the bootstrap took time
    assert json.loads((tmp_path / "s.json").read_text())["timing"]["total_s"] == 0.5


def test_a_second_run_on_the_same_output_is_refused(tmp_path: Path, capsys):
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED])
    out = tmp_path / "out.jsonl"
    with ResumableJsonlWriter(out) as running:  # another run, still writing
        running.write({"id": "x"})
        assert main(["score", str(inp), "-o", str(out), "-q"]) == 2
        assert f"output {out} is being written by another run" in capsys.readouterr().err
    assert out.read_text() == '{"id": "x"}\n'
