"""A warm-cache rerun with and without the chunker's per-text memo, and where its time goes.

    .venv/bin/python benchmarks/warm_rerun_profile.py [--items 8] [--docs 32] [--repeats 3]

The pooled report-style job of ``benchmarks/throughput.py`` (each item's claims against one shared
corpus of RAMDocs documents), scored once cold to fill a fresh cache, then rerun warm (every
judgment and pruner selection from the cache) with ``Chunker.memo_chars`` as shipped and with 0
(the memo off: every item re-splits every document, counting tokens with the judge's tokenizer).
Prints the best of ``--repeats`` wall times per variant and the share of the memo-off rerun spent
in ``Chunker.passages`` (cProfile).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from workloads import pooled_job, ramdocs_questions  # noqa: E402

from conflictscore_local import Engine, RunConfig  # noqa: E402
from conflictscore_local.backends import registry  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=8)
    ap.add_argument("--docs", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    items = pooled_job(ramdocs_questions(None), args.items, args.docs)
    judge, pruner = registry.build("judge", "nli", {}), registry.build("pruner", "embedding", {})
    with tempfile.TemporaryDirectory() as tmp:
        cfg = RunConfig.from_mapping({"cache": {"enabled": True, "path": str(Path(tmp) / "c.sqlite")}})

        def engine(memo: bool) -> Engine:
            e = Engine(cfg, judge=judge, pruner=pruner)
            if not memo:
                e._chunker = dataclasses.replace(e.chunker(), memo_chars=0)
            return e

        t0 = time.perf_counter()
        list(engine(True).score(items))
        cold = time.perf_counter() - t0
        best = {}
        for memo in (False, True):
            runs = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                list(engine(memo).score(items))
                runs.append(time.perf_counter() - t0)
            best[memo] = min(runs)
        prof = cProfile.Profile()
        prof.enable()
        list(engine(False).score(items))
        prof.disable()
    stats = pstats.Stats(prof)
    total = max(v[3] for v in stats.stats.values())  # type: ignore[attr-defined]
    chunk = sum(v[3] for k, v in stats.stats.items() if k[2] == "passages" and k[0].endswith("chunk.py"))  # type: ignore[attr-defined]
    print(
        f"pooled {args.items}x{args.docs}: cold {cold:.2f} s; warm rerun, memo off {best[False]:.3f} s, "
        f"memo on {best[True]:.3f} s ({best[False] / best[True]:.1f}x); cold / warm with memo {cold / best[True]:.0f}x; "
        f"Chunker.passages {chunk / total:.0%} of the memo-off rerun"
    )


if __name__ == "__main__":
    main()
