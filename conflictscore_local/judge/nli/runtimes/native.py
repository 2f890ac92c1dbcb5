"""``runtime=native``: a BERT-family ``nli`` checkpoint on PyTorch without transformers.

What a one-item run waits for is mostly imports: transformers' tokenizer registry and its
``modeling_bert`` (which pull ``torch.distributed.tensor``, ``torch._dynamo`` and scipy) cost
more CPU time than torch itself and the forward together (``benchmarks/results/speed/start_time.md``).
This runtime does the same forward with the same torch operations in the same order as
transformers' ``BertForSequenceClassification`` (SDPA attention, a boolean padding mask, none
when nothing is padded), the weights read from ``model.safetensors`` memory-mapped, and the
checkpoint's ``tokenizer.json`` run by the ``tokenizers`` library, the Rust tokenizer that
transformers' fast tokenizer wraps. It is offered only where that holds:
:func:`check_supported` refuses other architectures, position embeddings, activations and
checkpoints without ``tokenizer.json`` / ``model.safetensors``, naming the field;
``runtime=auto`` picks it only after its labels equalled ``runtime=torch``'s on the probe set
(:mod:`..calibrate`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ....backends.packed import is_packed, load_state_dict
from ....core.errors import BackendUnavailable
from ....util.devices import torch_device
from .base import Classifier, DoneFn, Features, Row, check_num_labels, run_batched
from .torch import TorchRuntime

ARCHITECTURES: tuple[str, ...] = ("BertForSequenceClassification",)
"""The checkpoint classes this runtime reproduces."""
TOKENIZER_KEYS: tuple[str, ...] = ("input_ids", "token_type_ids", "attention_mask")


def check_supported(config: Mapping[str, Any], path: Path) -> None:
    """``BackendUnavailable`` naming the field unless ``path`` holds a checkpoint this runtime runs
    as transformers would: a BERT sequence classifier (absolute positions, exact GELU, one label
    per class), with ``tokenizer.json`` and ``model.safetensors``."""
    why = []
    arch = list(config.get("architectures") or [])
    if arch != list(ARCHITECTURES[:1]) and not (len(arch) == 1 and arch[0] in ARCHITECTURES):
        why.append(f"architectures {arch} (supported: {', '.join(ARCHITECTURES)})")
    if config.get("position_embedding_type", "absolute") != "absolute":
        why.append(f"position_embedding_type {config.get('position_embedding_type')!r} (supported: 'absolute')")
    if config.get("hidden_act", "gelu") != "gelu":
        why.append(f"hidden_act {config.get('hidden_act')!r} (supported: 'gelu')")
    if config.get("is_decoder") or config.get("add_cross_attention"):
        why.append("a decoder (is_decoder / add_cross_attention)")
    if config.get("problem_type") not in (None, "single_label_classification"):
        why.append(f"problem_type {config.get('problem_type')!r}")
    if not (path / "tokenizer.json").is_file():
        why.append("no tokenizer.json")
    if not (path / "model.safetensors").is_file() and not is_packed(path):
        why.append("no model.safetensors (nor model.packed.safetensors)")
    if why:
        raise BackendUnavailable(f"judge nli: runtime=native cannot run {path}: {'; '.join(why)}; use runtime=torch")


class NativeTokenizer:
    """The checkpoint's ``tokenizer.json`` in the ``tokenizers`` library, called the way the
    ``nli`` judge calls a transformers tokenizer: ``tok(texts, pairs, truncation=..., max_length=...,
    add_special_tokens=...)`` → ``{"input_ids": ..., "token_type_ids": ..., "attention_mask": ...}``
    (lists, one per text, or one list for one text), ``num_special_tokens_to_add(pair=)``,
    ``model_input_names``, ``model_max_length``, ``pad_token_id``."""

    model_input_names = list(TOKENIZER_KEYS)

    def __init__(self, path: Path):
        from tokenizers import Tokenizer

        self.path = path
        self._tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.no_truncation()
        self._truncation: tuple[Any, ...] | None = None
        config = _json(path / "tokenizer_config.json")
        self.model_max_length = int(config.get("model_max_length") or 1 << 30)
        pad = config.get("pad_token") or "[PAD]"
        pad_id = self._tok.token_to_id(pad if isinstance(pad, str) else pad.get("content", "[PAD]"))
        self.pad_token_id = 0 if pad_id is None else pad_id
        self.pad_token_type_id = int(config.get("pad_token_type_id") or 0)
        if config.get("padding_side", "right") != "right" or config.get("truncation_side", "right") != "right":
            raise BackendUnavailable(
                f"judge nli: runtime=native: {path / 'tokenizer_config.json'} pads or truncates "
                "on the left; use runtime=torch"
            )

    def num_special_tokens_to_add(self, pair: bool = False) -> int:
        return self._tok.num_special_tokens_to_add(pair)

    def _truncate(self, truncation: Any, max_length: int | None) -> None:
        want = (
            None
            if truncation in (False, None, "do_not_truncate")
            else ("longest_first" if truncation is True else str(truncation), max_length or self.model_max_length)
        )
        if want != self._truncation:
            if want is None:
                self._tok.no_truncation()
            else:
                self._tok.enable_truncation(want[1], strategy=want[0], direction="right")
            self._truncation = want

    def __call__(
        self,
        text: str | Sequence[str],
        text_pair: str | Sequence[str] | None = None,
        *,
        truncation: Any = False,
        max_length: int | None = None,
        add_special_tokens: bool = True,
        verbose: bool = False,
    ) -> dict[str, Any]:
        self._truncate(truncation, max_length)
        one = isinstance(text, str)
        texts = [text] if one else list(text)
        if text_pair is None:
            encs = self._tok.encode_batch(texts, add_special_tokens=add_special_tokens)
        else:
            pairs = [text_pair] if isinstance(text_pair, str) else list(text_pair)
            encs = self._tok.encode_batch(list(zip(texts, pairs)), add_special_tokens=add_special_tokens)
        out = {
            "input_ids": [e.ids for e in encs],
            "token_type_ids": [e.type_ids for e in encs],
            "attention_mask": [e.attention_mask for e in encs],
        }
        return {k: v[0] for k, v in out.items()} if one else out


def _json(file: Path) -> dict[str, Any]:
    try:
        return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
    except (OSError, json.JSONDecodeError) as e:
        raise BackendUnavailable(f"judge nli: runtime=native: cannot read {file}: {e}") from None


PREPACK_ROWS = 2048
"""The batch rows oneDNN's weight layout is chosen for: the CPU's default token budget."""


def can_prepack(dtype: Any, device: Any) -> tuple[bool, str]:
    """Whether the linear layers' weights are reordered once for oneDNN (what inductor's freezing
    does): bfloat16 on a CPU that has it natively, where ``F.linear`` would reorder them at every
    call (``benchmarks/results/speed/forward_peak-amx.md``: 1.17 s against 1.29 s for the same forwards);
    float32 keeps ``F.linear``, whose output is ``runtime=torch``'s bit for bit."""
    import torch

    from ....util.devices import native_cpu_bf16

    if device.type != "cpu" or dtype != torch.bfloat16:
        return False, "F.linear"
    if not hasattr(torch.ops.mkldnn, "_reorder_linear_weight") or not torch.backends.mkldnn.is_available():
        return False, "F.linear (this torch has no oneDNN weight reordering)"
    native, why = native_cpu_bf16()
    return (True, "oneDNN, weights prepacked") if native else (False, f"F.linear ({why})")


