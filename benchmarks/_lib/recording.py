"""What a benchmark script records beside its figures: the command, the machine, the load, the time,
the versions; and the files it writes (OUT.json, OUT.md, OUT.png, or a committed page's results
below its hand-written header). With :mod:`.workloads` (the inputs), the one module the scripts of
``benchmarks/`` share; they run as ``python -m benchmarks.GROUP.NAME`` from the repository root."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from conflictscore_local.jobs import write_json_atomic, write_text_atomic
from conflictscore_local.util.environment import versions
from conflictscore_local.util.locations import repo_root
from conflictscore_local.util.paths import portable, portable_text


def run_meta(
    script: str, argv: Sequence[str] | None, started: float, load: Sequence[float], **extra: Any
) -> dict[str, Any]:
    """The ``meta`` every recorded result carries: the date, the command (``script`` is the caller's
    ``__file__``, ``argv`` its arguments, default ``sys.argv[1:]``), the commit, the machine and its CPU
    flags, the 1-minute load average at the start (``load``: ``os.getloadavg()`` then) and now, the time
    since ``started`` (its ``time.perf_counter()``), the versions; then the script's own ``extra``."""
    return {
        "date": dt.date.today().isoformat(),
        "command": command(script, argv),
        "commit": commit(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs shared with other jobs, no GPU "
        f"({platform.platform()})",
        "cpu_flags": cpu_flags_line(),
        "load_average": [round(load[0], 1), round(os.getloadavg()[0], 1)],
        "total_s": round(time.perf_counter() - started, 1),
        "versions": versions(),
        **extra,
    }


def command(script: str, argv: Sequence[str] | None = None) -> str:
    """``python -m benchmarks.GROUP.NAME ARGS``: the command that runs ``script`` (a ``__file__`` of this
    package) with ``argv`` (default ``sys.argv[1:]``)."""
    module = Path(os.path.relpath(script, repo_root())).with_suffix("").as_posix().replace("/", ".")
    return "python -m " + shlex.join([module] + list(argv if argv is not None else sys.argv[1:]))


def commit() -> str:
    """The checkout's commit (``git rev-parse HEAD``), with ``+changes`` when tracked files differ from it;
    ``unknown`` outside a git checkout."""

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=repo_root(), capture_output=True, text=True)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return "unknown"
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    except OSError:
        return "unknown"
    return head.stdout.strip() + ("+changes" if dirty else "")


def write_recorded(
    out: Path,
    result: dict[str, Any],
    markdown: Callable[[dict[str, Any]], str],
    plot: Callable[[dict[str, Any], Path], None] | None = None,
) -> str:
    """OUT.json (``result`` with repository-relative paths), OUT.md and (given ``plot``) OUT.png;
    returns the markdown."""
    result = portable(result)
    write_json_atomic(out.with_suffix(".json"), result)
    text = markdown(result)
    write_text_atomic(out.with_suffix(".md"), text)
    if plot is not None:
        plot(result, out.with_suffix(".png"))
        compact_png(out.with_suffix(".png"))
    return text


def compact_png(path: Path) -> None:
    """Rewrite a plot's PNG in place as an optimised 256-colour palette image (no alpha): a third of
    matplotlib's RGBA file or less, which keeps the committed results small. Visually the same picture, not
    bit for bit: a plot of more than 256 colours (anti-aliased edges) has those pixels re-coloured to the
    nearest of the 256 (about 3% of a plot's pixels)."""
    from PIL import Image

    part = path.with_name(path.name + ".part")
    with Image.open(path) as im:
        im.convert("RGB").quantize(256).save(part, "PNG", optimize=True)
    os.replace(part, path)


def header(meta: dict[str, Any], extra: str = "") -> list[str]:
    """The lines an OUT.md starts its body with: the command, the date, the machine and the load."""
    start, end = meta["load_average"]
    said = f" (commit {meta['commit']})" if meta.get("commit") else ""
    return [
        f"Command: `{meta['command']}`{said}  ",
        f"Date: {meta['date']}. Machine: {meta['machine']}{extra}; 1-minute load average {start} at the start, "
        f"{end} at the end; {meta['total_s']} s in all.",
        "",
    ]


def cpu_flags_line() -> str:
    """The CPU's vector-instruction flags (avx*, amx*) a speed figure depends on, sorted, one line."""
    from conflictscore_local.util.devices import cpu_flags

    return " ".join(sorted(f for f in cpu_flags() if f.startswith(("avx", "amx")))) or "none of avx/amx"


def uptime() -> str:
    """``uptime``'s line (the load averages), or the load averages alone where there is no ``uptime``."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def write_under_header(out: Path, meta: dict[str, Any], results: Any, body: str) -> None:
    """``{"meta", "results"}`` as JSON beside ``out``, and ``out`` = its hand-written header (what is
    above ``<!-- results -->``) + ``body``; paths repository-relative (``<tmp>`` for temporary
    ones): the files are committed."""
    out.with_suffix(".json").write_text(
        json.dumps(portable({"meta": meta, "results": results}), indent=1) + "\n", encoding="utf-8"
    )
    head = out.read_text(encoding="utf-8").split("<!-- results -->")[0] if out.exists() else ""
    out.write_text(head + portable_text("<!-- results -->\n" + body), encoding="utf-8")
