"""Training a tiny encoder end to end: loss, checkpoint, the nli judge loading it, resume, heads."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.cli import main
from conflictscore_local.core.types import LABELS, Claim, Pair, Passage
from conflictscore_local.train import LABEL2ID, TrainOptions, loop, train
from conflictscore_local.train.model import load_classifier, nli_head_order
from conflictscore_local.util.paths import portable

from .conftest import separable_pairs

# the package's train modules import torch inside their functions, so the imports above need neither
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

FAST = {"epochs": 5, "lr": 5e-3, "batch_size": 4, "max_length": 128, "warmup": 0.0, "patience": 5, "threads": 1}


def _opts(base: Path, files: tuple[Path, Path], out: Path, **over: object) -> TrainOptions:
    train_file, eval_file = files
    kw = {**FAST, **over}
    return TrainOptions(base=str(base), train=(str(train_file),), eval=str(eval_file), output=str(out), **kw)


@pytest.fixture(scope="module")
def trained(
    tiny_base: Path, pair_files: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("judge") / "ckpt"
    record = train(_opts(tiny_base, pair_files, out, calibrate=True, fp16_save=True), log=lambda _: None)
    return out, record


def test_training_moves_the_loss_and_learns_the_separable_pairs(trained: tuple[Path, dict]) -> None:
    _, record = trained
    losses = [h["train_loss"] for h in record["history"]]
    assert len(losses) == 5
    assert losses[-1] < losses[0] - 0.3, losses
    assert record["best"]["eval"]["macro_f1"] >= 0.9
    assert record["train_labels"] == {"SUPPORT": 20, "CONTRADICT": 20, "IRRELEVANT": 20}


def test_checkpoint_files_and_training_record(trained: tuple[Path, dict], pair_files: tuple[Path, Path]) -> None:
    out, record = trained
    assert {p.name for p in out.iterdir()} >= {
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "conflictscore.json",
        "training.json",
    }
    assert not (out / "last").exists()
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["id2label"] == {"0": "SUPPORT", "1": "CONTRADICT", "2": "IRRELEVANT"}
    assert json.loads((out / "conflictscore.json").read_text())["max_length"] == 128
    assert transformers.AutoTokenizer.from_pretrained(str(out)).model_max_length == 128
    from safetensors import safe_open

    with safe_open(str(out / "model.safetensors"), framework="pt") as f:
        assert {f.get_slice(k).get_dtype() for k in f.keys()} == {"F16"}  # noqa: SIM118 (safe_open is not iterable)
    saved = json.loads((out / "training.json").read_text())
    assert saved["train_files"][0]["sha256"] == record["train_files"][0]["sha256"]
    assert saved["eval_files"][0]["path"] == portable(str(pair_files[1]))  # recorded without machine paths
    assert saved["options"]["seed"] == 0 and saved["seed"] == 0 and "torch" in saved["versions"]
    assert (
        saved["best_epoch"] in (1, 2, 3, 4, 5) and saved["calibration"]["objective"] == "mean of (eval: pair macro-F1)"
    )
    assert [h["epoch"] for h in saved["history"]] == [1, 2, 3, 4, 5]


def test_the_nli_judge_loads_the_checkpoint_and_labels_pairs(trained: tuple[Path, dict]) -> None:
    out, _ = trained
    judge = registry.build("judge", "nli", {"model": str(out)})
    assert judge.labels() == {0: "SUPPORT", 1: "CONTRADICT", 2: "IRRELEVANT"}
    rows = separable_pairs(9, offset=200)
    pairs = [Pair(Claim("q", i, r["claim"]), Passage("q", "d", 0, r["passage"])) for i, r in enumerate(rows)]
    got = [j.label for j in judge.judge(pairs)]
    assert got == [r["label"] for r in rows]
    assert judge.max_length() == 128


def test_resume_continues_after_the_last_finished_epoch(
    tiny_base: Path, pair_files: tuple[Path, Path], tmp_path: Path
) -> None:
    from safetensors.torch import load_file

    straight = train(_opts(tiny_base, pair_files, tmp_path / "a", epochs=2), log=lambda _: None)

    class Stop(Exception):
        pass

    def stop_after_first(epoch: int, _entry: dict) -> None:
        if epoch == 1:
            raise Stop

    with pytest.raises(Stop):
        train(_opts(tiny_base, pair_files, tmp_path / "b", epochs=2), log=lambda _: None, on_epoch_end=stop_after_first)
    assert [c.name for c in (tmp_path / "b" / "last").glob("checkpoint-*")] == ["checkpoint-15"]  # 60 pairs / 4
    logs: list[str] = []
    resumed = train(_opts(tiny_base, pair_files, tmp_path / "b", epochs=2, resume=True), log=logs.append)
    assert any("resuming from" in m for m in logs)
    assert [h["train_loss"] for h in resumed["history"]] == [h["train_loss"] for h in straight["history"]]
    a, b = load_file(str(tmp_path / "a" / "model.safetensors")), load_file(str(tmp_path / "b" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_stop_after_exports_the_first_part_of_the_same_schedule(
    tiny_base: Path, pair_files: tuple[Path, Path], tmp_path: Path
) -> None:
    straight = train(_opts(tiny_base, pair_files, tmp_path / "a", epochs=2), log=lambda _: None)
    logs: list[str] = []
    part = train(_opts(tiny_base, pair_files, tmp_path / "b", epochs=2, stop_after=1, keep_state=True), log=logs.append)
    assert [h["epoch"] for h in part["history"]] == [1] and part["best_epoch"] == 1
    # the same schedule as the 2-epoch run (a 1-epoch run would decay its learning rate to 0 by then)
    assert part["history"][0]["train_loss"] == straight["history"][0]["train_loss"]
    assert any("stopping after epoch 1 (--stop-after 1)" in m for m in logs)
    assert (tmp_path / "b" / "model.safetensors").is_file()
    # resumed at the stop itself (a run killed after its last evaluation): nothing more is learned
    again = train(
        _opts(tiny_base, pair_files, tmp_path / "b", epochs=2, stop_after=1, resume=True, keep_state=True),
        log=lambda _: None,
    )
    assert [h["epoch"] for h in again["history"]] == [1] and again["best"] == part["best"]
    # a later stop continues that run: stop_after is not part of what a resume must share
    rest = train(_opts(tiny_base, pair_files, tmp_path / "b", epochs=2, stop_after=2, resume=True), log=lambda _: None)
    assert [h["train_loss"] for h in rest["history"]] == [h["train_loss"] for h in straight["history"]]


def test_resume_refuses_other_options_or_a_missing_state(
    tiny_base: Path, pair_files: tuple[Path, Path], tmp_path: Path
) -> None:
    from conflictscore_local.core.errors import ConfigError

    with pytest.raises(ConfigError, match="no saved epoch"):
        train(_opts(tiny_base, pair_files, tmp_path / "none", resume=True), log=lambda _: None)
    train(_opts(tiny_base, pair_files, tmp_path / "c", epochs=1, keep_state=True), log=lambda _: None)
    with pytest.raises(ConfigError, match="other options or data"):
        train(_opts(tiny_base, pair_files, tmp_path / "c", epochs=1, lr=1e-3, resume=True), log=lambda _: None)


def test_an_nli_head_is_kept_and_mapped_by_label_name(tiny_nli_factory) -> None:
    base = tiny_nli_factory(id2label={0: "entailment", 1: "neutral", 2: "contradiction"})
    assert nli_head_order({0: "entailment", 1: "neutral", 2: "contradiction"}) == [0, 2, 1]
    original = transformers.AutoModelForSequenceClassification.from_pretrained(str(base)).eval()
    mapped, head = load_classifier(str(base))
    mapped.eval()
    assert head.startswith("kept from the base") and "contradiction->CONTRADICT" in head
    assert mapped.config.id2label == {0: "SUPPORT", 1: "CONTRADICT", 2: "IRRELEVANT"}
    x = {"input_ids": torch.tensor([[101, 2023, 2003, 102, 2008, 102]])}
    with torch.no_grad():
        assert torch.allclose(mapped(**x).logits, original(**x).logits[:, [0, 2, 1]])


def test_a_head_without_nli_names_is_replaced(tiny_nli_factory) -> None:
    assert nli_head_order({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}) is None
    assert nli_head_order({0: "entailment", 1: "not_entailment"}) is None
    model, head = load_classifier(str(tiny_nli_factory(id2label={0: "negative", 1: "neutral", 2: "positive"})))
    assert head.startswith("new") and model.config.id2label == {i: lab for lab, i in LABEL2ID.items()}


def test_cli_trains_and_writes_a_loadable_checkpoint(
    tiny_base: Path, pair_files: tuple[Path, Path], tmp_path: Path
) -> None:
    train_file, eval_file = pair_files
    code = main(
        [
            "train-judge",
            "fit",
            "--base",
            str(tiny_base),
            "--train",
            str(train_file),
            "--eval",
            str(eval_file),
            "-o",
            str(tmp_path / "j"),
            "--epochs",
            "1",
            "--lr",
            "3e-3",
            "--batch-size",
            "8",
            "--max-length",
            "128",
            "--threads",
            "1",
            "-q",
        ]
    )
    assert code == 0
    record = json.loads((tmp_path / "j" / "training.json").read_text())
    assert record["options"]["lr"] == 3e-3 and record["saved_dtype"] == "float32"
    assert set(record["class_weights"]) == set(LABELS)


def test_cli_json_prints_the_training_record_and_a_log_shows_steps_without_a_terminal(
    tiny_base: Path,
    pair_files: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    train_file, eval_file = pair_files
    monkeypatch.setenv("CONFLICTSCORE_PROGRESS_S", "0.000001")  # a line at every step
    args = [
        "train-judge",
        "fit",
        "--base",
        str(tiny_base),
        "--train",
        str(train_file),
        "--eval",
        str(eval_file),
        "--epochs",
        "1",
        "--lr",
        "3e-3",
        "--batch-size",
        "8",
        "--max-length",
        "128",
        "--threads",
        "1",
    ]
    assert main([*args, "-o", str(tmp_path / "j"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == json.loads((tmp_path / "j" / "training.json").read_text())  # and nothing else
    steps = [line for line in err.splitlines() if line.startswith("train-judge fit: ")]
    assert steps and steps[0].startswith("train-judge fit: 1/") and " steps (" in steps[0] and "ETA" in steps[0]
    assert "so far" not in steps[-1] and "(100%)" in steps[-1]  # the closing line
    assert "eval macro-F1" in err  # the epoch line
    assert main([*args, "-o", str(tmp_path / "q"), "-q"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "train-judge fit: " not in err and "eval macro-F1" not in err


@pytest.fixture(scope="module")
def fp16_base(tiny_base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny base saved in float16, as `--fp16-save` saves the default judge."""
    out = tmp_path_factory.mktemp("fp16-base")
    transformers.AutoModel.from_pretrained(str(tiny_base)).half().save_pretrained(out)
    transformers.AutoTokenizer.from_pretrained(str(tiny_base)).save_pretrained(out)
    assert json.loads((out / "config.json").read_text())["dtype"] == "float16"
    return out


