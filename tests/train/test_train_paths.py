"""``training.json`` (committed beside the default judge) records no machine path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_training_record_holds_no_machine_path(tiny_base: Path, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from conflictscore_local.train import TrainOptions, train

    rows = [
        {
            "claim": f"c{i}",
            "passage": ("yes", "no", "bread")[i % 3] + f" p{i}",
            "label": ("SUPPORT", "CONTRADICT", "IRRELEVANT")[i % 3],
        }
        for i in range(12)
    ]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    opts = TrainOptions(
        base=str(tiny_base),
        train=(str(data),),
        eval=(str(data),),
        output=str(tmp_path / "out"),
        epochs=1,
        batch_size=4,
        max_length=128,
        threads=1,
    )
    train(opts, log=lambda _: None)
    text = (tmp_path / "out" / "training.json").read_text(encoding="utf-8")
    assert "/tmp/" not in text and json.loads(text)["base"]["path"].startswith("<tmp>/")  # before: absolute
