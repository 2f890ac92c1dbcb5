"""Torch devices and dtypes, as the ``device`` and ``dtype`` arguments of the local backends name them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .errors import BackendUnavailable, ConfigError

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


def torch_dtype(dtype: str, device: "torch.device") -> "torch.dtype":
    """``auto`` → bfloat16 on a GPU that supports it, float16 on other GPUs, float32 elsewhere."""
    import torch

    if dtype not in DTYPES:
        raise ConfigError(f"dtype {dtype!r} is not allowed; allowed: {', '.join(DTYPES)}")
    if dtype != "auto":
        return getattr(torch, dtype)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32
