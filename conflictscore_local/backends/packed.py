"""Packed checkpoints: a judge whose input word embeddings are stored as int8 rows with one scale each.

The word-embedding matrix is half of a small encoder (30,522 × 384 of MiniLM's 22.7 M parameters).
Stored as int8 with a float32 scale per row it takes a quarter of its float16 size, which keeps the
bundled judge and the whole repository small enough to travel (the GPU box takes 64 MiB). Nothing
is approximated at run time: a judge trained with ``train-judge fit --int8-embeddings`` had its
embeddings replaced by their int8 round trip (:func:`round_trip`) and frozen before its first step,
so the packed file holds exactly the values it was trained and evaluated with.

Layout of a packed folder: ``model.packed.safetensors`` instead of ``model.safetensors`` (so that a
loader that does not know the format finds no weights and fails loudly instead of starting from
random embeddings), with ``<name>.int8`` and ``<name>.scale`` in place of the embedding ``<name>``
and every other tensor as saved. :func:`load_state_dict` gives the float state dict,
:func:`unpack` writes a plain ``transformers`` folder (for runtimes and peers that read the folder
themselves: vLLM, sentence-transformers).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError

PACKED_WEIGHTS = "model.packed.safetensors"
PLAIN_WEIGHTS = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
FORMAT = "conflictscore-int8-rows/1"
INT8_SUFFIX, SCALE_SUFFIX = ".int8", ".scale"


def quantize_rows(weight: Any) -> tuple[Any, Any]:
    """``(q, scale)``: int8 rows and a float32 scale per row, ``q * scale`` ≈ ``weight``.

    Each scale is the power of two that puts the row's largest magnitude within ±127 (an all-zero row
    has scale 1): ``q * scale`` is then exact in float32 and float16, and quantizing it again gives the
    same ``q`` and ``scale`` (the round trip is idempotent), so a checkpoint saved in float16 still
    holds its int8 values exactly."""
    import torch

    w = weight.detach().to(torch.float32)
    amax = w.abs().amax(dim=1, keepdim=True)
    exponent = torch.ceil(torch.log2(torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))))
    scale = torch.pow(2.0, exponent)
    q = torch.clamp(torch.round(w / scale), -127, 127).to(torch.int8)
    return q, scale.squeeze(1).contiguous()


def dequantize_rows(q: Any, scale: Any) -> Any:
    """The float32 matrix ``q * scale`` (one scale per row)."""
    import torch

    return q.to(torch.float32) * scale.to(torch.float32).unsqueeze(1)


def round_trip(weight: Any) -> Any:
    """``weight`` replaced by its int8 round trip: the values a packed checkpoint stores exactly."""
    return dequantize_rows(*quantize_rows(weight))


def is_packed(folder: str | Path) -> bool:
    """Whether ``folder`` holds a packed checkpoint."""
    return (Path(folder) / PACKED_WEIGHTS).is_file()


def load_state_dict(folder: str | Path) -> dict[str, Any]:
    """The float state dict of a packed checkpoint (int8 rows dequantized to float32; the other
    tensors as stored)."""
    from safetensors import safe_open

    path = Path(folder) / PACKED_WEIGHTS
    out: dict[str, Any] = {}
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        if meta.get("format_conflictscore") != FORMAT:
            raise ConfigError(
                f"{path}: not a packed checkpoint of format {FORMAT!r} "
                f"(metadata format_conflictscore = {meta.get('format_conflictscore')!r})"
            )
        names = list(f.keys())
        tensors = {k: f.get_tensor(k) for k in names}
    for k, v in tensors.items():
        if k.endswith(INT8_SUFFIX):
            base = k.removesuffix(INT8_SUFFIX)
            if base + SCALE_SUFFIX not in tensors:
                raise ConfigError(f"{path}: {k} has no {base + SCALE_SUFFIX}")
            out[base] = dequantize_rows(v, tensors[base + SCALE_SUFFIX])
        elif not k.endswith(SCALE_SUFFIX):
            out[k] = v
    return out


def pack(state_dict: dict[str, Any], names: tuple[str, ...], out: str | Path, *, dtype: str = "float16") -> Path:
    """Write ``state_dict`` as a packed checkpoint file in folder ``out``: each of ``names`` (2-D) as int8
    rows and scales, the other floating tensors in ``dtype``. Raises ``ConfigError`` when one of ``names``
    is not already its own int8 round trip (a model not trained with its embeddings packed would
    change)."""
    import torch
    from safetensors.torch import save_file

    cast = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16}
    if dtype not in cast:
        raise ConfigError(f"pack dtype {dtype!r}; allowed: {', '.join(cast)}")
    tensors: dict[str, Any] = {}
    for k, v in state_dict.items():
        if k in names:
            q, scale = quantize_rows(v)
            if not torch.equal(dequantize_rows(q, scale), v.to(torch.float32)):
                err = (dequantize_rows(q, scale) - v.to(torch.float32)).abs().max().item()
                raise ConfigError(
                    f"{k} is not its own int8 round trip (max difference {err:.3g}): pack only a "
                    "judge trained with --int8-embeddings, whose embeddings were packed before training"
                )
            tensors[k + INT8_SUFFIX], tensors[k + SCALE_SUFFIX] = q.contiguous(), scale
        else:
            tensors[k] = (v.to(cast[dtype]) if v.is_floating_point() else v).contiguous()
    missing = [n for n in names if n not in state_dict]
    if missing:
        raise ConfigError(f"pack: no tensor {missing[0]!r} in the state dict")
    path = Path(out) / PACKED_WEIGHTS
    save_file(
        tensors,
        str(path),
        metadata={"format_conflictscore": FORMAT, "float_dtype": dtype, "int8_rows": json.dumps(list(names))},
    )
    return path


WORD_EMBEDDINGS_SUFFIX = "word_embeddings.weight"
"""The input word-embedding matrix of BERT-family checkpoints (``*.embeddings.word_embeddings.weight``)."""


def pack_folder(folder: str | Path, out: str | Path, *, dtype: str = "float16") -> dict[str, Any]:
    """Write the plain checkpoint ``folder`` (``model.safetensors``) as a packed one in the new folder ``out``:
    its word embeddings as int8 rows, every other floating tensor in ``dtype``, the small files copied
    (``tokenizer.json`` rewritten without indentation: the same JSON, a third smaller).
    Refused (``ConfigError``) unless the embeddings already are their own int8 round trip (a judge
    trained with ``--int8-embeddings``). Returns what was written (file, bytes, the packed tensors)."""
    from safetensors.torch import load_file

    src, dst = Path(folder), Path(out)
    weights = src / PLAIN_WEIGHTS
    if not weights.is_file():
        raise ConfigError(f"{src}: no {PLAIN_WEIGHTS} to pack")
    if dst.exists():
        raise ConfigError(f"-o {dst} exists; name a new folder")
    state = load_file(str(weights))
    names = tuple(k for k in state if k.endswith(WORD_EMBEDDINGS_SUFFIX))
    if not names:
        raise ConfigError(f"{weights}: no tensor named *{WORD_EMBEDDINGS_SUFFIX} (not a BERT-family checkpoint)")
    dst.mkdir(parents=True)
    try:
        path = pack(state, names, dst, dtype=dtype)
    except BaseException:
        shutil.rmtree(dst, ignore_errors=True)
        raise
    for f in src.iterdir():
        if f.is_file() and f.name == TOKENIZER_FILE:  # the same tokenizer, its JSON without indentation: 1/3 smaller
            text = json.dumps(json.loads(f.read_text(encoding="utf-8")), ensure_ascii=False, separators=(",", ":"))
            (dst / f.name).write_text(text, encoding="utf-8")
        elif f.is_file() and f.name != PLAIN_WEIGHTS and not f.name.endswith(".bin"):
            shutil.copyfile(f, dst / f.name)
    return {
        "file": path.name,
        "bytes": path.stat().st_size,
        "plain_bytes": weights.stat().st_size,
        "int8_rows": list(names),
        "float_dtype": dtype,
    }


def unpack(folder: str | Path, out: str | Path, *, dtype: str = "float32") -> Path:
    """A plain ``transformers`` folder in ``out`` with the packed checkpoint of ``folder``: its small files
    copied, ``model.safetensors`` in ``dtype`` (the dequantized values, exact in float32)."""
    import torch
    from safetensors.torch import save_file

    cast = {"float16": torch.float16, "float32": torch.float32}
    if dtype not in cast:
        raise ConfigError(f"unpack dtype {dtype!r}; allowed: {', '.join(cast)}")
    src, dst = Path(folder), Path(out)
    if not is_packed(src):
        raise ConfigError(f"{src}: no {PACKED_WEIGHTS} (not a packed checkpoint)")
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file() and f.name != PACKED_WEIGHTS:
            shutil.copyfile(f, dst / f.name)
    state = {
        k: (v.to(cast[dtype]) if v.is_floating_point() else v).contiguous() for k, v in load_state_dict(src).items()
    }
    save_file(state, str(dst / PLAIN_WEIGHTS), metadata={"format": "pt"})
    return dst


def from_pretrained(auto_class: Any, folder: str | Path, **kwargs: Any) -> Any:
    """``auto_class.from_pretrained(folder, **kwargs)`` for a plain folder; for a packed one the model is
    built from its config and given the dequantized weights (``dtype`` from ``kwargs``), every weight
    present (``ConfigError`` naming one that is missing or unknown)."""
    import torch
    from transformers import AutoConfig

    if not is_packed(folder):
        return auto_class.from_pretrained(str(folder), **kwargs)
    dtype = kwargs.get("dtype") or torch.float32
    config = AutoConfig.from_pretrained(str(folder))
    model = auto_class.from_config(config, dtype=dtype)
    state = {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in load_state_dict(folder).items()}
    result = model.load_state_dict(state, strict=False)
    buffers = {name for name, _ in model.named_buffers()}
    missing = [k for k in result.missing_keys if k not in buffers]
    if missing or result.unexpected_keys:
        what = f"no tensor {missing[0]!r}" if missing else f"an unknown tensor {result.unexpected_keys[0]!r}"
        raise ConfigError(f"{Path(folder) / PACKED_WEIGHTS}: {what} for {type(model).__name__}")
    if getattr(config, "tie_word_embeddings", False):
        model.tie_weights()
    return model.eval()


def plain_folder(folder: str | Path) -> Path:
    """``folder`` itself when it is a plain checkpoint; for a packed one, its plain float32 copy (:func:`unpack`)
    in the cache home (``unpacked/<content hash>``), written once, for the runtimes and peers that read a
    folder themselves (vLLM, sentence-transformers)."""
    from ..util.jsonl import file_sha256
    from ..util.locations import cache_home

    src = Path(folder)
    if not is_packed(src):
        return src
    digest = file_sha256(src / PACKED_WEIGHTS)[:16]
    target = cache_home() / "unpacked" / f"{src.name}-{digest}"
    if (target / PLAIN_WEIGHTS).is_file():
        return target
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    unpack(src, tmp)
    try:
        tmp.rename(target)
    except OSError:  # another process finished first: its copy is the same
        shutil.rmtree(tmp, ignore_errors=True)
    return target


__all__ = [
    "FORMAT",
    "PACKED_WEIGHTS",
    "PLAIN_WEIGHTS",
    "WORD_EMBEDDINGS_SUFFIX",
    "dequantize_rows",
    "from_pretrained",
    "is_packed",
    "load_state_dict",
    "pack",
    "pack_folder",
    "plain_folder",
    "quantize_rows",
    "round_trip",
    "unpack",
]
