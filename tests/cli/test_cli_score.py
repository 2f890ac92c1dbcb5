"""`conflictscore score`: exact metrics from given labels, exit 2 on bad input, atomic output, resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.cli import main
from conflictscore_local.core.metrics import standard_keys

from ..pipeline.test_engine import RuleJudge

WORKED = {
    "id": "worked",
    "question": "q",
    "response": "r",
    "documents": [{"id": "d1", "text": "a"}, {"id": "d2", "text": "b"}, {"id": "d3", "text": "c"}],
    "claims": ["c1", "c2", "c3", "c4"],
    "labels": [
        ["SUPPORT", "CONTRADICT", "IRRELEVANT"],
        ["SUPPORT", "SUPPORT", "CONTRADICT"],
        ["SUPPORT", "IRRELEVANT", "IRRELEVANT"],
        ["IRRELEVANT", "IRRELEVANT", "IRRELEVANT"],
    ],
}
NINE_TO_ONE = {
    "id": "nine",
    "response": "r",
    "documents": [{"id": f"d{j}", "text": "x"} for j in range(10)],
    "claims": ["c"],
    "labels": [["SUPPORT"] * 9 + ["CONTRADICT"]],
}
EMPTY = {"id": "empty", "response": "", "documents": [], "claims": [], "labels": []}


def known(metrics: dict[str, Any]) -> dict[str, Any]:
    """The item's count and the four ConflictScore metrics (a metric added to the table adds a key)."""
    return {k: metrics[k] for k in ("n_claims", "cs_c", "cs_r", "cs_r_evidenced", "support_rate")}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_given_labels_reproduce_hand_computed_values(tmp_path: Path, capsys: pytest.CaptureFixture):
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED, NINE_TO_ONE, EMPTY])
    out, summ = tmp_path / "out.jsonl", tmp_path / "summary.json"
    assert main(["score", str(inp), "-o", str(out), "--summary", str(summ)]) == 0
    rows = read_jsonl(out)
    assert [r["id"] for r in rows] == ["worked", "nine", "empty"]
    w = rows[0]
    assert known(w["metrics"]) == {
        "n_claims": 4,
        "cs_c": 0.5,
        "cs_r": pytest.approx(5 / 12),
        "cs_r_evidenced": pytest.approx(5 / 18),
        "support_rate": 0.75,
    }
    c2 = w["claims"][1]
    assert (c2["support"], c2["contradict"], c2["irrelevant"], c2["conflicted"]) == (["d1", "d2"], ["d3"], [], True)
    assert c2["ratio"] == pytest.approx(1 / 3)
    assert c2["judgments"][2] == {"doc_id": "d3", "label": "CONTRADICT", "probs": None, "source": "given"}
    assert rows[1]["metrics"]["cs_r"] == pytest.approx(0.1)
    assert known(rows[2]["metrics"]) == {
        "n_claims": 0,
        "cs_c": None,
        "cs_r": None,
        "cs_r_evidenced": None,
        "support_rate": None,
    }
    s = json.loads(summ.read_text())
    assert (s["n_items"], s["n_claims"]) == (3, 5)
    assert s["macro"]["cs_c"] == pytest.approx(0.75)
    assert s["micro"]["cs_c"] == pytest.approx(0.6)
    assert s["micro"]["cs_r"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 10) / 3)
    assert s["pairs"] == {"total": 22, "judged": 0, "pruned": 0, "cached": 0, "given": 22, "unscored": 0}
    assert list(s["ci95"]) == list(s["macro"]) == list(s["micro"]) == standard_keys()  # every metric, table order
    assert s["config"]["run"]["judge"]["name"] == "nli" and "python" in s["versions"]
    assert "cs_c" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content, message",
    [
        (
            '{"id": "a", "response": "r", "documents": []}\n{"id": "a", "response": "r", "documents": []}',
            ":2: field 'id': duplicate id 'a'",
        ),
        ('{"id": "a", "response": "r"', ":1: invalid JSON"),
        (
            '{"id": "a", "response": "r", "documents": [], "claims": ["c"], "labels": [["SUPPORT"]]}',
            ":1: field 'labels[0]': has 1 labels but there are 0 documents",
        ),
        (
            '{"id": "a", "response": "r", "documents": [{"id": "d", "text": "t"}], "claims": ["c"], '
            '"labels": [["yes"]]}',
            ":1: field 'labels[0][0]': unknown label 'yes'; allowed: SUPPORT, CONTRADICT, IRRELEVANT",
        ),
        ('{"id": "a", "documents": [{"id": "d", "text": 1}], "response": ""}', ":1: field 'documents[0].text'"),
    ],
)
def test_bad_input_exits_2_naming_file_line_field(
    tmp_path: Path, capsys: pytest.CaptureFixture, content: str, message: str
):
    inp = tmp_path / "in.jsonl"
    inp.write_text(content + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["score", str(inp), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{inp}{message}" in err
    assert not out.exists()


def test_bad_configuration_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture):
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED])
    out = str(tmp_path / "o.jsonl")
    assert main(["score", str(inp), "-o", out, "--judge", "oracle"]) == 2
    assert f"unknown judge 'oracle'; allowed: {', '.join(registry.available('judge'))}" in capsys.readouterr().err
    assert main(["score", str(inp), "-o", out, "--set", "chunk.size=3"]) == 2
    assert "unknown argument 'size'" in capsys.readouterr().err
    assert main(["score", str(inp), "-o", out, "--set", "bogus.x=1"]) == 2
    assert "unknown section [bogus]" in capsys.readouterr().err
    bad_toml = tmp_path / "c.toml"
    bad_toml.write_text("[judge\n")
    assert main(["score", str(inp), "-o", out, "--config", str(bad_toml)]) == 2
    assert "invalid TOML" in capsys.readouterr().err


