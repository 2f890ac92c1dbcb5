"""The framework-free core of the integrations: items from harness rows, the explanation, the
shared engine and the batcher that gathers concurrent calls into one engine step.

These run in the main virtualenv with a rule judge defined here (no model); each framework's
own tests (test_inspect.py, test_ragas.py, test_deepeval.py) run in that framework's virtualenv.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import importlib.util
import subprocess
import sys
import threading
from typing import Any, Sequence

import pytest

from conflictscore_local import Engine, InputError, RunConfig
from conflictscore_local.core.types import Judgment, Pair
from conflictscore_local.integrations import explain, item_from, metric_values, score_items, shared_engine
from conflictscore_local.integrations._common import Batcher, batcher_for
from conflictscore_local.judge._base import JudgeBase
from conflictscore_local.pipeline.config import CacheConfig

from .conftest import EXAMPLES, LABELED_EXPLANATION, LABELED_VALUES, known, known_explanation


class RuleJudge(JudgeBase):
    """SUPPORT when the passage contains 'yes: <claim>', CONTRADICT for 'no: <claim>', '???' → unscored.

    ``gate``: a threading.Event the first call waits on (``started`` is set on entry), to hold a
    batch inside the engine while a test submits more items. ``fail``: raise instead of judging.
    """

    name = "rule"
    role = "judge"

    @dataclasses.dataclass(frozen=True)
    class Config:
        version: int = 1

    def __init__(self, config: Any = None, *, gate: threading.Event | None = None, fail: bool = False):
        super().__init__(config)
        self.calls: list[int] = []
        self.gate, self.fail = gate, fail
        self.started = threading.Event()

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        self.started.set()
        if self.gate is not None and not self.calls:
            assert self.gate.wait(30)
        self.calls.append(len(pairs))
        if self.fail:
            raise RuntimeError("judge exploded")
        out = []
        for p in pairs:
            text, claim = p.passage.text.lower(), p.claim.text.lower().rstrip(".")
            if "???" in text:
                out.append(Judgment(p, None, None, "judge", "unreadable output"))
            elif f"no: {claim}" in text:
                out.append(Judgment(p, "CONTRADICT"))
            elif f"yes: {claim}" in text:
                out.append(Judgment(p, "SUPPORT"))
            else:
                out.append(Judgment(p, "IRRELEVANT"))
        return out

    def spec(self) -> dict:
        return {"name": "rule", "version": self.config.version}

    def passage_budget(self) -> None:
        return None


def rule_engine(**judge_kw: Any) -> tuple[Engine, RuleJudge]:
    cfg = RunConfig()
    cfg.cache = CacheConfig(enabled=False)
    judge = RuleJudge(**judge_kw)
    return Engine(cfg, pruner="none", judge=judge), judge


def row(i: int, claim: str, docs: list[str]) -> Any:
    return item_from(f"r{i}", claim, docs, claims=[claim])


# -- importing ---------------------------------------------------------------------------


def test_importing_the_integrations_package_imports_no_framework_and_no_torch() -> None:
    code = (
        "import sys, conflictscore_local.integrations\n"
        "print(sorted(m for m in ('inspect_ai', 'ragas', 'deepeval', 'torch', 'transformers', 'langchain_core')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("extra, framework", [("inspect", "inspect_ai"), ("ragas", "ragas"), ("deepeval", "deepeval")])
def test_an_integration_without_its_framework_says_which_extra_to_install(extra: str, framework: str) -> None:
    if importlib.util.find_spec(framework) is not None:
        pytest.skip(f"{framework} is installed in this virtualenv")
    with pytest.raises(ImportError) as e:
        importlib.import_module(f"conflictscore_local.integrations.{extra}")
    assert f"could not import {framework} (No module named '{framework}')" in str(e.value)
    assert f"pip install 'conflictscore-local[{extra}]'" in str(e.value)


def test_the_network_guard_refuses_and_records_outside_connections(no_network: list[str]) -> None:
    import socket

    with pytest.raises(OSError, match="network access refused in tests"):
        socket.create_connection(("pypi.org", 443), timeout=1)
    with pytest.raises(OSError, match="network access refused in tests"):
        socket.socket().connect(("192.0.2.1", 80))
    assert no_network == ["('pypi.org',)", "('192.0.2.1', 80)"]
    no_network.clear()  # recorded on purpose: let the teardown check pass


# -- items from harness rows -------------------------------------------------------------


def test_item_from_numbers_string_contexts_and_keeps_document_objects() -> None:
    it = item_from(
        "q1",
        "Paris is in France.",
        ["Paris is the capital of France.", "Lyon is in France."],
        question="Where is Paris?",
    )
    assert [(d.id, d.text) for d in it.documents] == [
        ("d0", "Paris is the capital of France."),
        ("d1", "Lyon is in France."),
    ]
    assert (it.id, it.question, it.response, it.claims, it.labels) == (
        "q1",
        "Where is Paris?",
        "Paris is in France.",
        None,
        None,
    )

    it = item_from("q2", "x", [{"id": "wiki", "text": "t", "url": "u"}], claims=["c"], labels=[["support"]])
    assert (it.documents[0].id, dict(it.documents[0].meta)) == ("wiki", {"url": "u"})
    assert it.claims == ("c",) and it.labels == (("SUPPORT",),)


def test_item_from_rejects_a_single_string_instead_of_a_list_naming_where_and_field() -> None:
    with pytest.raises(InputError) as e:
        item_from("q", "r", "one long context", where="ragas row 3")
    assert str(e.value) == (
        "ragas row 3: field 'documents': expected a list of documents (strings or {'id', 'text'} objects), got str"
    )


def test_item_from_validates_like_a_jsonl_line() -> None:
    with pytest.raises(InputError) as e:
        item_from("q", "r", ["fine", 42], where="deepeval test case 'q'")
    assert (
        str(e.value)
        == "deepeval test case 'q': field 'documents[1]': expected a string or an object with 'text', got int"
    )
    with pytest.raises(InputError) as e:
        item_from("q", "r", ["a", "b"], claims=["c"], labels=[["SUPPORT", "maybe"]], where="inspect sample 'q'")
    assert "inspect sample 'q': field 'labels[0][1]': unknown label 'maybe'" in str(e.value)


# -- values and explanation --------------------------------------------------------------


def test_metric_values_and_explanation_of_the_labeled_example(labeled_row: dict[str, Any]) -> None:
    engine, judge = rule_engine()
    docs = labeled_row["documents"]
    item = item_from(
        labeled_row["id"], labeled_row["response"], docs, claims=labeled_row["claims"], labels=labeled_row["labels"]
    )
    (result,) = score_items([item], engine)
    assert known(metric_values(result)) == pytest.approx(LABELED_VALUES)
    assert known_explanation(explain(result)) == LABELED_EXPLANATION
    assert judge.calls == []  # given labels: no judge call


def test_explanation_of_undefined_values_and_unscored_judgments() -> None:
    engine, _ = rule_engine()
    item = item_from("u", "Cats fly.", ["??? garbled", "nothing here"], claims=["Cats fly."])
    (result,) = score_items([item], engine)
    assert known(metric_values(result)) == {"cs_c": 0.0, "cs_r": None, "cs_r_evidenced": None, "support_rate": 0.0}
    assert metric_values(result, undefined=-1.0)["cs_r"] == -1.0
    assert known_explanation(explain(result)) == (
        "CS-C 0.000 (0 of 1 claims conflicted), CS-R undefined, cs_r_evidenced undefined, support rate 0.000\n"
        "1 claim-document judgments unscored (skipped by the metrics)"
    )


# -- one engine per configuration --------------------------------------------------------


def test_shared_engine_is_one_per_effective_configuration(tmp_path: Any) -> None:
    judge = {"name": "nli", "max_batch_tokens": 1024}
    a = shared_engine(pruner="none", judge=judge)
    assert shared_engine(pruner="none", judge=dict(judge)) is a
    assert shared_engine(pruner="none", judge={**judge, "max_batch_tokens": 512}) is not a
    # examples/run.toml spells out the defaults: the same configuration, the same engine
    assert shared_engine(config=str(EXAMPLES / "run.toml"), pruner="none", judge=judge) is a
    (tmp_path / "strict.toml").write_text("[aggregate]\nthreshold = 0.5\n")
    strict = shared_engine(config=str(tmp_path / "strict.toml"), pruner="none", judge=judge)
    assert strict is not a and strict.config.aggregate.threshold == 0.5
    own, _ = rule_engine()
    assert shared_engine(own) is own
    assert batcher_for(a) is batcher_for(a) and batcher_for(a) is not batcher_for(own)
    assert a.built() == ()  # nothing built, no model loaded, until the first score


# -- batching ----------------------------------------------------------------------------


def no_wait(seconds: float) -> Any:
    """A batching window that closes as soon as the waiting calls have queued (no wall clock)."""
    return asyncio.sleep(0)


def test_concurrent_calls_are_scored_in_one_engine_step() -> None:
    engine, judge = rule_engine()
    batcher = Batcher(engine, wait_s=0.05, sleep=no_wait)
    items = [
        row(0, "A is B.", ["yes: a is b", "no: a is b"]),
        row(1, "C is D.", ["yes: c is d", "weather"]),
        row(2, "E is F.", ["no: e is f"]),
    ]

    async def main() -> list[Any]:
        return await asyncio.gather(*(batcher.score(it) for it in items))

    results = asyncio.run(main())
    assert batcher.batch_sizes == [3]
    assert judge.calls == [5]  # every pair of the three items in one judge call
    assert [r.item_id for r in results] == ["r0", "r1", "r2"]
    assert [(r.metrics.cs_c, r.metrics.cs_r, r.metrics.support_rate) for r in results] == [
        (1.0, 0.5, 1.0),
        (0.0, None, 1.0),
        (0.0, None, 0.0),
    ]


def test_a_call_arriving_within_the_window_joins_the_batch() -> None:
    """Harnesses start their calls one after another (DeepEval's evaluate does): a call arriving
    while the first one's window is open is scored in the same engine step."""
    engine, judge = rule_engine()

    async def main() -> list[Any]:
        closed = asyncio.Event()
        windows: list[float] = []

        async def window(seconds: float) -> None:
            windows.append(seconds)
            await closed.wait()

        batcher = Batcher(engine, wait_s=0.5, sleep=window)
        first = asyncio.create_task(batcher.score(row(0, "A is B.", ["yes: a is b"])))
        await asyncio.sleep(0)  # the first call is queued and opens the window
        second = asyncio.create_task(batcher.score(row(1, "C is D.", ["no: c is d"])))
        await asyncio.sleep(0)
        assert windows == [0.5]
        closed.set()
        return [batcher, *await asyncio.gather(first, second)]

    batcher, *results = asyncio.run(main())
    assert batcher.batch_sizes == [2] and judge.calls == [2]
    assert [r.metrics.support_rate for r in results] == [1.0, 0.0]


def test_repeated_ids_are_scored_apart_and_identical_items_once() -> None:
    engine, judge = rule_engine()
    a = item_from("row", "A is B.", ["yes: a is b"], claims=["A is B."])
    b = item_from("row", "A is B.", ["no: a is b"], claims=["A is B."])
    results = score_items([a, b, a], engine)
    assert batcher_for(engine).batch_sizes == [2]
    assert judge.calls == [2]
    assert [r.item_id for r in results] == ["row", "row", "row"]
    assert [r.verdicts[0].claim.item_id for r in results] == ["row", "row", "row"]
    assert [r.verdicts[0].support for r in results] == [("d0",), (), ("d0",)]
    assert [r.verdicts[0].contradict for r in results] == [(), ("d0",), ()]


def test_items_arriving_while_a_batch_is_scored_form_the_next_batch() -> None:
    gate = threading.Event()
    engine, judge = rule_engine(gate=gate)
    batcher = Batcher(engine, wait_s=0.01, sleep=no_wait)

    async def main() -> list[Any]:
        first = asyncio.create_task(batcher.score(row(0, "A is B.", ["yes: a is b"])))
        assert await asyncio.to_thread(judge.started.wait, 30)
        later = [asyncio.create_task(batcher.score(row(i, "C is D.", ["no: c is d"]))) for i in (1, 2)]
        await asyncio.sleep(0)  # both queued while the first batch is being scored
        gate.set()
        return await asyncio.gather(first, *later)

    results = asyncio.run(main())
    assert batcher.batch_sizes == [1, 2]
    assert judge.calls == [1, 2]
    assert [r.metrics.support_rate for r in results] == [1.0, 0.0, 0.0]


def test_an_engine_error_reaches_every_caller_of_the_batch_and_the_next_batch_runs() -> None:
    engine, judge = rule_engine(fail=True)
    batcher = Batcher(engine, wait_s=0.01, sleep=no_wait)

    async def main() -> list[Any]:
        return await asyncio.gather(
            *(batcher.score(row(i, "A is B.", ["yes: a is b"])) for i in range(3)), return_exceptions=True
        )

    outcomes = asyncio.run(main())
    assert [str(o) for o in outcomes] == ["judge exploded"] * 3
    judge.fail = False
    assert asyncio.run(main())[0].metrics.support_rate == 1.0  # a fresh event loop, a fresh queue
    assert batcher.batch_sizes == [3, 3]
