"""A judge shipped as its difference from a base model: kept layers, LoRA factors, the head.

A fine-tuned 110M-parameter encoder is over 200 MB even in float16; what training changed
is far smaller. The *delta* folder (``models/<judge>/`` for a judge made this way) holds:

- ``delta.json``: the base (its manifest name or path, and the sha256 of its weights), how many layers the base has and
  which it keeps (in order), and the names of the LoRA pairs;
- ``delta.safetensors``: for each adapted weight ``W`` its factors ``NAME.lora_A`` (r x in)
  and ``NAME.lora_B`` (out x r, the LoRA scaling folded in), and the tensors that replace the
  base's in full (the classification head);
- the judge's ``config.json``, tokenizer files, ``conflictscore.json`` and whatever else
  the judge folder needs beside its weights.

:func:`assemble` rebuilds the judge folder: the base's weights, its kept layers renumbered,
``W + B @ A`` for every pair (computed in float64), the full tensors put in, saved in float16.
The sha256 of every input (the base's lock, the delta's files in its manifest) is checked
before that by the caller (:mod:`.transfer`); the assembled folder then gets a lock of its own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..core.errors import ConfigError

DELTA_FILE = "delta.json"
DELTA_WEIGHTS = "delta.safetensors"
DELTA_FORMAT = 1
ASSEMBLED_WEIGHTS = "model.safetensors"


def spread_layers(total: int, keep: int) -> list[int]:
    """Which of ``total`` layers a ``keep``-layer cut keeps: evenly spread, the first and the last
    always (12 -> 6: 0, 2, 4, 7, 9, 11, the layers DistilBERT initialised its student from)."""
    if not 1 <= keep <= total:
        raise ConfigError(f"--layers {keep}: the base has {total} layers; keep between 1 and {total}")
    if keep == 1:
        return [total - 1]
    return [round(i * (total - 1) / (keep - 1)) for i in range(keep)]


def encoder_layers(model: Any) -> Any:
    """The ``ModuleList`` of an encoder's transformer layers (BERT, RoBERTa, MPNet, DeBERTa: ``encoder.layer``)."""
    layers = getattr(getattr(model.base_model, "encoder", None), "layer", None)
    if layers is None:
        raise ConfigError(f"--layers: {type(model).__name__} has no encoder.layer list to cut")
    return layers


def keep_layers(model: Any, kept: Sequence[int]) -> None:
    """Keep the encoder layers ``kept`` (indices into the base's, in order) in place;
    ``config.num_hidden_layers`` follows, so the saved checkpoint loads as it is."""
    import torch

    layers = encoder_layers(model)
    bad = [i for i in kept if not 0 <= i < len(layers)]
    if bad or not kept:
        raise ConfigError(f"layers {list(kept)}: the base has layers 0..{len(layers) - 1}")
    model.base_model.encoder.layer = torch.nn.ModuleList([layers[i] for i in kept])
    model.config.num_hidden_layers = len(kept)


def lora_factors(peft_model: Any) -> dict[str, Any]:
    """``{"W.lora_A": A, "W.lora_B": scaling * B}`` for every LoRA-adapted weight ``W`` of a peft
    model (named as in the merged model's state dict), in float32 on the CPU."""
    out: dict[str, Any] = {}
    inner = peft_model.get_base_model()
    for name, module in inner.named_modules():
        lora_a = getattr(module, "lora_A", None)
        if not lora_a or "default" not in lora_a:
            continue
        a = lora_a["default"].weight.detach().float().cpu()
        b = module.lora_B["default"].weight.detach().float().cpu() * float(module.scaling["default"])
        out[f"{name}.weight.lora_A"] = a.contiguous()
        out[f"{name}.weight.lora_B"] = b.contiguous()
    if not out:
        raise ConfigError("the model has no LoRA layers to export")
    return out


