"""``generate --resume`` (keep the answered rows of an interrupted run, ask the rest and the failed ones
again; refuse another strategy or input, naming what differs) and ``generate -o -`` (rows on stdout)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main
from conflictscore_local.experiments import generate as generate_module

from .test_generate_cli import write_items

ITEMS = [
    {"id": k, "question": f"Is {drink} healthy?", "documents": [{"id": "d1", "text": f"{drink} helps."}]}
    for k, drink in (("a", "coffee"), ("b", "tea"), ("c", "milk"))
]


def _asked(posts: Any) -> list[str]:
    return sorted(p.body["messages"][0]["content"].split("Is ")[1].split(" ")[0] for p in posts)


def test_resume_keeps_answered_rows_and_asks_the_rest_and_the_failed_again(
    tmp_path: Path,
    openai_server: Any,
    openai_stub: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(generate_module, "CHUNK_ITEMS", 1)
    real = generate_module.generate_reports

    def interrupted(items: Any, *a: Any, **k: Any) -> Any:
        if items[0].id == "c":
            raise KeyboardInterrupt
        return real(items, *a, **k)

    monkeypatch.setattr(generate_module, "generate_reports", interrupted)
    openai_server.respond = lambda r: openai_stub.Reply(
        status=500 if "coffee" in r.body["messages"][0]["content"] else 200,
        body={"error": "boom"} if "coffee" in r.body["messages"][0]["content"] else openai_stub.chat_reply("fine"),
    )
    inp, out = write_items(tmp_path, ITEMS), tmp_path / "r.jsonl"
    argv = [
        "generate",
        str(inp),
        "--strategy",
        "standard",
        "--generator",
        "openai",
        "--generator-arg",
        f"base_url={openai_server.url}",
        "--generator-arg",
        "max_retries=0",
        "-o",
        str(out),
        "-q",
    ]
    assert main(argv) == 130
    assert not out.exists()
    partial = [json.loads(x) for x in (tmp_path / "r.jsonl.partial").read_text().splitlines()]
    assert [(r["id"], "error" in r["generation"]) for r in partial] == [("a", True), ("b", False)]

    capsys.readouterr()
    assert main([*argv[:3], "balanced", *argv[4:], "--resume"]) == 2
    assert capsys.readouterr().err == (
        f"conflictscore generate: error: --resume: refusing to continue {tmp_path / 'r.jsonl.partial'}: settings "
        "differ: strategy: 'standard' then, 'balanced' now; rerun with what the interrupted run used, or without "
        "--resume to start over (a fresh run asks every item again)\n"
    )

    monkeypatch.setattr(generate_module, "generate_reports", real)
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("now fine"))
    before = len(openai_server.posts())
    assert main([*argv[:-1], "--resume", "--json"]) == 0
    assert _asked(openai_server.posts()[before:]) == ["coffee", "milk"]  # the failed one and the one never asked
    done = json.loads(capsys.readouterr().out)
    assert (done["items"], done["failed"], done["resumed"]) == (3, 0, 1)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["id"], r["response"]) for r in rows] == [("b", "fine"), ("a", "now fine"), ("c", "now fine")]
    assert not (tmp_path / "r.jsonl.partial").exists()


def test_o_dash_streams_the_rows_to_stdout_and_refuses_resume(
    tmp_path: Path, openai_server: Any, openai_stub: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("fine"))
    argv = [
        "generate",
        str(write_items(tmp_path, ITEMS[:2])),
        "--strategy",
        "standard",
        "--generator",
        "openai",
        "--generator-arg",
        f"base_url={openai_server.url}",
        "-o",
        "-",
    ]
    assert main(argv) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(r["id"], r["response"]) for r in rows] == [("a", "fine"), ("b", "fine")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.jsonl"]
    assert main([*argv, "--resume"]) == 2
    assert capsys.readouterr().err.endswith(
        "conflictscore generate: error: --resume: -o - writes the rows to stdout, which keeps nothing to resume "
        "from; write -o OUT.jsonl to resume an interrupted run\n"
    )
    assert main([*argv, "--json"]) == 2
    assert capsys.readouterr().err.endswith(
        "conflictscore generate: error: -o - and --json both print on stdout; write the rows to a file (-o OUT.jsonl)\n"
    )
