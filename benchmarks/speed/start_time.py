"""How fast ``conflictscore score`` starts: one one-claim item, a cold process, by runtime.

Each variant runs the command a user runs (``python -m conflictscore_local.cli score ITEM -o OUT
--no-cache -q``, the default judge) in a fresh process, ``--rounds`` times, the variants alternating
so that the machine's load falls on all alike. Recorded per run: wall seconds and the child's CPU
seconds (user + sys, from ``resource.getrusage``), which the load of a shared machine moves far less
than wall time; and, from one untimed run of each variant under ``-X importtime``, which heavy
libraries the process imported. ``--help`` and ``backends`` are timed the same way. The package's
bytecode is compiled first (an installed package has it; a checkout under
``PYTHONDONTWRITEBYTECODE`` would compile its modules at every start), and the judgment cache
folder, where the weights' hash is remembered, is a temporary one. The variants: ``runtime=torch``
(transformers' tokenizer and model), ``runtime=native`` (the same forward without transformers),
the ``runtime=native`` run ended by ``sys.exit`` instead of the command's own exit (which skips the
interpreter's teardown of torch: :func:`conflictscore_local.cli.app.exit_process`), and whether
their output files are equal.

    .venv/bin/python -m benchmarks.speed.start_time --out benchmarks/results/speed/start_time [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, write_recorded

ITEM = {
    "id": "q1",
    "response": "The Eiffel Tower is in Paris.",
    "claims": ["The Eiffel Tower is in Paris."],
    "documents": [{"id": "d1", "text": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France."}],
}
ORDINARY_EXIT = "score, runtime=native, ordinary exit"
"""The same run ended by ``sys.exit`` (the interpreter's teardown of torch) instead of ``cli.app.run``."""
HEAVY = ("torch", "transformers", "scipy", "spacy", "thinc", "torch.distributed.tensor", "torch._dynamo")


def timed(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One cold process: wall and CPU seconds (user + sys)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 3),
    }


def imported(argv: list[str], env: dict[str, str]) -> list[str]:
    """Which of :data:`HEAVY` the command imports (``-X importtime``, in a run of its own: the
    trace's thousands of lines on stderr would slow the timed runs)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], env=env, capture_output=True, text=True)
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return [m for m in HEAVY if m in names]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="benchmarks/results/speed/start_time", help="OUT.json and OUT.md")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    load, started = os.getloadavg(), time.perf_counter()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("CONFLICTSCORE_NLI_RUNTIME", None)
    compiled = compile_package()
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env["CONFLICTSCORE_CACHE"] = str(Path(tmp) / "judgments.sqlite")  # the weights' hash memo lands here
        item = Path(tmp) / "item.jsonl"
        item.write_text(json.dumps(ITEM) + "\n", encoding="utf-8")
        cli = ["-m", "conflictscore_local.cli"]

        def score(out: str, runtime: str) -> list[str]:
            return [
                "score",
                str(item),
                "-o",
                str(Path(tmp) / f"{out}.jsonl"),
                "--no-cache",
                "-q",
                "--judge-arg",
                f"runtime={runtime}",
            ]

        variants = {f"score, runtime={r}": [*cli, *score(r, r)] for r in ("torch", "native")}
        variants[ORDINARY_EXIT] = [
            "-c",
            "import sys; from conflictscore_local.cli.app import main; sys.exit(main(sys.argv[1:]))",
            *score("ordinary-exit", "native"),
        ]
        variants["--help"] = [*cli, "--help"]
        variants["backends"] = [*cli, "backends"]
        heavy = {name: imported(argv, env) for name, argv in variants.items()}
        for _ in range(args.rounds):
            for name, argv in variants.items():
                runs.setdefault(name, []).append(timed(argv, env))
        rows = {r: (Path(tmp) / f"{r}.jsonl").read_text(encoding="utf-8") for r in ("torch", "native", "ordinary-exit")}
    measured = {
        name: {
            "cpu_s_median": round(statistics.median(x["cpu_s"] for x in rs), 3),
            "cpu_s_min": min(x["cpu_s"] for x in rs),
            "wall_s_median": round(statistics.median(x["wall_s"] for x in rs), 3),
            "wall_s_min": min(x["wall_s"] for x in rs),
            "imported": heavy[name],
            "runs": rs,
        }
        for name, rs in runs.items()
    }
    torch_cpu, native_cpu = (measured[f"score, runtime={r}"]["cpu_s_median"] for r in ("torch", "native"))
    ordinary = measured[ORDINARY_EXIT]["wall_s_median"]
    result = {
        "meta": {**run_meta(__file__, None, started, load), "rounds": args.rounds, "bytecode": compiled},
        "measured": {
            "variants": measured,
            "native_cpu_share_of_torch": round(native_cpu / torch_cpu, 3),
            "fast_exit_wall_share": round(measured["score, runtime=native"]["wall_s_median"] / ordinary, 3),
            "same_output": rows["torch"] == rows["native"] == rows["ordinary-exit"],
        },
    }
    print(write_recorded(Path(args.out), result, markdown))


def compile_package() -> str:
    """Write the package's bytecode, as ``pip install`` does for an installed package, so that a
    checkout under ``PYTHONDONTWRITEBYTECODE`` (which never caches it) is not timed compiling its own
    modules; says what was done."""
    import compileall

    import conflictscore_local

    root = Path(conflictscore_local.__file__).parent
    ok = compileall.compile_dir(str(root), quiet=2)
    why = " (PYTHONDONTWRITEBYTECODE is set here)" if sys.flags.dont_write_bytecode else ""
    return f"the package's bytecode compiled first{why}" if ok else "compiling the package's bytecode failed"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def markdown(data: dict[str, Any]) -> str:
    m = data["measured"]
    lines = [
        "# Start time: one one-claim item, a cold `conflictscore score`",
        "",
        *header(data["meta"]),
        f"{data['meta']['rounds']} rounds, the variants alternating. CPU seconds are user + sys of the process "
        "(what the load of a shared machine changes least); wall seconds move with the load. "
        f"{_sentence(data['meta'].get('bytecode', 'bytecode as found'))}; the first `score` run hashes the judge's "
        "weights and remembers the hash beside the judgment cache (a temporary folder), later runs read it.",
        "",
        "| variant | CPU s (median) | CPU s (min) | wall s (median) | wall s (min) | heavy imports |",
        "|---|---|---|---|---|---|",
    ]
    for name, v in m["variants"].items():
        lines.append(
            f"| {name} | {v['cpu_s_median']} | {v['cpu_s_min']} | {v['wall_s_median']} | {v['wall_s_min']} | "
            f"{', '.join(v['imported']) or 'none'} |"
        )
    lines += [
        "",
        f"`runtime=native` takes {m['native_cpu_share_of_torch']} of `runtime=torch`'s CPU seconds; "
        f"the runs' output files are {'identical' if m['same_output'] else 'DIFFERENT'}.",
        "",
    ]
    if "fast_exit_wall_share" in m:
        lines += [
            f"Ending without the interpreter's teardown of torch (`conflictscore`'s own exit, `cli.app.run`) "
            f"takes {m['fast_exit_wall_share']} of the wall time of the same run ended by `sys.exit` "
            f"({ORDINARY_EXIT!r}), medians.",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
