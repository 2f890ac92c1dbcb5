"""The summary's bootstrap intervals for 200k items: the former pure-Python loop against the
vectorised numpy one, and a whole `score_file` run of 200k labelled items (does
``timing.total_s`` cover the run?).

1. ``bootstrap_ci`` as it was before it was vectorised (``random.Random.choices`` and a
   ``math.fsum`` per resample, kept below only as the baseline) and as it is now
   (``conflictscore_local.core.metrics.bootstrap_ci``), on the same 200k items' metrics, 1000
   resamples (the default): seconds each and the ratio, plus how far apart the two
   intervals are (different random streams, same definition: they agree to resampling noise).
2. ``score_file`` on 200k generated labelled items (3 claims × 3 documents each, no model):
   the wall time of the call against the ``timing.total_s`` the summary reports.

    .venv/bin/python benchmarks/bootstrap_speed.py --out benchmarks/results/bootstrap_speed
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import random
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from conflictscore_local.core.metrics import METRICS, bootstrap_ci
from conflictscore_local.core.types import ItemMetrics
from conflictscore_local.formats.results import read_results
from conflictscore_local.pipeline.config import RunConfig
from conflictscore_local.pipeline.scoring import score_file
from conflictscore_local.util.environment import versions

LABELS = ("SUPPORT", "CONTRADICT", "IRRELEVANT")


def pure_python_bootstrap(
    metrics: Sequence[ItemMetrics], n_resamples: int, level: float = 0.95, seed: int = 0
) -> dict[str, tuple[float, float] | None]:
    """The implementation before numpy (the baseline of this benchmark, nothing else uses it)."""
    rng = random.Random(seed)
    out: dict[str, tuple[float, float] | None] = {}
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    for k in METRICS:
        vals = [v for m in metrics if (v := m.get(k)) is not None]
        if len(vals) < 2 or n_resamples < 1:
            out[k] = None
            continue
        n = len(vals)
        stats = sorted(math.fsum(rng.choices(vals, k=n)) / n for _ in range(n_resamples))
        out[k] = (_quantile(stats, lo_q), _quantile(stats, hi_q))
    return out


def _quantile(xs: Sequence[float], q: float) -> float:
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def item_rows(n: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {
            "id": f"i{i}",
            "response": "",
            "claims": [f"c{j}" for j in range(3)],
            "documents": [{"id": f"d{j}", "text": "t"} for j in range(3)],
            "labels": [[rng.choice(LABELS) for _ in range(3)] for _ in range(3)],
        }
        for i in range(n)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=200_000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--out", default="benchmarks/results/bootstrap_speed", help="PATH without extension: .json and .md")
    args = ap.parse_args()
    load0 = os.getloadavg()

    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / "items.jsonl"
        inp.write_text("".join(json.dumps(r) + "\n" for r in item_rows(args.items)))
        cfg = RunConfig().updated({"cache": {"enabled": False}, "engine": {"bootstrap": args.resamples}})
        t0 = time.perf_counter()
        report = score_file(inp, Path(tmp) / "out.jsonl", config=cfg, warn=lambda m: None)
        wall = time.perf_counter() - t0
        metrics = [r.metrics for r in read_results(Path(tmp) / "out.jsonl")]

    t0 = time.perf_counter()
    after = bootstrap_ci(metrics, n_resamples=args.resamples)
    after_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    before = pure_python_bootstrap(metrics, args.resamples)
    before_s = time.perf_counter() - t0
    gap = max(abs(a - b) for k in METRICS if before[k] and after[k] for a, b in zip(before[k], after[k]))

    record = {
        "command": "python benchmarks/bootstrap_speed.py" + (f" --items {args.items}" if args.items != 200_000 else ""),
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs ({platform.platform()})",
        "load_average": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
        "items": args.items,
        "resamples": args.resamples,
        "bootstrap": {
            "pure_python_s": round(before_s, 2),
            "numpy_s": round(after_s, 2),
            "speedup": round(before_s / after_s, 1),
            "max_interval_difference": round(gap, 5),
            "numpy_intervals": after,
            "pure_python_intervals": before,
        },
        "score_file": {
            "wall_s": round(wall, 2),
            "timing_total_s": report.timing["total_s"],
            "total_over_wall": round(report.timing["total_s"] / wall, 3),
            "timing": dict(report.timing),
        },
        "versions": {k: v for k, v in versions().items() if k in ("python", "numpy", "conflictscore-local")},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    b, s = record["bootstrap"], record["score_file"]
    out.with_suffix(".md").write_text(
        f"# Bootstrap intervals for {args.items:,} items\n\n"
        f"Command: `{record['command']}`  \nDate: {record['date']}. Machine: {record['machine']}; "
        f"load average {record['load_average']} (start, end), shared with other jobs.\n\n"
        f"| {args.resamples} resamples, 4 metrics | seconds |\n|---|---|\n"
        f"| pure Python (`random.choices`, before) | {b['pure_python_s']} |\n"
        f"| numpy (`metrics.bootstrap_ci`, now) | {b['numpy_s']} |\n"
        f"| ratio | **{b['speedup']}×** |\n\n"
        f"The two draw from different random streams; their intervals differ by at most "
        f"{b['max_interval_difference']} (resampling noise).\n\n"
        f"`score_file` on the same {args.items:,} labelled items (3 claims × 3 documents, no model): "
        f"{s['wall_s']} s wall, `timing.total_s` = {s['timing_total_s']} s "
        f"({s['total_over_wall']:.1%} of the wall time: the summary's timing covers the whole run).\n"
    )
    print(out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
