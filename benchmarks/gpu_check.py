"""The GPU check's cases, run one per process by ``benchmarks/gpu_check.sh``.

Everything is built here, offline: random-weight models from configs of the real shapes
(DeBERTa-v3-large as an NLI cross-encoder; Qwen3-32B with ``load_format="dummy"``, so no
weights exist on disk), tokenizers trained on the fly on a synthetic corpus (so no
tokenizer files are needed either), and synthetic (passage, claim) pairs of realistic
lengths. Labels are noise; what is measured is pairs/s and the share of the GPU's peak:
FLOPs per pair × pairs/s ÷ the GPU's dense bf16 peak.

Cases (``python benchmarks/gpu_check.py case NAME --workdir DIR --json OUT``):

- ``nli-deberta``: the ``nli`` judge (transformers, bf16) on a DeBERTa-v3-large-shaped classifier;
- ``vllm-prefix-on`` / ``vllm-prefix-off``: the ``vllm`` judge on a Qwen3-32B-shaped model,
  prefix caching on and off (groups of claims share a passage, so the cache has work to do);
- ``classify-default`` / ``nli-default``: the committed default judge through ``LLM.classify``
  (the ``nli`` judge's ``runtime=vllm``) and through the ``nli`` judge, same pairs, same GPU;
- ``classify-deberta``: the DeBERTa-v3-large-shaped classifier through ``LLM.classify``
  (vLLM runs DeBERTa-v2 through its Transformers backend, if at all: a failure is reported).

``python benchmarks/gpu_check.py build --workdir DIR`` writes the models and tokenizers;
``report --json OUT`` prints the table of every case's result. The FLOP counts, configs and
tokenizers are plain functions, tested on CPU in ``tests/benchmarks/test_gpu_check.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

LABEL_WORDS = ("SUPPORT", "CONTRADICT", "IRRELEVANT")
PEAK_BF16_TFLOPS: dict[str, float] = {
    # dense bf16 tensor-core peaks from the vendors' datasheets (no sparsity)
    "H200": 989.0, "H100 SXM": 989.0, "H100 NVL": 835.0, "H100 PCIe": 756.0, "H100": 989.0, "GH200": 989.0,
    "B200": 2250.0, "A100": 312.0, "L40S": 362.0, "L40": 181.0, "L4": 121.0, "A10G": 70.0, "A10": 125.0,
    "RTX 4090": 165.0, "RTX 6000 Ada": 364.0,
}
CASES = ("nli-deberta", "vllm-prefix-on", "vllm-prefix-off", "nli-default", "classify-default", "classify-deberta")


# -- configs of the real shapes -----------------------------------------------------------

def deberta_v3_large_config(vocab_size: int) -> Any:
    """microsoft/deberta-v3-large's shape as a 3-way NLI classifier (435M parameters with its
    128k vocabulary; ``vocab_size`` follows the locally built tokenizer)."""
    from transformers import DebertaV2Config

    id2label = {0: "entailment", 1: "neutral", 2: "contradiction"}
    return DebertaV2Config(
        vocab_size=vocab_size, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
        intermediate_size=4096, hidden_act="gelu", max_position_embeddings=512, type_vocab_size=0,
        relative_attention=True, position_buckets=256, max_relative_positions=-1, norm_rel_ebd="layer_norm",
        share_att_key=True, pos_att_type=["p2c", "c2p"], position_biased_input=False, layer_norm_eps=1e-7,
        pad_token_id=0, num_labels=3, id2label=id2label, label2id={v: k for k, v in id2label.items()},
    )


def qwen3_32b_config(vocab_size: int, eos_token_id: int) -> Any:
    """Qwen/Qwen3-32B's shape (64 layers, 5120 hidden, GQA 64/8, head_dim 128; 32.8B
    parameters with its 151,936-token vocabulary, which the dummy model keeps)."""
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=max(vocab_size, 151936), hidden_size=5120, intermediate_size=25600, num_hidden_layers=64,
        num_attention_heads=64, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
        rope_theta=1_000_000.0, rms_norm_eps=1e-6, tie_word_embeddings=False, eos_token_id=eos_token_id,
        bos_token_id=None, dtype="bfloat16",
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
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20))) + f" {rng.randint(1800, 2030)}."
             for _ in range(n)]
    return lines + [" ".join(LABEL_WORDS)] * 200


def build_tokenizer(out: Path, kind: str, vocab_size: int = 8000) -> Any:
    """A fast tokenizer trained on :func:`corpus`, saved to ``out``: ``bert`` (WordPiece,
    ``[CLS] a [SEP] b [SEP]`` pairs with segment ids) or ``qwen`` (byte-level BPE with the
    Qwen3 chat special tokens and a Qwen3-style chat template)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    from tests.support.tiny_models import QWEN_STYLE_CHAT_TEMPLATE

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
        fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                       sep_token="[SEP]", mask_token="[MASK]", model_max_length=512,
                                       model_input_names=["input_ids", "token_type_ids", "attention_mask"])
    elif kind == "qwen":
        specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(corpus(), trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                       model_input_names=["input_ids", "attention_mask"])
        fast.chat_template = QWEN_STYLE_CHAT_TEMPLATE
    else:
        raise ValueError(f"unknown tokenizer kind {kind!r}; allowed: bert, qwen")
    fast.save_pretrained(out)
    return fast