def test_a_float16_base_trains_with_float32_master_weights(
    fp16_base: Path, pair_files: tuple[Path, Path], tmp_path: Path
) -> None:
    model, _ = load_classifier(str(fp16_base))
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    record = train(_opts(fp16_base, pair_files, tmp_path / "j", epochs=2), log=lambda _: None)
    assert all(h["train_loss"] is not None and h["train_loss"] == h["train_loss"] for h in record["history"])


def test_a_loss_that_is_not_finite_stops_the_run_at_once(
    tiny_base: Path, pair_files: tuple[Path, Path], tmp_path: Path
) -> None:
    from conflictscore_local.train import TrainingDiverged

    broken = tmp_path / "broken"
    model = transformers.AutoModel.from_pretrained(str(tiny_base))
    with torch.no_grad():
        model.encoder.layer[0].attention.self.query.weight[0, 0] = float("nan")
    model.save_pretrained(broken)
    transformers.AutoTokenizer.from_pretrained(str(tiny_base)).save_pretrained(broken)
    with pytest.raises(TrainingDiverged, match=r"the training loss is nan at step 1 \(epoch 1\); stopped"):
        train(_opts(broken, pair_files, tmp_path / "out"), log=lambda _: None)
    assert not (tmp_path / "out" / "model.safetensors").exists()


