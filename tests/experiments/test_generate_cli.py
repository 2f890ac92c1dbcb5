"""``conflictscore generate`` against the OpenAI-compatible stub and the stand-in vLLM: the
prompt each strategy sends, the output as ``score`` input, failures, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main
from conflictscore_local.experiments import STRATEGIES, read_truthfulqa, run_regenerate
from conflictscore_local.experiments.prompts import PROMPT_VERSION
from conflictscore_local.formats.inputs import read_items

from .conftest import RuleJudge

ITEMS = [
    {
        "id": "a",
        "question": "Is coffee healthy?",
        "response": "old answer",
        "claims": ["old"],
        "labels": [["SUPPORT"]],
        "documents": [{"id": "d1", "text": "Coffee lowers risk.", "stance": "yes"}],
    },
    {
        "id": "b",
        "question": "Is tea healthy?",
        "documents": [{"id": "d1", "text": "Tea helps."}, {"id": "d2", "text": "Tea harms."}],
        "source": "x",
    },
]


def write_items(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    p = tmp_path / "items.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_generate_writes_score_input_with_the_strategy_recorded(
    tmp_path: Path, openai_server: Any, openai_stub: Any, strategy: str
) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(
        body=openai_stub.chat_reply(
            f"  Report on {r.body['messages'][0]['content'].split('Question: ')[1].split(chr(10))[0]}  "
        )
    )
    out = tmp_path / "responses.jsonl"
    rc = main(
        [
            "generate",
            str(write_items(tmp_path, ITEMS)),
            "--strategy",
            strategy,
            "--generator",
            "openai",
            "--generator-arg",
            f"base_url={openai_server.url}",
            "--max-tokens",
            "64",
            "-o",
            str(out),
            "-q",
        ]
    )
    assert rc == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["response"] for r in rows] == ["Report on Is coffee healthy?", "Report on Is tea healthy?"]
    assert "claims" not in rows[0] and "labels" not in rows[0]  # they described the old response
    assert rows[0]["documents"] == ITEMS[0]["documents"] and rows[1]["source"] == "x"
    gen = rows[0]["generation"]
    assert (gen["strategy"], gen["prompts_version"], gen["instruction"]) == (
        strategy,
        PROMPT_VERSION,
        STRATEGIES[strategy],
    )
    assert gen["generator"]["name"] == "openai" and gen["generator"]["resolved"]["model"] == "stub-model"
    # requests run concurrently: pick item a's by content, not by arrival order
    (first,) = [p.body for p in openai_server.posts() if "coffee" in p.body["messages"][0]["content"]]
    assert first["max_tokens"] == 64 and first["messages"][0]["content"].startswith(STRATEGIES[strategy])
    assert "[d1] Coffee lowers risk." in first["messages"][0]["content"]
    assert [it.response for it in read_items(out)] == [r["response"] for r in rows]  # ready for `score`


def test_failed_requests_are_recorded_and_all_failed_exits_1(
    tmp_path: Path, openai_server: Any, openai_stub: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(
        status=500 if "coffee" in r.body["messages"][0]["content"] else 200,
        body=openai_stub.chat_reply("fine") if "tea" in r.body["messages"][0]["content"] else {"error": "boom"},
    )
    out = tmp_path / "r.jsonl"
    flags = [
        "--generator",
        "openai",
        "--generator-arg",
        f"base_url={openai_server.url}",
        "--generator-arg",
        "max_retries=0",
        "-o",
        str(out),
    ]
    assert main(["generate", str(write_items(tmp_path, ITEMS)), "--strategy", "standard", *flags]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["response"] == "" and rows[0]["generation"]["error"].startswith("HTTP 500")
    assert rows[1]["response"] == "fine" and "error" not in rows[1]["generation"]
    assert "1 of 2 items got no response" in capsys.readouterr().err
    assert main(["generate", str(write_items(tmp_path, ITEMS[:1])), "--strategy", "standard", *flags]) == 3


def test_bad_items_exit_2_naming_file_line_and_field(
    tmp_path: Path, openai_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = [
        "--strategy",
        "balanced",
        "--generator",
        "openai",
        "--generator-arg",
        f"base_url={openai_server.url}",
        "-o",
        str(tmp_path / "r.jsonl"),
    ]
    no_question = [ITEMS[0], {"id": "c", "documents": [{"id": "d1", "text": "x"}]}]
    assert main(["generate", str(write_items(tmp_path, no_question)), *flags]) == 2
    assert "items.jsonl:2: field 'question': missing (a report answers a question)" in capsys.readouterr().err
    blank = [{"id": "c", "question": "q?", "documents": [{"id": "d1", "text": "  "}]}]
    assert main(["generate", str(write_items(tmp_path, blank)), *flags]) == 2
    assert "items.jsonl:1: field 'documents': no document with text" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["generate", str(write_items(tmp_path, ITEMS)), "--strategy", "fair", "--generator", "openai", "-o", "x"])
    assert "invalid choice: 'fair'" in capsys.readouterr().err
    assert openai_server.posts() == [] and not (tmp_path / "r.jsonl").exists()


def test_both_experiments_through_the_vllm_generator(
    tmp_path: Path, fake_vllm: Any, tiny_causal_lm_dir: Path, rule_judge: type
) -> None:
    """The in-process vLLM backend (a stand-in module with vLLM's API): chat prompts rendered with
    the model's template to token ids, replies read back through the same accounting."""
    fake_vllm.LLM.answer = staticmethod(lambda p, sp: fake_vllm.output("A", []))
    out = tmp_path / "r.jsonl"
    assert (
        main(
            [
                "generate",
                str(write_items(tmp_path, ITEMS)),
                "--strategy",
                "super-balanced",
                "--generator",
                "vllm",
                "--generator-arg",
                f"model={tiny_causal_lm_dir}",
                "-o",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    assert [json.loads(x)["response"] for x in out.read_text().splitlines()] == ["A", "A"]
    (llm,) = fake_vllm.LLM.instances
    prompts, params = llm.calls[0]
    assert "prompt_token_ids" in prompts[0] and params.kwargs["max_tokens"] == 512

    from conflictscore_local import Engine, RunConfig
    from conflictscore_local.backends import registry

    questions = read_truthfulqa(Path(__file__).parent / "data" / "truthfulqa_sample.csv")
    gen = registry.build("generator", "vllm", {"model": str(tiny_causal_lm_dir)})
    engine = Engine(RunConfig().updated({"cache": {"enabled": False}}), judge=RuleJudge(), pruner="none")
    res = run_regenerate(questions, gen, engine, conditions=["closed-book", "rag"])
    right = sum(q.answer == 0 for q in questions)
    assert res["closed-book"]["right"] == res["rag"]["right"] == right
    assert res["rag"]["wrong"] == len(questions) - right and res["rag"]["unparseable"] == 0