def synthetic_pairs(n_passages: int, claims_per_passage: int, passage_words: int = 220, claim_words: int = 14,
                    seed: int = 1) -> list[Any]:
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


# -- FLOPs ------------------------------------------------------------------------------------

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


@dataclass(frozen=True)
class Peak:
    name: str
    tflops: float | None


def gpu_peak(name: str, override: float | None = None) -> Peak:
    """The dense bf16 peak of the GPU called ``name`` (longest matching key), or ``override``."""
    if override:
        return Peak(name, override)
    hits = [k for k in PEAK_BF16_TFLOPS if k.lower() in name.lower()]
    return Peak(name, PEAK_BF16_TFLOPS[max(hits, key=len)] if hits else None)


def require_cuda() -> Any:
    """torch with a CUDA device, or exit 2 saying why."""
    try:
        import torch
    except ImportError:
        sys.exit("gpu_check: torch is not installed; install the project with a CUDA torch first")
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA GPU visible (torch.cuda.is_available() is False); this check needs a GPU box",
              file=sys.stderr)
        sys.exit(2)
    return torch


# -- building the models ----------------------------------------------------------------------

def build(workdir: Path) -> dict[str, Path]:
    """The DeBERTa-v3-large-shaped classifier (random bf16 weights) and the Qwen3-32B-shaped
    config (no weights: vLLM's ``load_format="dummy"``), each with its tokenizer."""
    import torch
    from transformers import AutoModelForSequenceClassification

    out = {"deberta": workdir / "deberta-v3-large-shaped", "qwen3": workdir / "qwen3-32b-shaped"}
    if not (out["deberta"] / "config.json").is_file():
        tok = build_tokenizer(out["deberta"], "bert")
        torch.manual_seed(0)
        model = AutoModelForSequenceClassification.from_config(deberta_v3_large_config(len(tok)), dtype=torch.bfloat16)
        model.save_pretrained(out["deberta"])
    if not (out["qwen3"] / "config.json").is_file():
        tok = build_tokenizer(out["qwen3"], "qwen")
        qwen3_32b_config(len(tok), tok.convert_tokens_to_ids("<|im_end|>")).save_pretrained(out["qwen3"])
    return out


# -- the cases --------------------------------------------------------------------------------

