"""``train-judge mine``: the pairs a first-stage judge gets wrong, a share of the rest, a replay sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.core.errors import ConfigError, InputError
from conflictscore_local.train.mine import MineOptions, mine, record_path

from .conftest import separable_pairs, write_jsonl


@pytest.fixture(scope="module")
def always_support(tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny 3-way classifier whose head always says SUPPORT: zero weights, bias (5, 0, 0)."""
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    tok = transformers.AutoTokenizer.from_pretrained(str(tokenizer_dir))
    cfg = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=3,
        id2label={0: "SUPPORT", 1: "CONTRADICT", 2: "IRRELEVANT"},
        label2id={"SUPPORT": 0, "CONTRADICT": 1, "IRRELEVANT": 2},
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(cfg)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([5.0, 0.0, 0.0]))
    out = tmp_path_factory.mktemp("always-support")
    model.save_pretrained(out)
    tok.save_pretrained(out)
    (out / "conflictscore.json").write_text(json.dumps({"format": 1, "max_length": 64, "claim_room": 32}))
    return out


def test_mine_keeps_every_wrong_pair_a_share_of_the_right_ones_and_the_replay(
    always_support: Path, tmp_path: Path
) -> None:
    rows = [{**r, "source": "toy", "kind": "pair"} for r in separable_pairs(30)]  # 10 of each label
    pairs = write_jsonl(tmp_path / "pairs.jsonl", rows)
    replay = write_jsonl(tmp_path / "general.jsonl", separable_pairs(12, 100))
    out = tmp_path / "hard.jsonl"
    rec = mine(
        MineOptions(
            model=str(always_support),
            pairs=(str(pairs),),
            output=str(out),
            keep_correct=0.5,
            replay=(str(replay),),
            replay_pairs=4,
            threads=1,
        )
    )
    # the model says SUPPORT to all 30: the 20 CONTRADICT / IRRELEVANT pairs are wrong, 5 of the 10 right kept
    assert (rec["pairs"], rec["wrong"], rec["error_rate"]) == (30, 20, 0.6667)
    assert rec["confusion"]["CONTRADICT->SUPPORT"] == 10 and rec["confusion"]["SUPPORT->SUPPORT"] == 10
    assert rec["written"] == {"hard": 20, "correct_kept": 5, "replay": 4, "all": 29, "labels": rec["written"]["labels"]}
    written = [json.loads(line) for line in out.read_text().splitlines()]
    hard = [w for w in written if w["kind"] == "hard:pair"]
    assert sorted((w["claim"], w["passage"]) for w in hard) == sorted(
        (r["claim"], r["passage"]) for r in rows if r["label"] != "SUPPORT"
    )
    assert sum(w["kind"] == "pair" and w["label"] == "SUPPORT" for w in written) == 5
    assert sum(w["kind"].startswith("replay:") for w in written) == 4
    assert rec["by_source"] == {"toy (pair)": {"pairs": 30, "wrong": 20, "error_rate": 0.6667}}
    assert json.loads(record_path(out).read_text()) == rec


def test_mine_refuses_items_bad_labels_and_a_replay_count_without_a_file(always_support: Path, tmp_path: Path) -> None:
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"claim": "a", "passage": "b", "label": "MAYBE"}])
    with pytest.raises(InputError, match=r"bad\.jsonl:1: field 'label'"):
        mine(MineOptions(model=str(always_support), pairs=(str(bad),), output=str(tmp_path / "o.jsonl")))
    items = write_jsonl(tmp_path / "items.jsonl", [{"claims": ["a"], "documents": [], "gold_labels": [[]]}])
    with pytest.raises(InputError, match="mining reads pairs, not ConflictBench items"):
        mine(MineOptions(model=str(always_support), pairs=(str(items),), output=str(tmp_path / "o.jsonl")))
    with pytest.raises(ConfigError, match="--replay-pairs needs --replay FILE"):
        MineOptions(model="m", pairs=("p",), output="o.jsonl", replay_pairs=3)
    with pytest.raises(ConfigError, match="a share, between 0 and 1"):
        MineOptions(model="m", pairs=("p",), output="o.jsonl", keep_correct=1.5)
