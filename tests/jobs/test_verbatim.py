"""Issue 35: a result file reproduces the user's data byte for byte.

Redaction removes only the secret values the run itself holds (the key it read through
``api_key_env``, credentials in the URLs it was given, the header values it sent, the
``extra_body`` credentials it sends); it never pattern-matches free text and never looks at
environment variables the run did not use. Each case of the hostile rerun is met through the
command line; the secret cases of the first audit stay in ``test_hostile.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.core.types import CONTRADICT, IRRELEVANT, SUPPORT

from .test_hostile import RAMDOCS_ROW, answering, cli, generator_args, stored_text, write_jsonl

TEXTS = [
    "Password : forgot password ? sign-up",
    "Set api_key=abc123 in the file, then send Authorization: Bearer abcdefgh12345678.",
    "The portal lives at https://alice:wonderland@example.org/login for now.",
    "Bearer securities were abolished in 1982.",
    "The standard-bearer Napoleon led the charge.",
    "Users click the button; the token=letmein-9876 field and password: hunter2hunter2 stay.",
]
"""What the rerun saw rewritten: a sign-up form, header-shaped text, a URL with a password,
ordinary English, and an environment variable's value (``TIKTOKEN_CACHE_DIR``)."""


def items() -> list[dict[str, Any]]:
    """One item per text: the text as response, claim and document, with given labels."""
    return [
        {
            "id": f"t{i}",
            "question": f"What does text {i} say?",
            "response": t,
            "claims": [t],
            "documents": [{"id": "a", "text": t}, {"id": "b", "text": f"Off topic {i}."}],
            "labels": [[SUPPORT, CONTRADICT if i % 2 else IRRELEVANT]],
        }
        for i, t in enumerate(TEXTS)
    ]


@pytest.fixture
def env_like_a_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shell with secret-named variables the run never uses, one of them holding text that is in the data."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "Users click")
    monkeypatch.setenv("SOME_SERVICE_PASSWORD", "The standard-bearer")
    monkeypatch.setenv("HF_TOKEN", "securities were abolished")  # read by `models pull` alone


def test_score_rows_merge_and_report_reproduce_the_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], env_like_a_user: None
) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", items())
    out, summ, page = tmp_path / "out.jsonl", tmp_path / "s.json", tmp_path / "r.html"
    rc, _, err = cli(capsys, "score", str(inp), "-o", str(out), "--summary", str(summ), "--report", str(page), "-q")
    assert rc == 0, err
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["claims"][0]["text"] for r in rows] == TEXTS
    html = stored_text(tmp_path, "r.html")["r.html"]
    assert "[redacted]" not in html
    for t in TEXTS:
        assert json.dumps(t)[1:-1] in html, t  # the report's item records hold each text whole
    # two shards merged: the merged rows are the unsharded run's
    outs = []
    for i in (1, 2):
        o, s = tmp_path / f"o{i}.jsonl", tmp_path / f"s{i}.json"
        assert cli(capsys, "score", str(inp), "--shard", f"{i}/2", "-o", str(o), "--summary", str(s), "-q")[0] == 0
        outs.append((o, s))
    merged = tmp_path / "m.jsonl"
    rc, _, err = cli(
        capsys,
        "merge",
        str(inp),
        "--outputs",
        *(str(o) for o, _ in outs),
        "--summaries",
        *(str(s) for _, s in outs),
        "-o",
        str(merged),
        "--report",
        str(tmp_path / "m.html"),
        "-q",
    )
    assert rc == 0, err
    assert [json.loads(x)["claims"][0]["text"] for x in merged.read_text(encoding="utf-8").splitlines()] == TEXTS
    assert "[redacted]" not in stored_text(tmp_path, "m.html")["m.html"]


def test_bench_build_keeps_the_source_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], env_like_a_user: None
) -> None:
    row = {
        **RAMDOCS_ROW,
        "documents": [
            {"text": "User : Password : forgot password ? sign-up", "type": "correct", "answer": "A"},
            {"text": TEXTS[3], "type": "noise", "answer": "B"},
        ],
    }
    src = write_jsonl(tmp_path / "ramdocs.jsonl", [row])
    out = tmp_path / "bench.jsonl"
    rc, _, err = cli(
        capsys, "bench", "build", "--source", "ramdocs", "--source", f"ramdocs={src}", "-o", str(out), "-q"
    )
    assert rc == 0, err
    built = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert built and all(
        [d["text"] for d in it["documents"]] == ["User : Password : forgot password ? sign-up", TEXTS[3]]
        for it in built
    )


