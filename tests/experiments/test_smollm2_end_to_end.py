"""Both experiments end to end with a real model: SmolLM2-135M-Instruct, in-process (GGUF, through
the ``transformers`` generator and its own chat template) and behind a real OpenAI-compatible
server (``transformers serve`` of the same weights, through the ``openai`` generator), the
bundled default judge, strict parsing.

The model is weak; these tests check that every step ran and was accounted for, not its accuracy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.experiments import STRATEGIES, generate_file, parse_option, read_truthfulqa, regenerate_file
from conflictscore_local.formats.inputs import read_items

pytestmark = pytest.mark.slow  # a real 135M-parameter model generating on the CPU: minutes

DATA = Path(__file__).parent / "data"
SERVED = "served_smollm2_generator"
GENERATORS = ["smollm2_generator", SERVED]


@pytest.mark.parametrize("generator, strategy", [("smollm2_generator", "balanced")] + [(SERVED, s) for s in STRATEGIES])
def test_generate_with_smollm2(tmp_path: Path, request: pytest.FixtureRequest, generator: str, strategy: str) -> None:
    smollm2_generator = request.getfixturevalue(generator)
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps(
            {
                "id": "tea",
                "question": "Is green tea good for you?",
                "documents": [
                    {"id": "d1", "text": "Green tea lowers blood pressure in adults."},
                    {"id": "d2", "text": "Green tea has no effect on blood pressure."},
                ],
            }
        )
        + "\n"
    )
    out = tmp_path / "responses.jsonl"
    summary = generate_file(items, out, strategy=strategy, generator=smollm2_generator, max_tokens=24)
    assert summary["items"] == 1 and summary["failed"] == 0
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["response"].strip() and row["generation"]["finish_reason"] in ("stop", "length")
    assert row["generation"]["strategy"] == strategy
    resolved = row["generation"]["generator"]["resolved"]
    if generator == SERVED:  # the name the server lists: the checkpoint folder it was started with
        assert resolved["model"] == request.getfixturevalue("served_smollm2").model
    else:
        assert resolved["gguf_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    (item,) = read_items(out)
    assert item.response == row["response"]


@pytest.mark.parametrize("generator", GENERATORS)
def test_regenerate_with_smollm2_and_the_default_judge(
    tmp_path: Path, request: pytest.FixtureRequest, generator: str
) -> None:
    smollm2_generator = request.getfixturevalue(generator)
    csv = DATA / "truthfulqa_sample.csv"
    out, trace = tmp_path / "results.json", tmp_path / "trace.jsonl"
    engine = Engine(RunConfig().updated({"cache": {"enabled": False}}), pruner="none")
    res = regenerate_file(csv, trace, summary_path=out, generator=smollm2_generator, engine=engine, max_tokens=12)
    conds = res["conditions"]
    assert list(conds) == ["closed-book", "rag", "prompt-control", "regenerated-rag"]
    for c in conds.values():
        assert c["n"] == 3 == c["right"] + c["wrong"] + c["unparseable"] + c["failed"] and c["failed"] == 0
    questions = {q.id: q for q in read_truthfulqa(csv)}
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    answers = [r for r in records if r["kind"] == "answer"]
    assert len(answers) == 12
    for a in answers:  # every state is what the strict parser says of the reply
        q = questions[a["id"]]
        choice, _ = parse_option(a["reply"], q.options)
        assert a["state"] == ("unparseable" if choice is None else "right" if choice == q.answer else "wrong")
        assert a["prompt"][0]["role"] == "user" and "Options:\nA. " in a["prompt"][0]["content"]
    parsed_rag = [a for a in answers if a["condition"] == "rag" and a["choice"] is not None]
    scored = [r for r in records if r["kind"] == "conflictscore"]
    assert len(scored) == len(parsed_rag) == res["conditions"]["regenerated-rag"]["conflictscore"]["scored"]
    for s in scored:  # real judgments of the default judge, one per document
        (claim,) = s["result"]["claims"]
        assert len(claim["judgments"]) == len(questions[s["id"]].documents)
        assert all(j["source"] == "judge" and j["probs"] is not None for j in claim["judgments"])
    rg = conds["regenerated-rag"]
    assert rg["regenerated"] == sum(s["conflicted"] > 0 for s in scored)
    assert rg["accuracy"] - conds["rag"]["accuracy"] == pytest.approx((rg["fixed"] - rg["harmed"]) / 3)
    judge = res["config"]["conflictscore"]["backends"]["judge"]
    assert judge["name"] == "nli"
