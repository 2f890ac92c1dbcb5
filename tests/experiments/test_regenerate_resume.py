"""``regenerate --resume``: keep the answers an interrupted run wrote, ask only the rest (and the failed
replies again), end with the results and rows of an uninterrupted run; refuse a changed setting, naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main
from conflictscore_local.experiments import regenerate as regenerate_module

from .conftest import letter_of, prompt_facts
from .test_regenerate_loop import write_csv


@pytest.fixture
def answers(openai_server: Any, openai_stub: Any) -> Any:
    """closed-book: the best answer (Q2's fails with HTTP 500 while ``server.fail_q2``); rag: W1 for Q1
    (conflicted: its documents hold "W1" and "Not: W1"), the best answer elsewhere; pass 2: the best answer."""
    openai_server.fail_q2 = True

    def respond(req: Any) -> Any:
        messages = req.body["messages"]
        question, condition, pass_ = prompt_facts(messages)
        k = int(question[1])
        if condition == "closed-book" and k == 2 and openai_server.fail_q2:
            return openai_stub.Reply(status=500, body={"error": "boom"})
        option = "W1" if (condition, k, pass_) == ("rag", 1, 1) else f"R{k}"
        return openai_stub.Reply(body=openai_stub.chat_reply(letter_of(messages, option)))

    openai_server.respond = respond
    return openai_server


def _asked(posts: Any) -> list[tuple[str, str, int]]:
    return sorted((q[:2], c, p) for q, c, p in (prompt_facts(x.body["messages"]) for x in posts))


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_resume_asks_only_what_the_interrupted_run_did_not_answer(
    tmp_path: Path, answers: Any, rule_judge: type, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_csv(tmp_path)
    out, res = tmp_path / "rows.jsonl", tmp_path / "results.json"
    argv = [
        "regenerate",
        "--truthfulqa",
        str(csv),
        "--conditions",
        "closed-book",
        "regenerated-rag",
        "--generator",
        "openai",
        "--generator-arg",
        f"base_url={answers.url}",
        "--generator-arg",
        "max_retries=0",
        "--judge",
        "rule",
        "--pruner",
        "none",
        "--no-cache",
        "-q",
        "-o",
        str(out),
        "--summary",
        str(res),
    ]
    real = regenerate_module._generate

    def interrupted(generator: Any, prompts: Any, **k: Any) -> Any:
        if k["desc"] == "regenerated-rag":
            raise KeyboardInterrupt
        return real(generator, prompts, **k)

    monkeypatch.setattr(regenerate_module, "_generate", interrupted)
    assert main(argv) == 130
    assert not out.exists() and not res.exists()
    partial = _rows(tmp_path / "rows.jsonl.partial")
    assert [r["kind"] for r in partial] == ["question"] * 7 + ["answer"] * 14 + ["conflictscore"] * 7
    assert [r["state"] for r in partial if r["kind"] == "answer" and r["condition"] == "closed-book"].count(
        "failed"
    ) == 1
    assert len(answers.posts()) == 14

    capsys.readouterr()
    assert main([*argv, "--resume", "--max-tokens", "16"]) == 2
    assert capsys.readouterr().err == (
        f"conflictscore regenerate: error: --resume: refusing to continue {tmp_path / 'rows.jsonl.partial'}: "
        "settings differ: max_tokens: 32 then, 16 now; rerun with what the interrupted run used, or without "
        "--resume to start over (a fresh run asks every question again)\n"
    )

    monkeypatch.setattr(regenerate_module, "_generate", real)
    answers.fail_q2 = False
    before = len(answers.posts())
    assert main([*argv, "--resume"]) == 0
    # the failed closed-book reply again, and the regenerations of the conflicted RAG answers: Q1's W1 (its
    # documents hold "W1" and "Not: W1"), Q3's and Q4's best answers (their documents hold "Not: R3", "Not: R4")
    assert _asked(answers.posts()[before:]) == [
        ("Q1", "rag", 2),
        ("Q2", "closed-book", 1),
        ("Q3", "rag", 2),
        ("Q4", "rag", 2),
    ]
    resumed, rows = json.loads(res.read_text()), _rows(out)
    assert resumed["resumed_answers"] == 13
    kinds = [r["kind"] for r in rows]
    assert (kinds.count("question"), kinds.count("answer"), kinds.count("conflictscore")) == (7, 21, 7)
    assert len({(r["id"], r["condition"]) for r in rows if r["kind"] == "answer"}) == 21  # each answer once
    assert not (tmp_path / "rows.jsonl.partial").exists()

    fresh_out, fresh_res = tmp_path / "fresh.jsonl", tmp_path / "fresh.json"
    assert main([*argv[:-4], "-o", str(fresh_out), "--summary", str(fresh_res)]) == 0
    fresh = json.loads(fresh_res.read_text())
    for r in (resumed, fresh):
        r["conditions"]["regenerated-rag"]["conflictscore"].pop("score_s")
        r["conditions"]["regenerated-rag"]["conflictscore"].pop("report")
    assert resumed["conditions"] == fresh["conditions"]
    cb = resumed["conditions"]["closed-book"]
    assert (cb["right"], cb["failed"]) == (7, 0)
    rg = resumed["conditions"]["regenerated-rag"]
    assert (rg["regenerated"], rg["fixed"], rg["initially_wrong"], rg["accuracy"]) == (3, 1, 1, 1.0)
    key = lambda r: (r["kind"], r.get("id"), r.get("condition"))  # noqa: E731
    assert sorted(map(json.dumps, sorted(rows, key=key))) == sorted(map(json.dumps, sorted(_rows(fresh_out), key=key)))


def test_resume_without_the_rows_file_is_refused(
    tmp_path: Path, answers: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_csv(tmp_path)
    rc = main(
        [
            "regenerate",
            "--truthfulqa",
            str(csv),
            "--conditions",
            "closed-book",
            "--generator",
            "openai",
            "--generator-arg",
            f"base_url={answers.url}",
            "--no-cache",
            "-q",
            "-o",
            str(tmp_path / "r.json"),
            "--resume",
        ]
    )  # this release's old spelling: -o X.json alone is the results
    assert rc == 2
    assert capsys.readouterr().err.endswith(
        "\nconflictscore regenerate: error: --resume needs the per-question rows "
        "(-o OUT.jsonl): they are what a resume keeps\n"
    )
    assert answers.posts() == []