def test_the_step_log_counts_to_the_stop_of_a_stop_after_run() -> None:
    from types import SimpleNamespace

    from transformers import TrainerControl, TrainerState

    from conflictscore_local.train.loop import _Callbacks

    def total(stop_after: float | None, args: object, epoch: float, step: int) -> int:
        cb = _Callbacks(lambda _msg: None, None, stop_after=stop_after, log_progress=True)
        state = TrainerState(max_steps=20, num_train_epochs=2, epoch=epoch, global_step=step)
        cb.callback.on_train_begin(args, state, TrainerControl())
        return int(cb.steps.total)

    every_5 = SimpleNamespace(eval_strategy="steps", eval_steps=5)  # a 2-epoch schedule of 20 steps
    assert total(0.5, every_5, 0.0, 0) == 5  # stopped after epoch 0.5: 5 steps, not the schedule's 20
    assert total(0.5, every_5, 0.3, 3) == 2  # resumed at step 3 of the same run
    assert total(0.7, every_5, 0.0, 0) == 10  # the first evaluation at or beyond 0.7 is at step 10
    assert total(0.5, SimpleNamespace(eval_strategy="epoch", eval_steps=None), 0.0, 0) == 10  # at epoch 1
    assert total(None, every_5, 0.3, 3) == 17  # no stop: the whole schedule


