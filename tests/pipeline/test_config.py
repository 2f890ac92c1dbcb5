"""One config from defaults, a TOML file and flags; choosing another backend drops the old one's arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from conflictscore_local.core.errors import ConfigError
from conflictscore_local.pipeline.config import RunConfig, apply_overrides

REPO = Path(__file__).resolve().parents[2]


def test_bundled_example_config_loads():
    cfg = RunConfig.from_toml(REPO / "examples" / "run.toml")
    assert (cfg.decomposer.name, cfg.pruner.name, cfg.judge.name) == ("spacy", "embedding", "nli")
    assert cfg.judge.args == {"max_batch_tokens": 2048}
    assert cfg.aggregate.keep_both is False


def test_layering_and_backend_switch():
    cfg = RunConfig().updated({"judge": {"name": "nli", "model": "m", "batch_size": 8}})
    assert cfg.judge.args == {"model": "m", "batch_size": 8}
    same = cfg.updated({"judge": {"batch_size": 16}})
    assert same.judge.args == {"model": "m", "batch_size": 16}
    other = cfg.updated({"judge": {"name": "openai", "base_url": "http://h"}})
    assert other.judge.args == {"base_url": "http://h"}
    assert cfg.judge.args == {"model": "m", "batch_size": 8}  # the original is untouched


def test_set_overrides_are_typed():
    cfg = apply_overrides(RunConfig(), ["chunk.max_tokens=128", "aggregate.keep_both=true", "judge.device=cuda"])
    assert cfg.chunk.max_tokens == 128 and cfg.aggregate.keep_both is True
    assert cfg.judge.args == {"device": "cuda"}
    with pytest.raises(ConfigError, match=r"\[chunk\]: argument 'max_tokens': expected an integer"):
        apply_overrides(RunConfig(), ["chunk.max_tokens=lots"])
    with pytest.raises(ConfigError, match="SECTION.KEY=VALUE"):
        apply_overrides(RunConfig(), ["threshold=1"])


def test_round_trip_through_json():
    cfg = apply_overrides(RunConfig(), ["judge.model=x", "engine.seed=7"])
    assert RunConfig.from_mapping(cfg.to_json()).to_json() == cfg.to_json()
