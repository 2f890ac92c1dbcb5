"""Where a cold ``conflictscore score`` run spends its time: a py-spy profile sorted by stage.

The command a user runs (``python -m conflictscore_local.cli score ITEMS -o OUT --no-cache``, the
default pipeline: claims given, ``auto`` pruner, the default judge) on RAMDocs questions against
their own documents (``--questions``), sampled by py-spy (``--rate`` per second, native frames off);
each sample is put in the first stage whose rule matches its stack, from the innermost frame out:
judge forward, judge tokenization and padding, pruner embedding, spaCy, chunking, the judgment
cache (SQLite), JSON reading and writing, model loading, imports, other.

    .venv/bin/python -m benchmarks.speed.profile_cold --out benchmarks/results/speed/profile_cold [--questions 10]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

from benchmarks._lib.recording import header, run_meta, uptime, write_recorded
from benchmarks._lib.workloads import base_parser, ramdocs_questions

STAGES: list[tuple[str, Callable[[str], bool]]] = [
    ("imports", lambda f: "<frozen importlib._bootstrap" in f),
    (
        "model loading",
        lambda f: (
            "from_pretrained" in f
            or "SentenceTransformer.__init__" in f
            or "load_state_dict" in f
            or "safetensors" in f
        ),
    ),
    ("judge forward", lambda f: "forward (" in f and ("modeling_" in f or "torch/nn" in f)),
    ("pruner embedding", lambda f: "prune/embedding.py" in f),
    ("judge tokenization + padding", lambda f: "encode_pairs" in f or "tokenization_utils" in f or "pad (" in f),
    ("spaCy", lambda f: "spacy/" in f or "thinc/" in f),
    ("chunking", lambda f: "conflictscore_local/chunk.py" in f),
    ("judgment cache (SQLite)", lambda f: "conflictscore_local/cache.py" in f),
    ("JSON read/write", lambda f: "json/" in f or "jsonl.py" in f or "jobs/atomic.py" in f),
]


def stage_of(stack: str) -> str:
    """The stage of one py-spy raw stack (frames outermost first, ``;``-separated)."""
    frames = stack.split(";")
    for name, rule in STAGES:
        if any(rule(f) for f in frames):
            return name
    return "other"


def shares(raw: str) -> dict[str, object]:
    counts: dict[str, int] = defaultdict(int)
    total = 0
    for line in raw.splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        total += int(n)
        counts[stage_of(stack)] += int(n)
    return {
        "samples": total,
        "shares": {k: round(v / total, 3) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])},
    }


def main(argv: list[str] | None = None) -> None:
    ap = base_parser(__doc__, "profile_cold")
    ap.add_argument("--questions", type=int, default=10, help="RAMDocs questions (default 10)")
    ap.add_argument("--rate", type=int, default=50, help="py-spy samples per second")
    args = ap.parse_args(argv)
    started, load = time.perf_counter(), os.getloadavg()
    questions = ramdocs_questions(Path(args.data_dir) if args.data_dir else None)[: args.questions]
    before = uptime()
    with tempfile.TemporaryDirectory() as tmp:
        items = Path(tmp) / "items.jsonl"
        items.write_text(
            "".join(
                json.dumps(
                    {
                        "id": q.key,
                        "response": " ".join(q.claims),
                        "claims": q.claims,
                        "documents": [{"id": f"d{j}", "text": t} for j, t in enumerate(q.docs)],
                    }
                )
                + "\n"
                for q in questions
            ),
            encoding="utf-8",
        )
        raw = Path(tmp) / "profile.txt"
        cmd = [
            str(Path(sys.executable).with_name("py-spy")),
            "record",
            "--format",
            "raw",
            "--rate",
            str(args.rate),
            "--nonblocking",
            "-o",
            str(raw),
            "--",
            sys.executable,
            "-m",
            "conflictscore_local.cli",
            "score",
            str(items),
            "-o",
            str(Path(tmp) / "out.jsonl"),
            "--summary",
            str(Path(tmp) / "summary.json"),
            "--no-cache",
            "-q",
        ]
        subprocess.run(cmd, check=True, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        found = shares(raw.read_text(encoding="utf-8"))
        summary = json.loads((Path(tmp) / "summary.json").read_text(encoding="utf-8"))
    data = {
        "meta": run_meta(__file__, argv, started, load, uptime_before=before, uptime_after=uptime()),
        "profiled": "py-spy record --format raw --rate N --nonblocking -- python -m conflictscore_local.cli score "
        "ITEMS -o OUT --summary SUMMARY --no-cache -q",
        "items": len(questions),
        "pairs": summary.get("pairs"),
        "timing": summary.get("timing"),
        "pruner_decisions": (summary.get("stages", {}).get("pruner") or {}).get("decisions"),
        **found,
    }
    print(write_recorded(Path(args.out), data, markdown))


def markdown(data: dict[str, Any]) -> str:
    meta = data["meta"]
    lines = [
        "# Profile of one cold `conflictscore score` run (py-spy)",
        "",
        *header(meta),
        f"Profiled: `{data['profiled']}`. **Not idle** (shared machine):  ",
        f"uptime before: `{meta['uptime_before']}`  ",
        f"uptime after: `{meta['uptime_after']}`",
        "",
        f"{data['items']} RAMDocs items against their own documents, claims given; pairs: {data['pairs']}; "
        f"the run's own timing: {data['timing']}.",
        "",
        f"| stage | share of {data['samples']} samples |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in data["shares"].items()]
    lines += [
        "",
        "A sample counts for the first stage in the table's rule order whose frame appears in its stack "
        "(imports first: a module imported while loading a model counts as an import).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
