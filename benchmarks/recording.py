"""What a benchmark script records beside its figures: the command, the machine, the load, the time,
the versions; and the three files it writes (OUT.json, OUT.md, OUT.png). Imported by the scripts
beside it (``claim_sampling.py``, ``cascade_sweep.py``, ``vector_store.py``, ``cpu_runtimes.py``), run as
``python benchmarks/NAME.py``."""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from conflictscore_local.util.environment import versions
from conflictscore_local.util.locations import repo_root
from conflictscore_local.util.paths import portable
from conflictscore_local.jobs import write_json_atomic, write_text_atomic


def run_meta(script: str, argv: Sequence[str] | None, started: float, load: Sequence[float]) -> dict[str, Any]:
    """The ``meta`` of a recorded result: ``load`` is ``os.getloadavg()`` at the start, ``started`` its clock."""
    args = list(argv) if argv is not None else sys.argv[1:]
    return {
        "date": dt.date.today().isoformat(),
        "command": "python " + shlex.join([os.path.relpath(script, repo_root())] + args),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs shared with other jobs, no GPU ({platform.platform()})",
        "load_average": [round(load[0], 1), round(os.getloadavg()[0], 1)],
        "total_s": round(time.perf_counter() - started, 1),
        "versions": versions(),
    }


def write_recorded(out: Path, result: dict[str, Any], markdown: Callable[[dict[str, Any]], str],
                   plot: Callable[[dict[str, Any], Path], None] | None = None) -> str:
    """OUT.json (``result`` with repository-relative paths), OUT.md and (given ``plot``) OUT.png;
    returns the markdown."""
    result = portable(result)
    write_json_atomic(out.with_suffix(".json"), result)
    text = markdown(result)
    write_text_atomic(out.with_suffix(".md"), text)
    if plot is not None:
        plot(result, out.with_suffix(".png"))
    return text


def header(meta: dict[str, Any], extra: str = "") -> list[str]:
    """The lines an OUT.md starts its body with: the command, the date, the machine and the load."""
    start, end = meta["load_average"]
    return [f"Command: `{meta['command']}`  ",
            f"Date: {meta['date']}. Machine: {meta['machine']}{extra}; 1-minute load average {start} at the start, "
            f"{end} at the end; {meta['total_s']} s in all.", ""]
