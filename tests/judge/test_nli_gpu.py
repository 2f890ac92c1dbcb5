"""The ``nli`` judge on a CUDA GPU: the same labels as on the CPU, and bf16/fp16 chosen by
``dtype=auto``. Marked ``gpu``: skipped where torch sees no CUDA device (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.types import Claim, Pair, Passage

pytestmark = pytest.mark.gpu


def pairs() -> list[Pair]:
    return [
        Pair(
            Claim("it", k, f"The bridge opened in {1930 + k}."),
            Passage("it", "d", 0, "The bridge over the river opened in 1932. " * (1 + k % 5)),
        )
        for k in range(24)
    ]


def test_cuda_labels_match_the_cpu(spread_nli: Callable[[str], Path]) -> None:
    import torch

    path = spread_nli("bert")
    cpu = registry.build("judge", "nli", {"model": str(path), "device": "cpu", "dtype": "float32"})
    gpu = registry.build("judge", "nli", {"model": str(path), "device": "cuda", "dtype": "float32"})
    on_cpu, on_gpu = cpu.judge(pairs()), gpu.judge(pairs())
    assert gpu.describe()["resolved"]["device"].startswith("cuda")
    assert [j.label for j in on_gpu] == [j.label for j in on_cpu]
    for a, b in zip(on_cpu, on_gpu):
        assert b.probs == pytest.approx(a.probs, abs=1e-3)
    auto = registry.build("judge", "nli", {"model": str(path), "device": "cuda"})
    auto.judge(pairs()[:2])
    expected = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    assert auto.describe()["resolved"]["dtype"] == expected and auto.spec()["dtype"] == expected
