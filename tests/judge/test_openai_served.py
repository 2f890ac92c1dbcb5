"""``score --judge openai`` end to end against a real OpenAI-compatible server: ``transformers
serve`` with SmolLM2-135M-Instruct on CPU (session fixture ``served_smollm2``), faults included.

The server ignores ``logprobs``: the judge's probe notices it before the first pair, so labels
are read from the reply text under a text-only spec (``top_logprobs`` 0), which keys the cache.
SmolLM2 is far too weak to judge (``max_tokens=3`` lets it say SUPPORT, rarely anything else;
"The claim is" is unparseable, so unscored): these tests check what the machinery does with
each answer, whatever the labels, and compare runs with one another, never with gold labels.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main
from conflictscore_local.generate.openai import LOGPROBS_IGNORED
from conflictscore_local.jobs import ResumableJsonlWriter

from ..support.rows import row_differences

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TEA = "Green tea lowers blood pressure in adults."
CATS = "Cats purr when they are content."
BRIDGE = "The bridge over the river opened in 1932 after four years of work."
ITEMS = [
    {
        "id": "tea",
        "response": "",
        "claims": ["Green tea lowers blood pressure."],
        "documents": [{"id": "d1", "text": TEA}, {"id": "d2", "text": CATS}],
    },
    {
        "id": "cats",
        "response": "",
        "claims": ["Cats purr."],
        "documents": [{"id": "d1", "text": CATS}, {"id": "d2", "text": BRIDGE}],
    },
    {
        "id": "bridge",
        "response": "",
        "claims": ["The bridge opened in 1932."],
        "documents": [{"id": "d1", "text": BRIDGE}, {"id": "d2", "text": TEA}],
    },
]
PAIRS = 6


def write_items(tmp_path: Path, rows: list[dict[str, Any]] = ITEMS) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def score_args(server: Any, items: Path, out: Path, cache: Path, *extra: str, **judge: Any) -> list[str]:
    judge = {"base_url": server.url, "max_tokens": 3, "max_retries": 1, "backoff_s": 0.05, "timeout_s": 120, **judge}
    args = [
        "score",
        str(items),
        "-o",
        str(out),
        "--summary",
        str(out.with_suffix(".summary.json")),
        "--judge",
        "openai",
        "--pruner",
        "none",
        "--cache",
        str(cache),
        "-q",
        *extra,
    ]
    for k, v in judge.items():
        args += ["--judge-arg", f"{k}={v}"]
    return args


def results(out: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return rows, json.loads(out.with_suffix(".summary.json").read_text(encoding="utf-8"))


def judgments(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [j for r in rows for c in r["claims"] for j in c["judgments"]]


def as_judged(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with every cached judgment marked as judged: what an uninterrupted run writes."""
    text = json.dumps(rows).replace('"source": "cache"', '"source": "judge"')
    return json.loads(text)


PROBED = (
    f"warning: judge openai: {LOGPROBS_IGNORED}; labels are read from the reply text (top_logprobs 10 -> 0 "
    "in the spec; --judge-arg top_logprobs=0 says so and skips the probe)"
)