def low_rank_delta(
    base: Mapping[str, Any], tuned: Mapping[str, Any], rank: int, *, adapted: Sequence[str]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
    """What a fully fine-tuned judge adds to its (cut) base, as a delta: for every weight in ``adapted``
    the rank-``rank`` truncated SVD of ``tuned - base`` (``lora_A`` = the top right singular vectors,
    ``lora_B`` = the left ones times their singular values); every other tensor that differs from the
    base's cast to its dtype (a float16 checkpoint leaves frozen tensors equal at float16), in full.
    Returns (factors, full tensors, and per adapted weight the share of its difference's squared Frobenius
    norm the factors keep)."""
    import torch

    factors: dict[str, Any] = {}
    full: dict[str, Any] = {}
    kept: dict[str, float] = {}
    for key, value in tuned.items():
        if key in adapted and key in base:
            diff = value.double() - base[key].double()
            u, sv, vh = torch.linalg.svd(diff, full_matrices=False)
            r = min(rank, sv.numel())
            factors[f"{key}.lora_A"] = vh[:r].float().contiguous()
            factors[f"{key}.lora_B"] = (u[:, :r] * sv[:r]).float().contiguous()
            total = float(sv.square().sum())
            kept[key] = float(sv[:r].square().sum()) / total if total else 1.0
        elif key not in base or not torch.equal(value, base[key].to(value.dtype)):  # unchanged at the saved dtype
            full[key] = value
    return factors, full, kept


def write_delta(
    folder: Path,
    *,
    base: str,
    base_sha256: str,
    base_layers: int,
    kept: Sequence[int],
    factors: Mapping[str, Any],
    full: Mapping[str, Any],
) -> dict[str, Any]:
    """Write ``delta.json`` and ``delta.safetensors`` into ``folder``; returns the delta record.
    ``base_sha256``: of the base's ``model.safetensors``, which :func:`assemble` requires."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    pairs = sorted(k.removesuffix(".lora_A") for k in factors if k.endswith(".lora_A"))
    tensors = {
        **{k: v.contiguous() for k, v in factors.items()},
        **{f"{k}.full": v.detach().float().cpu().contiguous() for k, v in full.items()},
    }
    save_file(tensors, str(folder / DELTA_WEIGHTS), metadata={"format": str(DELTA_FORMAT)})
    record = {
        "format": DELTA_FORMAT,
        "base": base,
        "base_sha256": base_sha256,
        "base_layers": base_layers,
        "layers": list(kept),
        "lora": pairs,
        "full": sorted(full),
    }
    (folder / DELTA_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def read_delta(folder: Path) -> dict[str, Any]:
    """``delta.json`` of a delta folder, checked; ``ConfigError`` naming the file and the field."""
    path = folder / DELTA_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the delta record: {e}") from None
    if not isinstance(record, dict) or record.get("format") != DELTA_FORMAT:
        raise ConfigError(f"{path}: field 'format': expected {DELTA_FORMAT}")
    checks = (
        ("base", str),
        ("base_sha256", str),
        ("base_layers", int),
        ("layers", list),
        ("lora", list),
        ("full", list),
    )
    for key, kind in checks:
        if not isinstance(record.get(key), kind):
            raise ConfigError(f"{path}: field {key!r}: expected a {kind.__name__}, got {record.get(key)!r}")
    return record


def assemble(base_dir: Path, delta_dir: Path, out_dir: Path) -> dict[str, Any]:
    """Build the judge folder ``out_dir`` from the base checkpoint ``base_dir`` and the delta folder
    ``delta_dir`` (float16 weights); returns the delta record. ``out_dir`` must not exist."""
    import torch
    from safetensors import safe_open
    from transformers import AutoConfig, AutoModelForSequenceClassification

    from ..backends.modelstore.lock import sha256_file

    record = read_delta(delta_dir)
    weights = base_dir / ASSEMBLED_WEIGHTS
    got = sha256_file(weights) if weights.is_file() else "missing"
    if got != record["base_sha256"]:
        raise ConfigError(
            f"{delta_dir / DELTA_FILE}: made for a base whose model.safetensors has sha256 "
            f"{record['base_sha256']}, but {weights} has {got}"
        )
    cfg = AutoConfig.from_pretrained(delta_dir)
    if cfg.num_hidden_layers != len(record["layers"]):
        raise ConfigError(
            f"{delta_dir / 'config.json'}: num_hidden_layers {cfg.num_hidden_layers}, but "
            f"{DELTA_FILE} keeps {len(record['layers'])} layers"
        )
    base_cfg = AutoConfig.from_pretrained(delta_dir, num_hidden_layers=record["base_layers"])
    model = AutoModelForSequenceClassification.from_pretrained(base_dir, config=base_cfg, dtype=torch.float32)
    keep_layers(model, record["layers"])
    state = model.state_dict()
    with safe_open(str(delta_dir / DELTA_WEIGHTS), "pt") as fh:
        names = set(fh.keys())
        for key in record["lora"]:
            if key not in state or f"{key}.lora_A" not in names or f"{key}.lora_B" not in names:
                raise ConfigError(
                    f"{delta_dir / DELTA_WEIGHTS}: no LoRA pair for {key!r} or no such weight in the assembled model"
                )
            a, b = fh.get_tensor(f"{key}.lora_A").double(), fh.get_tensor(f"{key}.lora_B").double()
            state[key] = (state[key].double() + b @ a).float()
        for key in record["full"]:
            if key not in state or f"{key}.full" not in names:
                raise ConfigError(f"{delta_dir / DELTA_WEIGHTS}: no tensor {key!r}, or no such weight in the model")
            state[key] = fh.get_tensor(f"{key}.full")
    model.load_state_dict(state)
    model.config = cfg
    out_dir.mkdir(parents=True)
    model.half().save_pretrained(out_dir)
    (out_dir / "config.json").unlink()
    skip = {DELTA_FILE, DELTA_WEIGHTS}
    for f in sorted(delta_dir.iterdir()):
        if f.is_file() and f.name not in skip:
            shutil.copyfile(f, out_dir / f.name)
    return record