def build_bert(config: Mapping[str, Any], weights: Mapping[str, Any], *, prepack: bool = False) -> Any:
    """A ``torch.nn.Module`` computing transformers' ``BertForSequenceClassification`` logits (eval
    mode) with the same operations, its parameters the tensors of ``weights`` (by transformers'
    names, ``bert.`` prefix included; the tied/unused ``cls.*`` heads ignored). ``prepack``: the
    linear layers run through oneDNN on weights reordered once (:func:`can_prepack`)."""
    import torch
    import torch.nn.functional as F

    heads = int(config["num_attention_heads"])
    eps = float(config.get("layer_norm_eps", 1e-12))
    n_layers = int(config["num_hidden_layers"])
    hidden = int(config["hidden_size"])
    head_size = hidden // heads
    scale = head_size**-0.5

    def w(name: str) -> Any:
        try:
            return weights[name]
        except KeyError:
            raise BackendUnavailable(f"judge nli: runtime=native: the checkpoint has no tensor {name!r}") from None

    class Bert(torch.nn.Module):
        def forward(self, input_ids: Any, token_type_ids: Any, attention_mask: Any) -> Any:
            b, n = input_ids.shape
            positions = self.position_ids[:, :n]
            x = F.embedding(input_ids, self.p["bert.embeddings.word_embeddings.weight"])
            x = x + F.embedding(token_type_ids, self.p["bert.embeddings.token_type_embeddings.weight"])
            x = x + F.embedding(positions, self.p["bert.embeddings.position_embeddings.weight"])
            x = self._norm(x, "bert.embeddings.LayerNorm")
            mask = None if bool(attention_mask.all()) else attention_mask.bool()[:, None, None, :].expand(b, 1, n, n)
            for i in range(n_layers):
                pre = f"bert.encoder.layer.{i}."
                shape = (b, n, -1, head_size)
                q = self._lin(x, pre + "attention.self.query").view(*shape).transpose(1, 2)
                k = self._lin(x, pre + "attention.self.key").view(*shape).transpose(1, 2)
                v = self._lin(x, pre + "attention.self.value").view(*shape).transpose(1, 2)
                a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0, scale=scale, is_causal=False)
                a = a.transpose(1, 2).contiguous().reshape(b, n, -1).contiguous()
                x = self._norm(self._lin(a, pre + "attention.output.dense") + x, pre + "attention.output.LayerNorm")
                h = F.gelu(self._lin(x, pre + "intermediate.dense"))
                x = self._norm(self._lin(h, pre + "output.dense") + x, pre + "output.LayerNorm")
            pooled = torch.tanh(self._lin(x[:, 0], "bert.pooler.dense"))
            return self._lin(pooled, "classifier")

        def _lin(self, x: Any, name: str) -> Any:
            if self.packed:
                return torch.ops.mkldnn._linear_pointwise(x, self.packed[name], self.p[name + ".bias"], "none", [], "")
            return F.linear(x, self.p[name + ".weight"], self.p[name + ".bias"])

        def _norm(self, x: Any, name: str) -> Any:
            return F.layer_norm(x, (hidden,), self.p[name + ".weight"], self.p[name + ".bias"], eps)

    model = Bert()
    names = [
        "bert.embeddings.word_embeddings.weight",
        "bert.embeddings.token_type_embeddings.weight",
        "bert.embeddings.position_embeddings.weight",
    ]
    linear = ["bert.pooler.dense", "classifier"]
    norms = ["bert.embeddings.LayerNorm"]
    for i in range(n_layers):
        pre = f"bert.encoder.layer.{i}."
        linear += [
            pre + s
            for s in (
                "attention.self.query",
                "attention.self.key",
                "attention.self.value",
                "attention.output.dense",
                "intermediate.dense",
                "output.dense",
            )
        ]
        norms += [pre + "attention.output.LayerNorm", pre + "output.LayerNorm"]
    names += [f"{m}.{p}" for m in linear + norms for p in ("weight", "bias")]
    model.p = {name: w(name) for name in names}
    model.packed = (
        {name: torch.ops.mkldnn._reorder_linear_weight(model.p[name + ".weight"], PREPACK_ROWS) for name in linear}
        if prepack
        else {}
    )
    model.position_ids = torch.arange(int(config["max_position_embeddings"]))[None, :]
    return model