class CountingJudge(RuleJudge):
    seen: list[str] = []
    fail_on: str | None = None

    def judge(self, pairs, on_progress=None):  # type: ignore[override]
        ids = {p.claim.item_id for p in pairs}
        if CountingJudge.fail_on in ids:
            raise RuntimeError("power cut")
        CountingJudge.seen.extend(sorted(ids))
        return super().judge(pairs, on_progress)


def test_crash_leaves_no_output_and_resume_scores_only_the_rest(tmp_path: Path, register_backend):
    register_backend("judge", "counting-test", CountingJudge)
    items = [
        {"id": f"i{k}", "response": "", "documents": [{"id": "d", "text": f"yes: claim {k}"}], "claims": [f"claim {k}"]}
        for k in range(4)
    ]
    inp = write_jsonl(tmp_path / "in.jsonl", items)
    out = tmp_path / "out.jsonl"
    args = [
        "score",
        str(inp),
        "-o",
        str(out),
        "--judge",
        "counting-test",
        "--pruner",
        "none",
        "--set",
        "engine.step_items=1",
        "--no-cache",
        "-q",
    ]
    CountingJudge.seen, CountingJudge.fail_on = [], "i2"
    with pytest.raises(RuntimeError, match="power cut"):
        main(args)
    assert not out.exists()
    assert [r["id"] for r in read_jsonl(tmp_path / "out.jsonl.partial")] == ["i0", "i1"]

    # a different configuration must not silently mix into the partial results
    assert main(args[:-1] + ["--set", "aggregate.threshold=0.5", "--resume", "-q"]) == 2

    CountingJudge.seen, CountingJudge.fail_on = [], None
    assert main(args + ["--resume", "--summary", str(tmp_path / "s.json")]) == 0
    assert CountingJudge.seen == ["i2", "i3"]
    rows = read_jsonl(out)
    assert [r["id"] for r in rows] == ["i0", "i1", "i2", "i3"]
    assert all(r["claims"][0]["support"] == ["d"] for r in rows)
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["n_items"] == 4 and s["stages"]["resumed_items"] == 2 and s["pairs"]["judged"] == 4
    assert not (tmp_path / "out.jsonl.partial").exists()


