"""The committed default judge: loads offline as the ``nli`` judge's default and labels
obvious pairs correctly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.types import Claim, Pair, Passage

REPO = Path(__file__).resolve().parents[2]
CHECKPOINT = REPO / "models" / "default-judge"

WEIGHTS = CHECKPOINT / "model.packed.safetensors"
pytestmark = pytest.mark.skipif(
    not WEIGHTS.is_file(), reason="models/default-judge is not built (models/build_default_judge.sh)"
)

EIFFEL = "The Eiffel Tower in Paris was completed in 1889 as the entrance arch to the World's Fair."
CURIE = "Marie Curie was born in Warsaw in 1867 and moved to Paris in 1891 to study physics."
OBVIOUS = [
    (EIFFEL, "The Eiffel Tower was finished in 1889.", "SUPPORT"),
    (EIFFEL, "The Eiffel Tower was completed in 1925.", "CONTRADICT"),
    (EIFFEL, "Bananas are a good source of potassium.", "IRRELEVANT"),
    (CURIE, "Marie Curie was born in 1867.", "SUPPORT"),
    (CURIE, "Marie Curie was born in 1901.", "CONTRADICT"),
    (CURIE, "The stock market closed higher on Friday.", "IRRELEVANT"),
]


@pytest.fixture(scope="module")
def default_judge():
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    saved = os.environ.pop("CONFLICTSCORE_DEFAULT_JUDGE", None)
    try:
        judge = registry.build("judge", "nli", {})
        assert judge.checkpoint() == CHECKPOINT.resolve()
        yield judge
    finally:
        if saved is not None:
            os.environ["CONFLICTSCORE_DEFAULT_JUDGE"] = saved


def test_default_judge_is_packed_small_and_records_its_rule(default_judge) -> None:
    from safetensors import safe_open

    assert WEIGHTS.stat().st_size <= 40 * 2**20 and not (CHECKPOINT / "model.safetensors").exists()
    with safe_open(str(WEIGHTS), framework="pt") as f:
        dtypes = {k: f.get_slice(k).get_dtype() for k in f.keys()}  # noqa: SIM118 (safe_open is not iterable)
        assert f.metadata()["float_dtype"] == "float16"
    emb = "bert.embeddings.word_embeddings.weight"
    assert (dtypes.pop(f"{emb}.int8"), dtypes.pop(f"{emb}.scale")) == ("I8", "F32")
    assert set(dtypes.values()) == {"F16"}
    assert default_judge.labels() == {0: "SUPPORT", 1: "CONTRADICT", 2: "IRRELEVANT"}
    cal = json.loads((CHECKPOINT / "conflictscore.json").read_text())
    assert default_judge.max_length() == cal["max_length"]
    assert default_judge.thresholds() == cal.get("thresholds")
    record = json.loads((CHECKPOINT / "training.json").read_text())
    assert record["best_epoch"] in [h["epoch"] for h in record["history"]]


# Pairs the shipped judge is known to get wrong (strict: a retrained judge that gets one right makes
# its test fail, so the mark is dropped then). v2 labelled #5, an unrelated sentence against a
# biography, CONTRADICT (p 0.81); v3 and v5 get it right.
KNOWN_MISSES: dict[int, str] = {}


@pytest.mark.parametrize("index", range(len(OBVIOUS)))
def test_default_judge_labels_obvious_pairs(default_judge, index: int, request: pytest.FixtureRequest) -> None:
    if index in KNOWN_MISSES:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_MISSES[index], strict=True))
    passage, claim, want = OBVIOUS[index]
    (got,) = default_judge.judge([Pair(Claim("q", 0, claim), Passage("q", "d", 0, passage))])
    assert got.label == want, got.probs
