"""The ``nli`` judge on tiny classifiers built in fixtures (real tokenizer, real model code)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.core.types import Claim, Pair, Passage
from conflictscore_local.judge.nli.judge import NLIJudge

MNLI = {0: "entailment", 1: "neutral", 2: "contradiction"}


def pairs_of(n: int) -> list[Pair]:
    """Pairs of varied lengths, so sorting by length reorders them."""
    return [
        Pair(
            Claim("it", k, f"Claim {k} says the bridge opened in {1900 + k}." + " Really." * (k % 4)),
            Passage(
                "it", f"d{k % 3}", 0, f"Passage {k}. " + "The river bank was busy that year. " * (1 + (k * 7) % 11)
            ),
        )
        for k in range(n)
    ]


def judge(path: Path, **kw: object) -> NLIJudge:
    return registry.build("judge", "nli", {"model": str(path), **kw})


@pytest.mark.parametrize(
    "id2label, winner, expected, arch",
    [
        (MNLI, 0, "SUPPORT", "bert"),
        (MNLI, 2, "CONTRADICT", "deberta-v2"),
        ({0: "contradiction", 1: "neutral", 2: "entailment"}, 0, "CONTRADICT", "bert"),
        ({0: "contradiction", 1: "neutral", 2: "entailment"}, 2, "SUPPORT", "deberta-v2"),
        ({0: "neutral", 1: "contradiction", 2: "entailment"}, 0, "IRRELEVANT", "deberta-v2"),
        ({0: "REFUTES", 1: "SUPPORTS", 2: "NOT ENOUGH INFO"}, 1, "SUPPORT", "bert"),
    ],
)
def test_labels_round_trip_through_id2label(
    crafted_nli: Callable[..., Path],
    arch: str,
    id2label: dict,
    winner: int,
    expected: str,
    winner_prob: Callable[[int], float],
) -> None:
    j = judge(crafted_nli(id2label, winner, arch))
    out = j.judge(pairs_of(3))
    p = winner_prob(3)
    assert [o.label for o in out] == [expected] * 3
    assert all(o.source == "judge" and o.note is None for o in out)
    rest = (1 - p) / 2
    assert out[0].probs == pytest.approx(
        {lab: (p if lab == expected else rest) for lab in ("SUPPORT", "CONTRADICT", "IRRELEVANT")}, abs=1e-6
    )
    assert j.describe()["resolved"]["architecture"].startswith("Bert" if arch == "bert" else "DebertaV2")


def test_two_way_model_and_negative_label(
    crafted_nli: Callable[..., Path], winner_prob: Callable[[int], float]
) -> None:
    path = crafted_nli({0: "entailment", 1: "not_entailment"}, 1)
    p = winner_prob(2)
    out = judge(path).judge(pairs_of(2))
    assert [o.label for o in out] == ["IRRELEVANT", "IRRELEVANT"]
    assert out[0].probs == pytest.approx({"SUPPORT": 1 - p, "CONTRADICT": 0.0, "IRRELEVANT": p}, abs=1e-6)
    out = judge(path, negative_label="CONTRADICT").judge(pairs_of(1))
    assert out[0].label == "CONTRADICT"
    assert out[0].probs == pytest.approx({"SUPPORT": 1 - p, "CONTRADICT": p, "IRRELEVANT": 0.0}, abs=1e-6)


def test_unmappable_checkpoint_refused_and_id2label_argument(crafted_nli: Callable[..., Path]) -> None:
    path = crafted_nli({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, 1)
    with pytest.raises(ConfigError) as e:
        judge(path).judge(pairs_of(1))
    assert "LABEL_0" in str(e.value) and "LABEL_2" in str(e.value) and str(path) in str(e.value)
    fixed = judge(path, id2label='{"0": "SUPPORT", "1": "CONTRADICT", "2": "IRRELEVANT"}')
    assert fixed.judge(pairs_of(1))[0].label == "CONTRADICT"


@pytest.mark.parametrize("arch, n, batch_size", [("bert", 17, 5), ("deberta-v2", 7, 3)])
def test_batching_preserves_order_and_matches_one_pair_at_a_time(
    spread_nli: Callable[[str], Path], arch: str, n: int, batch_size: int
) -> None:
    path = spread_nli(arch)
    pairs = pairs_of(n)
    batched = judge(path, batch_size=batch_size)
    out = batched.judge(pairs)
    single = judge(path, batch_size=1)
    one_by_one = [single.judge([p])[0] for p in pairs]
    assert [o.pair for o in out] == pairs
    assert [o.label for o in out] == [o.label for o in one_by_one]
    for a, b in zip(out, one_by_one):
        assert a.probs == pytest.approx(b.probs, abs=1e-4)
    # every input scores clearly differently, so a pair answered from another slot would show
    vecs = [list(o.probs.values()) for o in out]
    assert min(max(abs(a - b) for a, b in zip(u, v)) for i, u in enumerate(vecs) for v in vecs[i + 1 :]) > 1e-3
    assert batched.stats() == {"batches": -(-n // batch_size), "pairs": n, "forward_inputs": n}


def test_identical_pairs_are_computed_once(tiny_nli_dir: Path) -> None:
    pairs = pairs_of(4)
    dup = [pairs[0], pairs[1], Pair(Claim("other", 0, pairs[0].claim.text), pairs[0].passage), pairs[0]]
    j = judge(tiny_nli_dir)
    seen: list[int] = []
    out = j.judge(dup, on_progress=seen.append)
    assert [o.pair for o in out] == dup
    assert out[0].probs == out[2].probs == out[3].probs
    assert j.stats()["forward_inputs"] == 2 and sum(seen) == 4


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_dtype_and_device_options(
    crafted_nli: Callable[..., Path], dtype: str, winner_prob: Callable[[int], float]
) -> None:
    j = judge(crafted_nli(MNLI, 2), dtype=dtype, device="cpu")
    out = j.judge(pairs_of(2))
    assert out[0].label == "CONTRADICT"
    assert out[0].probs["CONTRADICT"] == pytest.approx(winner_prob(3), abs=1e-6)
    assert j.describe()["resolved"]["dtype"] == dtype and j.describe()["resolved"]["device"] == "cpu"
    assert j.spec()["dtype"] == dtype


def test_bad_options_are_refused() -> None:
    with pytest.raises(ConfigError, match="allowed: auto, cpu, mps, cuda, cuda:N"):
        registry.build("judge", "nli", {"device": "gpu"})
    with pytest.raises(ConfigError, match="allowed: auto, float32, bfloat16, float16"):
        registry.build("judge", "nli", {"dtype": "fp8"})
    with pytest.raises(ConfigError, match=r"batch_size must be an integer in \[1, 1000000\]"):
        registry.build("judge", "nli", {"batch_size": "0"})


def test_thresholds_from_checkpoint_argument_and_switch(
    crafted_nli: Callable[..., Path], tmp_path: Path, winner_prob: Callable[[int], float]
) -> None:
    path = tmp_path / "calibrated"
    shutil.copytree(crafted_nli(MNLI, 0), path)  # always SUPPORT with p = 0.9646
    p = winner_prob(3)
    (path / "conflictscore.json").write_text(
        json.dumps({"format": 1, "thresholds": {"SUPPORT": 0.97, "CONTRADICT": 0.5}})
    )
    j = judge(path)
    out = j.judge(pairs_of(1))[0]
    assert out.label == "IRRELEVANT" and out.probs["SUPPORT"] == pytest.approx(p, abs=1e-6)
    assert j.spec()["thresholds"] == {"SUPPORT": 0.97, "CONTRADICT": 0.5}
    assert judge(path, thresholds='{"SUPPORT": 0.9, "CONTRADICT": 0.5}').judge(pairs_of(1))[0].label == "SUPPORT"
    off = judge(path, calibration=False)
    assert off.judge(pairs_of(1))[0].label == "SUPPORT" and off.spec()["thresholds"] is None
    assert off.spec() != j.spec()


def test_document_rule_from_checkpoint_goes_with_its_thresholds(
    crafted_nli: Callable[..., Path], tmp_path: Path
) -> None:
    path = tmp_path / "ruled"
    shutil.copytree(crafted_nli(MNLI, 0), path)
    assert judge(path).document_rule() is None  # no conflictscore.json
    (path / "conflictscore.json").write_text(
        json.dumps({"format": 1, "thresholds": {"SUPPORT": 0.5, "CONTRADICT": 0.4}, "document_rule": "relevant"})
    )
    assert judge(path).document_rule() == "relevant"
    # thresholds from elsewhere (or none): the checkpoint's rule was calibrated with other ones
    assert judge(path, calibration=False).document_rule() is None
    assert judge(path, thresholds='{"SUPPORT": 0.9, "CONTRADICT": 0.5}').document_rule() is None
    (path / "conflictscore.json").write_text(json.dumps({"format": 1, "document_rule": 3}))
    with pytest.raises(ConfigError, match="conflictscore.json: document_rule must be a string, got 3"):
        judge(path).document_rule()


def test_bad_calibration_file_is_an_error(crafted_nli: Callable[..., Path], tmp_path: Path) -> None:
    path = tmp_path / "bad"
    shutil.copytree(crafted_nli(MNLI, 0), path)
    (path / "conflictscore.json").write_text(json.dumps({"format": 7}))
    with pytest.raises(ConfigError, match="conflictscore.json: unsupported calibration format 7"):
        judge(path).spec()
    (path / "conflictscore.json").write_text(json.dumps({"format": 1, "thresholds": {"SUPPORT": 0.5}}))
    with pytest.raises(ConfigError, match="missing CONTRADICT"):
        judge(path).judge(pairs_of(1))


def test_max_length_from_training_file(crafted_nli: Callable[..., Path], tmp_path: Path) -> None:
    path = tmp_path / "trained"
    shutil.copytree(crafted_nli(MNLI, 0), path)
    (path / "conflictscore.json").write_text(json.dumps({"format": 1, "max_length": 128, "claim_reserve": 64}))
    j = judge(path)
    assert j.max_length() == 128 and j.spec()["max_length"] == 128
    assert judge(path, max_length=96).max_length() == 96


def test_default_judge_missing_and_env_override(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tiny_nli_dir: Path
) -> None:
    monkeypatch.setenv("CONFLICTSCORE_DEFAULT_JUDGE", str(tmp_path / "nowhere"))
    with pytest.raises(BackendUnavailable) as e:
        NLIJudge().spec()
    assert "default judge is not installed" in str(e.value) and "--judge-arg model=PATH" in str(e.value)
    monkeypatch.setenv("CONFLICTSCORE_DEFAULT_JUDGE", str(tiny_nli_dir))
    j = NLIJudge()
    assert j.judge(pairs_of(1))[0].label in ("SUPPORT", "CONTRADICT", "IRRELEVANT")
    assert j.describe()["resolved"]["model_path"] == str(tiny_nli_dir.resolve())


def test_missing_model_path_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailable, match="neither a directory nor in the local Hugging Face cache"):
        judge(tmp_path / "missing").spec()


def test_spec_names_the_weights_and_not_the_batch_size(tiny_nli_factory: Callable[..., Path]) -> None:
    a, b = tiny_nli_factory(seed=0), tiny_nli_factory(seed=1)
    spec = judge(a).spec()
    assert spec == judge(a, batch_size=3).spec()
    assert spec["model"]["weights_sha256"] != judge(b).spec()["model"]["weights_sha256"]
    assert spec["labels"] == {"0": "SUPPORT", "1": "IRRELEVANT", "2": "CONTRADICT"}
    assert spec != judge(a, max_length=64).spec()


def test_spec_names_the_tokenizer(tiny_nli_dir: Path, tmp_path: Path) -> None:
    spec = judge(tiny_nli_dir).spec()
    copy = tmp_path / "copy"
    shutil.copytree(tiny_nli_dir, copy)
    assert judge(copy).spec() == spec
    config = json.loads((copy / "tokenizer_config.json").read_text())
    (copy / "tokenizer_config.json").write_text(json.dumps({**config, "do_lower_case": False}))
    changed = judge(copy).spec()
    assert changed["model"] == spec["model"] and changed != spec  # same weights, other tokenization


def test_passage_budget_uses_the_judge_tokenizer(tiny_nli_dir: Path) -> None:
    count, budget = judge(tiny_nli_dir).passage_budget()
    assert budget == 512 - 3 - 64  # window − [CLS]/[SEP]/[SEP] − room for the claim
    assert count("The Eiffel Tower opened in 1889.") == 9  # WordPiece: the eiffel tower opened in 1889 . (+ ##s)
    _, small = judge(tiny_nli_dir, max_length=96, claim_room=32).passage_budget()
    assert small == 96 - 3 - 32
    with pytest.raises(ConfigError, match="leaves no room"):
        judge(tiny_nli_dir, max_length=64, claim_room=60).passage_budget()


def test_long_inputs_truncate_the_passage_only(tiny_nli_dir: Path) -> None:
    j = judge(tiny_nli_dir, max_length=32)
    long_passage = Passage("it", "d", 0, "word " * 200)
    long_claim = Claim("it", 1, "claim " * 40)
    fits = Pair(Claim("it", 2, "short claim"), Passage("it", "d", 2, "word " * 10))
    out = j.judge(
        [Pair(Claim("it", 0, "short claim"), long_passage), Pair(long_claim, Passage("it", "d", 1, "tiny")), fits]
    )
    assert all(o.label is not None for o in out)
    assert j.stats()["passage_truncated"] == 1 and j.stats()["claim_truncated"] == 1
    # 32 − [CLS]/[SEP]/[SEP] − 2 claim tokens = 27 passage tokens judged: the cut is on the judgment
    assert out[0].note == "passage truncated to 27 of 200 tokens (max_length 32)"
    assert out[1].note == (
        "claim too long (40 tokens) for max_length 32: claim and passage truncated together (passage of 1 tokens)"
    )
    assert out[2].note is None
    feats, notes = j.encode(["word " * 200], ["short claim"])
    assert len(feats[0]["input_ids"]) == 32 and notes == ["passage truncated to 27 of 200 tokens (max_length 32)"]
    text = j.tokenizer().decode(feats[0]["input_ids"])
    assert text.endswith("[SEP] short claim [SEP]") and text.count("word") == 27


def test_token_batches_respect_both_limits() -> None:
    from conflictscore_local.judge.nli.runtimes.base import token_batches

    order = [4, 0, 3, 1, 2]
    lengths = [100, 60, 50, 20, 20]  # sorted longest first, aligned with order
    assert list(token_batches(order, lengths, max_pairs=8, max_tokens=120)) == [[4], [0, 3], [1, 2]]
    assert list(token_batches(order, lengths, max_pairs=1, max_tokens=10_000)) == [[4], [0], [3], [1], [2]]
    # an input longer than the budget still goes, alone
    assert list(token_batches([7, 8], [500, 10], max_pairs=4, max_tokens=64)) == [[7], [8]]


def test_token_budget_splits_batches_and_keeps_results(spread_nli: Callable[[str], Path]) -> None:
    path = spread_nli("bert")
    pairs = pairs_of(9)
    roomy = judge(path, batch_size=64, max_batch_tokens=100_000)
    tight = judge(path, batch_size=64, max_batch_tokens=1)
    a, b = roomy.judge(pairs), tight.judge(pairs)
    assert roomy.stats()["batches"] == 1 and tight.stats()["batches"] == 9
    assert [x.label for x in a] == [x.label for x in b]
    assert all(x.probs == pytest.approx(y.probs, abs=1e-4) for x, y in zip(a, b))


def test_training_and_the_judge_share_one_encoding_and_one_budget(tiny_nli_dir: Path) -> None:
    from conflictscore_local.judge.nli.encoding import encode_pairs, passage_budget
    from conflictscore_local.train.loop import make_chunker

    j = judge(tiny_nli_dir, max_length=32)
    tok = j.tokenizer()
    passages, claims = ["word " * 200, "a short passage"], ["short claim", "claim " * 40]
    feats, cuts = encode_pairs(tok, passages, claims, 32)
    assert (feats, [c[1] if c else None for c in cuts]) == j.encode(passages, claims)
    assert [c[0] for c in cuts] == ["passage_truncated", "claim_truncated"]
    assert passage_budget(tok, 32, 8)[1] == 32 - 3 - 8
    assert make_chunker(tok, 192).max_tokens == judge(tiny_nli_dir, max_length=192).passage_budget()[1] == 192 - 3 - 64


@pytest.mark.parametrize("native", [True, False])
def test_auto_dtype_is_float32_whatever_the_cpu(
    crafted_nli: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, native: bool
) -> None:
    from conflictscore_local.util import devices

    monkeypatch.setattr(devices, "native_cpu_bf16", lambda: (native, "mocked detection"))
    j = judge(crafted_nli(MNLI, 2), device="cpu")
    assert j.spec()["dtype"] == "float32"
    assert j.describe()["resolved"]["dtype_reason"].startswith("auto: float32 on the CPU")
    assert j.judge(pairs_of(1))[0].label == "CONTRADICT"
    assert j.describe()["resolved"]["dtype"] == "float32"
    b = judge(crafted_nli(MNLI, 2), device="cpu", dtype="bfloat16")
    assert b.spec()["dtype"] == "bfloat16"
    assert b.describe()["resolved"]["dtype_reason"] == "given (mocked detection)"
