"""Peak memory of splitting one long document into passages with the judge's own tokenizer.

A synthetic document of about ``--mb`` million characters (prose sentences, a long run without sentence
ends, a blob without spaces) is split by ``Chunker`` counting with the bundled default
judge's tokenizer, as the ``nli`` judge sets it up, in a fresh process; beside it, in another
fresh process, the same tokenizer counts the whole document at once (what the chunker did
before, to decide whether a document fits). Each reports its peak resident memory above
the process's baseline (tokenizer loaded, document built), and the chunker run the
longest text it handed the tokenizer.

    .venv/bin/python -m benchmarks.pipeline.chunk_memory --out benchmarks/results/pipeline/chunk_memory
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._lib.recording import header, run_meta, write_recorded


def document(mb: float) -> str:
    n = int(mb * 1_000_000)
    prose = " ".join(
        f"Sentence {i} says the bridge opened in {1900 + i % 100} and was painted red." for i in range(n // 140)
    )
    run_on = " ".join(f"word{i}" for i in range(n // 40))
    blob = "x" * (n // 8)
    return f"{prose}\n\n{run_on}\n\n{blob}\n\nThe end."


def child(mode: str, mb: float) -> dict[str, object]:
    from conflictscore_local.core.chunk import Chunker
    from conflictscore_local.core.types import Document
    from conflictscore_local.judge.nli import NLIConfig, NLIJudge

    judge = NLIJudge(NLIConfig(device="cpu"))
    count, budget = judge.passage_budget()
    text = document(mb)
    longest = 0

    def counting(t: str) -> int:
        nonlocal longest
        longest = max(longest, len(t))
        return count(t)

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    if mode == "whole":
        tokens = counting(text)
        out: dict[str, object] = {"tokens": tokens}
    else:
        ps = Chunker(max_tokens=budget, overlap=1, count=counting).passages("it", Document("d", text))
        out = {"passages": len(ps), "passage_budget": budget}
    out.update(
        seconds=round(time.perf_counter() - t0, 1),
        chars=len(text),
        longest_counted=longest,
        peak_rss_above_baseline_mb=round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024, 1),
    )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--out", default="benchmarks/results/pipeline/chunk_memory")
    ap.add_argument("--child", choices=["whole", "chunker"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.mb)))
        return
    started, load = time.perf_counter(), os.getloadavg()
    runs = {}
    for mode in ("chunker", "whole"):
        r = subprocess.run(
            [sys.executable, "-m", __spec__.name, "--child", mode, "--mb", str(args.mb)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "TOKENIZERS_PARALLELISM": "false"},
        )
        runs[mode] = json.loads(r.stdout.strip().splitlines()[-1])
        print(mode, runs[mode], flush=True)
    record = {
        "meta": run_meta(__file__, argv, started, load),
        "document_mb": args.mb,
        "tokenizer": "the bundled default judge's (models/default-judge), as the nli judge counts passages",
        "chunker": runs["chunker"],
        "whole_document_count": runs["whole"],
    }
    print(write_recorded(Path(args.out), record, markdown))


def markdown(record: dict) -> str:
    c, w = record["chunker"], record["whole_document_count"]
    return (
        "\n".join(
            [f"# Chunking a document of {c['chars'] / 1e6:.1f} million characters: peak memory", ""]
            + header(record["meta"])
            + [
                f"Tokenizer: {record['tokenizer']}. Each variant in a fresh process; memory is the peak resident set "
                "above the process's baseline (tokenizer loaded, document built).",
                "",
                "| | peak RSS above baseline, MB | longest text counted at once, chars | seconds |",
                "|---|---|---|---|",
                f"| `Chunker.passages` now ({c['passages']} passages of ≤ {c['passage_budget']} tokens) | "
                f"{c['peak_rss_above_baseline_mb']} | {c['longest_counted']} | {c['seconds']} |",
                f"| counting the whole document at once (the chunker's first step before) | "
                f"{w['peak_rss_above_baseline_mb']} | {w['longest_counted']} | {w['seconds']} |",
            ]
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