def test_int8_embeddings_train_frozen_on_their_round_trip_and_pack_into_the_same_judge(
    tiny_base: Path, pair_files: tuple[Path, Path], tmp_path: Path
) -> None:
    from safetensors.torch import load_file

    from conflictscore_local.backends import packed

    out = tmp_path / "ckpt"
    record = train(
        _opts(tiny_base, pair_files, out, epochs=2, int8_embeddings=True, fp16_save=True), log=lambda _: None
    )
    base_emb = load_file(str(tiny_base / "model.safetensors"))["embeddings.word_embeddings.weight"]
    trained_state = load_file(str(out / "model.safetensors"))
    (name,) = [k for k in trained_state if k.endswith("word_embeddings.weight")]
    # frozen at the int8 round trip of the base's embeddings, and saved exactly in float16
    assert torch.equal(trained_state[name].float(), packed.round_trip(base_emb))
    assert record["base"]["frozen_parameters"] == base_emb.numel()
    assert record["options"]["int8_embeddings"] is True

    assert main(["train-judge", "pack", str(out), "-o", str(tmp_path / "packed"), "-q"]) == 0
    assert packed.is_packed(tmp_path / "packed") and not (tmp_path / "packed" / "model.safetensors").exists()
    assert {p.name for p in (tmp_path / "packed").iterdir()} == {p.name for p in out.iterdir()} - {
        "model.safetensors"
    } | {"model.packed.safetensors"}
    back = packed.load_state_dict(tmp_path / "packed")
    assert set(back) == set(trained_state)
    assert all(torch.equal(back[k].float(), v.float()) for k, v in trained_state.items())
    assert (tmp_path / "packed" / "model.packed.safetensors").stat().st_size < (
        out / "model.safetensors"
    ).stat().st_size
    # a judge whose embeddings were not packed before training is refused, and nothing is written
    assert main(["train-judge", "pack", str(tiny_base), "-o", str(tmp_path / "refused"), "-q"]) == 2
    assert not (tmp_path / "refused").exists()


def test_bf16_with_device_auto_trains_on_the_cpu_when_there_is_no_gpu(
    tiny_base: Path,
    pair_files: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # transformers refuses bf16 on a machine without a GPU unless told to use the CPU ("Your setup doesn't
    # support bf16/gpu"): device auto must say CPU there. A CPU that only emulates bf16 trains many times slower
    # (benchmarks/results/judge/train_throughput-avx2.md): the command warns, under -q too
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(loop, "native_cpu_bf16", lambda: (False, "no native bf16 here, for the test"))
    train_file, eval_file = pair_files
    args = ["train-judge", "fit", "--base", str(tiny_base), "--train", str(train_file), "--eval", str(eval_file)]
    options = ["--epochs", "1", "--lr", "5e-3", "--batch-size", "4", "--max-length", "128", "--threads", "1"]
    assert main([*args, "-o", str(tmp_path / "j"), *options, "--bf16", "--device", "auto", "-q"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "warning: train-judge: --bf16: no native bf16 here, for the test; drop --bf16 to train faster "
        "(docs/training.md, 'How fast')"
    ]
    record = json.loads((tmp_path / "j" / "training.json").read_text())
    assert record["device"] == "cpu"
    assert record["options"]["bf16"] is True
    assert math.isfinite(record["history"][-1]["train_loss"])


@pytest.mark.parametrize(("bf16", "native"), [(True, True), (False, False)])
def test_no_bf16_warning_where_bf16_is_native_or_not_asked_for(
    bf16: bool,
    native: bool,
    tiny_base: Path,
    pair_files: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(loop, "native_cpu_bf16", lambda: (native, "for the test"))
    with caplog.at_level("INFO", logger="conflictscore_local"):
        train(_opts(tiny_base, pair_files, tmp_path / "j", epochs=1, bf16=bf16))
    ours = [r for r in caplog.records if r.name.startswith("conflictscore_local")]
    assert [r for r in ours if r.levelname == "INFO"]  # the notes were captured
    assert [r.getMessage() for r in ours if r.levelname == "WARNING"] == []
