"""Local runtimes of the ``nli`` judge against each other on real inputs, paired: one item at a time
(one claim's pairs a call) and all at once.

The same real inputs as ``forward_peak.py`` (RAMDocs questions against their own documents, split and
encoded as the judge does) go through each runtime named, one after another, ``--rounds`` times after
a warm-up pass each, so that the machine's drift falls on all alike. Each round times two passes per
runtime: ``per claim`` (one ``classify`` call per claim's pairs: many small batches of new shapes)
and ``at once`` (every pair in one call: full token batches). Recorded: each one's median and fastest
pass, the ratios of medians to the first runtime named, and the labels (the judge's calibrated rule)
that differ from ``runtime=torch`` at float32.

    .venv/bin/python -m benchmarks.speed.runtime_pairs --out benchmarks/results/speed/runtime_pairs-amx \\
        [--runtimes native,openvino --dtype float32 --rag 60 --rounds 5]
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, write_recorded
from benchmarks._lib.workloads import base_parser, candidate_groups, data_dir, rag_job, ramdocs_questions
from conflictscore_local import Engine, RunConfig
from conflictscore_local.backends import registry
from conflictscore_local.judge.labels import decide

MODEL = "models/default-judge"
PASSES = ("per_claim", "at_once")


def measure(args: Any) -> dict[str, Any]:
    items = rag_job(ramdocs_questions(data_dir(args.data_dir)), args.rag)
    engine = Engine(RunConfig.from_mapping({"cache": {"enabled": False}}), pruner="none")
    groups = [g for g in candidate_groups(engine, items) if g]
    base = {"model": MODEL, "device": "cpu"}
    ref = registry.build("judge", "nli", {**base, "dtype": "float32", "runtime": "torch"})
    labels_of, thresholds = ref.labels(), ref.thresholds()

    def encode(judge: Any) -> list[list[Any]]:  # each runtime's own tokenizer (native's is its own)
        return [judge.encode([p.passage.text for p in g], [p.claim.text for p in g])[0] for g in groups]

    def labels(rows: Any) -> list[str]:
        return [decide({labels_of[k]: p for k, p in enumerate(row)}, thresholds) for row in rows]

    fp32 = labels(ref.runtime().classify([f for g in encode(ref) for f in g]))
    names = [n.strip() for n in args.runtimes.split(",") if n.strip()]
    judges = {n: registry.build("judge", "nli", {**base, "dtype": args.dtype, "runtime": n}) for n in names}
    feats = {n: encode(j) for n, j in judges.items()}
    runtimes = {n: j.runtime() for n, j in judges.items()}
    flat = {n: [f for g in feats[n] for f in g] for n in names}
    differ = {n: sum(a != b for a, b in zip(labels(rt.classify(flat[n])), fp32)) for n, rt in runtimes.items()}
    times: dict[str, dict[str, list[float]]] = {n: {p: [] for p in PASSES} for n in names}
    for _ in range(args.rounds):
        for n, rt in runtimes.items():
            t0 = time.perf_counter()
            for g in feats[n]:
                rt.classify(g)
            times[n]["per_claim"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            rt.classify(flat[n])
            times[n]["at_once"].append(time.perf_counter() - t0)
    first = names[0]
    med = {n: {p: statistics.median(v) for p, v in by.items()} for n, by in times.items()}
    resolved = {n: j.describe()["resolved"] for n, j in judges.items()}
    rows = {
        n: {
            "resolved": {
                k: resolved[n][k]
                for k in ("runtime", "dtype", "openvino_precision", "linear")
                if resolved[n].get(k) is not None
            },
            "labels_differ_from_fp32": differ[n],
            **{
                p: {
                    "median_s": round(med[n][p], 3),
                    "fastest_s": round(min(times[n][p]), 3),
                    "passes_s": [round(x, 3) for x in times[n][p]],
                    f"over_{first}": round(med[n][p] / med[first][p], 3),
                }
                for p in PASSES
            },
        }
        for n in names
    }
    return {
        "dtype": args.dtype,
        "inputs": len(fp32),
        "claims": len(groups),
        "rounds": args.rounds,
        "first": first,
        "runtimes": rows,
    }


def markdown(data: dict[str, Any]) -> str:
    first = data["first"]
    lines = [
        "# Local runtimes of the nli judge, paired",
        "",
        *header(data["meta"], extra=f"; CPU flags: {data['meta']['cpu_flags']}"),
        f"{data['inputs']} real inputs, {data['claims']} claims' pairs, at dtype={data['dtype']}, "
        f"{data['rounds']} rounds, "
        "the runtimes alternating after a warm-up pass each; `per claim`: one call per claim's pairs (its "
        "passages), `at once`: every pair in one call.",
        "",
        f"| runtime | what ran | per claim, median s | ÷ {first} | at once, median s | ÷ {first} "
        "| labels ≠ torch float32 |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, r in data["runtimes"].items():
        ran = ", ".join(f"{k} {v}" for k, v in r["resolved"].items())
        lines.append(
            f"| {n} | {ran} | {r['per_claim']['median_s']} | **{r['per_claim'][f'over_{first}']}** | "
            f"{r['at_once']['median_s']} | **{r['at_once'][f'over_{first}']}** | "
            f"{r['labels_differ_from_fp32']} / {data['inputs']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = base_parser(__doc__, "runtime_pairs")
    parser.add_argument(
        "--runtimes",
        default="native,openvino",
        metavar="A,B,...",
        help="runtimes to pair, the first the yardstick (default native,openvino)",
    )
    parser.add_argument("--dtype", default="float32", help="the judges' dtype (default float32)")
    parser.add_argument("--rag", type=int, default=60, metavar="N", help="RAMDocs questions (default 60)")
    parser.add_argument("--rounds", type=int, default=5, metavar="N", help="rounds, runtimes alternating (default 5)")
    args = parser.parse_args()
    started, load = time.perf_counter(), os.getloadavg()
    data = measure(args)
    data["meta"] = run_meta(__file__, None, started, load)
    print(write_recorded(Path(args.out), data, markdown))


if __name__ == "__main__":
    main()
