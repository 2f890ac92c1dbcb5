"""The engine end to end with a rule-based judge defined here (the model judges have their own tests)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

from conflictscore_local import Engine, Item, RunConfig, parse_item
from conflictscore_local.backends.arguments import make_config
from conflictscore_local.backends.registry import available, build
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.core.types import Claim, Judgment, Pair
from conflictscore_local.decompose._base import DecomposerBase
from conflictscore_local.judge._base import JudgeBase


class RuleJudge(JudgeBase):
    """SUPPORT when the passage says 'yes: <claim>', CONTRADICT for 'no: <claim>', '???' → unscored."""

    name = "rule"
    role = "judge"

    @dataclasses.dataclass(frozen=True)
    class Config:
        version: int = 1

    def __init__(self, config: Any = None):
        super().__init__(config)
        self.calls: list[int] = []

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        self.calls.append(len(pairs))
        out = []
        for p in pairs:
            text, claim = p.passage.text.lower(), p.claim.text.lower().rstrip(".")
            if "???" in text:
                out.append(Judgment(p, None, None, "judge", "unreadable output"))
            elif f"no: {claim}" in text:
                out.append(Judgment(p, "CONTRADICT", {"SUPPORT": 0.1, "CONTRADICT": 0.8, "IRRELEVANT": 0.1}))
            elif f"yes: {claim}" in text:
                out.append(Judgment(p, "SUPPORT", {"SUPPORT": 0.9, "CONTRADICT": 0.05, "IRRELEVANT": 0.05}))
            else:
                out.append(Judgment(p, "IRRELEVANT", {"SUPPORT": 0.1, "CONTRADICT": 0.1, "IRRELEVANT": 0.8}))
            if on_progress:
                on_progress(1)
        return out

    def spec(self) -> dict:
        return {"name": "rule", "version": self.config.version}

    def passage_budget(self) -> None:
        return None


class SentenceDecomposer(DecomposerBase):
    name = "sentences"
    role = "decomposer"

    def decompose(self, items: Sequence[Item]) -> list[list[Claim]]:
        self.count("calls")
        out = []
        for it in items:
            parts = [s.strip() for s in it.response.split(".") if s.strip()]
            out.append([Claim(it.id, i, p + ".") for i, p in enumerate(parts)])
        return out


def item(i: int, docs: list[str], claims: list[str] | None = None, response: str = "") -> Item:
    d: dict[str, Any] = {
        "id": f"i{i}",
        "response": response,
        "documents": [{"id": f"d{j}", "text": t} for j, t in enumerate(docs)],
    }
    if claims is not None:
        d["claims"] = claims
    return parse_item(d)


ITEMS = [
    item(0, ["yes: sky is blue", "no: sky is blue", "cats purr"], ["Sky is blue.", "Grass is red."]),
    item(1, ["yes: water is wet", "???"], ["Water is wet."]),
    item(2, ["yes: fire is hot", "no: ice is hot"], response="Fire is hot. Ice is hot."),
]


def test_scores_with_given_claims_and_decomposition():
    judge = RuleJudge()
    eng = Engine(RunConfig(), judge=judge, pruner="none", decomposer=SentenceDecomposer())
    results, report = eng.score_all(ITEMS)
    r0, r1, r2 = results
    assert r0.verdicts[0].support == ("d0",) and r0.verdicts[0].contradict == ("d1",)
    assert r0.verdicts[0].conflicted and r0.metrics.cs_c == 0.5 and r0.metrics.cs_r == 0.5
    assert r1.verdicts[0].unscored == ("d1",) and r1.verdicts[0].judgments[1].note == "unreadable output"
    assert [v.claim.text for v in r2.verdicts] == ["Fire is hot.", "Ice is hot."]
    assert r2.verdicts[1].contradict == ("d1",)
    # every pair of the step went to the judge in one call: 2×3 + 1×2 + 2×2
    assert judge.calls == [12]
    assert report.pairs == {"total": 12, "judged": 12, "pruned": 0, "cached": 0, "given": 0, "unscored": 1}
    assert report.config["backends"]["judge"]["name"] == "rule"
    assert report.config["backends"]["judge"]["spec"] == {"name": "rule", "version": 1}  # what produced the labels
    assert report.stages["decomposer"] == {"calls": 1}


def test_steps_batch_across_items_and_keep_order():
    judge = RuleJudge()
    cfg = RunConfig().updated({"engine": {"step_items": 2}})
    eng = Engine(cfg, judge=judge, pruner="none", decomposer=SentenceDecomposer())
    results = list(eng.score(ITEMS))
    assert [r.item_id for r in results] == ["i0", "i1", "i2"]
    assert judge.calls == [8, 4]


def test_cache_serves_the_second_run_and_keys_on_the_judge_spec():
    items = ITEMS[:1]
    first, _ = Engine(judge=RuleJudge(), pruner="none").score_all(items)
    judge = RuleJudge()
    second, report = Engine(judge=judge, pruner="none").score_all(items)
    assert judge.calls == []
    assert report.pairs["cached"] == 6
    assert [j.label for j in second[0].verdicts[0].judgments] == [j.label for j in first[0].verdicts[0].judgments]
    v2 = RuleJudge(RuleJudge.Config(version=2))
    Engine(judge=v2, pruner="none").score_all(items)
    assert v2.calls == [6]
    no_cache = RuleJudge()
    Engine(RunConfig().updated({"cache": {"enabled": False}}), judge=no_cache, pruner="none").score_all(items)
    assert no_cache.calls == [6]


def test_given_labels_load_no_backend():
    it = parse_item(
        {
            "id": "a",
            "response": "",
            "documents": [{"id": "d", "text": "t"}],
            "claims": ["c"],
            "labels": [["contradict"]],
        }
    )
    eng = Engine(judge={"name": "vllm", "model": "/no/such/model"})  # would need a GPU and vllm: never built
    (r,), report = eng.score_all([it])
    assert r.verdicts[0].contradict == ("d",)
    assert report.config["backends"]["judge"] == {"name": "vllm", "model": "/no/such/model", "loaded": False}


def test_unknown_backend_names_the_allowed_ones():
    with pytest.raises(ConfigError, match=r"unknown judge 'gpt5'; allowed: .*nli"):
        Engine(judge="gpt5")
    with pytest.raises(ConfigError, match=r"unknown pruner 'x'; allowed: auto, embedding, none"):
        Engine(pruner="x")


def test_backend_arguments_are_checked_and_coerced(register_backend):
    register_backend("judge", "rule-test", RuleJudge)
    assert "rule-test" in available("judge")
    assert build("judge", "rule-test", {"version": "3"}).config.version == 3
    with pytest.raises(ConfigError, match=r"judge 'rule-test': unknown argument 'modle'; allowed: version"):
        build("judge", "rule-test", {"modle": "x"})
    with pytest.raises(ConfigError, match="expected an integer"):
        build("judge", "rule-test", {"version": "three"})


def test_config_coercion():
    @dataclasses.dataclass(frozen=True)
    class Cfg:
        flag: bool = False
        ratio: float = 0.5
        size: int | None = None
        names: list[str] = dataclasses.field(default_factory=list)
        mode: "str" = "a"

    c = make_config(Cfg, {"flag": "true", "ratio": "0.25", "size": "none", "names": "a,b"}, where="x")
    assert (c.flag, c.ratio, c.size, c.names) == (True, 0.25, None, ["a", "b"])
    with pytest.raises(ConfigError, match="expected true/false"):
        make_config(Cfg, {"flag": "maybe"}, where="x")


def test_missing_backend_module_says_what_to_do(register_backend: Any):
    from conflictscore_local.backends import registry

    register_backend("judge", "future", "conflictscore_local.judge.not_written:X")
    with pytest.raises(BackendUnavailable, match="not implemented in this version.*give claims and labels"):
        registry.resolve("judge", "future")


def test_import_and_help_do_not_import_heavy_libraries():
    code = (
        "import sys, conflictscore_local\n"
        "from conflictscore_local.cli import build_parser\n"
        "p = build_parser(); p.format_help()\n"
        "[a.choices[c].format_help() for a in p._subparsers._group_actions for c in a.choices]\n"
        "heavy = [m for m in ('torch', 'transformers', 'vllm', 'faiss', 'spacy', 'sentence_transformers',\n"
        "                     'onnxruntime', 'onnx', 'matplotlib', 'jinja2', 'playwright', 'ray')\n"
        "         if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_blank_documents_are_irrelevant_without_asking_the_judge():
    judge = RuleJudge()
    it = item(9, ["yes: sky is blue", "", "  \n "], ["Sky is blue."])
    (r,), report = Engine(judge=judge, pruner="none").score_all([it])
    js = r.verdicts[0].judgments
    assert [j.label for j in js] == ["SUPPORT", "IRRELEVANT", "IRRELEVANT"]
    assert [(j.source, j.note) for j in js[1:]] == [("pruned", "empty document")] * 2
    assert judge.calls == [1]


def test_a_chunk_size_beyond_the_judge_window_is_capped(logged):
    class Windowed(RuleJudge):
        def passage_budget(self):  # type: ignore[override]
            return (lambda text: len(text.split())), 10

    eng = Engine(RunConfig().updated({"chunk": {"max_tokens": 50}}), judge=Windowed(), pruner="none")
    with logged.expect("exceeds the judge's passage budget of 10"):
        assert eng.chunker().max_tokens == 10
    assert Engine(RunConfig().updated({"chunk": {"max_tokens": 8}}), judge=Windowed()).chunker().max_tokens == 8


def test_report_reflects_one_run_and_the_bootstrap_setting():
    eng = Engine(
        RunConfig().updated({"engine": {"bootstrap": 0}}),
        judge=RuleJudge(),
        pruner="none",
        decomposer=SentenceDecomposer(),
    )
    _, first = eng.score_all(ITEMS)
    _, second = eng.score_all(ITEMS)
    assert first.stages["engine"]["passage_pairs"] == second.stages["engine"]["passage_pairs"] == 12
    assert second.stages["engine"]["passage_pairs_cached"] == 11  # the unscored pair is retried
    assert all(v is None for v in second.ci95.values())


def test_judgments_are_checkpointed_within_a_step(tmp_path, clock):
    """One step of 20 items (200 pairs): the judge gets 64 pairs first, then calls sized to
    engine.checkpoint_s but never below 64; a claim's pairs stay in one call (10 here, so 60 of
    the 64); after each call the judgments are cached and finished items come out."""
    from conflictscore_local.formats.cache import JudgmentCache

    class Slow(RuleJudge):
        def judge(self, pairs, on_progress=None):  # type: ignore[override]
            clock.advance(0.01)  # about 6 pairs in a 1 ms checkpoint: calls stay at the floor of 64
            return super().judge(pairs, on_progress)

    judge = Slow()
    items = [item(i, [f"yes: claim {i}"] + [f"noise {j}" for j in range(9)], [f"claim {i}"]) for i in range(20)]
    cfg = RunConfig().updated({"engine": {"checkpoint_s": 0.001}, "cache": {"path": str(tmp_path / "c.sqlite")}})
    eng = Engine(cfg, judge=judge, pruner="none", clock=clock)
    results = eng.score(items)
    first = next(results)
    assert judge.calls == [60] and first.item_id == "i0"
    with JudgmentCache(tmp_path / "c.sqlite", judge.spec()) as cache:
        assert len(cache) == 60  # in the cache before the step is over
    rest = list(results)
    assert [r.item_id for r in [first, *rest]] == [f"i{i}" for i in range(20)]
    assert judge.calls == [60, 60, 60, 20]
    assert [r.verdicts[0].support for r in [first, *rest]] == [("d0",)] * 20


def ten_items_of_ten_documents(tmp_path: Path) -> Path:
    """10 items, a claim each, 10 documents each (the first supports it): 100 pairs, the first call 60 (6 items)."""
    rows = [
        {
            "id": f"i{i}",
            "response": "",
            "claims": [f"claim {i}"],
            "documents": [{"id": f"d{j}", "text": f"yes: claim {i}" if j == 0 else f"noise {j}"} for j in range(10)],
        }
        for i in range(10)
    ]
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return inp


def test_a_kill_mid_step_keeps_the_finished_items_and_the_cache(tmp_path, register_backend):
    from conflictscore_local.cli import main
    from conflictscore_local.formats.cache import JudgmentCache

    class Dying(RuleJudge):
        def judge(self, pairs, on_progress=None):  # type: ignore[override]
            if self.calls:
                raise KeyboardInterrupt  # the second call: Ctrl-C, or as good as a kill
            return super().judge(pairs, on_progress)

    register_backend("judge", "dying-test", Dying)
    inp = ten_items_of_ten_documents(tmp_path)
    out = tmp_path / "out.jsonl"
    assert (
        main(
            [
                "score",
                str(inp),
                "-o",
                str(out),
                "--judge",
                "dying-test",
                "--pruner",
                "none",
                "--cache",
                str(tmp_path / "c.sqlite"),
                "-q",
            ]
        )
        == 130
    )
    partial = (tmp_path / "out.jsonl.partial").read_text().splitlines()
    assert [json.loads(x)["id"] for x in partial] == [f"i{i}" for i in range(6)]  # 60 pairs: 6 items
    with JudgmentCache(tmp_path / "c.sqlite", Dying().spec()) as cache:
        assert len(cache) == 60


def stopped_at_the_second_commit(
    tmp_path: Path, monkeypatch: Any, capsys: Any, register_backend: Any, before: Callable[[], None]
) -> tuple[list[str], int, str]:
    """Score :func:`ten_items_of_ten_documents` into a cache, ``before()`` run as the second call's judgments go
    to it; the ids ``OUTPUT.partial`` holds, the judgments the cache holds and the line the run ends with."""
    from conflictscore_local.cli import main
    from conflictscore_local.formats.cache import JudgmentCache

    real = JudgmentCache.put_many
    calls: list[int] = []

    def put(self: Any, judgments: Any, **kw: Any) -> int:
        calls.append(1)
        if len(calls) == 2:
            before()
        return real(self, judgments, **kw)

    register_backend("judge", "rule-test", RuleJudge)
    monkeypatch.setattr(JudgmentCache, "put_many", put)
    inp, out = ten_items_of_ten_documents(tmp_path), tmp_path / "out.jsonl"
    args = ["score", str(inp), "-o", str(out), "--pruner", "none", "--cache", str(tmp_path / "c.sqlite"), "-q"]
    assert main([*args, "--judge", "rule-test"]) == 130
    monkeypatch.undo()
    partial = [json.loads(x)["id"] for x in (tmp_path / "out.jsonl.partial").read_text().splitlines()]
    with JudgmentCache(tmp_path / "c.sqlite", RuleJudge().spec()) as cache:
        cached = len(cache)
    return partial, cached, capsys.readouterr().err.strip().splitlines()[-1]


def test_a_ctrl_c_as_a_call_is_being_cached_keeps_that_call_and_says_so(
    tmp_path, monkeypatch, capsys, register_backend, ctrl_c
):
    """A real SIGINT as the second call's judgments go to the cache: the commit finishes, then the run stops;
    the line it ends with counts the judgments the cache holds (all 100), and the rows it kept (6 items)."""
    partial, cached, end = stopped_at_the_second_commit(tmp_path, monkeypatch, capsys, register_backend, ctrl_c)
    assert partial == [f"i{i}" for i in range(6)]  # the first call's 60 pairs
    assert cached == 100  # the second call's 40 judgments were committed before the run stopped
    assert end == (
        f"conflictscore score: interrupted; kept 6 items in {tmp_path / 'out.jsonl'}.partial and 100 judgments in "
        "the judgment cache: rerun with --resume to continue"
    )


def test_a_second_ctrl_c_that_stops_a_cache_commit_is_not_counted_as_cached(
    tmp_path, monkeypatch, capsys, register_backend
):
    """The user presses again as the second call's judgments go to the cache, before they are committed: the
    line the run ends with counts the 60 judgments the cache holds, not the 100 the calls made."""

    def second_press() -> None:
        raise KeyboardInterrupt  # raised at once inside the held block

    partial, cached, end = stopped_at_the_second_commit(tmp_path, monkeypatch, capsys, register_backend, second_press)
    assert partial == [f"i{i}" for i in range(6)]
    assert cached == 60
    assert end == (
        f"conflictscore score: interrupted; kept 6 items in {tmp_path / 'out.jsonl'}.partial and 60 judgments in "
        "the judgment cache: rerun with --resume to continue"
    )


def test_a_ctrl_c_as_a_row_is_written_counts_that_row_as_kept(tmp_path, monkeypatch, capsys, register_backend, ctrl_c):
    """A real SIGINT as the third row is written (the row on disk, its digest not yet): the row, its digest and
    the count of kept items go together, so the line the run ends with says 3 items, the rows the partial holds."""
    from conflictscore_local.cli import main
    from conflictscore_local.jobs import resumable

    real = resumable._chain
    rows_written: list[str] = []

    def ctrl_c_at_the_third(previous: bytes, line: str) -> bytes:
        rows_written.append(line)
        if len(rows_written) == 3:
            ctrl_c()
        return real(previous, line)

    register_backend("judge", "rule-test", RuleJudge)
    monkeypatch.setattr(resumable, "_chain", ctrl_c_at_the_third)
    inp = tmp_path / "in.jsonl"
    inp.write_text(
        "".join(
            json.dumps({"id": f"i{i}", "response": "", "claims": [f"claim {i}"], "documents": [f"yes: claim {i}"]})
            + "\n"
            for i in range(10)
        )
    )
    out = tmp_path / "out.jsonl"
    assert main(["score", str(inp), "-o", str(out), "--judge", "rule-test", "--pruner", "none", "--no-cache"]) == 130
    monkeypatch.undo()
    partial = (tmp_path / "out.jsonl.partial").read_text().splitlines()
    assert [json.loads(x)["id"] for x in partial] == ["i0", "i1", "i2"]
    end = capsys.readouterr().err.strip().splitlines()[-1]
    assert end == f"conflictscore score: interrupted; kept 3 items in {out}.partial: rerun with --resume to continue"


def test_non_finite_probabilities_become_unscored_judgments():
    class NaNJudge(RuleJudge):
        def judge(self, pairs, on_progress=None):  # type: ignore[override]
            return [
                Judgment(p, "SUPPORT", {"SUPPORT": float("nan"), "CONTRADICT": 0.0, "IRRELEVANT": 0.0}) for p in pairs
            ]

    (r,), report = Engine(
        RunConfig().updated({"cache": {"enabled": False}}), judge=NaNJudge(), pruner="none"
    ).score_all([item(0, ["yes: a"], ["a"])])
    (dj,) = r.verdicts[0].judgments
    assert dj.label is None and dj.note.startswith("the judge returned probabilities that are not numbers")
    assert report.pairs["unscored"] == 1


class RuleRecommending(RuleJudge):
    """Two passages of one document that ``max`` and ``relevant`` decide differently, and a
    checkpoint-style recommendation of the document rule."""

    recommended: Any = "relevant"

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        out = []
        for p in pairs:
            if "weakly" in p.passage.text:  # on topic, modest support
                out.append(Judgment(p, "SUPPORT", {"SUPPORT": 0.6, "CONTRADICT": 0.35, "IRRELEVANT": 0.05}))
            else:  # confident contradiction, but more likely off topic
                out.append(Judgment(p, "CONTRADICT", {"SUPPORT": 0.02, "CONTRADICT": 0.9, "IRRELEVANT": 0.08}))
        return out

    def passage_budget(self):  # type: ignore[override]
        return (lambda text: len(text.split())), 8

    def document_rule(self) -> Any:
        return self.recommended


def test_auto_document_rule_is_the_judges_recommendation():
    doc = "The report weakly says the sky is blue. His sons ran the family firm for years."
    it = item(1, [doc], ["Sky is blue."])
    cfg = RunConfig().updated({"chunk": {"overlap": 0}, "cache": {"enabled": False}})
    (r,), report = Engine(cfg, judge=RuleRecommending(), pruner="none").score_all([it])
    assert r.verdicts[0].judgments[0].label == "SUPPORT"  # relevant: the passage with p(IRRELEVANT) 0.05
    assert report.stages["aggregate"] == {"document_rule": "relevant", "configured": "auto"}
    forced = cfg.updated({"aggregate": {"document_rule": "max"}})
    (r,), report = Engine(forced, judge=RuleRecommending(), pruner="none").score_all([it])
    assert r.verdicts[0].judgments[0].label == "CONTRADICT"  # max: the most confident passage, 0.9
    assert report.stages["aggregate"] == {"document_rule": "max", "configured": "max"}
    none = RuleRecommending()
    none.recommended = None
    (r,), report = Engine(cfg, judge=none, pruner="none").score_all([it])
    assert report.stages["aggregate"]["document_rule"] == "max"
    bad = RuleRecommending()
    bad.recommended = "vote"
    with pytest.raises(
        ConfigError, match="the judge recommends document_rule 'vote'; allowed: max, relevant, on_topic"
    ):
        Engine(cfg, judge=bad, pruner="none").score_all([it])
    with pytest.raises(ConfigError, match="allowed: auto, max, relevant, on_topic"):
        RunConfig().updated({"aggregate": {"document_rule": "vote"}})
