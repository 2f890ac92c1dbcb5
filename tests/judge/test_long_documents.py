"""Long documents end to end: split into passages within the judge's window, labels found
past the first window, the deciding passage recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.core.types import Claim, Document, Item, Judgment, Pair, Passage
from conflictscore_local.judge._base import JudgeBase

FILLER = [f"The committee met again in session {k} to discuss the border question." for k in range(30)]
LONG_DOC = " ".join(FILLER[:20]) + " The treaty was finally signed in 1921. " + " ".join(FILLER[20:])
CLAIM = "The treaty was signed in 1919."


class WindowJudge(JudgeBase):
    """A rule-based judge that, like a real cross-encoder, only sees the first ``window``
    tokens of a passage. For a claim about the treaty: CONTRADICT (p=0.85) when it sees
    "signed in 1921", SUPPORT (p=0.95) for "signed in 1919"; IRRELEVANT otherwise."""

    name = "window-rule"
    role = "judge"

    def __init__(self, count: Callable[[str], int], window: int):
        super().__init__()
        self.tokens, self.window, self.seen = count, window, []

    def visible(self, text: str) -> str:
        words = text.split()
        while self.tokens(" ".join(words)) > self.window:
            words.pop()
        return " ".join(words)

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        out = []
        for p in pairs:
            text = self.visible(p.passage.text)
            self.seen.append(p.passage)
            label, prob = "IRRELEVANT", 0.9
            if "treaty" in p.claim.text and "signed in 1921" in text:
                label, prob = "CONTRADICT", 0.85
            elif "treaty" in p.claim.text and "signed in 1919" in text:
                label, prob = "SUPPORT", 0.95
            probs = {lab: (prob if lab == label else (1 - prob) / 2) for lab in ("SUPPORT", "CONTRADICT", "IRRELEVANT")}
            out.append(Judgment(p, label, probs, "judge"))
        return out

    def spec(self) -> Mapping[str, Any]:
        return {"backend": self.name, "window": self.window}

    def passage_budget(self) -> tuple[Callable[[str], int], int]:
        return self.tokens, self.window

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def stats(self) -> dict[str, Any]:
        return {}


@pytest.fixture(scope="module")
def count(tokenizer_dir: Path) -> Callable[[str], int]:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    return lambda text: len(tok(text, add_special_tokens=False)["input_ids"])


def items() -> list[Item]:
    docs = (Document("long", LONG_DOC), Document("short", "Records show the treaty was signed in 1919 in Paris."))
    return [Item("q1", "r", docs, claims=(CLAIM, "The committee met in Geneva."))]


def test_contradiction_past_the_first_window_is_found(count: Callable[[str], int]) -> None:
    assert count(LONG_DOC) > 300 and count(LONG_DOC[: LONG_DOC.index("1921")]) > 64
    judge = WindowJudge(count, 64)
    with Engine(judge=judge, pruner="none") as engine:
        (result,), report = engine.score_all(items())
    verdict = result.verdicts[0]
    assert verdict.contradict == ("long",) and verdict.support == ("short",) and verdict.conflicted
    long_j = verdict.judgments[0].to_json()
    assert long_j["label"] == "CONTRADICT" and long_j["n_passages"] > 1 and long_j["passage"] > 0
    passages = [p for p in judge.seen if p.doc_id == "long" and p.index == long_j["passage"]]
    assert "signed in 1921" in passages[0].text
    assert all(count(p.text) <= 64 for p in judge.seen)
    assert LONG_DOC[slice(*passages[0].span)] == passages[0].text
    assert result.metrics.cs_c == 0.5 and report.pairs["judged"] == 4


def test_passages_larger_than_the_judge_budget_are_refused(count: Callable[[str], int], logged: Any) -> None:
    whole = Pair(Claim("q1", 0, CLAIM), Passage("q1", "long", 0, LONG_DOC))
    assert WindowJudge(count, 64).judge([whole])[0].label == "IRRELEVANT"  # unsplit, the judge misses it
    cfg = RunConfig().updated({"chunk": {"max_tokens": 100_000}})
    warning = "chunk.max_tokens=100000 exceeds the judge's passage budget of 64"
    with logged.expect(warning), Engine(cfg, judge=WindowJudge(count, 64), pruner="none") as engine:
        (result,), _ = engine.score_all(items())
    assert result.verdicts[0].contradict == ("long",) and result.verdicts[0].conflicted


def test_a_document_that_both_supports_and_contradicts(count: Callable[[str], int]) -> None:
    both = Document(
        "both",
        "The treaty was signed in 1919 according to the first draft. "
        + " ".join(FILLER)
        + " A later archive says the treaty was signed in 1921.",
    )
    item = Item("q2", "r", (both,), claims=(CLAIM,))
    with Engine(judge=WindowJudge(count, 64), pruner="none") as engine:
        (one,), _ = engine.score_all([item])
    assert one.verdicts[0].judgments[0].label == "SUPPORT"  # both sides found: the more probable wins
    assert one.verdicts[0].judgments[0].passage == 0 and not one.verdicts[0].conflicted
    cfg = RunConfig().updated({"aggregate": {"keep_both": True}})
    with Engine(cfg, judge=WindowJudge(count, 64), pruner="none") as engine:
        (kept,), _ = engine.score_all([item])
    v = kept.verdicts[0]
    # on both sides, but one document does not conflict with itself (ConflictBench's definition)
    assert v.support == ("both",) and v.contradict == ("both",) and not v.conflicted and v.ratio == 0.5
    assert v.judgments[0].both and v.judgments[0].label == "CONTRADICT"


def test_nli_judge_splits_long_documents_to_its_window(tiny_nli_dir: Path, count: Callable[[str], int]) -> None:
    judge = {"name": "nli", "model": str(tiny_nli_dir), "max_length": 96, "claim_room": 32}
    with Engine(judge=judge, pruner="none") as engine:
        (result,), _ = engine.score_all(items())
        nli = engine.backend("judge")
        passages = engine.chunker().split("q1", items()[0].documents)
    assert nli.passage_budget()[1] == 96 - 3 - 32
    long_passages = [p for p in passages if p.doc_id == "long"]
    assert len(long_passages) >= 6 and all(count(p.text) <= 61 for p in long_passages)
    assert result.verdicts[0].judgments[0].n_passages == len(long_passages)
    assert nli.stats()["pairs"] == 2 * len(passages) and "passage_truncated" not in nli.stats()


def test_a_cached_rerun_takes_stored_spans_and_counts_no_tokens(count: Callable[[str], int], tmp_path: Path) -> None:
    calls = [0]

    def counting(text: str) -> int:
        calls[0] += 1
        return count(text)

    cfg = RunConfig.from_mapping({"cache": {"enabled": True, "path": str(tmp_path / "j.sqlite")}})
    runs = []
    for _ in range(2):
        calls[0] = 0
        judge = WindowJudge(counting, 64)
        with Engine(cfg, judge=judge, pruner="none") as engine:
            (result,), report = engine.score_all(items())
        runs.append((calls[0], [(p.doc_id, p.index, p.span, p.text) for p in judge.seen], result, report))
    (cold_calls, cold_seen, cold, cold_report), (warm_calls, warm_seen, warm, warm_report) = runs
    assert cold_calls > 20 and cold_report.stages["engine"]["documents_split"] == 2
    assert cold_report.stages["engine"]["documents_split_stored"] == 0
    assert warm_seen == [] and warm_report.pairs["judged"] == 0  # every judgment cached
    assert warm_report.stages["engine"]["documents_split_stored"] == 2
    assert warm_report.stages["engine"].get("documents_split", 0) == 0
    assert warm_calls == 0  # no token counted: the judge saw nothing, splitting took the stored spans

    def same(v: Any) -> dict[str, Any]:
        out = v.to_json()
        out["judgments"] = [{k: x for k, x in j.items() if k != "source"} for j in out["judgments"]]
        return out

    assert [j["source"] for j in warm.verdicts[0].to_json()["judgments"]] == ["cache", "cache"]
    assert [same(v) for v in warm.verdicts] == [same(v) for v in cold.verdicts]  # the same passages and spans
    # another overlap is another splitting: split (and counted) again
    calls[0] = 0
    with Engine(cfg.updated({"chunk": {"overlap": 0}}), judge=WindowJudge(counting, 64), pruner="none") as engine:
        _, report = engine.score_all(items())
    assert report.stages["engine"]["documents_split"] == 2 and calls[0] > 0