def test_train_judge_prepare_writes_the_source_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env_like_a_user: None
) -> None:
    """``prepare``'s own writing (pairs.jsonl, bench_train.jsonl, data.json) over sides made small by hand:
    the loaders are tested elsewhere, the shared data is too big for a unit test."""
    from conflictscore_local.bench import make_item
    from conflictscore_local.bench.leakage import TextIndex
    from conflictscore_local.core.chunk import Chunker
    from conflictscore_local.train import prepare
    from conflictscore_local.train.sources import LabelledPair

    ramdocs = "User : Password : forgot password ? sign-up"
    bench = make_item(
        source="ramdocs",
        id="r0",
        question="Who?",
        claims=["Users click sign-up."],
        documents=[{"id": "d0", "text": ramdocs}],
        gold_labels=[[SUPPORT]],
        conflict_type="contradiction",
        split_key="r0",
    )
    pairs = [
        LabelledPair("Users click sign-up.", ramdocs, SUPPORT, "ramdocs", "bench"),
        LabelledPair(TEXTS[4], TEXTS[3], IRRELEVANT, "sick", "plain"),
    ]
    ev = prepare._EvalSide({}, {}, TextIndex(), {}, [], [], {"all": 0, "kept": 0})
    tr = prepare._TrainSide(pairs, [bench], {}, {}, {}, {}, 0, {})
    monkeypatch.setattr(prepare, "_evaluation_side", lambda d, mix, rng: ev)
    monkeypatch.setattr(prepare, "_training_side", lambda d, ev, chunker, mix, rng: tr)
    monkeypatch.setattr(prepare, "feature_balance", lambda pairs: {})
    prepare.build(tmp_path, tmp_path / "data", chunker=Chunker())
    written = [json.loads(x) for x in (tmp_path / "data" / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(p["claim"], p["passage"]) for p in written] == [("Users click sign-up.", ramdocs), (TEXTS[4], TEXTS[3])]
    (item,) = [json.loads(x) for x in (tmp_path / "data" / "bench_train.jsonl").read_text().splitlines()]
    assert item["documents"][0]["text"] == ramdocs and item["claims"] == ["Users click sign-up."]


def test_generate_copies_fields_named_like_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], openai_server: Any, openai_stub: Any, env_like_a_user: None
) -> None:
    """The user's own fields ``password`` and ``token`` (a sign-up form's data set) are copied as they are."""
    openai_server.respond = answering(openai_stub, "Bearer securities were abolished; Users click.")
    rows = [
        {
            "id": "f1",
            "question": "What does the form ask?",
            "password": "forgot password ? sign-up",
            "documents": [{"id": "a", "text": TEXTS[0], "token": "abcdefgh-1234", "api_key": "given by the user"}],
        }
    ]
    out = tmp_path / "gen.jsonl"
    rc, _, err = cli(
        capsys,
        "generate",
        str(write_jsonl(tmp_path / "items.jsonl", rows)),
        "--strategy",
        "standard",
        "-o",
        str(out),
        *generator_args(openai_server),
        "-q",
    )
    assert rc == 0, err
    (row,) = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert row["password"] == "forgot password ? sign-up"
    assert row["documents"][0] == {
        "id": "a",
        "text": TEXTS[0],
        "token": "abcdefgh-1234",
        "api_key": "given by the user",
    }
    assert row["response"] == "Bearer securities were abolished; Users click."


def test_a_key_the_run_reads_is_redacted_wherever_it_stands_and_nothing_else(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    openai_server: Any,
    openai_stub: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run holds one secret (the key of ``api_key_env``); the data's look-alikes stay."""
    key = "sk-verbatim-31b7c9d2e5"
    monkeypatch.setenv("LLM_BOX", key)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "Users click")
    openai_server.respond = answering(openai_stub, f"The report, Bearer securities; you sent {key}.")
    rows = [{"id": "f1", "question": "What?", "documents": [{"id": "a", "text": TEXTS[5]}]}]
    out = tmp_path / "gen.jsonl"
    rc, _, err = cli(
        capsys,
        "generate",
        str(write_jsonl(tmp_path / "items.jsonl", rows)),
        "--strategy",
        "standard",
        "-o",
        str(out),
        *generator_args(openai_server, "--generator-arg", "api_key_env=LLM_BOX"),
        "-q",
    )
    assert rc == 0, err
    (row,) = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert row["response"] == "The report, Bearer securities; you sent [redacted]."
    assert row["documents"][0]["text"] == TEXTS[5]
    assert key not in out.read_text()


def test_models_pull_holds_the_hub_token_it_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one token read from the environment by name: the hub's, which `models pull` sends."""
    from conflictscore_local.jobs import forget_secrets, scrub_text
    from conflictscore_local.models.transfer import hold_hub_secrets

    token = "hf_verbatimToken0123456789"
    monkeypatch.setenv("HF_TOKEN", token)
    forget_secrets()
    assert scrub_text(f"401 for {token}") == f"401 for {token}"  # a run that pulls nothing holds none
    hold_hub_secrets()
    assert scrub_text(f"401 for {token}") == "401 for [redacted]"
