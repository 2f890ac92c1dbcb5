"""``runtime=openvino``: the default judge's ONNX export compiled by OpenVINO gives the PyTorch
judge's labels at float32 on every CPU kind (the precision set, never OpenVINO's own default, bf16
on AMX machines), bfloat16 only where the CPU has it, and a spec of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.util import devices

for module in ("openvino", "onnxruntime", "onnx", "onnxscript"):
    pytest.importorskip(module)

REPO = Path(__file__).resolve().parents[2]
DEFAULT_JUDGE = REPO / "models" / "default-judge"
TOLERANCE = 1e-4
"""The most any class probability may differ between OpenVINO fp32 and PyTorch: the export check's tolerance."""

pytestmark = [
    pytest.mark.skipif(
        not any((DEFAULT_JUDGE / f).is_file() for f in ("model.packed.safetensors", "model.safetensors")),
        reason="models/default-judge is not built",
    ),
    pytest.mark.slow,
]  # the default judge exported to ONNX, compiled by OpenVINO


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("openvino-exports")


def build(export_dir: Path, **args: Any) -> Any:
    return registry.build("judge", "nli", {"model": str(DEFAULT_JUDGE), "export_dir": str(export_dir), **args})


@pytest.fixture(scope="module")
def by_torch(export_dir: Path, bench_pairs: list) -> list:
    return build(export_dir, runtime="torch").judge(bench_pairs)


def test_float32_gives_the_torch_labels_on_real_pairs_whatever_openvinos_default(
    export_dir: Path, bench_pairs: list, by_torch: list
) -> None:
    import openvino as ov

    judge = build(export_dir, runtime="openvino")
    got = judge.judge(bench_pairs)
    assert len(got) == len(bench_pairs) == 96
    assert {j.label for j in by_torch} >= {"SUPPORT", "IRRELEVANT"}  # real pairs, not one class
    assert [j.label for j in got] == [j.label for j in by_torch]
    worst = max(abs(a.probs[k] - b.probs[k]) for a, b in zip(by_torch, got) for k in a.probs)
    assert worst <= TOLERANCE
    assert [j.note for j in got] == [j.note for j in by_torch]  # the same inputs, truncation included
    resolved = judge.describe()["resolved"]
    assert (resolved["runtime"], resolved["dtype"], resolved["openvino_precision"]) == ("openvino", "float32", "f32")
    assert resolved["openvino"] == ov.__version__ and resolved["onnx_model"].endswith("model.onnx")
    assert judge.stats()["batches"] >= 1


def test_the_spec_names_the_runtime_and_its_precision(export_dir: Path) -> None:
    torch_spec = build(export_dir, runtime="torch").spec()
    onnx_spec = build(export_dir, runtime="onnx").spec()
    fp32 = build(export_dir, runtime="openvino").spec()
    assert build(export_dir, runtime="openvino", dtype="float32").spec() == fp32
    bf16 = build(export_dir, runtime="openvino", dtype="bfloat16").spec()  # the spec loads nothing, refuses nothing
    assert (fp32["runtime"], fp32["dtype"], fp32["quantization"]) == ("openvino", "float32", None)
    assert (bf16["runtime"], bf16["dtype"]) == ("openvino", "bfloat16")
    assert len({repr(sorted(s.items())) for s in (torch_spec, onnx_spec, fp32, bf16)}) == 4  # cache keys apart
    same = {k: v for k, v in fp32.items() if k not in ("runtime",)}
    assert same == {k: v for k, v in onnx_spec.items() if k != "runtime"}


def test_bfloat16_is_refused_on_a_cpu_without_it(
    export_dir: Path, bench_pairs: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(devices, "native_cpu_bf16", lambda: (False, "no native bf16 on this CPU (no flag)"))
    judge = build(export_dir, runtime="openvino", dtype="bfloat16")
    with pytest.raises(
        ConfigError,
        match=r"^judge nli: runtime=openvino dtype=bfloat16 needs a CPU with native bf16, "
        r"and no native bf16 on this CPU \(no flag\); use dtype=float32$",
    ):
        judge.judge(bench_pairs[:1])


@pytest.mark.skipif(not devices.native_cpu_bf16()[0], reason="the CPU has no native bf16 (AVX512-BF16 or AMX)")
def test_bfloat16_runs_at_bf16_where_the_cpu_has_it(export_dir: Path, bench_pairs: list, by_torch: list) -> None:
    judge = build(export_dir, runtime="openvino", dtype="bfloat16")
    got = judge.judge(bench_pairs)
    resolved = judge.describe()["resolved"]
    assert (resolved["dtype"], resolved["openvino_precision"]) == ("bfloat16", "bf16")
    shifts = [abs(a.probs[k] - b.probs[k]) for a, b in zip(by_torch, got) for k in a.probs]
    assert 0 < max(shifts) < 0.1  # bf16 moves probabilities, a little


def test_bad_combinations_are_refused(export_dir: Path) -> None:
    with pytest.raises(ConfigError, match="int8=true needs runtime=onnx"):
        build(export_dir, runtime="openvino", int8=True)
    with pytest.raises(ConfigError, match="runtime=openvino runs on the CPU; device=cuda needs runtime=torch"):
        build(export_dir, runtime="openvino", device="cuda").spec()
    with pytest.raises(
        ConfigError,
        match=r"runtime=openvino runs dtype=float32 or bfloat16 \(auto: float32\); "
        r"dtype=float16 needs runtime=torch",
    ):
        build(export_dir, runtime="openvino", dtype="float16").spec()
