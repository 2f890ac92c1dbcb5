"""``--judge ray`` with real vLLM on the CPU: the ``vllm`` LLM judge through Ray Data's own LLM batch
API (``ray.data.llm.build_processor``, one engine replica on one CPU bundle), and the ``nli`` judge
with ``runtime=vllm`` on a Ray actor that holds its own ``vllm.LLM``. Each gives the rows an
in-process run of the same judge gives. One local Ray instance for the module (4 logical CPUs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.types import Claim, Pair, Passage

from .conftest import EAGER, SKIP_NO_VLLM, SMOLLM2

pytest.importorskip("vllm", reason=SKIP_NO_VLLM)
ray = pytest.importorskip("ray", reason="the ray extra is not installed")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

DOC = "The bridge over the river opened in 1932 after four years of work."
CLAIMS = ["The bridge opened in 1932.", "The bridge opened in 1934.", "The bridge is painted red."]


@pytest.fixture(scope="module")
def local_ray(vllm_cpu: Any) -> Iterator[Any]:
    ray.init(num_cpus=4, include_dashboard=False, logging_level="WARNING")
    try:
        yield ray
    finally:
        ray.shutdown()


def pairs() -> list[Pair]:
    return [Pair(Claim("it", k, c), Passage("it", "d1", 0, DOC)) for k, c in enumerate(CLAIMS)]


def test_the_vllm_judge_through_ray_data_llm_on_a_cpu(local_ray: Any, smollm2_dir: Path) -> None:
    args = {"model": str(smollm2_dir), "min_label_mass": 0.0, **SMOLLM2}  # `single`: the session's engine
    wrapped = registry.build("judge", "ray", {"judge": {"name": "vllm", **args}, "workers": 1, "batch_size": 4})
    got = wrapped.judge(pairs())
    assert wrapped.inner().generator().processor_config()["placement_group_config"] == {
        "bundle_per_worker": {"CPU": 1.0}
    }
    single = registry.build("judge", "vllm", args)
    try:
        want = single.judge(pairs())
    finally:
        single.generator().close()
    assert [j.label for j in got] == [j.label for j in want]
    assert all(j.probs is not None for j in got)
    assert max(abs(a.probs[k] - b.probs[k]) for a, b in zip(got, want) for k in a.probs) < 1e-4
    assert wrapped.spec() == single.spec()


def test_the_nli_judge_on_vllm_on_a_ray_actor(local_ray: Any, default_judge: Path, real_pairs: list) -> None:
    args = {"model": str(default_judge), "runtime": "vllm", "runtime_args": {"engine_args": EAGER}}
    wrapped = registry.build("judge", "ray", {"judge": {"name": "nli", **args}, "workers": 1, "batch_size": 16})
    some = real_pairs[:24]
    got = wrapped.judge(some)
    want = registry.build("judge", "nli", {"model": str(default_judge), "runtime": "torch"}).judge(some)
    assert [j.label for j in got] == [j.label for j in want]
    assert max(abs(a.probs[k] - b.probs[k]) for a, b in zip(got, want) for k in a.probs) <= 1e-4
    assert wrapped.spec()["runtime"] == "vllm"
