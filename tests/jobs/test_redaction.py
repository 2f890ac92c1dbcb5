"""The one redaction point: what it replaces, what it leaves, and that every writer goes through it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.jobs import (
    REDACTED,
    ResumableJsonlWriter,
    add_secret,
    redact,
    scrub,
    scrub_text,
    write_json_atomic,
    write_jsonl_atomic,
    write_text_atomic,
)

KEY = "sk-unit-8d1f7a2c9e"


def test_values_keys_urls_and_headers_are_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", KEY)
    value = {
        "base_url": "https://alice:s3cr3t-pass@proxy.example/v1",
        "extra_body": {"api_key": "anything at all", "x-api-key": "k", "n": 3, "api_key_env": "OPENAI_API_KEY"},
        "served": {"owned_by": f"Bearer {KEY}", "root": KEY, "id": "judge"},
        "notes": [f"the server said: Authorization: Basic dXNlcjpwYXNz and key={KEY}", "password=letmein"],
        "claims": ["The bridge opened in 1932.", 0.25, None, True],
    }
    assert scrub(value) == {
        "base_url": f"https://alice:{REDACTED}@proxy.example/v1",
        "extra_body": {"api_key": REDACTED, "x-api-key": REDACTED, "n": 3, "api_key_env": "OPENAI_API_KEY"},
        "served": {"owned_by": f"Bearer {REDACTED}", "root": REDACTED, "id": "judge"},
        "notes": [f"the server said: Authorization: {REDACTED} and key={REDACTED}", f"password={REDACTED}"],
        "claims": ["The bridge opened in 1932.", 0.25, None, True],
    }


def test_short_values_and_ordinary_text_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # below MIN_SECRET: replacing every "abc" would ruin output
    add_secret("x")
    text = "abc: the max_tokens of a monkey are http://localhost:8000/v1 and a tokenizer"
    assert scrub_text(text) == text
    assert scrub({"max_tokens": 8, "tokenizer": "t", "token_budget": 3}) == {"max_tokens": 8, "tokenizer": "t",
                                                                             "token_budget": 3}


def test_added_secrets_and_secrets_in_use_are_replaced_wherever_they_stand() -> None:
    add_secret("handed-over-secret-1")
    assert scrub_text("prefix handed-over-secret-1 suffix") == f"prefix {REDACTED} suffix"
    assert redact("my key is abcdefgh-123", ["abcdefgh-123"]) == f"my key is {REDACTED}"


def test_every_writer_passes_the_redaction_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    write_json_atomic(tmp_path / "s.json", {"resolved": {"root": KEY}})
    write_jsonl_atomic(tmp_path / "o.jsonl", [{"note": f"Bearer {KEY}"}])
    write_text_atomic(tmp_path / "r.html", f"<pre>{KEY}</pre>")
    with ResumableJsonlWriter(tmp_path / "t.jsonl", fingerprint={"url": "http://u:pw-123456@h/v1"}) as w:
        w.write({"reply": f"you sent {KEY}"})
        assert json.loads((tmp_path / "t.jsonl.partial.meta.json").read_text())["url"] == f"http://u:{REDACTED}@h/v1"
    for name in ("s.json", "o.jsonl", "r.html", "t.jsonl"):
        text = (tmp_path / name).read_text()
        assert KEY not in text and REDACTED in text, name


def test_a_resume_compares_the_fingerprint_as_it_was_stored(tmp_path: Path) -> None:
    fingerprint = {"backends": {"judge": {"base_url": "http://u:pw-123456@h/v1"}}}
    with pytest.raises(RuntimeError):
        with ResumableJsonlWriter(tmp_path / "o.jsonl", fingerprint=fingerprint) as w:
            w.write({"id": "a"})
            raise RuntimeError
    with ResumableJsonlWriter(tmp_path / "o.jsonl", resume=True, fingerprint=fingerprint) as w:
        assert w.done == [{"id": "a"}]  # the stored (redacted) fingerprint matches this run's
