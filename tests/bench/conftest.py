"""ConflictBench fixtures: the bench built once per session from the shared data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def bench_items(shared_data: Path) -> list[dict[str, Any]]:
    """Every default source of the shared data, built once."""
    from conflictscore_local.bench import build_bench

    return build_bench(shared_data)


@pytest.fixture(scope="session")
def bench_file(bench_items: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built bench written as JSONL, as ``bench build`` writes it."""
    from conflictscore_local.jobs import write_jsonl_atomic

    path = tmp_path_factory.mktemp("bench") / "conflictbench.jsonl"
    write_jsonl_atomic(path, bench_items)
    return path


@pytest.fixture()
def by_id(bench_items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {it["id"]: it for it in bench_items}


@pytest.fixture(scope="session")
def loaded_items(shared_data: Path) -> list[dict[str, Any]]:
    """Every default source as its loader maps it: the claim-only split, before train items
    give way to dev/test documents (the leak-free build removes some train documents)."""
    from conflictscore_local.bench import build_bench

    return build_bench(shared_data, leak_free=False)


@pytest.fixture()
def loaded_by_id(loaded_items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {it["id"]: it for it in loaded_items}
