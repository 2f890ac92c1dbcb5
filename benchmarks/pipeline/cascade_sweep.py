"""The judge cascade on ConflictBench: the share of pairs escalated to the second judge and the
conflict-detection F1 as ``escalate_below`` moves, with and without ``escalate_flips``.

The first judge is the default judge (``nli`` with the bundled checkpoint). Second judges, each
clearly what it is:

- ``--second NAME=JSON``: a judge config, e.g. an older checkpoint of the default judge
  (``judge-v1={"name": "nli", "model": "benchmarks/work/judge-v1"}``: the v1 weights from git,
  ``git show 8824ff0^:models/default-judge/FILE``), a DeBERTa-v3 NLI model or Qwen3-32B through vLLM
  on a GPU;
- ``gold-oracle`` (always run): a *scripted* judge that answers every passage with its document's
  ConflictBench gold label. It is no model: it shows what a perfect second judge would give for
  each budget, the ceiling a real second judge approaches.

Every setting is a real run of the engine with ``--judge cascade``. The judges' own judgments are
cached under their own specs in ``--cache`` (the file the plain ``bench run``s used, so the first
judge's answers are reused); each judge answers a pair once however many thresholds are tried.
The engine's own cache (pruner selections, the cascade's judgments) starts empty in
``benchmarks/work/cascade_sweep.engine.sqlite`` so that every setting's counts are its own.

    .venv/bin/python -m benchmarks.pipeline.cascade_sweep --bench benchmarks/work/conflictbench.jsonl --split dev \\
        --second 'judge-v1={"name": "nli", "model": "benchmarks/work/judge-v1"}' \\
        --cache benchmarks/work/cache.sqlite --out benchmarks/results/pipeline/cascade_sweep

writes OUT.json (every setting), OUT.md (the tables, with the command, machine and load) and OUT.png.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks._lib.recording import run_meta, write_recorded
from conflictscore_local import Engine, RunConfig
from conflictscore_local.backends import registry
from conflictscore_local.bench.gold import evaluate, load_bench_items
from conflictscore_local.core.types import Judgment, Pair
from conflictscore_local.judge._base import JudgeBase
from conflictscore_local.util.jsonl import file_sha256

THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
ENGINE_CACHE = Path("benchmarks/work/cascade_sweep.engine.sqlite")


@dataclasses.dataclass(frozen=True)
class OracleConfig:
    bench: str = "benchmarks/work/conflictbench.jsonl"


class GoldOracle(JudgeBase):
    """Scripted, not a model: every passage gets its document's ConflictBench gold label."""

    name = "gold-oracle"
    role = "judge"
    Config = OracleConfig

    def __init__(self, config: Any = None):
        super().__init__(config)
        self._gold: dict[tuple[str, int, str], str] | None = None

    def gold(self) -> dict[tuple[str, int, str], str]:
        if self._gold is None:
            self._gold = {
                (it.id, i, d.id): row[j]
                for it in load_bench_items(self.config.bench)
                for i, row in enumerate(it.meta["gold_labels"])
                for j, d in enumerate(it.documents)
            }
        return self._gold

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        gold = self.gold()
        out = [
            Judgment(p, gold[(p.claim.item_id, p.claim.index, p.passage.doc_id)], None, "judge")  # type: ignore
            for p in pairs
        ]
        if on_progress:
            on_progress(len(pairs))
        return out

    def spec(self) -> dict[str, Any]:
        return {"name": "gold-oracle", "bench_sha256": file_sha256(self.config.bench)}

    def passage_budget(self) -> None:
        return None


