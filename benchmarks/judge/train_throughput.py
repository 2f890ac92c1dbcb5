"""How fast ``train-judge fit`` trains the default judge here, in float32 and with ``--bf16``: the figure a
training schedule on this machine is planned from.

The same LingNLI train pairs (``--pairs``, sampled with ``--seed`` from ``nli_general/lingnli``: short,
MNLI-style sentence pairs, the bulk of judge v5's stage 1) and 64 LingNLI val pairs to evaluate on, the
shipped default judge as the base (a packed checkpoint unpacked to a plain float32 folder first), the
options of the v5 stage-1 fit (batch 32, ``--max-length 192``, ``--int8-embeddings``, one epoch, one
evaluation at its end); each variant trains from the same base in a new folder, the two alternating which
goes first over ``--rounds`` rounds. Each run's own ``training.json`` gives its training pairs per second
(the Trainer's steps only: not loading, tokenizing or evaluating) and its training loss. ``--bf16`` is
measured only where the CPU multiplies bfloat16 natively (AVX512-BF16 or AMX); elsewhere it is emulated,
and the file says so.

    .venv/bin/python -m benchmarks.judge.train_throughput --out benchmarks/results/judge/train_throughput-amx
"""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, write_recorded
from benchmarks._lib.workloads import at_least, base_parser, data_dir, plain_folder, positive
from conflictscore_local.util.devices import native_cpu_bf16

MODEL = "models/default-judge"


def sample_pairs(root: Path, n: int, seed: int, out: Path, split: str = "train") -> int:
    """``n`` LingNLI pairs of ``split`` (seeded) written as a pairs file ``train-judge fit`` reads."""
    from conflictscore_local.train.nli_general import load_lingnli

    pairs = list(load_lingnli(root / "nli_general" / "lingnli", split))
    chosen = random.Random(seed).sample(pairs, min(n, len(pairs)))
    out.write_text("".join(json.dumps(p.as_json()) + "\n" for p in chosen), encoding="utf-8")
    return len(chosen)


def fit(base: Path, train: Path, dev: Path, output: Path, bf16: bool, threads: int, seed: int) -> dict[str, Any]:
    """One ``train-judge fit`` of the v5 stage-1 options; its record's throughput, loss and times."""
    from conflictscore_local.train.loop import TrainOptions
    from conflictscore_local.train.loop import train as run

    opts = TrainOptions(
        base=str(base),
        train=(str(train),),
        eval=(str(dev),),
        output=str(output),
        epochs=1,
        lr=4e-5,
        batch_size=32,
        max_length=192,
        seed=seed,
        int8_embeddings=True,
        device="cpu",
        bf16=bf16,
        threads=threads,
        patience=4,
    )
    t0 = time.perf_counter()
    rec = run(opts)
    return {
        "train_pairs_per_s": rec["train_pairs_per_s"],
        "train_loss": round(rec["trainer_metrics"]["train_loss"], 4),
        "train_s": round(rec["trainer_metrics"]["train_runtime"], 1),
        "wall_s": round(time.perf_counter() - t0, 1),
    }


def measure(args: Any) -> dict[str, Any]:
    root = data_dir(args.data_dir)
    native, why = native_cpu_bf16()
    variants = ["fp32", "bf16"] if native or args.emulated_bf16 else ["fp32"]
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory(prefix="train-throughput-") as tmp_name:
        tmp = Path(tmp_name)
        base = plain_folder(Path(MODEL), tmp / "base")
        train, dev = tmp / "train.jsonl", tmp / "dev.jsonl"
        n = sample_pairs(root, args.pairs, args.seed, train)
        sample_pairs(root, 64, args.seed, dev, split="val")
        for r in range(args.rounds):
            order = variants if r % 2 == 0 else variants[::-1]
            for v in order:
                got = fit(base, train, dev, tmp / f"{v}-{r}", v == "bf16", args.threads, args.seed)
                runs[v].append(got)
                print(f"round {r + 1}/{args.rounds} {v}: {got}", flush=True)
    out: dict[str, Any] = {
        "pairs": n,
        "threads": args.threads,
        "rounds": args.rounds,
        "native_bf16": native,
        "native_bf16_reason": why,
        "variants": {
            v: {
                "median_pairs_per_s": round(statistics.median(r["train_pairs_per_s"] for r in rs), 2),
                "runs": rs,
            }
            for v, rs in runs.items()
        },
    }
    if "bf16" in runs and not native:
        out["bf16_note"] = f"emulated, measured with --emulated-bf16: {why}"
    if "bf16" in runs:
        ratios = [b["train_pairs_per_s"] / f["train_pairs_per_s"] for b, f in zip(runs["bf16"], runs["fp32"])]
        out["bf16_over_fp32"] = {
            "median": round(statistics.median(ratios), 3),
            "per_round": [round(x, 3) for x in ratios],
        }
    else:
        out["bf16_over_fp32"] = None
        out["bf16_note"] = f"not measured: {why} (bfloat16 would be emulated; --emulated-bf16 measures it anyway)"
    return out


def markdown(data: dict[str, Any]) -> str:
    lines = ["# Training throughput of the default judge: float32 and `--bf16`", ""]
    lines += header(data["meta"])
    lines += [
        f"{data['pairs']} LingNLI train pairs, {data['threads']} threads, {data['rounds']} rounds (the variants "
        f"alternating first); CPU flags: {data['meta']['cpu_flags']}.",
        "",
        "| variant | median training pairs/s | per run: pairs/s (train loss) |",
        "|---|---|---|",
    ]
    for v, d in data["variants"].items():
        per = ", ".join(f"{r['train_pairs_per_s']} ({r['train_loss']})" for r in d["runs"])
        lines.append(f"| {v} | {d['median_pairs_per_s']} | {per} |")
    lines.append("")
    if data["bf16_over_fp32"]:
        b = data["bf16_over_fp32"]
        per = ", ".join(map(str, b["per_round"]))
        lines.append(f"`--bf16` ÷ float32, pairs/s, paired by round: median {b['median']} ({per}).")
        if data.get("bf16_note"):
            lines.append(f"`--bf16` here: {data['bf16_note']}.")
    else:
        lines.append(f"`--bf16`: {data['bf16_note']}.")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = base_parser(__doc__, "judge/train_throughput")
    ap.add_argument(
        "--pairs",
        type=at_least(32),
        default=1536,
        help="LingNLI train pairs each run trains on, at least one batch of 32 (default 1536)",
    )
    ap.add_argument("--rounds", type=positive, default=2, help="rounds, the variants alternating first (default 2)")
    ap.add_argument(
        "--threads", type=positive, default=os.cpu_count() or 1, help="training threads (default: the CPUs)"
    )
    ap.add_argument("--seed", type=int, default=0, help="the pairs' sample and the training seed (default 0)")
    ap.add_argument(
        "--emulated-bf16", action="store_true", help="measure --bf16 also where the CPU only emulates bfloat16"
    )
    args = ap.parse_args()
    started, load = time.perf_counter(), os.getloadavg()
    data = measure(args)
    data["meta"] = run_meta(__file__, None, started, load)
    print(write_recorded(Path(args.out), data, markdown))


if __name__ == "__main__":
    main()
