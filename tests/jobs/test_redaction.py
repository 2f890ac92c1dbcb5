"""The one redaction point: it replaces the secrets the run holds (and nothing else), and every writer goes through
it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.jobs import (
    REDACTED,
    ResumableJsonlWriter,
    add_credentials,
    add_secret,
    add_url,
    forget_secrets,
    redact,
    scrub,
    scrub_text,
    write_json_atomic,
    write_jsonl_atomic,
    write_text_atomic,
)

KEY = "sk-unit-8d1f7a2c9e"


@pytest.fixture(autouse=True)
def _no_secret_held() -> None:
    forget_secrets()


def test_held_values_urls_and_credentials_are_replaced_wherever_they_stand() -> None:
    add_secret(KEY)
    add_url("https://alice:s3cr3t-pass@proxy.example/v1")
    add_url("http://bob:pw@short.example/v1")  # a short password: its URL's own text still goes
    add_credentials({"api_key": "anything at all", "n": 3, "nested": [{"token": "tok-0123456789"}], "model": "m"})
    value = {
        "base_url": "https://alice:s3cr3t-pass@proxy.example/v1",
        "other": "http://bob:pw@short.example/v1 and the password s3cr3t-pass alone",
        "extra_body": {"api_key": "anything at all", "n": 3, "nested": [{"token": "tok-0123456789"}], "model": "m"},
        "served": {"owned_by": f"Bearer {KEY}", "root": KEY, "id": "judge", KEY: 1},
        "claims": ["The bridge opened in 1932.", 0.25, None, True],
    }
    assert scrub(value) == {
        "base_url": f"https://alice:{REDACTED}@proxy.example/v1",
        "other": f"http://bob:{REDACTED}@short.example/v1 and the password {REDACTED} alone",
        "extra_body": {"api_key": REDACTED, "n": 3, "nested": [{"token": REDACTED}], "model": "m"},
        "served": {"owned_by": f"Bearer {REDACTED}", "root": REDACTED, "id": "judge", REDACTED: 1},
        "claims": ["The bridge opened in 1932.", 0.25, None, True],
    }
    assert scrub_text(f"prefix {KEY} suffix") == f"prefix {REDACTED} suffix"
    assert redact("my key is abcdefgh-123", ["abcdefgh-123"]) == f"my key is {REDACTED}"


def test_text_that_only_looks_like_a_secret_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """No pattern of free text and no environment variable the run did not read: the data stays."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "Users click")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "The standard-bearer")
    add_secret("x")  # below MIN_SECRET: replacing every "x" would ruin output
    add_secret(KEY)
    texts = [
        "Password : forgot password ? sign-up",
        "api_key=abc123 and Authorization: Bearer abcdefgh12345678",
        "https://alice:wonderland@example.org",
        "Bearer securities were abolished",
        "The standard-bearer Napoleon led",
        "Users click the button",
        "max_tokens x",
    ]
    assert [scrub_text(t) for t in texts] == texts
    fields = {"password": "forgot password", "token": "abcdefgh-1234", "Authorization": "Basic dXNlcjpwYXNz"}
    assert scrub(fields) == fields


def test_a_new_run_holds_none_of_an_earlier_runs_secrets() -> None:
    add_secret(KEY)
    assert scrub_text(KEY) == REDACTED
    forget_secrets()
    assert scrub_text(KEY) == KEY


def test_every_writer_passes_the_redaction_point(tmp_path: Path) -> None:
    add_secret(KEY)
    add_url("http://u:pw-123456@h/v1")
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
    add_url("http://u:pw-123456@h/v1")
    fingerprint = {"backends": {"judge": {"base_url": "http://u:pw-123456@h/v1"}}}
    with pytest.raises(RuntimeError):
        with ResumableJsonlWriter(tmp_path / "o.jsonl", fingerprint=fingerprint) as w:
            w.write({"id": "a"})
            raise RuntimeError
    with ResumableJsonlWriter(tmp_path / "o.jsonl", resume=True, fingerprint=fingerprint) as w:
        assert w.done == [{"id": "a"}]  # the stored (redacted) fingerprint matches this run's
