"""``train-judge delta``: a fully fine-tuned judge as its difference from the base it was cut from.

A judge trained in full changes every weight of its layers; shipped whole, a 6-layer MPNet judge
is over the repository's allowance. The difference of each layer matrix from the base's is kept
at a given rank (its truncated SVD, the factors of a LoRA delta), the tensors that differ
otherwise (head, biases, layer norms, position embeddings) in full: the folder
:func:`..models.derive.assemble` turns back into the judge on top of the staged base, what a
``delta`` manifest ships. What that rank costs in quality is measured by evaluating the
assembled judge beside the original.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from ..backends.modelstore.lock import sha256_file
from ..core.errors import ConfigError
from ..models.derive import (
    ASSEMBLED_WEIGHTS,
    DELTA_FILE,
    DELTA_WEIGHTS,
    encoder_layers,
    keep_layers,
    low_rank_delta,
    write_delta,
)
from ..util.paths import portable
from .loop import TRAINING_RECORD
from .model import MPNET_MANIFEST, resolve_base

SMALL_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "conflictscore.json",
    TRAINING_RECORD,
)


def extract(checkpoint: Path, rank: int, out: Path, base: str | None = None) -> dict[str, Any]:
    """Write the delta of ``checkpoint`` (a ``train-judge fit`` output) from its base into ``out``.

    The kept layers are read from the checkpoint's ``training.json``, and the base too unless
    ``base`` names it (a path: the record keeps paths repository-relative, or outside it only as
    placeholders); ``delta.json`` names the base as ``fit --base`` did. Returns the delta
    record with, per adapted weight, the share of its difference the rank keeps (``energy_kept``).
    """
    import torch
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForSequenceClassification

    record_path = checkpoint / TRAINING_RECORD
    if not record_path.is_file():
        raise ConfigError(f"train-judge delta: {checkpoint} has no {TRAINING_RECORD} (not a train-judge fit output)")
    if out.exists():
        raise ConfigError(f"train-judge delta: -o {out} exists; name a new folder")
    training = json.loads(record_path.read_text(encoding="utf-8"))
    base_info = training["base"]
    arg = base or training["options"]["base"]
    base_path = Path(resolve_base(arg))
    kept = base_info.get("kept_layers") or list(range(base_info.get("layers") or 0))
    cfg = AutoConfig.from_pretrained(checkpoint, num_hidden_layers=base_info["layers"])
    model = AutoModelForSequenceClassification.from_pretrained(base_path, config=cfg, dtype=torch.float32)
    keep_layers(model, kept)
    layers = encoder_layers(model)
    prefix = next(n for n, m in model.named_modules() if m is layers)
    base_state = model.state_dict()
    tuned = load_file(str(checkpoint / ASSEMBLED_WEIGHTS))
    missing = sorted(set(base_state) - set(tuned))
    if missing:
        raise ConfigError(f"train-judge delta: {checkpoint / ASSEMBLED_WEIGHTS} lacks {missing[0]} of its base")
    adapted = [k for k, v in tuned.items() if k.startswith(prefix + ".") and k.endswith(".weight") and v.dim() == 2]
    factors, full, energy = low_rank_delta(base_state, tuned, rank, adapted=adapted)
    out.mkdir(parents=True)
    rec = write_delta(
        out,
        base=MPNET_MANIFEST if arg == "mpnet" else arg,
        base_sha256=sha256_file(base_path / ASSEMBLED_WEIGHTS),
        base_layers=base_info["layers"],
        kept=kept,
        factors=factors,
        full=full,
    )
    for name in SMALL_FILES:
        if (checkpoint / name).is_file():
            shutil.copyfile(checkpoint / name, out / name)
    values = sorted(energy.values())
    size = sum(p.stat().st_size for p in out.iterdir())
    return {
        **rec,
        "rank": rank,
        "files": sorted(p.name for p in out.iterdir()),
        "bytes": size,
        "energy_kept": {
            "min": round(values[0], 4),
            "median": round(values[len(values) // 2], 4),
            "mean": round(sum(values) / len(values), 4),
        },
        "delta": portable(out / DELTA_FILE),
        "weights": portable(out / DELTA_WEIGHTS),
    }
