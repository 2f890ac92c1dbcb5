"""``benchmarks/judge/train_throughput.py`` without training: the pairs it trains on (a seeded LingNLI sample in
the pairs format ``train-judge fit`` reads) and the table it writes from its runs."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.judge import train_throughput as T
from conflictscore_local.train.data import read_training_data
from conflictscore_local.train.loop import make_chunker


def test_sample_is_seeded_lingnli_pairs_that_train_judge_fit_reads(shared_data: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    assert T.sample_pairs(shared_data, 40, 0, a) == 40
    T.sample_pairs(shared_data, 40, 0, b)
    T.sample_pairs(shared_data, 40, 1, c)
    assert a.read_text(encoding="utf-8") == b.read_text(encoding="utf-8")
    assert a.read_text(encoding="utf-8") != c.read_text(encoding="utf-8")
    rows = [json.loads(line) for line in a.read_text(encoding="utf-8").splitlines()]
    assert {r["source"] for r in rows} == {"lingnli"}
    assert {r["label"] for r in rows} <= {"SUPPORT", "CONTRADICT", "IRRELEVANT"}
    tokenizer = AutoTokenizer.from_pretrained(str(Path(__file__).resolve().parents[2] / "models" / "default-judge"))
    examples, files = read_training_data([str(a)], make_chunker(tokenizer, 192))
    assert len(examples) == 40 and files[0]["pairs_given"] == 40


def test_markdown_pairs_the_variants_by_round_and_says_why_bf16_is_absent() -> None:
    meta = {"command": "python -m x", "commit": "abc", "date": "2026-12-05", "machine": "m", "load_average": [0.1, 1.9]}
    meta.update(total_s=300.0, cpu_flags="amx_tile avx2")
    runs = {
        "fp32": [{"train_pairs_per_s": 20.0, "train_loss": 0.81}, {"train_pairs_per_s": 22.0, "train_loss": 0.8}],
        "bf16": [{"train_pairs_per_s": 50.0, "train_loss": 0.82}, {"train_pairs_per_s": 44.0, "train_loss": 0.8}],
    }
    data = {
        "meta": meta,
        "pairs": 1536,
        "threads": 2,
        "rounds": 2,
        "variants": {v: {"median_pairs_per_s": 21.0 if v == "fp32" else 47.0, "runs": r} for v, r in runs.items()},
        "bf16_over_fp32": {"median": 2.25, "per_round": [2.5, 2.0]},
    }
    text = T.markdown(data)
    assert "| fp32 | 21.0 | 20.0 (0.81), 22.0 (0.8) |" in text
    assert "| bf16 | 47.0 | 50.0 (0.82), 44.0 (0.8) |" in text
    assert "median 2.25 (2.5, 2.0)" in text and "CPU flags: amx_tile avx2." in text
    assert "`--bf16` here:" not in text
    data["bf16_note"] = "emulated, measured with --emulated-bf16: no native bf16"
    assert "`--bf16` here: emulated, measured with --emulated-bf16: no native bf16." in T.markdown(data)
    data.update(bf16_over_fp32=None, bf16_note="not measured: no native bf16 on this CPU")
    del data["variants"]["bf16"]
    assert "`--bf16`: not measured: no native bf16 on this CPU." in T.markdown(data)


@pytest.mark.parametrize(
    ("native", "emulated", "variants"),
    [(True, False, ["fp32", "bf16"]), (False, False, ["fp32"]), (False, True, ["fp32", "bf16"])],
    ids=["native", "emulated-skipped", "emulated-asked"],
)
def test_measure_alternates_the_variants_and_pairs_the_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, native: bool, emulated: bool, variants: list[str]
) -> None:
    calls: list[tuple[str, int]] = []
    speed = {"fp32": [20.0, 25.0, 22.0], "bf16": [50.0, 45.0, 66.0]}

    def fit(base: Path, train: Path, dev: Path, output: Path, bf16: bool, threads: int, seed: int) -> dict:
        v = "bf16" if bf16 else "fp32"
        r = sum(1 for c in calls if c[0] == v)
        calls.append((v, int(output.name.rsplit("-", 1)[1])))
        assert (base.name, threads, seed) == ("base", 2, 7)
        return {"train_pairs_per_s": speed[v][r], "train_loss": 0.8, "train_s": 1.0, "wall_s": 1.0}

    monkeypatch.setattr(T, "data_dir", lambda arg: tmp_path)
    monkeypatch.setattr(T, "plain_folder", lambda checkpoint, out: out)
    monkeypatch.setattr(T, "sample_pairs", lambda root, n, seed, out, split="train": n)
    monkeypatch.setattr(T, "native_cpu_bf16", lambda: (native, "why"))
    monkeypatch.setattr(T, "fit", fit)
    args = SimpleNamespace(data_dir=None, pairs=96, seed=7, rounds=3, threads=2, emulated_bf16=emulated)
    out = T.measure(args)
    assert list(out["variants"]) == variants
    if variants == ["fp32"]:
        assert calls == [("fp32", 0), ("fp32", 1), ("fp32", 2)]
        assert out["bf16_over_fp32"] is None and "why" in out["bf16_note"]
        return
    assert calls == [("fp32", 0), ("bf16", 0), ("bf16", 1), ("fp32", 1), ("fp32", 2), ("bf16", 2)]
    assert (
        out["variants"]["bf16"]["median_pairs_per_s"] == 50.0 and out["variants"]["fp32"]["median_pairs_per_s"] == 22.0
    )
    # per round: 50/20, 45/25, 66/22
    assert out["bf16_over_fp32"] == {"median": 2.5, "per_round": [2.5, 1.8, 3.0]}
    assert ("bf16_note" in out) is (not native)
