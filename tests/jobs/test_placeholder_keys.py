"""Issue 47 (review reliability-4: SEC-dummy-key-in-text, SEC-vllm-example-key-in-text): a run's API key that
is also a word of the user's text. Local OpenAI-compatible servers are run with documented placeholder keys
(LM Studio's ``lm-studio``, vLLM's example ``token-abc123``) that users also write about those servers. The
redaction replaces a held secret where the program writes it of its own (a server's reply echoing the key, a
note, the summary's config); the user's rows, documents and claims are written as they are."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from .test_hostile import cli, generator_args, stored_text, write_jsonl

CLAIM = "Install lm-studio and pick a model."
DOC = "The vLLM docs start the server with --api-key token-abc123."
ITEM = {
    "id": "lm-studio-1",
    "question": "How do I run a local model with lm-studio?",
    "response": f"{CLAIM} Or use vLLM with token-abc123.",
    "claims": [CLAIM],
    "documents": [
        {"id": "d1", "text": f"{DOC} LM Studio's key is lm-studio."},
        {"id": "d2", "text": "Bananas grow in tropical climates."},
    ],
}


def echoing(openai_stub: Any) -> Any:
    """A server whose every reply echoes the Authorization header it got (so no label can be read in it)."""
    return lambda r: openai_stub.Reply(body=openai_stub.chat_reply(f"you sent {r.headers.get('Authorization')}"))


@pytest.mark.parametrize("key", ["lm-studio", "token-abc123"])
def test_score_keeps_the_users_text_when_the_key_is_a_word_of_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    openai_server: Any,
    openai_stub: Any,
    monkeypatch: pytest.MonkeyPatch,
    key: str,
) -> None:
    """Before: the OUTPUT claim read "Install [redacted] and pick a model." (exit 3, no notice)."""
    monkeypatch.setenv("OPENAI_API_KEY", key)
    openai_server.respond = echoing(openai_stub)
    inp = write_jsonl(tmp_path / "in.jsonl", [ITEM])
    rc, _, err = cli(
        capsys,
        "score",
        str(inp),
        "-o",
        str(tmp_path / "o.jsonl"),
        "--summary",
        str(tmp_path / "s.json"),
        "--report",
        str(tmp_path / "r.html"),
        "--csv",
        str(tmp_path / "items.csv"),
        "--csv-pairs",
        str(tmp_path / "pairs.csv"),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--judge",
        "openai",
        "--judge-arg",
        f"base_url={openai_server.url}",
        "--judge-arg",
        "max_retries=0",
        "--pruner",
        "none",
        "-q",
    )
    assert rc == 3, err  # the echoed replies hold no label: unscored
    assert openai_server.posts()[0].headers["Authorization"] == f"Bearer {key}"  # sent where it must go
    (row,) = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()]
    assert row["id"] == "lm-studio-1" and row["claims"][0]["text"] == CLAIM
    notes = [j["note"] for j in row["claims"][0]["judgments"]]
    assert notes and all("Bearer [redacted]" in n and key not in n for n in notes)  # the server's echo: redacted
    pairs = list(csv.DictReader((tmp_path / "pairs.csv").open(encoding="utf-8", newline="")))
    assert {p["claim"] for p in pairs} == {CLAIM} and {p["item_id"] for p in pairs} == {"lm-studio-1"}
    assert "lm-studio-1" in (tmp_path / "items.csv").read_text(encoding="utf-8")
    page = stored_text(tmp_path, "r.html")["r.html"]
    assert json.dumps(CLAIM)[1:-1] in page and "lm-studio-1" in page
    assert "Bearer " + key not in page and "[redacted]" in page  # the notes, as stored
    assert f"Bearer {key}" not in (tmp_path / "s.json").read_text(encoding="utf-8")
    assert f"Bearer {key}" not in stored_text(tmp_path, "c.sqlite")["c.sqlite"]


def test_the_report_of_the_items_shows_their_documents_verbatim(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    openai_server: Any,
    openai_stub: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "token-abc123")
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT"))
    inp = write_jsonl(tmp_path / "in.jsonl", [ITEM])
    rc, _, err = cli(
        capsys,
        "score",
        str(inp),
        "-o",
        str(tmp_path / "o.jsonl"),
        "--summary",
        str(tmp_path / "s.json"),
        "--report",
        str(tmp_path / "r.html"),
        "--no-cache",
        "--judge",
        "openai",
        "--judge-arg",
        f"base_url={openai_server.url}",
        "--judge-arg",
        "max_retries=0",
        "--pruner",
        "none",
        "-q",
    )
    assert rc == 0, err
    rc, _, err = cli(
        capsys,
        "report",
        str(tmp_path / "o.jsonl"),
        "--items",
        str(inp),
        "--summary",
        str(tmp_path / "s.json"),
        "-o",
        str(tmp_path / "items.html"),
        "-q",
    )
    assert rc == 0, err
    for name in ("r.html", "items.html"):
        page = stored_text(tmp_path, name)[name]
        assert "[redacted]" not in page, name
        assert json.dumps(CLAIM)[1:-1] in page and "lm-studio-1" in page
    assert json.dumps(f"{DOC} LM Studio's key is lm-studio.")[1:-1] in stored_text(tmp_path, "items.html")["items.html"]


def test_generate_copies_the_users_items_when_the_key_is_a_word_of_them(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    openai_server: Any,
    openai_stub: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before: generate's copy of the document read "... --api-key [redacted]." (3 places in the file)."""
    monkeypatch.setenv("OPENAI_API_KEY", "token-abc123")
    openai_server.respond = echoing(openai_stub)
    source = {k: v for k, v in ITEM.items() if k not in ("response", "claims")}
    inp = write_jsonl(tmp_path / "in.jsonl", [source])
    out = tmp_path / "g.jsonl"
    rc, _, err = cli(
        capsys, "generate", str(inp), "--strategy", "standard", "-o", str(out), *generator_args(openai_server), "-q"
    )
    assert rc == 0, err
    (row,) = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert row["documents"] == source["documents"] and row["question"] == source["question"]
    assert row["response"] == "you sent Bearer [redacted]"  # what the server sent back: redacted as it came in
    assert out.read_text(encoding="utf-8").count("token-abc123") == 1  # the user's document, once