def run_case(case: str, workdir: Path, peak_override: float | None) -> dict[str, Any]:
    torch = require_cuda()
    from transformers import AutoConfig

    from conflictscore_local.backends import registry

    paths = build(workdir)
    default_judge = REPO / "models" / "default-judge"
    peak = gpu_peak(torch.cuda.get_device_name(0), peak_override)
    if case in ("nli-deberta", "classify-deberta", "nli-default", "classify-default"):
        model = paths["deberta"] if case.endswith("deberta") else default_judge
        pairs = synthetic_pairs(64, 32)
        args: dict[str, Any] = {"model": str(model)}
        if case.startswith("nli"):
            args.update(device="cuda", runtime="torch", dtype="bfloat16")
            judge = registry.build("judge", "nli", args)
        else:
            args.update(runtime="vllm", dtype="bfloat16", runtime_args={"gpu_memory_utilization": 0.5})
            judge = registry.build("judge", "nli", args)
        nli = judge
        feats, _ = nli.encode([p.passage.text for p in pairs], [p.claim.text for p in pairs])
        seqs = [len(f["input_ids"]) for f in feats]
        cfg = AutoConfig.from_pretrained(str(model))
        flops = sum(encoder_flops(cfg, s) for s in seqs) / len(seqs)
        t0 = time.perf_counter()
        judge.judge(pairs[:64])  # load and warm up
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        judge.judge(pairs)
        seconds = time.perf_counter() - t0
    elif case in ("vllm-prefix-on", "vllm-prefix-off"):
        pairs = synthetic_pairs(16, 32)
        judge = registry.build("judge", "vllm", {
            "model": str(paths["qwen3"]), "max_model_len": 2048, "gpu_memory_utilization": 0.9,
            "enable_prefix_caching": case.endswith("on"), "dtype": "bfloat16",
            "engine_args": {"load_format": "dummy", "enforce_eager": True},
        })
        gen = judge.generator()
        lengths = [len(gen.encode(judge.prompt(p))["prompt_token_ids"]) for p in pairs]
        cfg = AutoConfig.from_pretrained(str(paths["qwen3"]))
        flops = sum(decoder_prefill_flops(cfg, s) for s in lengths) / len(lengths)
        t0 = time.perf_counter()
        judge.judge(synthetic_pairs(2, 4, seed=7))  # start the engine, warm up
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        judge.judge(pairs)
        seconds = time.perf_counter() - t0
        seqs = lengths
    else:
        raise SystemExit(f"unknown case {case!r}; allowed: {', '.join(CASES)}")
    pairs_per_s = len(pairs) / seconds
    return {
        "case": case, "gpu": peak.name, "peak_bf16_tflops": peak.tflops, "pairs": len(pairs),
        "mean_input_tokens": round(sum(seqs) / len(seqs), 1), "seconds": round(seconds, 3),
        "pairs_per_s": round(pairs_per_s, 1), "load_s": round(load_s, 1), "gflops_per_pair": round(flops / 1e9, 2),
        "share_of_peak": None if not peak.tflops else round(flops * pairs_per_s / (peak.tflops * 1e12), 4),
        "stats": judge.stats(),
    }


def report(path: Path) -> str:
    """The results file (one JSON object a line, a case or its failure) as a Markdown table."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = ["| case | pairs/s | input tokens | GFLOPs/pair | share of bf16 peak | note |",
           "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['case']} | – | – | – | – | failed: {r['error'][:160]} |")
            continue
        share = "n/a" if r["share_of_peak"] is None else f"{r['share_of_peak']:.1%}"
        out.append(f"| {r['case']} | {r['pairs_per_s']} | {r['mean_input_tokens']} | {r['gflops_per_pair']} | "
                   f"{share} | {r['pairs']} pairs, {r['seconds']} s |")
    gpus = {r["gpu"] for r in rows if "gpu" in r}
    note = ("\n\nFLOPs per pair count the whole input (for the vllm cases the whole prompt, as without prefix "
            "caching), so with prefix caching on the share of peak is the useful work done, not the GPU's load.")
    return "\n".join(out) + (f"\n\nGPU: {', '.join(sorted(gpus))}" if gpus else "") + note


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("check", "build", "case", "report"))
    ap.add_argument("name", nargs="?", help="the case (with 'case'): " + ", ".join(CASES))
    ap.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "conflictscore-gpu-check")
    ap.add_argument("--json", type=Path, help="results file (JSON lines): a case appends its result")
    ap.add_argument("--peak-tflops", type=float, help="the GPU's dense bf16 peak, when it is not in the table")
    args = ap.parse_args(argv)
    if args.command == "check":
        torch = require_cuda()
        peak = gpu_peak(torch.cuda.get_device_name(0), args.peak_tflops)
        print(f"gpu_check: {peak.name}, bf16 peak {peak.tflops or 'unknown (pass --peak-tflops)'} TFLOPS")
        return 0
    if args.command == "build":
        require_cuda()
        print(json.dumps({k: str(v) for k, v in build(args.workdir).items()}))
        return 0
    if args.command == "report":
        print(report(args.json))
        return 0
    if args.name not in CASES:
        ap.error(f"case {args.name!r} unknown; allowed: {', '.join(CASES)}")
    try:
        result = run_case(args.name, args.workdir, args.peak_tflops)
    except SystemExit:
        raise
    except Exception as e:  # a case that fails is reported, the others still run
        result = {"case": args.name, "error": f"{type(e).__name__}: {e}"}
    line = json.dumps(result)
    print(line)
    if args.json:
        with args.json.open("a") as fh:
            fh.write(line + "\n")
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