def load_weights(path: Path, dtype: Any) -> dict[str, Any]:
    """``model.safetensors`` as tensors (memory-mapped; copied only where ``dtype`` differs), or a packed
    checkpoint's dequantized ones, named as transformers names them (a checkpoint saved from the bare
    encoder gains the ``bert.`` prefix)."""
    from safetensors.torch import load_file

    raw = load_state_dict(path) if is_packed(path) else load_file(str(path / "model.safetensors"))
    out = {}
    for name, t in raw.items():
        key = name if name.startswith(("bert.", "classifier.", "cls.")) else "bert." + name
        out[key] = t if t.dtype == dtype else t.to(dtype)
    return out


class NativeRuntime(TorchRuntime):
    """The ``nli`` judge's forward in PyTorch, without transformers (see the module's docstring)."""

    name = "native"
    auto = "candidate"  # the same operations in the same order as torch: its output bit for bit

    def __init__(self, classifier: Classifier):
        check_supported(classifier.config, classifier.path)
        super().__init__(classifier)

    @classmethod
    def supports(cls, config: Mapping[str, Any], path: Path) -> None:
        check_supported(config, path)

    @classmethod
    def load_tokenizer(cls, config: Mapping[str, Any], path: Path) -> Any:
        """The checkpoint's ``tokenizer.json`` in the ``tokenizers`` library (:class:`NativeTokenizer`)."""
        check_supported(config, path)
        return NativeTokenizer(path)

    def model(self) -> Any:
        """The classifier on its device, built once from the memory-mapped weights."""
        if self._model is None:
            c = self.classifier
            device = torch_device(c.device)
            dtype, why = self.resolved_dtype()
            check_num_labels(
                int(c.config.get("num_labels") or len(c.config.get("id2label") or {}) or 2), c.labels, c.path
            )
            prepack, linear = can_prepack(dtype, device)
            model = build_bert(c.config, load_weights(c.path, dtype), prepack=prepack)
            if device.type != "cpu":
                model.p = {k: v.to(device) for k, v in model.p.items()}
                model.position_ids = model.position_ids.to(device)
            self._model = model.eval()
            self._device = device
            c.record(
                device=str(device),
                dtype=str(dtype).removeprefix("torch."),
                dtype_reason=why,
                architecture="BertForSequenceClassification (runtime=native)",
                linear=linear,
            )
        return self._model

    def classify(self, feats: Sequence[Features], on_done: DoneFn | None = None) -> list[Row]:
        import torch

        model = self.model()
        tok = self.classifier.tokenizer()
        pad = {
            "input_ids": getattr(tok, "pad_token_id", 0) or 0,
            "token_type_ids": getattr(tok, "pad_token_type_id", 0) or 0,
            "attention_mask": 0,
        }

        def forward(batch: list[Features]) -> list[list[float]]:
            n = max(len(f["input_ids"]) for f in batch)
            tensors = {}
            for key, fill in pad.items():
                rows = [
                    list(f[key])
                    if key in f
                    else ([1] * len(f["input_ids"]) if key == "attention_mask" else [0] * len(f["input_ids"]))
                    for f in batch
                ]
                tensors[key] = torch.tensor(
                    [r + [fill] * (n - len(r)) for r in rows], dtype=torch.long, device=self._device
                )
            with torch.inference_mode():
                logits = model(**tensors)
            self.classifier.count("batches")
            return torch.softmax(logits.float(), dim=-1).cpu().tolist()

        c = self.classifier
        budget = c.max_batch_tokens or (2048 if self._device.type == "cpu" else 65536)
        return run_batched(feats, forward, max_pairs=c.batch_size, max_tokens=budget, on_done=on_done)
