"""What pydantic or cattrs would cost in place of the hand-written argument coercion
(``conflictscore_local.backends.arguments.coerce``): import time, and whether they read flag strings
the way ``--judge-arg KEY=VALUE`` needs.

Every command builds configs from strings (``conflictscore --help`` imports the argument code
through the config), so a validation library would be imported by every run, ``--help``
included. Measured in fresh interpreters, each statement ``--repeats`` times, alternating,
median wall time (``python -X importtime`` agrees, cumulative microseconds):

- ``import conflictscore_local.cli`` and ``conflictscore --help`` as shipped, and importing one
  judge config (the baseline of the two rows that build a validator for it);
- ``import pydantic`` and building a ``TypeAdapter`` for one judge config (what replacing
  ``coerce`` needs at least), ``import cattrs`` and a ``Converter``;
- how each reads ``"false"``, ``"3"``, ``"1e-3"``, ``"a,b"`` for ``bool``, ``int``, ``float``,
  ``list[str]`` without custom hooks.

    .venv/bin/python benchmarks/coerce_import_cost.py --out benchmarks/results/coerce_import_cost
    (cattrs is not a dependency: ``pip install --target DIR cattrs`` and pass ``--extra-path DIR``)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

STATEMENTS: dict[str, str] = {
    "python (empty)": "pass",
    "import conflictscore_local.cli": "import conflictscore_local.cli",
    "conflictscore --help": "from conflictscore_local.cli import build_parser; build_parser().format_help()",
    "import a judge config (NLIConfig)": "from conflictscore_local.judge.nli import NLIConfig",
    "import pydantic": "import pydantic",
    "pydantic TypeAdapter of a judge config": (
        "import pydantic; from conflictscore_local.judge.nli import NLIConfig; pydantic.TypeAdapter(NLIConfig)"
    ),
    "import cattrs": "import cattrs",
    "cattrs Converter of a judge config": (
        "import cattrs; from conflictscore_local.judge.nli import NLIConfig; "
        "cattrs.Converter().structure({'batch_size': '8'}, NLIConfig)"
    ),
}

READINGS = (("bool", "false"), ("int", "3"), ("float", "1e-3"), ("list[str]", "a,b"))


def wall(statement: str, env: dict[str, str]) -> float | None:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", statement], env=env, capture_output=True)
    return time.perf_counter() - t0 if r.returncode == 0 else None


def importtime_us(module: str, env: dict[str, str]) -> int | None:
    """Cumulative microseconds of ``import module`` as ``-X importtime`` reports it."""
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"], env=env, capture_output=True, text=True
    )
    if r.returncode != 0:
        return None
    for line in r.stderr.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1])
    return None


def readings() -> dict[str, dict[str, Any]]:
    """How each library reads the flag strings, without custom hooks (``error: ...`` when refused)."""
    from conflictscore_local.backends.arguments import coerce

    hints = {"bool": bool, "int": int, "float": float, "list[str]": list[str]}
    out: dict[str, dict[str, Any]] = {}

    def attempt(fn: Any) -> Any:
        try:
            return fn()
        except Exception as e:  # a library's refusal is the finding
            return f"error: {type(e).__name__}"

    for hint, text in READINGS:
        row = {"coerce": attempt(lambda: coerce(text, hints[hint], where="x"))}
        try:
            import pydantic

            row["pydantic"] = attempt(lambda: pydantic.TypeAdapter(hints[hint]).validate_python(text))
        except ImportError:
            row["pydantic"] = "not installed"
        try:
            import cattrs

            row["cattrs"] = attempt(lambda: cattrs.Converter().structure(text, hints[hint]))
        except ImportError:
            row["cattrs"] = "not installed"
        out[f"{hint} from {text!r}"] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument(
        "--extra-path", default="", help="a folder prepended to PYTHONPATH (cattrs installed with --target)"
    )
    ap.add_argument("--out", default="benchmarks/results/coerce_import_cost")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.extra_path:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (args.extra_path, env.get("PYTHONPATH", "")) if p)
        sys.path.insert(0, args.extra_path)
    load0 = os.getloadavg()[0]
    samples: dict[str, list[float]] = {k: [] for k in STATEMENTS}
    for _ in range(args.repeats):
        for name, statement in STATEMENTS.items():
            t = wall(statement, env)
            if t is not None:
                samples[name].append(t)
    median = {k: round(statistics.median(v) * 1000, 1) if v else None for k, v in samples.items()}
    cumulative = {m: importtime_us(m, env) for m in ("conflictscore_local.cli", "pydantic", "cattrs")}
    record = {
        "command": "python benchmarks/coerce_import_cost.py" + (" --extra-path DIR" if args.extra_path else ""),
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs ({platform.platform()})",
        "load_average": [round(load0, 2), round(os.getloadavg()[0], 2)],
        "repeats": args.repeats,
        "median_ms": median,
        "importtime_cumulative_us": cumulative,
        "readings": readings(),
        "versions": {m: _version(m) for m in ("pydantic", "cattrs")},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    base = median["python (empty)"] or 0.0
    rows = "\n".join(f"| {k} | {v} | {round(v - base, 1) if v is not None else '-'} |" for k, v in median.items())
    reads = "\n".join(
        f"| {k} | {r['coerce']!r} | {r['pydantic']!r} | {r['cattrs']!r} |" for k, r in record["readings"].items()
    )
    out.with_suffix(".md").write_text(
        "# Argument coercion: hand-written, pydantic or cattrs\n\n"
        f"Command: `{record['command']}`  \nDate: {record['date']}. Machine: {record['machine']}; load average "
        f"{record['load_average']} (start, end), shared with other jobs. pydantic {record['versions']['pydantic']}, "
        f"cattrs {record['versions']['cattrs']}.\n\n"
        f"Median wall time of a fresh interpreter running the statement ({args.repeats} runs each, interleaved):\n\n"
        "| statement | ms | ms over an empty interpreter |\n|---|---:|---:|\n" + rows + "\n\n"
        f"`python -X importtime`, cumulative: {json.dumps(cumulative)} (microseconds).\n\n"
        "How each reads a flag string without custom hooks:\n\n"
        "| hint from text | `arguments.coerce` | pydantic | cattrs |\n|---|---|---|---|\n"
        + reads
        + "\n\n"
        + decision(median, record["readings"])
    )
    print(out.with_suffix(".md").read_text())


def decision(ms: dict[str, float | None], reads: dict[str, dict[str, Any]]) -> str:
    """The reading of the figures above, in words (what ``arguments.coerce``'s docstring cites)."""
    cli, config = ms["import conflictscore_local.cli"], ms["import a judge config (NLIConfig)"]
    base = ms["python (empty)"]
    if None in (cli, config, base) or ms["import pydantic"] is None:
        return ""
    pyd = ms["import pydantic"] - base  # type: ignore[operator]
    adapter = (ms["pydantic TypeAdapter of a judge config"] or 0.0) - config  # type: ignore[operator]
    text = (
        f"Decision: keep the hand-written `arguments.coerce`. pydantic would add {pyd:.0f} ms of import to every "
        f"command ({pyd / (cli - base):.0%} of importing `conflictscore_local.cli`, {cli - base:.0f} ms) and "
        f"{adapter:.0f} ms to validate the first judge config (import and schema, over importing the config), "
        "and still need a hook for comma-separated lists"
    )
    if ms.get("import cattrs") is not None and ms.get("cattrs Converter of a judge config") is not None:
        cat = ms["import cattrs"] - base  # type: ignore[operator]
        as_false = reads["bool from 'false'"]["cattrs"]
        text += (
            f"; cattrs would add {cat:.0f} ms and reads {as_false!r} for `'false'` and a list of "
            "characters for `'a,b'`, so it needs hooks as long as the code it replaces"
        )
    return text + (
        ". The coercion is about a hundred lines, one function per kind of hint, tested in "
        "`tests/pipeline/test_engine.py`.\n"
    )


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    main()
