"""The CPU time of ``conflictscore --help`` and ``conflictscore backends``, and what they import.

Each command runs ``--runs`` times in a fresh process (``nice -n 0 python -m conflictscore_local.cli ...``,
its output discarded, bytecode cached by one warm-up run first); recorded: the median, fastest and
slowest CPU time (user + system, from the child's own rusage: another job's load slows the wall clock
more than the CPU time, but a loaded machine still moves both), how many of the package's modules the
command imported, and whether it imported ``torch``, ``transformers``, the training loop or the bench
builder. ``--repo LABEL=DIR`` measures another checkout of the package the same way (an earlier commit,
exported with ``git archive``), in the same session, commands alternating, so both see the same load.

    python -m benchmarks.speed.help_time --out benchmarks/results/speed/help_time \\
        [--repo "before=BEFORE-DIR@COMMIT"] [--runs 9]   (BEFORE-DIR: git archive COMMIT, unpacked)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, uptime, write_recorded

ROOT = Path(__file__).resolve().parents[2]
COMMANDS: tuple[tuple[str, ...], ...] = (("--help",), ("backends",))
HEAVY: tuple[str, ...] = ("torch", "transformers", "conflictscore_local.train.loop", "conflictscore_local.bench.build")
IMPORTS = """import contextlib, io, json, sys
sys.argv = ['conflictscore', *json.loads(sys.argv[1])]
from conflictscore_local.cli.app import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def environment(repo: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(repo), "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as an installed package has it
    return env


def cpu_seconds(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """User + system CPU seconds of one run of ``argv`` in ``cwd`` (its own rusage, children included; ``python
    -m`` and ``-c`` put the working folder first on the path, so it is the checkout measured)."""
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 2):  # --help exits 0; an unknown command 2
        raise RuntimeError(f"{argv} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def imported(args: tuple[str, ...], env: dict[str, str], cwd: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS, json.dumps(list(args))],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    modules = json.loads(done.stdout.splitlines()[-1])
    where = subprocess.run(
        [sys.executable, "-c", "import conflictscore_local as c; print(c.__file__)"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(cwd.resolve()):
        raise RuntimeError(f"{cwd}: the package imported is {where}, not this checkout's")
    return modules


def package_modules(repo: Path) -> int:
    return sum(1 for p in (repo / "conflictscore_local").rglob("*.py"))


def commit_of(repo: Path, given: str | None) -> str:
    if given:
        return given
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def measure(args: argparse.Namespace) -> dict[str, Any]:
    repos: list[tuple[str, Path, str]] = [("this checkout", ROOT, commit_of(ROOT, None))]
    for spec in args.repo:
        label, _, rest = spec.partition("=")
        path, _, commit = rest.partition("@")
        repos.append((label, Path(path), commit_of(Path(path), commit or None)))
    rows: dict[str, dict[str, Any]] = {}
    times: dict[tuple[str, str], list[float]] = {}
    for label, repo, commit in repos:
        env = environment(repo)
        for cmd in COMMANDS:
            argv = ["nice", "-n", "0", sys.executable, "-m", "conflictscore_local.cli", *cmd]
            cpu_seconds(argv, env, repo)  # warm-up: writes the bytecode
            modules = imported(cmd, env, repo)
            ours = [m for m in modules if m == "conflictscore_local" or m.startswith("conflictscore_local.")]
            rows[f"{label} | {' '.join(cmd)}"] = {
                "checkout": label,
                "commit": commit,
                "command": "conflictscore " + " ".join(cmd),
                "package_modules_imported": len(ours),
                "package_modules": package_modules(repo),
                "heavy_imported": [m for m in HEAVY if m in modules],
                "modules_imported": len(modules),
            }
            times[(label, " ".join(cmd))] = []
    for _ in range(args.runs):  # rounds: every checkout and command once per round, so drift falls on all alike
        for label, repo, _commit in repos:
            env = environment(repo)
            for cmd in COMMANDS:
                argv = ["nice", "-n", "0", sys.executable, "-m", "conflictscore_local.cli", *cmd]
                times[(label, " ".join(cmd))].append(cpu_seconds(argv, env, repo))
    for (label, cmd), ts in times.items():
        row = rows[f"{label} | {cmd}"]
        row.update(
            cpu_s_median=round(statistics.median(ts), 3),
            cpu_s_min=round(min(ts), 3),
            cpu_s_max=round(max(ts), 3),
            cpu_s=[round(t, 3) for t in ts],
        )
    bare = [
        cpu_seconds(["nice", "-n", "0", sys.executable, "-c", "pass"], environment(ROOT), ROOT)
        for _ in range(args.runs)
    ]
    return {
        "runs": args.runs,
        "rows": list(rows.values()),
        "python_startup_cpu_s_median": round(statistics.median(bare), 3),
    }


def markdown(data: dict[str, Any]) -> str:
    meta = data["meta"]
    lines = [
        "# `conflictscore --help` and `conflictscore backends`: CPU time and imports",
        "",
        *header(meta, f"; CPU flags {meta['cpu_flags']}"),
        f"Load before: `{meta['uptime_before']}`; after: `{meta['uptime_after']}`. The machine is shared with a "
        "judge-training job and other sessions, so these are CPU times of a loaded machine (each run's own "
        "user + system time, not its wall time), medians of "
        f"{data['runs']} runs per row, rows alternating; a bare `python -c pass` took "
        f"{data['python_startup_cpu_s_median']} s CPU here (interpreter and site start-up, which every row "
        "includes).",
        "",
        "| checkout (commit) | command | CPU s median | min | max | package modules imported | heavy imported |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in data["rows"]:
        heavy = ", ".join(f"`{m}`" for m in r["heavy_imported"]) or "none"
        lines.append(
            f"| {r['checkout']} ({r['commit']}) | `{r['command']}` | {r['cpu_s_median']} | {r['cpu_s_min']} | "
            f"{r['cpu_s_max']} | {r['package_modules_imported']} of {r['package_modules']} | {heavy} |"
        )
    lines += ["", "Heavy: " + ", ".join(f"`{m}`" for m in HEAVY) + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results/speed/help_time", help="OUT.json and OUT.md")
    parser.add_argument("--runs", type=int, default=9, help="runs per command and checkout (default 9)")
    parser.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="LABEL=DIR[@COMMIT]",
        help="also measure the checkout in DIR (its commit named, where DIR has no .git)",
    )
    args = parser.parse_args()
    started, load, before = time.perf_counter(), os.getloadavg(), uptime()
    data = measure(args)
    data["meta"] = {
        **run_meta(__file__, None, started, load),
        "uptime_before": before,
        "uptime_after": uptime(),
    }
    print(write_recorded(Path(args.out), data, markdown))


if __name__ == "__main__":
    main()
