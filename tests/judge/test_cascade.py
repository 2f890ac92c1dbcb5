"""The cascade judge: what it escalates (hand-computed cases), who decided each label, its spec and
caches, and the engine and command line with two scripted judges."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Sequence

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.backends import registry
from conflictscore_local.cli import main
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.core.types import Claim, Judgment, Pair, Passage
from conflictscore_local.formats.inputs import parse_item
from conflictscore_local.judge._base import JudgeBase
from conflictscore_local.judge.cascade import CascadeJudge, alternatives, escalations, top_probability

S, C, I = "SUPPORT", "CONTRADICT", "IRRELEVANT"
CODE = {"S": S, "C": C, "I": I}


def parse_probs(text: str) -> dict[str, float] | None:
    """``"S.9 C.06 I.04"`` → probabilities; ``"?"`` → None (unscored)."""
    if text == "?":
        return None
    return {CODE[part[0]]: float(part[1:]) for part in text.split()}


class ScriptedJudge(JudgeBase):
    """Reads its answer from the passage: ``first: S.9 C.06 I.04 | second: C.8 S.1 I.1``."""

    role = "judge"
    which = "first"

    @dataclasses.dataclass(frozen=True)
    class Config:
        window: int = 100

    def __init__(self, config: Any = None):
        super().__init__(config)
        self.asked: list[str] = []

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        out = []
        for p in pairs:
            self.asked.append(p.passage.text)
            parts = dict(part.strip().split(": ", 1) for part in p.passage.text.split("|"))
            probs = parse_probs(parts[self.which])
            if probs is None:
                out.append(Judgment(p, None, None, "judge", f"{self.which} cannot read it"))
            else:
                out.append(Judgment(p, max(probs, key=probs.__getitem__), probs, "judge"))  # type: ignore[arg-type]
        if on_progress:
            on_progress(len(pairs))
        return out

    def spec(self) -> dict:
        return {"name": self.name, "window": self.config.window}

    def passage_budget(self) -> Any:
        return (lambda text: len(text.split()), self.config.window)


class First(ScriptedJudge):
    name = "first-test"


class Second(ScriptedJudge):
    name = "second-test"
    which = "second"


@pytest.fixture
def scripted(register_backend: Any) -> None:
    register_backend("judge", "first-test", First)
    register_backend("judge", "second-test", Second)


def judgment(claim: int, doc: str, probs: str, passage: int = 0, label: str | None = None) -> Judgment:
    p = parse_probs(probs)
    lab = label if label is not None else (max(p, key=p.__getitem__) if p else None)
    return Judgment(Pair(Claim("q", claim, f"claim {claim}"), Passage("q", doc, passage, probs)), lab, p)  # type: ignore


def test_top_probability_and_the_runner_up() -> None:
    j = judgment(0, "d", "S.7 C.2 I.1")
    assert top_probability(j) == 0.7 and alternatives(j) == [C]
    bare = Judgment(j.pair, S, None)  # an LLM reply read from its text: no confidence to doubt
    assert top_probability(bare) == 1.0 and alternatives(bare) == [C, I]
    assert alternatives(Judgment(j.pair, None, None)) == []


def test_what_is_escalated_by_hand() -> None:
    js = [
        judgment(0, "a", "S.95 C.03 I.02"),  # 0: claim 0 conflicted: a alone supports ...
        judgment(0, "b", "C.6 S.1 I.3"),  # 1: ... and b alone contradicts (unsure too: 0.6 < 0.8)
        judgment(1, "c", "S.9 C.07 I.03"),  # 2: claim 1 supported by c; c as CONTRADICT still no conflict
        judgment(1, "d", "I.85 C.1 S.05"),  # 3: d's runner-up CONTRADICT would make claim 1 conflicted
        judgment(2, "e", "I.99 S.006 C.004"),  # 4: claim 2: e as SUPPORT alone, no conflict either way
        judgment(2, "f", "?"),  # 5: unscored: always to the second judge
    ]
    unsure, flip = escalations(js, 0.8, True)
    assert unsure == {1, 5} and flip == {0, 1, 3}
    assert escalations(js, 0.8, False) == ({1, 5}, set())
    assert escalations(js, 0.0, False) == ({5}, set())
    assert escalations(js, 1.0, False) == (set(range(6)), set())  # 1: every pair
    assert escalations(js, 0.96, False)[0] == {0, 1, 2, 3, 5}


def test_a_passage_flips_only_through_its_documents_label() -> None:
    # document a has two passages; the second's runner-up CONTRADICT cannot flip a: the first passage's
    # SUPPORT (0.9) outranks a CONTRADICT of 0.3 in the document rule, so claim 0 stays unconflicted;
    # b's runner-up is CONTRADICT (tied with SUPPORT at 0.05: the costlier signal wins the tie)
    js = [judgment(0, "a", "S.9 C.05 I.05", 0), judgment(0, "a", "I.6 C.3 S.1", 1), judgment(0, "b", "I.9 C.05 S.05")]
    assert escalations(js, 0.5, True) == (set(), {2})  # only b, as CONTRADICT, would make a conflict


ITEM = {
    "id": "q",
    "response": "r",
    "claims": ["claim"],
    "documents": [
        {"id": "pro", "text": "first: S.95 C.03 I.02 | second: S.9 C.05 I.05"},
        {"id": "con", "text": "first: C.55 S.25 I.2 | second: I.9 S.05 C.05"},
        {"id": "off", "text": "first: I.97 S.02 C.01 | second: C.9 S.05 I.05"},
    ],
}


def cascade_config(tmp_path: Path, **args: Any) -> RunConfig:
    judge = {"name": "cascade", "first": {"name": "first-test"}, "second": {"name": "second-test"}, **args}
    return RunConfig().updated(
        {"judge": judge, "pruner": {"name": "none"}, "cache": {"path": str(tmp_path / "cache.sqlite")}}
    )


def test_the_second_judge_decides_what_it_was_sent(scripted: None, tmp_path: Path) -> None:
    with Engine(cascade_config(tmp_path, escalate_below=0.8)) as engine:
        (r,), report = engine.score_all([parse_item(ITEM)])
        cascade = engine.backend("judge")
        first, second = cascade.judges()
    # first: pro SUPPORT, con CONTRADICT (0.55 < 0.8: unsure), off IRRELEVANT; the claim is conflicted, so
    # pro and con are pivotal (flip); off's runner-up SUPPORT would not change it. The second judge sees
    # pro and con: pro SUPPORT, con IRRELEVANT; off keeps the first judge's label
    assert len(first.asked) == 3 and [t.split("|")[0] for t in second.asked] == [
        "first: S.95 C.03 I.02 ",
        "first: C.55 S.25 I.2 ",
    ]
    (v,) = r.verdicts
    assert [(j.doc_id, j.label, j.decided_by) for j in v.judgments] == [
        ("pro", S, "second"),
        ("con", I, "second"),
        ("off", I, "first"),
    ]
    assert v.conflicted is False and r.metrics.cs_c == 0.0
    stats = report.stages["judge"]
    assert (stats["pairs"], stats["escalated"], stats["escalated_unsure"], stats["escalated_flip_only"]) == (3, 2, 1, 1)
    assert stats["escalated_share"] == pytest.approx(2 / 3)
    assert r.to_json()["claims"][0]["judgments"][1]["decided_by"] == "second"


def test_both_specs_key_the_cache_and_each_judge_is_asked_once(scripted: None, tmp_path: Path) -> None:
    with Engine(cascade_config(tmp_path, escalate_below=0.8)) as engine:
        spec = dict(engine.backend("judge").spec())
        engine.score_all([parse_item(ITEM)])
    assert spec == {
        "backend": "cascade",
        "first": {"name": "first-test", "window": 100},
        "second": {"name": "second-test", "window": 100},
        "escalate_below": 0.8,
        "escalate_flips": True,
        "on_second_failure": "unscored",
        "rule_version": 2,
    }
    # the same run again: every judgment from the judgment cache, with who decided it
    with Engine(cascade_config(tmp_path, escalate_below=0.8)) as engine:
        (r,), report = engine.score_all([parse_item(ITEM)])
        first, second = engine.backend("judge").judges()
    assert report.pairs["cached"] == 3 and first.asked == second.asked == []
    assert [j.decided_by for j in r.verdicts[0].judgments] == ["second", "second", "first"]
    # another threshold: another cascade spec, but each judge's own answers come from its cache; only
    # what is newly escalated (off, as 0.97 < 0.99) is asked of the second judge
    with Engine(cascade_config(tmp_path, escalate_below=0.99)) as engine:
        (r,), report = engine.score_all([parse_item(ITEM)])
        first, second = engine.backend("judge").judges()
        stats = engine.backend("judge").stats()
    assert first.asked == [] and [t.split("|")[0].strip() for t in second.asked] == ["first: I.97 S.02 C.01"]
    assert (stats["first_cached"], stats["second_cached"], stats["escalated"]) == (3, 2, 3)
    assert [(j.label, j.decided_by) for j in r.verdicts[0].judgments] == [(S, "second"), (I, "second"), (C, "second")]


def test_an_unscored_second_answer_is_unscored_unless_keep_first(scripted: None, tmp_path: Path) -> None:
    item = {**ITEM, "documents": [{"id": "d", "text": "first: C.5 S.3 I.2 | second: ?"}]}
    with Engine(cascade_config(tmp_path, escalate_below=0.8)) as engine:
        (r,), report = engine.score_all([parse_item(item)])
    (j,) = r.verdicts[0].judgments
    assert (j.label, j.decided_by) == (None, None)
    assert j.note == (
        "second judge gave no label (second cannot read it); unscored (the first judge said "
        "CONTRADICT; on_second_failure=keep_first would keep it)"
    )
    stats = report.stages["judge"]
    assert (stats["escalated"], stats["second_failed"], stats["decided_by_second"]) == (1, 1, 0)
    assert report.pairs["unscored"] == 1
    with Engine(cascade_config(tmp_path, escalate_below=0.8, on_second_failure="keep_first")) as engine:
        (r,), report = engine.score_all([parse_item(item)])
    (j,) = r.verdicts[0].judgments
    assert (j.label, j.decided_by) == (C, "first")
    assert j.note == (
        "second judge gave no label (second cannot read it); the first judge's label is kept "
        "(on_second_failure=keep_first)"
    )
    assert report.stages["judge"]["second_unscored_first_kept"] == 1 and report.pairs["unscored"] == 0
    assert report.stages["judge"]["on_second_failure"] == "keep_first"


def test_arguments_are_checked_and_the_budget_is_the_tighter(scripted: None) -> None:
    with pytest.raises(ConfigError, match="second is required"):
        Engine(judge={"name": "cascade"})
    with pytest.raises(ConfigError, match=r"second \(second-test\): unknown argument 'size'; allowed: window"):
        Engine(judge={"name": "cascade", "second": {"name": "second-test", "size": 3}})
    with pytest.raises(ConfigError, match='first must be a judge config with a "name"'):
        Engine(judge={"name": "cascade", "first": {"model": "x"}, "second": {"name": "second-test"}})
    judge = registry.build(
        "judge",
        "cascade",
        {"first": {"name": "first-test", "window": 50}, "second": {"name": "second-test", "window": 80}},
    )
    count, window = judge.passage_budget()
    assert window == 50 and count("a b c") == 3
    with pytest.raises(ConfigError, match="cascade second judge object: object is not a judge: it has no"):
        judge.use_judges(First(), object())


def test_the_command_line_names_both_judges(scripted: None, tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps(ITEM) + "\n")
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
                "--pruner",
                "none",
                "--judge",
                "cascade",
                "--judge-arg",
                'first={"name": "first-test"}',
                "--judge-arg",
                'second={"name": "second-test"}',
                "--judge-arg",
                "escalate_below=0.5",
                "--judge-arg",
                "escalate_flips=false",
                "-q",
            ]
        )
        == 0
    )
    row = json.loads(out.read_text())
    assert [j.get("decided_by") for j in row["claims"][0]["judgments"]] == ["first", "first", "first"]
    s = json.loads(summ.read_text())
    judge = s["config"]["backends"]["judge"]
    assert judge["judges"]["second"]["name"] == "second-test" and judge["spec"]["escalate_below"] == 0.5
    assert s["stages"]["judge"]["escalated"] == 0
    # replayed from the summary, the cascade is rebuilt with both judges
    out2 = tmp_path / "o2.jsonl"
    assert main(["score", str(inp), "-o", str(out2), "--config", str(summ), "-q"]) == 0
    assert out2.read_text() == out.read_text().replace('"source": "judge"', '"source": "cache"')


def test_a_cascade_is_a_judge(scripted: None) -> None:
    assert isinstance(registry.build("judge", "cascade", {"second": {"name": "second-test"}}), CascadeJudge)


def test_a_bad_row_of_a_judges_own_cache_is_asked_again_and_counted(scripted: None, tmp_path: Path, logged) -> None:
    import sqlite3

    with Engine(cascade_config(tmp_path, escalate_below=0.8)) as engine:
        engine.score_all([parse_item(ITEM)])
        first_spec = dict(engine.backend("judge").judges()[0].spec())
    from conflictscore_local.formats.cache import spec_digest

    with sqlite3.connect(tmp_path / "cache.sqlite") as db:  # the first judge's own rows, and the cascade's gone
        db.execute("UPDATE judgments SET label = 'MAYBE' WHERE spec_hash = ?", (spec_digest(first_spec),))
        db.execute("DELETE FROM judgments WHERE decided_by IS NOT NULL")
    with logged.expect("stored row\\(s\\) of the cascade's first judge are not judgments"):
        with Engine(cascade_config(tmp_path, escalate_below=0.8)) as engine:
            (r,), report = engine.score_all([parse_item(ITEM)])
            first, _ = engine.backend("judge").judges()
    assert len(first.asked) == 3 and report.stages["judge"]["first_cache_rows_rejected"] == 3
    assert [(j.label, j.decided_by) for j in r.verdicts[0].judgments] == [(S, "second"), (I, "second"), (I, "first")]
