"""Claim sampling (--claims-per-item, --claim-selection): which claims each rule keeps, salience by hand,
what the output and the summary say, and the judge pairs it saves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.cli import main
from conflictscore_local.core.sampling import question_overlap, salience_score, select_claims
from conflictscore_local.core.types import Claim
from conflictscore_local.formats.inputs import parse_item
from conflictscore_local.formats.results import read_results
from conflictscore_local.util.nlp import Salience

from ..cli.test_cli_score import WORKED, write_jsonl
from ..pipeline.test_engine import RuleJudge

CLAIMS = [
    Claim("q", i, t)
    for i, t in enumerate(
        [
            "It rained.",
            "The bridge opened in 1932 in Sydney.",
            "People liked it a lot, everyone says so.",
            "It is grey.",
        ]
    )
]


def texts(claims: list[Claim]) -> list[str]:
    return [c.text for c in claims]


def test_first_longest_and_a_scorer_keep_response_order() -> None:
    assert texts(select_claims(CLAIMS, 2, "first")) == ["It rained.", "The bridge opened in 1932 in Sydney."]
    assert texts(select_claims(CLAIMS, 2, "longest")) == [
        "The bridge opened in 1932 in Sydney.",
        "People liked it a lot, everyone says so.",
    ]
    by_hand = select_claims(CLAIMS, 2, "salient", salience=lambda cs, q: [0.0, 1.0, 0.0, 1.0])  # ties: the earlier
    assert texts(by_hand) == ["The bridge opened in 1932 in Sydney.", "It is grey."]
    assert select_claims(CLAIMS, 0, "longest") == CLAIMS and select_claims(CLAIMS, 4, "random") == CLAIMS
    with pytest.raises(ValueError, match="allowed: first, longest, salient, random"):
        select_claims(CLAIMS, 2, "best")
    with pytest.raises(ValueError, match="claim selection 'salient' needs its scorer: salience="):
        select_claims(CLAIMS, 2, "salient")  # the pure rule loads no model: the caller hands one in


def test_random_is_seeded_by_the_seed_and_the_item() -> None:
    picks = {tuple(c.index for c in select_claims(CLAIMS, 2, "random", seed=s)) for s in range(20)}
    assert len(picks) > 1 and all(len(p) == 2 and list(p) == sorted(p) for p in picks)
    assert select_claims(CLAIMS, 2, "random", seed=7) == select_claims(CLAIMS, 2, "random", seed=7)
    other = [Claim("other", c.index, c.text) for c in CLAIMS]

    def draws(claims: list[Claim]) -> list[list[int]]:
        return [[c.index for c in select_claims(claims, 2, "random", seed=s)] for s in range(20)]

    assert draws(other) != draws(CLAIMS)  # another item id draws its own claims


def test_salience_by_hand() -> None:
    # question words (topic_words): many, people, live, paris; the claim holds people and paris
    assert question_overlap("Paris has 2.1 million people.", "How many people live in Paris?") == 0.5
    assert question_overlap("anything", None) == 0.0
    assert salience_score(1, 1, 0.5) == 3.0
    assert salience_score(5, 3, 1.0) == 2 + 2 + 2.0  # numbers and names count up to 2 each


def test_salience_with_spacy_entities() -> None:
    pytest.importorskip("spacy")
    sal = Salience()
    feats = sal.features(["Paris has 2.1 million people.", "The sky is blue.", "General Seitz retired in 1987."])
    if sal.resolved["entities"].startswith("regex"):
        pytest.skip("no spaCy pipeline with an entity recogniser installed")
    assert feats == [(1, 1), (0, 0), (1, 1)]  # 2.1 million (CARDINAL), Paris (GPE); 1987 (DATE), Seitz (PERSON)
    assert sal.scores(["Paris has 2.1 million people.", "The sky is blue."], "How many people live in Paris?") == [
        3.0,
        0.0,
    ]


def test_the_regex_fallback_counts_digits_and_capitalised_words() -> None:
    sal = Salience(pipeline="no_such_pipeline_installed")
    assert sal.features(["In 2020 and 2021 Alice met Bob.", "nothing here"]) == [(2, 2), (0, 0)]
    assert sal.resolved == {"entities": "regex (digits, capitalised words)"}


ITEM = {
    "id": "s",
    "question": "q",
    "response": "r",
    "documents": [{"id": "d0", "text": "yes: a"}, {"id": "d1", "text": "no: c"}, {"id": "d2", "text": "x"}],
    "claims": ["a", "bb", "c", "dddd"],
}


def test_the_engine_judges_only_the_selected_claims(register_backend, tmp_path: Path) -> None:
    register_backend("judge", "rule", RuleJudge)
    cfg = RunConfig().updated(
        {
            "judge": {"name": "rule"},
            "pruner": {"name": "none"},
            "cache": {"enabled": False},
            "sample": {"claims_per_item": 2, "selection": "longest"},
        }
    )
    with Engine(cfg) as engine:
        (r,), report = engine.score_all([parse_item(ITEM)])
        judge = engine.backend("judge")
    assert [v.claim.text for v in r.verdicts] == ["bb", "dddd"] and r.claims_total == 4
    assert sum(judge.calls) == 6  # 2 claims × 3 documents, not 4 × 3
    s = report.sampling
    assert (s["claims"], s["claims_scored"], s["items_sampled"]) == (4, 2, 1)
    assert (s["passage_pairs_skipped"], s["passage_pairs_saved_share"]) == (6, 0.5)
    assert s["ci95"] == {k: (list(v) if v else None) for k, v in report.ci95.items()}
    assert "covers the claim sampling" in s["interval"]
    row = r.to_json()
    assert row["claims_total"] == 4 and [c["index"] for c in row["claims"]] == [1, 3]


def test_given_labels_follow_the_selected_claims_and_the_files_say_so(tmp_path: Path) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED])
    out, summ = tmp_path / "o.jsonl", tmp_path / "s.json"
    assert (
        main(
            [
                "score",
                str(inp),
                "-o",
                str(out),
                "--summary",
                str(summ),
                "--claims-per-item",
                "2",
                "--claim-selection",
                "random",
                "--set",
                "engine.seed=3",
                "-q",
            ]
        )
        == 0
    )
    (row,) = [json.loads(x) for x in out.read_text().splitlines()]
    kept = [c["index"] for c in row["claims"]]
    expected = [
        c.index
        for c in select_claims([Claim("worked", i, t) for i, t in enumerate(WORKED["claims"])], 2, "random", seed=3)
    ]
    assert kept == expected and row["claims_total"] == 4
    labels = WORKED["labels"]
    for c in row["claims"]:  # claim i keeps the labels of row i of the input
        assert [j["label"] for j in c["judgments"]] == labels[c["index"]]
    (back,) = read_results(out)
    assert [v.claim.index for v in back.verdicts] == kept and back.claims_total == 4
    s = json.loads(summ.read_text())
    assert s["sampling"]["selection"] == "random" and s["sampling"]["claims_scored"] == 2
    assert s["config"]["run"]["sample"] == {"claims_per_item": 2, "selection": "random"}


def test_sampling_is_part_of_the_resume_fingerprint(register_backend) -> None:
    register_backend("judge", "rule", RuleJudge)
    items = [parse_item(ITEM)]
    base = RunConfig().updated({"judge": {"name": "rule"}, "pruner": {"name": "none"}})
    plain = Engine(base).fingerprint(items)
    sampled = Engine(base.updated({"sample": {"claims_per_item": 2}})).fingerprint(items)
    assert "sample" not in plain["settings"] and "min_side_weight" not in plain["settings"]["aggregate"]
    assert sampled["settings"]["sample"] == {"claims_per_item": 2, "selection": "first", "seed": 0}


def test_bad_sampling_settings_name_the_allowed_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED])
    assert main(["score", str(inp), "-o", str(tmp_path / "o.jsonl"), "--set", "sample.selection=best", "-q"]) == 2
    assert "sample.selection 'best'; allowed: first, longest, salient, random" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["score", str(inp), "-o", str(tmp_path / "o.jsonl"), "--claims-per-item", "-1", "-q"])
    assert e.value.code == 2
    assert "argument --claims-per-item: must be an integer in [0, 1000000], got -1" in capsys.readouterr().err
    assert main(["score", str(inp), "-o", str(tmp_path / "o.jsonl"), "--set", "sample.claims_per_item=-1", "-q"]) == 2
    assert "[sample]: claims_per_item (0: every claim) must be an integer in [0, 1000000]" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()
