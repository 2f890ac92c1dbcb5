"""Torch devices and dtypes, as the ``device`` and ``dtype`` arguments of the local backends name them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:
    import torch

DEVICE_PATTERN = re.compile(r"auto|cpu|mps|cuda(:\d+)?")
DTYPES: tuple[str, ...] = ("auto", "float32", "bfloat16", "float16")


def check_device(device: str) -> None:
    """``ValueError`` unless ``device`` is auto, cpu, mps, cuda or cuda:N."""
    if not DEVICE_PATTERN.fullmatch(device):
        raise ValueError(f"device {device!r} is not allowed; allowed: auto, cpu, mps, cuda, cuda:N")


def torch_device(device: str) -> "torch.device":
    """``auto`` → the first CUDA device when there is one, else the CPU."""
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise BackendUnavailable(f"device {device!r} asked for, but torch sees no CUDA device here")
    return torch.device(device)


CPU_BF16_FLAGS: tuple[str, ...] = ("avx512_bf16", "amx_bf16")
"""The /proc/cpuinfo flags of x86 CPUs that run bf16 matmuls natively (AVX512-BF16, AMX)."""
CPUINFO = Path("/proc/cpuinfo")


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The CPU's feature flags (the first ``flags`` line of /proc/cpuinfo); empty where unreadable."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def native_cpu_bf16() -> tuple[bool, str]:
    """Whether this CPU multiplies bf16 natively, and why that was decided.

    Native means AVX512-BF16 or AMX, found in /proc/cpuinfo's flags or reported by torch.
    Without them torch emulates bf16 and it runs far slower than float32 (an AVX2-only EPYC:
    9 vs 56 GFLOP/s, ``benchmarks/results/speed/throughput_peers.md``), so ``auto`` must not pick it.
    """
    import torch

    found = [f for f in CPU_BF16_FLAGS if f in cpu_flags()]
    if found:
        return True, f"the CPU has native bf16 ({', '.join(found)} in /proc/cpuinfo)"
    probes = (("_is_avx512_bf16_supported", "AVX512-BF16"), ("_is_amx_tile_supported", "AMX"))
    for probe, what in probes:
        fn = getattr(getattr(torch, "cpu", None), probe, None)
        if fn is not None and fn():
            return True, f"the CPU has native bf16 (torch reports {what})"
    return False, (
        f"no native bf16 on this CPU (no {' or '.join(CPU_BF16_FLAGS)} flag; torch capability "
        f"{torch.backends.cpu.get_cpu_capability()}): emulated bf16 runs slower than float32"
    )


def resolve_dtype(dtype: str, device: "torch.device") -> tuple["torch.dtype", str]:
    """The torch dtype ``dtype`` stands for on ``device``, and why (recorded in summaries).

    ``auto`` → bfloat16 on a GPU that supports it, float16 on other GPUs, and float32 on the
    CPU whatever the CPU: a result must not depend on the machine kind unless the user asks
    for it. bfloat16 on a CPU is opt-in (``dtype=bfloat16``); the reason says whether this CPU
    runs it natively (:func:`native_cpu_bf16`), where it is faster and changes a few labels
    (``docs/speed.md``), or emulates it, where it is slower than float32.
    """
    import torch

    if dtype not in DTYPES:
        raise ConfigError(f"dtype {dtype!r} is not allowed; allowed: {', '.join(DTYPES)}")
    if dtype != "auto":
        if device.type == "cpu" and dtype == "bfloat16":
            native, why = native_cpu_bf16()
            return torch.bfloat16, f"given ({why})"
        return getattr(torch, dtype), "given"
    if device.type == "cuda":
        if torch.cuda.is_bf16_supported():
            return torch.bfloat16, "auto: the GPU supports bf16"
        return torch.float16, "auto: the GPU has no bf16, float16 instead"
    if device.type == "cpu":
        return torch.float32, (
            "auto: float32 on the CPU, the same labels on every CPU kind (bfloat16 is opt-in: dtype=bfloat16)"
        )
    return torch.float32, f"auto: float32 on {device.type}"


def torch_dtype(dtype: str, device: "torch.device") -> "torch.dtype":
    """:func:`resolve_dtype` without the reason."""
    return resolve_dtype(dtype, device)[0]