def run_setting(items: list[Any], second: dict[str, Any], threshold: float, flips: bool, cache: Path) -> dict[str, Any]:
    """One engine run with the cascade: escalation counts, detection and pair metrics."""
    judge = {
        "name": "cascade",
        "first": {"name": "nli"},
        "second": second,
        "escalate_below": threshold,
        "escalate_flips": flips,
    }
    cfg = RunConfig().updated({"judge": judge, "cache": {"path": str(ENGINE_CACHE)}})
    t0 = time.perf_counter()
    with Engine(cfg) as engine:
        engine.backend("judge").use_judgment_cache(cache)  # the judges' own answers: the shared cache
        results = list(engine.score(items))
        stats = engine.backend("judge").stats()
        pairs = engine.summarize(results).pairs
    ev = evaluate(items, results)
    o = ev["detection"]["overall"]
    decided = sum(j.decided_by == "second" for r in results for v in r.verdicts for j in v.judgments)
    return {
        "escalate_below": threshold,
        "escalate_flips": flips,
        "pairs": stats.get("pairs", 0),
        "escalated": stats.get("escalated", 0),
        "escalated_share": stats.get("escalated_share", 0.0),
        "escalated_unsure": stats.get("escalated_unsure", 0),
        "escalated_flip_only": stats.get("escalated_flip_only", 0),
        "documents_decided_by_second": decided,
        "precision": o["precision"],
        "recall": o["recall"],
        "f1": o["f1"],
        "pair_macro_f1": ev["pairs"]["macro_f1"],
        "pruned": pairs["pruned"],
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="benchmarks/work/conflictbench.jsonl")
    ap.add_argument("--split", default="dev", choices=("train", "dev", "test"))
    ap.add_argument(
        "--second",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a second judge's config (repeatable); the scripted gold-oracle is always run",
    )
    ap.add_argument("--thresholds", type=float, nargs="+", default=list(THRESHOLDS))
    ap.add_argument("--cache", default="benchmarks/work/cache.sqlite", help="the judges' own judgments")
    ap.add_argument("--out", default="benchmarks/results/pipeline/cascade_sweep")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    load = os.getloadavg()
    items = load_bench_items(args.bench, split=args.split)
    seconds = {"gold-oracle (scripted)": {"name": "gold-oracle", "bench": args.bench}}
    for spec in args.second:
        name, _, body = spec.partition("=")
        seconds[name] = json.loads(body)
    ENGINE_CACHE.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(str(ENGINE_CACHE) + suffix).unlink(missing_ok=True)
    sweeps = []
    with registry.registered("judge", "gold-oracle", GoldOracle):
        for name, second in seconds.items():
            rows = []
            for flips in (False, True):
                for t in args.thresholds:
                    row = run_setting(items, second, t, flips, Path(args.cache))
                    print(
                        f"{name} flips={flips} escalate_below={t}: escalated {row['escalated_share']:.1%}, "
                        f"F1 {row['f1']:.3f} ({row['seconds']} s)",
                        file=sys.stderr,
                    )
                    rows.append(row)
            sweeps.append({"second": name, "config": second, "rows": rows})
    bench = {
        "file": args.bench,
        "sha256": file_sha256(args.bench),
        "split": args.split,
        "items": len(items),
        "claims": sum(len(it.claims or ()) for it in items),
    }
    result = {"bench": bench, "first": {"name": "nli"}, "sweeps": sweeps, "meta": run_meta(__file__, argv, t0, load)}
    text = write_recorded(Path(args.out), result, markdown, plot)
    print(text)
    return 0


def markdown(result: dict[str, Any]) -> str:
    m, b = result["meta"], result["bench"]
    lines = [
        "# The judge cascade on ConflictBench",
        "",
        f"Date {m['date']}; `{m['command']}`; {m['machine']}; load average {m['load_average']} (start, end); "
        f"{m['total_s']} s in all. ConflictBench {b['split']}: {b['items']} items, {b['claims']} claims "
        f"(`{b['file']}`, sha256 {b['sha256'][:12]}…).",
        "",
        "First judge: the default judge (`nli`, bundled checkpoint) on every pair. A pair goes to the second judge "
        "when the first judge's top probability is below `escalate_below` (1 sends every pair), and with "
        "`escalate_flips` also when its runner-up label would flip its claim's conflict status. Escalated: share of "
        "the claim × passage pairs the first judge answered that the second judge was asked about (what a GPU "
        "budget pays for). Detection: claim-level conflict detection against the gold (precision, recall, F1). "
        "`gold-oracle` is a scripted stand-in, not a model: it answers with the gold label, so its rows are the "
        "ceiling a perfect second judge gives for each budget.",
        "",
    ]
    for s in result["sweeps"]:
        lines += [
            f"## Second judge: {s['second']}",
            "",
            f"`{json.dumps(s['config'])}`",
            "",
            "| escalate_flips | escalate_below | escalated | of which flip only | precision | recall | F1 |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in s["rows"]:
            share = r["escalated"] / r["pairs"] if r["pairs"] else 0.0
            flip = r["escalated_flip_only"] / r["pairs"] if r["pairs"] else 0.0
            lines.append(
                f"| {'yes' if r['escalate_flips'] else 'no'} | {r['escalate_below']:g} | {share:.1%} | "
                f"{flip:.1%} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} |"
            )
        lines.append("")
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> None:
    """Detection F1 against the share escalated, one line per second judge and flip setting."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.8), layout="constrained")
    ax = fig.subplots()
    for s in result["sweeps"]:
        for flips, style in ((False, "o-"), (True, "s--")):
            rows = [r for r in s["rows"] if r["escalate_flips"] is flips]
            ax.plot(
                [r["escalated"] / r["pairs"] if r["pairs"] else 0 for r in rows],
                [r["f1"] for r in rows],
                style,
                label=f"{s['second']}{', flips' if flips else ''}",
            )
    ax.set_xlabel("share of pairs escalated to the second judge")
    ax.set_ylabel("conflict detection F1")
    ax.set_xlim(-0.02, 1.02)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(frameon=False, fontsize=7.5)
    fig.savefig(path, dpi=110, metadata={"Software": None})


if __name__ == "__main__":
    sys.exit(main())
