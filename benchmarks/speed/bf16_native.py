"""bfloat16 on a CPU with native bf16: ``runtime=torch`` against ``runtime=native``, with its linear
layers' weights prepacked for oneDNN (what it does) and without (``F.linear``), paired.

The same real inputs as ``forward_peak.py`` (RAMDocs questions against their own documents, split and
encoded as the judge does) go through the three, one after another, ``--rounds`` times after a
warm-up pass each, so that the machine's drift falls on all alike; recorded: each one's fastest and
median pass, the ratios of medians, and the labels (the judge's calibrated rule) that differ from
``runtime=torch`` at float32. On a CPU without native bf16 the script exits saying so (nothing is
prepacked there).

    .venv/bin/python -m benchmarks.speed.bf16_native --out benchmarks/results/speed/bf16_native-amx \\
        [--rag 40 --rounds 5]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, write_recorded
from benchmarks._lib.workloads import base_parser, candidate_groups, data_dir, rag_job, ramdocs_questions
from conflictscore_local import Engine, RunConfig
from conflictscore_local.backends import registry
from conflictscore_local.judge.labels import decide
from conflictscore_local.judge.nli.runtimes import native

MODEL = "models/default-judge"


def measure(args: Any) -> dict[str, Any]:
    from conflictscore_local.util.devices import native_cpu_bf16

    ok, why = native_cpu_bf16()
    if not ok:
        sys.exit(f"bf16_native: {why}; nothing is prepacked on this CPU")
    items = rag_job(ramdocs_questions(data_dir(args.data_dir)), args.rag)
    engine = Engine(RunConfig.from_mapping({"cache": {"enabled": False}}), pruner="none")
    pairs = [p for group in candidate_groups(engine, items) for p in group]
    base = {"model": MODEL, "device": "cpu", "batch_size": 256, "max_batch_tokens": 2048}
    ref = registry.build("judge", "nli", {**base, "dtype": "float32", "runtime": "torch"})
    feats, _ = ref.encode([p.passage.text for p in pairs], [p.claim.text for p in pairs])
    labels_of, thresholds = ref.labels(), ref.thresholds()

    def labels(rows: Any) -> list[str]:
        return [decide({labels_of[k]: p for k, p in enumerate(row)}, thresholds) for row in rows]

    fp32 = labels(ref.runtime().classify(feats))
    judges = {
        "torch": registry.build("judge", "nli", {**base, "dtype": "bfloat16", "runtime": "torch"}),
        "native (prepacked)": registry.build("judge", "nli", {**base, "dtype": "bfloat16", "runtime": "native"}),
    }
    judges["native (prepacked)"].runtime().model()
    real = native.can_prepack
    native.can_prepack = lambda dtype, device: (False, "F.linear")  # type: ignore[assignment]
    try:
        judges["native (F.linear)"] = registry.build("judge", "nli", {**base, "dtype": "bfloat16", "runtime": "native"})
        judges["native (F.linear)"].runtime().model()
    finally:
        native.can_prepack = real  # type: ignore[assignment]
    runtimes = {k: j.runtime() for k, j in judges.items()}
    differ = {k: sum(a != b for a, b in zip(labels(rt.classify(feats)), fp32)) for k, rt in runtimes.items()}
    times: dict[str, list[float]] = {k: [] for k in runtimes}
    for _ in range(args.rounds):
        for key, rt in runtimes.items():
            t0 = time.perf_counter()
            rt.classify(feats)
            times[key].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = {
        k: {
            "fastest_s": round(min(v), 3),
            "median_s": round(med[k], 3),
            "passes_s": [round(x, 3) for x in v],
            "over_torch": round(med[k] / med["torch"], 3),
            "labels_differ_from_fp32": differ[k],
            "linear": judges[k].describe()["resolved"].get("linear", "F.linear"),
        }
        for k, v in times.items()
    }
    lengths = [len(f["input_ids"]) for f in feats]
    return {
        "native_bf16_reason": why,
        "inputs": len(feats),
        "tokens": sum(lengths),
        "rounds": args.rounds,
        "variants": rows,
        "prepacked_over_plain": round(med["native (prepacked)"] / med["native (F.linear)"], 3),
    }


def markdown(data: dict[str, Any]) -> str:
    lines = [
        "# bfloat16 on the CPU: runtime=torch against runtime=native, its weights prepacked or not",
        "",
        *header(data["meta"], extra=f"; CPU flags: {data['meta']['cpu_flags']}"),
        f"{data['inputs']} real inputs ({data['tokens']} tokens), 2,048 tokens a batch, {data['rounds']} rounds, "
        f"the three alternating after a warm-up pass each ({data['native_bf16_reason']}).",
        "",
        "| variant | linear layers | fastest s | median s | median ÷ torch's | labels ≠ float32's |",
        "|---|---|---|---|---|---|",
    ]
    for key, r in data["variants"].items():
        lines.append(
            f"| {key} | {r['linear']} | {r['fastest_s']} | {r['median_s']} | **{r['over_torch']}** | "
            f"{r['labels_differ_from_fp32']} / {data['inputs']} |"
        )
    lines += ["", f"Prepacked ÷ `F.linear`, medians: **{data['prepacked_over_plain']}**.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = base_parser(__doc__, "bf16_native")
    parser.add_argument("--rag", type=int, default=40, metavar="N", help="RAMDocs questions (default 40)")
    parser.add_argument(
        "--rounds", type=int, default=5, metavar="N", help="timed passes of each, alternating (default 5)"
    )
    args = parser.parse_args()
    started, load = time.perf_counter(), os.getloadavg()
    data = measure(args)
    data["meta"] = run_meta(__file__, None, started, load)
    print(write_recorded(Path(args.out), data, markdown))


if __name__ == "__main__":
    main()
