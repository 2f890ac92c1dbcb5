"""``dtype=auto``: float32 on every CPU kind (native bf16 mocked both ways); bf16 on a CPU only when given."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conflictscore_local.core.errors import ConfigError
from conflictscore_local.util import devices

CPU = torch.device("cpu")


def test_cpu_flags_read_the_first_flags_line(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nmodel name\t: EPYC\nflags\t\t: fpu avx2 avx512_bf16\n\nprocessor\t: 1\nflags\t\t: fpu\n",
        encoding="utf-8",
    )
    assert devices.cpu_flags(info) == frozenset({"fpu", "avx2", "avx512_bf16"})
    assert devices.cpu_flags(tmp_path / "missing") == frozenset()


def _no_torch_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False, raising=False)


@pytest.mark.parametrize(
    "flags, native, named",
    [
        ({"avx2", "avx512f", "avx512_bf16"}, True, "avx512_bf16"),
        ({"avx2", "amx_bf16", "amx_tile"}, True, "amx_bf16"),
        ({"avx2", "avx512f", "avx512_vnni"}, False, "no avx512_bf16 or amx_bf16 flag"),
        (set(), False, "no avx512_bf16 or amx_bf16 flag"),
    ],
)
def test_native_bf16_from_cpu_flags(monkeypatch: pytest.MonkeyPatch, flags: set, native: bool, named: str) -> None:
    monkeypatch.setattr(devices, "cpu_flags", lambda: frozenset(flags))
    _no_torch_probes(monkeypatch)
    found, why = devices.native_cpu_bf16()
    assert found is native and named in why
    # auto never follows the CPU: the same labels on every machine kind
    assert devices.resolve_dtype("auto", CPU) == (
        torch.float32,
        "auto: float32 on the CPU, the same labels on every CPU kind (bfloat16 is opt-in: dtype=bfloat16)",
    )
    # bf16 when asked for, and the reason says whether this CPU runs it natively
    assert devices.resolve_dtype("bfloat16", CPU) == (torch.bfloat16, f"given ({why})")


def test_native_bf16_from_torch_when_flags_say_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "cpu_flags", lambda: frozenset())
    _no_torch_probes(monkeypatch)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True, raising=False)
    assert devices.native_cpu_bf16() == (True, "the CPU has native bf16 (torch reports AMX)")


def test_auto_and_float_dtypes_on_cpu_never_detect(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> tuple[bool, str]:
        raise AssertionError("detection ran")

    monkeypatch.setattr(devices, "native_cpu_bf16", boom)
    assert devices.resolve_dtype("auto", CPU)[0] == torch.float32
    assert devices.resolve_dtype("auto", torch.device("mps")) == (torch.float32, "auto: float32 on mps")
    assert devices.resolve_dtype("float32", CPU) == (torch.float32, "given")
    assert devices.torch_dtype("float16", CPU) == torch.float16
    with pytest.raises(ConfigError, match="allowed: auto, float32, bfloat16, float16"):
        devices.resolve_dtype("fp8", CPU)
