"""How long the test suite takes, whole and without the tests marked ``slow``, run back to back
on the same machine under the same load (the load average is recorded around each run).

    nice -n 5 .venv/bin/python -m benchmarks.speed.suite_time --out benchmarks/results/speed/suite_time

Each run is ``python -m pytest -q -p no:cacheprovider`` (plus ``-m "not slow"`` for the second) in
a fresh process from the repository root; the figure is its wall time. The target: the quick run
under half the whole one (``pytest -m "not slow"`` while working, the whole suite before merging).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, uptime, write_recorded

REPO = Path(__file__).resolve().parents[2]


def run(marker: str | None) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + (["-m", marker] if marker else [])
    before = uptime()
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    last = [line for line in r.stdout.strip().splitlines() if line.strip()][-1] if r.stdout.strip() else ""
    counts = {
        k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|deselected|xfailed|xpassed|errors?)", last)
    }
    return {
        "command": "python -m pytest -q -p no:cacheprovider" + (f' -m "{marker}"' if marker else ""),
        "wall_s": round(wall, 1),
        "exit_status": r.returncode,
        "result": last,
        "counts": counts,
        "uptime_before": before,
        "uptime_after": uptime(),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="benchmarks/results/speed/suite_time")
    args = ap.parse_args(argv)
    started, load = time.perf_counter(), os.getloadavg()
    whole = run(None)
    quick = run("not slow")
    record = {
        "meta": run_meta(__file__, argv, started, load),
        "whole": whole,
        "not_slow": quick,
        "ratio": round(quick["wall_s"] / whole["wall_s"], 3),
    }
    print(write_recorded(REPO / args.out, record, markdown))
    sys.exit(0 if whole["exit_status"] == 0 and quick["exit_status"] == 0 else 1)


def markdown(record: dict) -> str:
    rows = "\n".join(
        f"| `{r['command']}` | {r['wall_s']} | {r['result']} | {r['uptime_before'].split('load average: ')[-1]} "
        f"→ {r['uptime_after'].split('load average: ')[-1]} |"
        for r in (record["whole"], record["not_slow"])
    )
    return (
        "# Test suite time: whole, and without the slow tests\n\n"
        + "\n".join(header(record["meta"]))
        + "\nThe two runs back to back; the load average (1, 5, 15 min) is given before → after each run.\n\n"
        "| run | wall s | pytest's result | load average |\n|---|---:|---|---|\n" + rows + "\n\n"
        f'`-m "not slow"` took **{record["ratio"]:.0%}** of the whole suite\'s time.\n'
    )


if __name__ == "__main__":
    main()