def probed(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``main(args)`` and its stderr, which says that the logprobs probe found them ignored."""
    capsys.readouterr()
    rc = main(args)
    err = capsys.readouterr().err
    assert PROBED in err, err
    return rc, err


def test_labels_are_read_from_the_text_and_cached_under_the_text_only_spec(
    served_smollm2: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items, cache = write_items(tmp_path), tmp_path / "cache.sqlite"
    first, again = tmp_path / "first.jsonl", tmp_path / "again.jsonl"
    assert (
        probed(score_args(served_smollm2, items, first, cache, "--set", "engine.max_unscored_share=1"), capsys)[0] == 0
    )
    rows, summary = results(first)
    judge = summary["config"]["backends"]["judge"]
    assert judge["spec"]["top_logprobs"] == 0 and judge["spec"]["model"]["name"] == served_smollm2.model
    assert judge["spec"]["model"]["served"] == {"id": served_smollm2.model, "owned_by": "local"}
    assert judge["resolved"]["logprobs"] == f"refused: {LOGPROBS_IGNORED}"
    assert "protocol_changes" not in judge["resolved"]  # known before the first pair: no switch mid-run
    found = judgments(rows)
    assert len(found) == summary["pairs"]["judged"] == PAIRS
    for j in found:  # a label word read from the text, or unscored with the reply: never a guess
        assert j["source"] == "judge" and j["probs"] is None
        assert (j["label"] in ("SUPPORT", "CONTRADICT", "IRRELEVANT") and "note" not in j) or (
            j["label"] is None and j["note"].startswith("unparseable reply ")
        )
    scored = sum(j["label"] is not None for j in found)
    stats = summary["stages"]["judge"]
    assert (stats.get("from_text", 0), stats.get("unscored", 0)) == (scored, PAIRS - scored)
    assert "from_logprobs" not in stats and stats["generator"]["prompts"] == PAIRS + 1  # + the probe
    assert scored > 0, "SmolLM2 answered no label word at all: nothing here could come from the cache"

    assert (
        probed(score_args(served_smollm2, items, again, cache, "--set", "engine.max_unscored_share=1"), capsys)[0] == 0
    )
    rows2, summary2 = results(again)
    assert summary2["pairs"]["cached"] == scored and summary2["pairs"]["unscored"] == PAIRS - scored
    assert row_differences(as_judged(rows2), rows) == []
    with sqlite3.connect(cache) as db:
        specs = [json.loads(s) for (s,) in db.execute("SELECT spec FROM specs")]
    # one judge spec: the one the labels were read under (beside it, the passage splitting's)
    assert [s["top_logprobs"] for s in specs if s.get("backend") == "openai"] == [0]
    assert len(specs) == 2 and specs[1]["judge"]["top_logprobs"] == 0


def test_the_server_killed_mid_run_unscored_then_resumed_after_restart_as_if_never_killed(
    served_smollm2: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    items = write_items(tmp_path)
    whole, cut = tmp_path / "whole.jsonl", tmp_path / "cut.jsonl"
    step = ("--set", "engine.step_items=1")
    assert (
        probed(
            score_args(
                served_smollm2, items, whole, tmp_path / "whole.sqlite", *step, "--set", "engine.max_unscored_share=1"
            ),
            capsys,
        )[0]
        == 0
    )
    rows, summary = results(whole)
    share = summary["pairs"]["unscored"] / PAIRS
    later = [j for r in rows[1:] for c in r["claims"] for j in c["judgments"]]
    assert any(j["label"] is not None for j in later), "no scored pair after the first item: nothing to lose"

    real_write = ResumableJsonlWriter.write

    def write_then_kill(self: ResumableJsonlWriter, row: Any) -> None:
        real_write(self, row)
        if row["id"] == "tea":
            served_smollm2.kill()  # SIGKILL: the requests of the next items find nothing listening

    limit = ("--set", f"engine.max_unscored_share={share + 1e-6}")  # the model's own unscored pairs pass
    args = score_args(served_smollm2, items, cut, tmp_path / "cut.sqlite", *step, *limit)
    with monkeypatch.context() as m:
        m.setattr(ResumableJsonlWriter, "write", write_then_kill)
        rc, err = probed(args, capsys)
    assert rc == 3 and "are UNSCORED, above engine.max_unscored_share" in err
    killed, cut_summary = results(cut)
    assert killed[0] == rows[0]  # judged before the kill
    for j in judgments(killed[1:]):  # unscored with the reason, never guessed
        assert j["label"] is None and j["probs"] is None
        assert j["note"].startswith("no answer: connection error: ") and j["note"].endswith(
            "(gave up after 2 attempts)"
        )
    assert cut_summary["pairs"]["unscored"] == PAIRS - 2 + sum(j["label"] is None for j in judgments(rows[:1]))

    served_smollm2.start()  # the same model on the same port
    assert probed(args + ["--resume"], capsys)[0] == 0
    resumed, resumed_summary = results(cut)
    assert row_differences(as_judged(resumed), rows) == []  # as if the server had never gone
    assert resumed_summary["pairs"]["cached"] == sum(j["label"] is not None for j in judgments(rows[:1]))


def test_a_slow_server_meets_the_timeout_and_its_pairs_are_unscored(served_smollm2: Any, tmp_path: Path) -> None:
    busy = json.dumps(
        {
            "messages": [{"role": "user", "content": "Write a long story about a dragon."}],
            "max_tokens": 32,
            "temperature": 0,
        }
    ).encode()
    done = threading.Event()
    answered = [threading.Event(), threading.Event()]

    def occupy(first: threading.Event) -> None:  # the server answers one request at a time: with two of these
        while not done.is_set():  # looping, another one always waits ahead of the judge's requests
            req = urllib.request.Request(
                f"{served_smollm2.url}/chat/completions", busy, {"Content-Type": "application/json"}
            )
            urllib.request.urlopen(req, timeout=300).read()
            first.set()

    blockers = [threading.Thread(target=occupy, args=(a,), daemon=True) for a in answered]
    for b in blockers:
        b.start()
    t0 = time.perf_counter()
    try:
        for a in answered:  # both have had an answer: each is looping, not still on its way to the server
            assert a.wait(timeout=300)
        items, out = write_items(tmp_path, ITEMS[:1]), tmp_path / "out.jsonl"
        t0 = time.perf_counter()
        rc = main(score_args(served_smollm2, items, out, tmp_path / "cache.sqlite", timeout_s=0.3))
    finally:
        took = time.perf_counter() - t0
        done.set()
        for b in blockers:
            b.join(timeout=300)
    assert rc == 3
    rows, summary = results(out)
    for j in judgments(rows):
        assert (j["label"], j["probs"]) == (None, None)
        assert j["note"] == "no answer: timeout after 0.3s (gave up after 2 attempts)"
    # the probe timed out too: nothing decided, so the spec says what was asked for
    judge = summary["config"]["backends"]["judge"]
    assert (
        judge["resolved"]["logprobs"]
        == "undecided: the probe got no answer: timeout after 0.3s (gave up after 2 attempts)"
    )
    assert judge["spec"]["top_logprobs"] == 10 and summary["pairs"]["unscored"] == 2
    assert took < 30  # 3 requests x 2 attempts of 0.3 s, with Python and the CLI around them


def test_a_wrong_model_name_stops_before_anything_is_written(
    served_smollm2: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    assert main(score_args(served_smollm2, write_items(tmp_path), out, tmp_path / "c.sqlite", model="judge")) == 2
    err = capsys.readouterr().err
    assert f"Server is pinned to '{served_smollm2.model}'; requested 'judge'." in err
    assert f"the server lists {served_smollm2.model!r}, not model='judge': check model=" in err
    assert not out.exists() and not out.with_suffix(".summary.json").exists()


def test_another_model_behind_the_same_url_changes_the_spec_and_reads_no_cached_label(
    served_smollm2: Any,
    serve_factory: Any,
    tiny_causal_lm_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    items, cache = write_items(tmp_path), tmp_path / "cache.sqlite"
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    share = ("--set", "engine.max_unscored_share=1")
    assert probed(score_args(served_smollm2, items, before, cache, *share), capsys)[0] == 0
    old_rows, old = results(before)
    assert any(j["label"] is not None for j in judgments(old_rows))  # labels the cache could serve
    served_smollm2.stop()
    other = serve_factory(tiny_causal_lm_dir, port=served_smollm2.port)  # restarted with another model
    try:
        assert main(score_args(served_smollm2, items, after, cache, *share)) == 0  # whatever its probe found
        new_rows, new = results(after)
        assert new["config"]["backends"]["judge"]["spec"]["model"]["name"] == str(tiny_causal_lm_dir)
        assert new["config"]["backends"]["judge"]["spec"] != old["config"]["backends"]["judge"]["spec"]
        assert new["pairs"]["cached"] == 0 and new["pairs"]["judged"] == PAIRS
        assert {j["source"] for j in judgments(new_rows)} == {"judge"}
        # asking for the old model by name now stops the run instead of judging with the other one
        capsys.readouterr()
        assert main(score_args(served_smollm2, items, tmp_path / "x.jsonl", cache, model=served_smollm2.model)) == 2
        assert (
            f"the server lists {str(tiny_causal_lm_dir)!r}, not model={served_smollm2.model!r}"
            in capsys.readouterr().err
        )
    finally:
        other.stop()
        served_smollm2.start()