def test_config_file_and_replay_from_summary(tmp_path: Path, register_backend):
    register_backend("judge", "rule-test", RuleJudge)
    inp = write_jsonl(
        tmp_path / "in.jsonl",
        [{"id": "a", "response": "", "claims": ["x is y"], "documents": [{"id": "d", "text": "no: x is y"}]}],
    )
    cfg = tmp_path / "run.toml"
    cfg.write_text('[judge]\nname = "rule-test"\nversion = 2\n[pruner]\nname = "none"\n[cache]\nenabled = false\n')
    s1 = tmp_path / "s1.json"
    assert (
        main(["score", str(inp), "-o", str(tmp_path / "o1.jsonl"), "--config", str(cfg), "--summary", str(s1), "-q"])
        == 0
    )
    summary = json.loads(s1.read_text())
    assert summary["config"]["run"]["judge"] == {"name": "rule-test", "version": 2}
    assert summary["config"]["backends"]["judge"]["args"] == {"version": 2}
    s2 = tmp_path / "s2.json"
    assert (
        main(["score", str(inp), "-o", str(tmp_path / "o2.jsonl"), "--config", str(s1), "--summary", str(s2), "-q"])
        == 0
    )
    assert json.loads(s2.read_text())["config"] == summary["config"]
    assert (tmp_path / "o1.jsonl").read_text() == (tmp_path / "o2.jsonl").read_text()


def test_json_flag_prints_the_summary(tmp_path: Path, capsys: pytest.CaptureFixture):
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED])
    assert main(["score", str(inp), "-o", str(tmp_path / "o.jsonl"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["macro"]["cs_c"] == 0.5


def test_resume_never_reuses_a_finished_run(tmp_path: Path, capsys: pytest.CaptureFixture):
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED])
    out = tmp_path / "out.jsonl"
    assert main(["score", str(inp), "-o", str(out), "-q"]) == 0
    changed = dict(WORKED, labels=[["SUPPORT"] * 3] * 4)
    write_jsonl(inp, [changed])
    assert main(["score", str(inp), "-o", str(out), "-q", "--resume"]) == 0
    assert "no interrupted run" in capsys.readouterr().err
    assert read_jsonl(out)[0]["metrics"]["cs_c"] == 0.0


def test_resume_refuses_a_changed_input(tmp_path: Path, register_backend):
    register_backend("judge", "counting-test", CountingJudge)
    items = [
        {"id": f"i{k}", "response": "", "documents": [{"id": "d", "text": f"yes: c{k}"}], "claims": [f"c{k}"]}
        for k in range(2)
    ]
    inp = write_jsonl(tmp_path / "in.jsonl", items)
    args = [
        "score",
        str(inp),
        "-o",
        str(tmp_path / "o.jsonl"),
        "--judge",
        "counting-test",
        "--pruner",
        "none",
        "--set",
        "engine.step_items=1",
        "--no-cache",
        "-q",
    ]
    CountingJudge.seen, CountingJudge.fail_on = [], "i1"
    with pytest.raises(RuntimeError):
        main(args)
    CountingJudge.fail_on = None
    write_jsonl(inp, [dict(items[0], claims=["other"]), items[1]])
    assert main(args + ["--resume"]) == 2


def test_bad_configuration_touches_no_file(tmp_path: Path):
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED])
    (tmp_path / "o.jsonl.partial").write_text("earlier interrupted work\n")
    assert main(["score", str(inp), "-o", str(tmp_path / "o.jsonl"), "--judge", "nope", "-q"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "o.jsonl.partial"]
    assert (tmp_path / "o.jsonl.partial").read_text() == "earlier interrupted work\n"


def test_resume_from_a_file_that_is_not_a_result(tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch):
    from conflictscore_local.jobs import ResumableJsonlWriter

    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED])
    args = ["score", str(inp), "-o", str(tmp_path / "o.jsonl"), "-q"]
    with monkeypatch.context() as m:  # interrupted just before the rename: OUTPUT.partial and its fingerprint stay
        m.setattr(ResumableJsonlWriter, "close", lambda self: (_ for _ in ()).throw(KeyboardInterrupt))
        assert main(args) == 130
    whole = (tmp_path / "o.jsonl.partial").read_text()
    (tmp_path / "o.jsonl.partial").write_text(json.dumps("just a string") + "\n")
    capsys.readouterr()
    assert main(args + ["--resume"]) == 0  # a row that is not as it was written (its digest) is scored again
    assert "1 rows from line 1 on do not match the digests written with them" in capsys.readouterr().err
    assert (tmp_path / "o.jsonl").read_text() == whole
    with monkeypatch.context() as m:
        m.setattr(ResumableJsonlWriter, "close", lambda self: (_ for _ in ()).throw(KeyboardInterrupt))
        assert main(args) == 130
    (tmp_path / "o.jsonl.partial.meta.json").unlink()
    assert main(args + ["--resume"]) == 2
    assert "its fingerprint (o.jsonl.partial.meta.json, what says which input" in capsys.readouterr().err
