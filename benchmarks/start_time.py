"""How fast ``conflictscore score`` starts: one one-claim item, a cold process, by runtime.

Each variant runs the command a user runs (``python -m conflictscore_local.cli score ITEM -o OUT
--no-cache -q``, the default judge) in a fresh process, ``--rounds`` times, the variants alternating
so that the machine's load falls on all alike. Recorded per run: wall seconds and the child's CPU
seconds (user + sys, from ``resource.getrusage``), which the load of a shared machine moves far less
than wall time; and which heavy libraries the process imported (``-X importtime``). ``--help`` and
``backends`` are timed the same way. The package's bytecode is compiled first (an installed
package has it; a checkout under ``PYTHONDONTWRITEBYTECODE`` would compile its modules at every
start), and the judgment cache folder, where the weights' hash is remembered, is a temporary one. The variants: ``runtime=torch`` (transformers' tokenizer and
model) and ``runtime=native`` (the same forward without transformers), and whether their labels and
probabilities are equal.

    .venv/bin/python benchmarks/start_time.py --out benchmarks/results/start_time [--rounds 5]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recording import header, run_meta, write_recorded  # noqa: E402

ITEM = {"id": "q1", "response": "The Eiffel Tower is in Paris.", "claims": ["The Eiffel Tower is in Paris."],
        "documents": [{"id": "d1", "text": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France."}]}
HEAVY = ("torch", "transformers", "scipy", "spacy", "thinc", "torch.distributed.tensor", "torch._dynamo")


def timed(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One cold process: wall and CPU seconds, and which of :data:`HEAVY` it imported."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-2000:]}")
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return {"wall_s": round(wall, 3), "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 3),
            "imported": [m for m in HEAVY if m in imported]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="benchmarks/results/start_time", help="OUT.json and OUT.md")
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
        variants = {
            f"score, runtime={r}": [*cli, "score", str(item), "-o", str(Path(tmp) / f"{r}.jsonl"), "--no-cache", "-q",
                                    "--judge-arg", f"runtime={r}"] for r in ("torch", "native")}
        variants["--help"] = [*cli, "--help"]
        variants["backends"] = [*cli, "backends"]
        for _ in range(args.rounds):
            for name, argv in variants.items():
                runs.setdefault(name, []).append(timed(argv, env))
        rows = {r: (Path(tmp) / f"{r}.jsonl").read_text(encoding="utf-8") for r in ("torch", "native")}
    measured = {name: {"cpu_s_median": round(statistics.median(x["cpu_s"] for x in rs), 3),
                       "cpu_s_min": min(x["cpu_s"] for x in rs),
                       "wall_s_median": round(statistics.median(x["wall_s"] for x in rs), 3),
                       "wall_s_min": min(x["wall_s"] for x in rs),
                       "imported": rs[0]["imported"], "runs": rs} for name, rs in runs.items()}
    torch_cpu, native_cpu = (measured[f"score, runtime={r}"]["cpu_s_median"] for r in ("torch", "native"))
    result = {"meta": {**run_meta(__file__, None, started, load), "rounds": args.rounds, "bytecode": compiled},
              "measured": {"variants": measured, "native_cpu_share_of_torch": round(native_cpu / torch_cpu, 3),
                           "same_output": rows["torch"] == rows["native"]}}
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
    lines = ["# Start time: one one-claim item, a cold `conflictscore score`", "", *header(data["meta"]),
             f"{data['meta']['rounds']} rounds, the variants alternating. CPU seconds are user + sys of the process "
             "(what the load of a shared machine changes least); wall seconds move with the load. "
             f"{_sentence(data['meta'].get('bytecode', 'bytecode as found'))}; the first `score` run hashes the judge's "
             "weights and remembers the hash beside the judgment cache (a temporary folder), later runs read it.", "",
             "| variant | CPU s (median) | CPU s (min) | wall s (median) | wall s (min) | heavy imports |",
             "|---|---|---|---|---|---|"]
    for name, v in m["variants"].items():
        lines.append(f"| {name} | {v['cpu_s_median']} | {v['cpu_s_min']} | {v['wall_s_median']} | {v['wall_s_min']} | "
                     f"{', '.join(v['imported']) or 'none'} |")
    lines += ["", f"`runtime=native` takes {m['native_cpu_share_of_torch']} of `runtime=torch`'s CPU seconds; "
              f"the two runs' output files are {'identical' if m['same_output'] else 'DIFFERENT'}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
