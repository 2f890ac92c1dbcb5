"""The one table of data sets (``formats/sources.DATA_SOURCES``, the registry's ``data_source``
namespace): every row loads, ConflictBench, training and nli_extra read their sets from it, and a
source added to the namespace is built by ``bench build`` and read by ``train-judge``'s reader."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from conflictscore_local.backends.registry import REGISTRY
from conflictscore_local.bench import BENCH_SOURCES, DEFAULT_SOURCES, build_bench, make_item
from conflictscore_local.bench.sources import ClimateFeverOptions
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.formats.sources import DATA_SOURCES, USES, DataSource, NoOptions, by_use
from conflictscore_local.train import nli_extra
from conflictscore_local.train.sources import LabelledPair, read_source


def test_every_row_names_a_loader_and_a_use() -> None:
    assert REGISTRY["data_source"].table() is DATA_SOURCES
    for name, s in DATA_SOURCES.items():
        assert s.name == name and s.use in USES, name
        assert callable(s.loader()), name
        assert isinstance(s.Options, type), name
    assert list(by_use(DATA_SOURCES, "bench"))[:7] == [
        "ramdocs",
        "contraqa_en555",
        "climate_fever",
        "macnoise",
        "ambigdocs",
        "conflictingqa",
        "contraqa_pan",
    ]  # what ships, first
    assert DEFAULT_SOURCES[:4] == ("ramdocs", "contraqa_en555", "climate_fever", "macnoise")
    assert BENCH_SOURCES["climate_fever"].Options is ClimateFeverOptions
    assert BENCH_SOURCES["ramdocs"].Options is NoOptions and BENCH_SOURCES["ambigdocs"].default_path is None


def test_nli_extra_sets_are_the_tables_rows_under_nli_extra() -> None:
    sets = nli_extra.extra_sets()
    assert all(s.path.startswith("nli_extra/") for s in sets.values())
    assert sets["scone_train"].kwargs == {"split": "train"} and sets["scone_train"].loader() is nli_extra.load_scone
    assert "covidfact" not in sets and "ramdocs" not in sets


def _pairs(path: Path, *, source: str) -> Iterator[LabelledPair]:
    for row in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
        yield LabelledPair(row["c"], row["p"], "SUPPORT", source)


def _items(path: Path, options: Any) -> Iterator[dict[str, Any]]:
    for k, row in enumerate(map(json.loads, path.read_text(encoding="utf-8").splitlines())):
        yield make_item(
            source="mine",
            id=f"mine:{k}",
            question=row["q"],
            claims=[row["c"]],
            documents=[{"id": "d0", "text": row["p"]}],
            gold_labels=[["SUPPORT"]],
            conflict_type="contradiction",
            split_key=row["q"],
        )


def test_a_registered_source_is_read_by_name_with_its_own_arguments(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "pairs.jsonl").write_text(json.dumps({"c": "A claim.", "p": "A passage."}) + "\n")
    row = DataSource("mine_pairs", _pairs, "mine/pairs.jsonl", use="train", kwargs={"source": "mine"})
    with REGISTRY["data_source"].registered("mine_pairs", row):
        assert list(read_source(tmp_path, "mine_pairs")) == [LabelledPair("A claim.", "A passage.", "SUPPORT", "mine")]
        assert [p.source for p in read_source(tmp_path, "mine_pairs", source="other")] == ["other"]
        assert "mine_pairs" not in BENCH_SOURCES
    with pytest.raises(ConfigError, match="unknown data_source 'mine_pairs'; allowed: "):
        read_source(tmp_path, "mine_pairs")


def test_a_registered_bench_source_is_built_by_bench_build(tmp_path: Path) -> None:
    src = tmp_path / "mine.jsonl"
    src.write_text(json.dumps({"q": "Is it so?", "c": "It is so.", "p": "It is so, they said."}) + "\n")
    with REGISTRY["data_source"].registered("mine", DataSource("mine", _items, None, "my items")):
        assert BENCH_SOURCES["mine"].description == "my items"
        items = build_bench(None, only=["mine"], sources={"mine": src})
        assert [(it["id"], it["claims"]) for it in items] == [("mine:0", ["It is so."])]
    with pytest.raises(ConfigError, match="--source: unknown source 'mine'; allowed: ramdocs, contraqa_en555"):
        build_bench(None, only=["mine"], sources={"mine": src})


def test_a_source_without_a_file_here_says_so() -> None:
    with pytest.raises(ConfigError, match="data source 'ambigdocs' has no file in the shared data; give one"):
        DATA_SOURCES["ambigdocs"].read_from(".")


def test_a_name_declared_twice_or_an_unknown_use_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from conflictscore_local.formats.sources import SourceTable

    mod = types.ModuleType("fake_rows")
    mod.TWICE = (DataSource("a", _pairs, "a.jsonl", use="train"), DataSource("a", _pairs, "b.jsonl", use="eval"))
    mod.ODD = (DataSource("b", _pairs, "b.jsonl", use="training"),)
    monkeypatch.setitem(sys.modules, "fake_rows", mod)
    with pytest.raises(ValueError, match=r"^data source 'a' declared twice \(fake_rows:TWICE\)$"):
        len(SourceTable(["fake_rows:TWICE"]))
    with pytest.raises(
        ValueError,
        match=r"^data source 'b' \(fake_rows:ODD\): use 'training'; allowed: bench, train, "
        r"eval, corpus$",
    ):
        list(SourceTable(["fake_rows:ODD"]))
