"""The ``nli`` judge reads the claim room a checkpoint was trained with (``conflictscore.json``,
written by ``train-judge``); the ``claim_room`` argument overrides it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import ConfigError


def with_meta(src: Path, dest: Path, meta: dict) -> Path:
    shutil.copytree(src, dest)
    (dest / "conflictscore.json").write_text(json.dumps({"format": 1, **meta}))
    return dest


def budget(path: Path, **kw: object) -> int:
    return registry.build("judge", "nli", {"model": str(path), **kw}).passage_budget()[1]


def test_claim_room_comes_from_the_checkpoint_unless_given(tiny_nli_dir: Path, tmp_path: Path) -> None:
    trained = with_meta(tiny_nli_dir, tmp_path / "trained", {"max_length": 128, "claim_room": 16})
    assert budget(trained) == 128 - 3 - 16  # before: 128 - 3 - 64, the training setting ignored
    assert budget(trained, claim_room=32) == 128 - 3 - 32
    assert budget(tiny_nli_dir) == 512 - 3 - 64  # nothing written down: the default
    judge = registry.build("judge", "nli", {"model": str(trained)})
    judge.passage_budget()
    assert judge.describe()["resolved"]["claim_room"] == 16


@pytest.mark.parametrize("value", [-1, "16", 2.5, True])
def test_a_bad_claim_room_in_the_checkpoint_is_an_error(tiny_nli_dir: Path, tmp_path: Path, value: object) -> None:
    bad = with_meta(tiny_nli_dir, tmp_path / "bad", {"claim_room": value})
    with pytest.raises(ConfigError, match=r"conflictscore.json: claim_room must be a whole number >= 0, got"):
        budget(bad)
