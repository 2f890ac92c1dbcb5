"""``runtime=compile``: the committed default judge under ``torch.compile`` gives the PyTorch
judge's labels and probabilities, through batches of several shapes; a platform where compiling
fails is told so before any pair is judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.core.types import Claim, Pair, Passage
from conflictscore_local.judge.nli.runtimes import resolve_runtime
from conflictscore_local.judge.nli.runtimes.base import RUNTIME_ENV

REPO = Path(__file__).resolve().parents[2]
DEFAULT_JUDGE = REPO / "models" / "default-judge"

pytestmark = pytest.mark.skipif(
    not any((DEFAULT_JUDGE / f).is_file() for f in ("model.packed.safetensors", "model.safetensors")),
    reason="models/default-judge is not built",
)

PASSAGES = (
    "The bridge opened to traffic in 1934 after four years of work.",
    "Records from the city archive show that the bridge was opened in 1932, two years ahead of plan, and that "
    "its main span was then the longest in the country.",
    "Coffee is grown in Brazil.",
    "The council approved the budget on Tuesday.",
)
CLAIMS = ("The bridge opened in 1932.", "The bridge opened in 1934 and was built by the city.")


def pairs() -> list[Pair]:
    """7 distinct pairs: batches of 3, 3 and 1 at ``batch_size=3`` (a batch of one is its own graph)."""
    return [
        Pair(Claim("i", k, c), Passage("i", f"d{j}", 0, p))
        for k, c in enumerate(CLAIMS)
        for j, p in enumerate(PASSAGES)
    ][:7]


def build(**args: Any) -> Any:
    return registry.build("judge", "nli", {"model": str(DEFAULT_JUDGE), "batch_size": 3, "dtype": "float32", **args})


@pytest.mark.slow  # compiling the judge takes seconds to tens of seconds on 2 cores
def test_compiled_judge_gives_the_torch_labels_and_probabilities() -> None:
    eager, compiled = build(runtime="torch"), build(runtime="compile")
    by_eager, by_compiled = eager.judge(pairs()), compiled.judge(pairs())
    assert [j.label for j in by_compiled] == [j.label for j in by_eager]
    assert {j.label for j in by_eager} >= {"SUPPORT", "IRRELEVANT"}  # real labels, not one class
    worst = max(abs(a.probs[k] - b.probs[k]) for a, b in zip(by_eager, by_compiled) for k in a.probs)
    assert worst <= 1e-5  # float32: measured at most 2e-6 on 326 real judgments (cpu_bf16.md)
    assert compiled.stats()["batches"] == 3  # 3 + 3 + 1
    assert type(compiled.runtime().model()).__name__ == "OptimizedModule"  # the compiled module ran them
    assert type(eager.runtime().model()).__name__ != "OptimizedModule"
    assert compiled.spec()["runtime"] == "compile" and eager.spec()["runtime"] == "torch"  # keyed apart
    assert compiled.describe()["resolved"]["compiled"] == "torch.compile(dynamic=True)"


def test_a_failed_compile_is_backend_unavailable_before_any_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """At load (here torch.compile itself refuses): one line with the cause and the way out."""
    import torch

    def refuse(*_: Any, **__: Any) -> Any:
        raise RuntimeError("Compiler: cc is not found\nmore detail")

    monkeypatch.setattr(torch, "compile", refuse)
    judge = build(runtime="compile")
    with pytest.raises(
        BackendUnavailable,
        match=r"judge nli: runtime=compile: torch.compile failed: RuntimeError: "
        r"Compiler: cc is not found; use runtime=torch$",
    ):
        judge.judge(pairs())
    assert judge.stats().get("batches", 0) == 0


def test_the_environment_may_choose_compile_and_nothing_else_new(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RUNTIME_ENV, "compile")
    assert resolve_runtime("auto", "cpu") == "compile"
    assert resolve_runtime("torch", "cpu") == "torch"  # an explicit runtime wins over the environment
    monkeypatch.setenv(RUNTIME_ENV, "inductor")
    with pytest.raises(ConfigError, match=r"allowed: torch, compile, onnx, native, openvino$"):
        resolve_runtime("auto", "cpu")


def test_a_compile_error_mid_run_is_backend_unavailable_and_other_errors_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    from conflictscore_local.judge.nli.runtimes import torch as rt

    class InductorError(Exception):  # as torch._inductor raises, named by its module
        pass

    InductorError.__module__ = "torch._inductor.exc"

    def fails(error: Exception) -> Any:
        def forward(*_: Any, **__: Any) -> Any:
            raise error

        return forward

    monkeypatch.setattr(
        rt.TorchRuntime,
        "classify",
        lambda self, feats, on_done=None: fails(InductorError("C++ compile error\ntraceback"))(),
    )
    judge = build(runtime="compile")
    with pytest.raises(
        BackendUnavailable,
        match=r"torch.compile failed: InductorError: C\+\+ compile error; use "
        r"runtime=torch$",
    ):
        judge.runtime().classify([{"input_ids": [1, 2]}])
    monkeypatch.setattr(
        rt.TorchRuntime, "classify", lambda self, feats, on_done=None: fails(RuntimeError("out of memory"))()
    )
    with pytest.raises(RuntimeError, match="out of memory"):  # not a compile failure: unchanged
        judge.runtime().classify([{"input_ids": [1, 2]}])
