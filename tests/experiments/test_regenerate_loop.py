"""``conflictscore regenerate`` end to end against the local OpenAI-compatible stub: scripted
right, wrong, unparseable and timed-out replies, a rule judge, and the fix/harm accounting
checked exactly; the per-question rows (-o) and the results (--summary) as written, and the
old spellings of this release (``-o RESULTS.json --trace TRACE.jsonl``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.cli import main
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.experiments import read_truthfulqa, run_regenerate
from conflictscore_local.experiments.prompts import PROMPT_VERSION

from .conftest import RuleJudge, letter_of, prompt_facts

# Question, Best Answer, Correct Answers, Incorrect Answers. "Not: X" documents contradict claim X (rule judge).
ROWS = [
    ("Q1 fixed?", "R1", "R1; Not: W1", "W1; X1"),
    ("Q2 wrong then no reply?", "R2", "R2; Not: W2", "W2; X2"),
    ("Q3 harmed?", "R3", "R3", "W3; Not: R3"),
    ("Q4 stays right?", "R4", "R4", "W4; Not: R4"),
    ("Q5 unparseable?", "R5", "R5; Not: W5", "W5"),
    ("Q6 no reply?", "R6", "R6", "W6"),
    ("Q7 not conflicted?", "R7", "R7", "W7"),
]
TIMEOUT = object()
# (question number, condition, pass) -> the option text to choose, a raw reply (str in a tuple), or TIMEOUT
SCRIPT: dict[tuple[int, str, int], Any] = {
    (1, "closed-book", 1): "R1",
    (2, "closed-book", 1): ("**{W2}**",),
    (3, "closed-book", 1): ("The answer is A",),
    (4, "closed-book", 1): TIMEOUT,
    (5, "closed-book", 1): ("{R5}. R5",),
    (6, "closed-book", 1): "R6",
    (7, "closed-book", 1): "R7",
    (1, "rag", 1): "W1",
    (2, "rag", 1): "W2",
    (3, "rag", 1): "R3",
    (4, "rag", 1): "R4",
    (5, "rag", 1): ("I am not sure.",),
    (6, "rag", 1): TIMEOUT,
    (7, "rag", 1): "R7",
    (1, "rag", 2): "R1",
    (2, "rag", 2): TIMEOUT,
    (3, "rag", 2): "W3",
    (4, "rag", 2): "R4",
    **{(k, "prompt-control", 1): f"R{k}" for k in range(1, 8)},
}


def write_csv(tmp_path: Path) -> Path:
    lines = ["Type,Category,Question,Best Answer,Correct Answers,Incorrect Answers,Source"]
    lines += [f"Adversarial,Test,{q},{b},{c},{i}," for q, b, c, i in ROWS]
    path = tmp_path / "TruthfulQA.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def scripted(openai_server: Any, openai_stub: Any) -> Any:
    def respond(req: Any) -> Any:
        messages = req.body["messages"]
        question, condition, pass_ = prompt_facts(messages)
        k = int(question[1])
        what = SCRIPT[(k, condition, pass_)]
        if what is TIMEOUT:
            return openai_stub.Reply(body=openai_stub.chat_reply("A"), delay_s=8.0)
        if isinstance(what, tuple):
            text = what[0].format(**{t: letter_of(messages, t) for t in ("W2", "R5") if f"{{{t}}}" in what[0]})
        else:
            text = letter_of(messages, what)
        return openai_stub.Reply(body=openai_stub.chat_reply(text))

    openai_server.respond = respond
    return openai_server


# a timed-out reply waits well past the client's timeout; the timeout leaves room for a loaded
# machine (at 0.5 s, ordinary replies timed out under load)
def generator_flags(server: Any) -> list[str]:
    return [
        "--generator",
        "openai",
        "--generator-arg",
        f"base_url={server.url}",
        "--generator-arg",
        "timeout_s=3",
        "--generator-arg",
        "max_retries=0",
    ]


@pytest.mark.slow  # waits out a real client timeout
def test_conditions_fix_and_harm_accounting(
    tmp_path: Path, scripted: Any, rule_judge: type, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_csv(tmp_path)
    out, trace = tmp_path / "results.json", tmp_path / "trace.jsonl"
    rc = main(
        [
            "regenerate",
            "--truthfulqa",
            str(csv),
            *generator_flags(scripted),
            "--judge",
            "rule",
            "--pruner",
            "none",
            "--no-cache",
            "-o",
            str(trace),
            "--summary",
            str(out),
        ]
    )
    # one failed reply in each condition: 4 of 28 (14.3 %) is above engine.max_unscored_share (0.1),
    # so the run finishes, writes everything and says so with exit status 3
    assert rc == 3
    res = json.loads(out.read_text())
    assert res["warnings"] and "4 of 28 replies (14.3%) FAILED" in res["warnings"][0]
    c = res["conditions"]
    states = ("n", "right", "wrong", "unparseable", "failed")
    assert [c["closed-book"][s] for s in states] == [7, 4, 1, 1, 1]
    assert [c["rag"][s] for s in states] == [7, 3, 2, 1, 1]
    assert [c["prompt-control"][s] for s in states] == [7, 7, 0, 0, 0]
    rg = c["regenerated-rag"]
    assert [rg[s] for s in states] == [7, 3, 1, 1, 2]
    assert c["rag"]["accuracy"] == 3 / 7 and c["rag"]["accuracy_parsed"] == 3 / 5
    assert c["prompt-control"]["ci95"] == [1.0, 1.0]
    lo, hi = c["closed-book"]["ci95"]
    assert 0.0 <= lo < 4 / 7 < hi <= 1.0
    assert (rg["regenerated"], rg["kept"]) == (4, 3)
    assert (rg["fixed"], rg["initially_wrong"], rg["fix_rate"]) == (1, 2, 0.5)
    assert (rg["harmed"], rg["initially_right"], rg["harm_rate"]) == (1, 3, 1 / 3)
    assert rg["transitions"] == {
        "wrong->right": 1,
        "wrong->failed": 1,
        "right->wrong": 1,
        "right->right": 2,
        "unparseable->unparseable": 1,
        "failed->failed": 1,
    }
    assert rg["accuracy"] - c["rag"]["accuracy"] == pytest.approx((rg["fixed"] - rg["harmed"]) / 7)
    assert rg["conflictscore"]["scored"] == 5 and rg["conflictscore"]["report"]["n_claims"] == 5
    assert res["config"]["prompts"]["version"] == PROMPT_VERSION and res["config"]["n_questions"] == 7
    assert res["config"]["generator"]["resolved"]["model"] == "stub-model"
    assert res["config"]["conflictscore"]["run"]["judge"]["name"] == "rule"
    # requests: 7 per first-pass condition, 4 regenerations
    assert len(scripted.posts()) == 3 * 7 + 4
    assert "fixed 1/2 (fix rate 0.500), harmed 1/3 (harm rate 0.333)" in capsys.readouterr().out

    records = [json.loads(line) for line in trace.read_text().splitlines()]
    kinds = [r["kind"] for r in records]
    assert kinds.count("question") == 7 and kinds.count("answer") == 4 * 7 and kinds.count("conflictscore") == 5
    q1 = next(r for r in records if r["kind"] == "question" and r["question"] == "Q1 fixed?")
    docs = {d["text"]: d["id"] for d in q1["documents"]}
    cs1 = next(r for r in records if r["kind"] == "conflictscore" and r["id"] == q1["id"])
    (claim,) = cs1["result"]["claims"]
    assert cs1["response"] == "W1" and claim["support"] == [docs["W1."]] and claim["contradict"] == [docs["Not: W1."]]
    regen1 = next(r for r in records if r["kind"] == "answer" and r["id"] == q1["id"] and r["pass"] == 2)
    assert regen1["state"] == "right" and [m["role"] for m in regen1["prompt"]] == ["user", "assistant", "user"]
    assert (
        f'Claim: "W1"\nSupported by:\n[{docs["W1."]}] W1.\nContradicted by:\n[{docs["Not: W1."]}] Not: W1.'
        in regen1["prompt"][2]["content"]
    )
    failed = next(r for r in records if r["kind"] == "answer" and r["condition"] == "rag" and r["state"] == "failed")
    assert failed["reply"] is None and "timeout" in failed["note"]
    kept7 = [
        r
        for r in records
        if r["kind"] == "answer"
        and r["condition"] == "regenerated-rag"
        and r["note"] == "no conflicted claim: RAG answer kept"
    ]
    assert len(kept7) == 1 and kept7[0]["state"] == "right"


@pytest.mark.slow  # waits out a real client timeout
def test_only_regenerated_rag_runs_rag_first(tmp_path: Path, scripted: Any) -> None:
    questions = read_truthfulqa(write_csv(tmp_path))[:4]
    from conflictscore_local.backends import registry

    gen = registry.build("generator", "openai", {"base_url": scripted.url, "timeout_s": 3, "max_retries": 0})
    engine = Engine(RunConfig().updated({"cache": {"enabled": False}}), judge=RuleJudge(), pruner="none")
    res = run_regenerate(questions, gen, engine, conditions=["regenerated-rag"])
    assert list(res) == ["rag", "regenerated-rag"]
    assert res["regenerated-rag"]["transitions"] == {
        "wrong->right": 1,
        "wrong->failed": 1,
        "right->wrong": 1,
        "right->right": 1,
    }
    with pytest.raises(ConfigError, match="unknown condition open-book; allowed: closed-book, rag"):
        run_regenerate(questions, gen, engine, conditions=["open-book"])


def test_bad_input_exits_2_before_any_request(
    tmp_path: Path, openai_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("Question,Best Answer\nq,a\n")
    rc = main(["regenerate", "--truthfulqa", str(bad), *generator_flags(openai_server), "-o", str(tmp_path / "r.json")])
    assert rc == 2 and "bad.csv:1: missing column(s) Correct Answers, Incorrect Answers" in capsys.readouterr().err
    rc = main(
        [
            "regenerate",
            "--truthfulqa",
            str(write_csv(tmp_path)),
            "--generator",
            "openai",
            "--generator-arg",
            "temperature=1",
            "-o",
            str(tmp_path / "r.json"),
        ]
    )
    assert rc == 2 and "generator 'openai': unknown argument 'temperature'" in capsys.readouterr().err
    assert openai_server.posts() == [] and not (tmp_path / "r.json").exists()


# -- -o is the per-question rows, --summary the results; the old spellings of this release -------


@pytest.fixture
def right_first_option(openai_server: Any, openai_stub: Any) -> Any:
    """Every closed-book reply picks the best answer, at once."""

    def respond(req: Any) -> Any:
        messages = req.body["messages"]
        question, _, _ = prompt_facts(messages)
        return openai_stub.Reply(body=openai_stub.chat_reply(letter_of(messages, f"R{question[1]}")))

    openai_server.respond = respond
    return openai_server


def _regenerate(capsys: pytest.CaptureFixture[str], tmp_path: Path, server: Any, *flags: str) -> tuple[int, str]:
    rc = main(
        [
            "regenerate",
            "--truthfulqa",
            str(tmp_path / "TruthfulQA.csv"),
            "--conditions",
            "closed-book",
            *generator_flags(server),
            "--no-cache",
            "-q",
            *flags,
        ]
    )
    return rc, capsys.readouterr().err


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _closed_book(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())["conditions"]["closed-book"]


def test_o_is_the_per_question_rows_and_summary_the_results(
    tmp_path: Path, right_first_option: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    write_csv(tmp_path)
    rows, res = tmp_path / "trace.jsonl", tmp_path / "results.json"
    assert _regenerate(capsys, tmp_path, right_first_option, "-o", str(rows), "--summary", str(res)) == (0, "")
    assert [r["kind"] for r in _rows(rows)] == ["question"] * 7 + ["answer"] * 7
    assert (_closed_book(res)["n"], _closed_book(res)["right"]) == (7, 7)
    only = tmp_path / "only.jsonl"  # -o alone: the rows, and no results file
    assert _regenerate(capsys, tmp_path, right_first_option, "-o", str(only)) == (0, "")
    assert len(_rows(only)) == 14
    assert sorted(p.name for p in tmp_path.iterdir()) == ["TruthfulQA.csv", "only.jsonl", "results.json", "trace.jsonl"]


def test_old_trace_keeps_o_as_the_results_with_a_warning(
    tmp_path: Path, right_first_option: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    write_csv(tmp_path)
    r, t = tmp_path / "r.json", tmp_path / "t.jsonl"
    rc, err = _regenerate(capsys, tmp_path, right_first_option, "-o", str(r), "--trace", str(t))
    assert rc == 0
    assert err == (
        f"warning: --trace is deprecated and will be removed in the next release: use -o {t} --summary {r} "
        "(-o is now the per-item output and --summary the results JSON; given with --trace, -o is still "
        "read as the results JSON in this release)\n"
    )
    assert _closed_book(r)["right"] == 7 and [x["kind"] for x in _rows(t)] == ["question"] * 7 + ["answer"] * 7


def test_a_json_o_alone_is_still_the_results_with_a_warning(
    tmp_path: Path, right_first_option: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    write_csv(tmp_path)
    r = tmp_path / "r.json"
    rc, err = _regenerate(capsys, tmp_path, right_first_option, "-o", str(r))
    assert rc == 0
    assert err == (
        f"warning: -o {r} (a .json file) is read as the results JSON, as before this release, and no "
        "per-item output is written: -o is now the per-item output (JSONL) and --summary the results "
        f"JSON; write -o {tmp_path / 'r.jsonl'} --summary {r}\n"
    )
    assert _closed_book(r)["right"] == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == ["TruthfulQA.csv", "r.json"]


def test_old_trace_with_summary_is_refused_before_any_request(
    tmp_path: Path, openai_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    write_csv(tmp_path)
    rc, err = _regenerate(
        capsys,
        tmp_path,
        openai_server,
        "-o",
        str(tmp_path / "r.json"),
        "--trace",
        str(tmp_path / "t.jsonl"),
        "--summary",
        str(tmp_path / "s.json"),
    )
    assert rc == 2
    assert err == (
        "conflictscore regenerate: error: --trace (deprecated) with --summary: -o would be the per-item "
        f"output and the results JSON at once; write -o {tmp_path / 't.jsonl'} --summary "
        f"{tmp_path / 's.json'} without --trace\n"
    )
    assert openai_server.posts() == [] and sorted(p.name for p in tmp_path.iterdir()) == ["TruthfulQA.csv"]
