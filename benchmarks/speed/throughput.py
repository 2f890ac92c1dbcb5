"""Whole-pipeline throughput: the engine as shipped against a naive loop, on jobs built from
``../shared/data``, in one process, on the same inputs.

Jobs (claims given, as ConflictBench gives them: decomposition is not measured here; RAMDocs
questions, documents split by the engine's chunker for both variants):

- ``sweep`` Q×R: Q questions, each answered R times (a sweep over systems, prompts or seeds):
  every response claims a random non-empty subset of the question's claims and is checked
  against the question's documents, so claims and documents repeat across items;
- ``pooled`` I×D: I items (a question and its claims), every one checked against one pooled
  corpus of D documents (the items' own documents first, then other questions'): a report
  checked against everything retrieved for it.

Variants, interleaved per size so that load from other processes hits them alike:

- ``engine``: ``Engine`` as shipped (embedding pruner, de-duplication, token-budget batches,
  judgment cache; the ``nli`` judge's ``runtime=auto``: ONNX Runtime on a CPU where the
  ``onnx`` extra is installed), on a new, empty cache file (cold); ``warm``: the same run again
  on the filled cache; ``torch`` / ``onnx``: the engine with the other runtime (where installed);
- ``naive``: every claim × passage pair, one forward each (tokenizer + model + softmax, the
  judge's label rule), no de-duplication, no cache;
- on sweeps also ``batched`` (every pair, no de-duplication, the judge's token-budget
  batches) and ``dedup`` (the engine with ``--pruner none``): naive → batched → dedup →
  engine separates what batching, de-duplication and pruning each give.

Printed per size and variant: wall time, claim × document pairs/s, items/s, peak RSS
(sampled), the share of passage pairs the judge ran, the speed-up over naive, labels
compared with naive. Models load before any timing. ``--profile`` runs the cold engine on
the largest pooled job under py-spy and sorts the samples by pipeline stage.

Torch runs ``--threads`` threads (default 1). On this shared 2-core machine, with other
processes keeping the load above 2, two OpenMP threads spin against them at every operator:
measured, one forward of one pair took 433 ms with 2 threads and 59 ms with 1 (a batch of 32:
50 vs 18 ms a pair), which would inflate the naive loop's cost many times over.

    .venv/bin/python -m benchmarks.speed.throughput --out benchmarks/results/speed/throughput [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from benchmarks._lib.recording import compact_png, header, run_meta
from benchmarks._lib.workloads import Question, doc_labels, pooled_job, ramdocs_questions, sweep_job
from conflictscore_local import Engine, RunConfig
from conflictscore_local.core.aggregate import claim_verdict, document_judgment
from conflictscore_local.core.metrics import item_metrics, macro
from conflictscore_local.core.types import Claim, Item, Judgment, Pair
from conflictscore_local.util.paths import portable

POOLED_ENGINE = [
    (2, 8),
    (2, 16),
    (2, 32),
    (4, 8),
    (4, 16),
    (4, 32),
    (8, 8),
    (8, 16),
    (8, 32),
    (8, 64),
    (16, 32),
    (16, 64),
]
POOLED_NAIVE = [(2, 8), (4, 16), (8, 32), (16, 64)]
SWEEP_SIZES = [(4, 4), (8, 4), (16, 4)]
SWEEP_NAIVE = [(4, 4), (8, 4)]


# -- measuring ---------------------------------------------------------------------------------
class PeakRSS:
    """The largest resident set size seen while the block runs (sampled every 20 ms)."""

    def __enter__(self) -> "PeakRSS":
        self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@dataclass
class Run:
    job: str
    size: str
    variant: str
    items: int
    doc_pairs: int
    wall_s: float
    peak_rss_mb: float
    load: float
    passage_pairs: int = 0
    forwards: int | None = None
    labels: dict[tuple[str, int, str], str | None] = field(default_factory=dict, repr=False)
    macro: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "size": self.size,
            "variant": self.variant,
            "items": self.items,
            "doc_pairs": self.doc_pairs,
            "passage_pairs": self.passage_pairs,
            "wall_s": round(self.wall_s, 3),
            "pairs_per_s": round(self.doc_pairs / self.wall_s, 2),
            "items_per_s": round(self.items / self.wall_s, 3),
            "peak_rss_mb": round(self.peak_rss_mb, 1),
            "forwards": self.forwards,
            "judged_fraction": round(self.forwards / self.passage_pairs, 4)
            if self.forwards is not None and self.passage_pairs
            else None,
            "load_avg_1m": round(self.load, 2),
            "macro": self.macro,
            **self.extra,
        }


class Bench:
    """The loaded models and the variants, each timed on the same items."""

    def __init__(self, tmp: Path, onnx: bool):
        from conflictscore_local.backends import registry

        self.tmp = tmp
        self.judge = registry.build("judge", "nli", {})
        self.pruner = registry.build("pruner", "embedding", {})
        self.none = registry.build("pruner", "none", {})
        # the judge as shipped resolves runtime=auto (ONNX Runtime on a CPU where the onnx extra is
        # installed, else torch); the other runtime is measured as an extra row
        self.runtime, self.alt = "torch", "onnx"
        try:
            from conflictscore_local.judge.nli.runtimes import resolve_runtime

            self.runtime = resolve_runtime("auto", "auto")
            self.alt = "torch" if self.runtime == "onnx" else "onnx"
        except ImportError:  # an nli judge without runtimes
            pass
        self.onnx_judge, self.onnx_note = None, "not measured"
        if onnx:
            try:
                self.onnx_judge = registry.build("judge", "nli", {"runtime": self.alt})
                self.onnx_judge.spec()
            except Exception as e:  # an nli judge without the runtime argument, or no onnx extra
                self.onnx_judge, self.onnx_note = None, f"skipped: {type(e).__name__}: {e}"
        self.chunker = self.engine(None, self.pruner).chunker()
        self._naive: Any = None
        self.cache_n = 0

    def engine(self, cache: Path | None, pruner: Any, judge: Any = None) -> Engine:
        cfg = RunConfig.from_mapping({"cache": {"enabled": cache is not None, "path": str(cache) if cache else None}})
        return Engine(cfg, judge=judge or self.judge, pruner=pruner)

    def warm_up(self, items: Sequence[Item]) -> None:
        """Load every model (and fill nothing that a timed run reads) before timing."""
        self.run_engine("warmup", "-", "engine", items[:2], cache=None)
        self.run_naive("warmup", "-", items[:1])
        if self.onnx_judge is not None:
            self.run_engine("warmup", "-", self.alt, items[:2], cache=None, judge=self.onnx_judge)

    def new_cache(self) -> Path:
        self.cache_n += 1
        return self.tmp / f"cache-{self.cache_n}.sqlite"

    def run_engine(
        self,
        job: str,
        size: str,
        variant: str,
        items: Sequence[Item],
        *,
        cache: Path | None,
        pruner: Any = None,
        judge: Any = None,
    ) -> Run:
        judge = judge or self.judge
        before = dict(judge.stats())
        with self.engine(cache, pruner or self.pruner, judge) as engine, PeakRSS() as rss:
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            results, report = engine.score_all(list(items))
            wall = time.perf_counter() - t0
        after = judge.stats()
        forwards = after.get("forward_inputs", 0) - before.get("forward_inputs", 0)
        timing = {k: v for k, v in report.timing.items() if k.endswith("_s")}
        return Run(
            job,
            size,
            variant,
            len(items),
            _doc_pairs(items),
            wall,
            rss.peak / 2**20,
            load,
            passage_pairs=int(report.stages["engine"].get("passage_pairs", 0)),
            forwards=forwards,
            labels=doc_labels(results),
            macro=dict(report.macro),
            extra={"engine_timing_s": timing, "pairs": dict(report.pairs)},
        )

    def naive_model(self) -> tuple[Any, Any, Any, Any, int]:
        if self._naive is None:
            import torch
            from transformers import AutoModelForSequenceClassification

            model = AutoModelForSequenceClassification.from_pretrained(
                str(self.judge.checkpoint()), dtype=torch.float32
            ).eval()
            self._naive = (torch, model, self.judge.tokenizer(), self.judge.labels(), self.judge.max_length())
        return self._naive

    def run_naive(self, job: str, size: str, items: Sequence[Item], *, batched: bool = False) -> Run:
        """Every claim × passage pair judged: one forward each (``batched``: the judge's
        token-budget batches, still without de-duplication), the judge's label rule."""
        from conflictscore_local.core.types import LABELS
        from conflictscore_local.judge.labels import decide
        from conflictscore_local.judge.nli.runtimes.base import token_batches

        torch, model, tok, labels, max_length = self.naive_model()
        thresholds = self.judge.thresholds()
        with PeakRSS() as rss:
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            pairs = [
                Pair(Claim(it.id, i, c), p)
                for it in items
                for p in self.chunker.split(it.id, [d for d in it.documents if d.text.strip()])
                for i, c in enumerate(it.claims or ())
            ]
            probs: list[dict[str, float]] = []
            if batched:
                enc = [tok(p.passage.text, p.claim.text, truncation="only_first", max_length=max_length) for p in pairs]
                order = sorted(range(len(pairs)), key=lambda i: -len(enc[i]["input_ids"]))
                out: list[Any] = [None] * len(pairs)
                lengths = [len(enc[i]["input_ids"]) for i in order]
                for idx in token_batches(order, lengths, 64, 2048):
                    batch = tok.pad(
                        [
                            {k: enc[i][k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc[i]}
                            for i in idx
                        ],
                        return_tensors="pt",
                    )
                    with torch.inference_mode():
                        rows = torch.softmax(model(**batch).logits.float(), dim=-1).tolist()
                    for i, row in zip(idx, rows):
                        out[i] = row
                raw = out
            else:
                raw = []
                for p in pairs:
                    batch = tok(
                        p.passage.text,
                        p.claim.text,
                        truncation="only_first",
                        max_length=max_length,
                        return_tensors="pt",
                    )
                    with torch.inference_mode():
                        raw.append(torch.softmax(model(**batch).logits.float(), dim=-1)[0].tolist())
            for row in raw:
                p = dict.fromkeys(LABELS, 0.0)
                for k, v in enumerate(row):
                    p[labels[k]] += v
                probs.append(p)
            judged = [Judgment(pr, decide(pb, thresholds), pb) for pr, pb in zip(pairs, probs)]
            by_doc: dict[tuple[str, int, str], list[Judgment]] = defaultdict(list)
            for j in judged:
                by_doc[(j.pair.claim.item_id, j.pair.claim.index, j.pair.passage.doc_id)].append(j)
            metrics = []
            lab: dict[tuple[str, int, str], str | None] = {}
            for it in items:
                verdicts = []
                for i, c in enumerate(it.claims or ()):
                    djs = [
                        document_judgment(d.id, by_doc[(it.id, i, d.id)])
                        for d in it.documents
                        if by_doc.get((it.id, i, d.id))
                    ]
                    for d in djs:
                        lab[(it.id, i, d.doc_id)] = d.label
                    verdicts.append(claim_verdict(Claim(it.id, i, c), djs))
                metrics.append(item_metrics(verdicts))
            wall = time.perf_counter() - t0
        return Run(
            job,
            size,
            "batched" if batched else "naive",
            len(items),
            _doc_pairs(items),
            wall,
            rss.peak / 2**20,
            load,
            passage_pairs=len(pairs),
            forwards=len(pairs),
            labels=lab,
            macro=macro(metrics),
        )


def _doc_pairs(items: Sequence[Item]) -> int:
    return sum(len(it.claims or ()) * len(it.documents) for it in items)


# -- the benchmark -----------------------------------------------------------------------------
def measure(
    args: argparse.Namespace, bench: Bench, questions: Sequence[Question], log: Callable[[str], None]
) -> list[Run]:
    runs: list[Run] = []

    own: dict[str, set[str]] = {}

    def add(r: Run, base: Run | None) -> Run:
        if base is not None:
            r.extra["speedup_vs_naive"] = round(base.wall_s / r.wall_s, 2)
            r.extra.update(compare(r, base, own))
        runs.append(r)
        row = r.row()
        log(
            f"{r.job:7}{r.size:>7} {r.variant:8}{row['wall_s']:9.2f}s {row['pairs_per_s']:9.1f} pairs/s "
            f"{row['items_per_s']:7.2f} items/s  rss {row['peak_rss_mb']:7.0f} MB  judged "
            f"{row['judged_fraction'] if row['judged_fraction'] is not None else '-'}  "
            f"x{r.extra.get('speedup_vs_naive', '-')}  load {row['load_avg_1m']}"
        )
        return r

    for n_items, n_docs in args.pooled:
        items = pooled_job(questions, n_items, n_docs)
        own.update({it.id: set(it.meta["own_documents"]) for it in items})
        size = f"{n_items}x{n_docs}"
        naive = add(bench.run_naive("pooled", size, items), None) if (n_items, n_docs) in args.pooled_naive else None
        cache = bench.new_cache()
        cold = add(bench.run_engine("pooled", size, "engine", items, cache=cache), naive)
        warm = add(bench.run_engine("pooled", size, "warm", items, cache=cache), naive)
        warm.extra["cold_over_warm"] = round(cold.wall_s / warm.wall_s, 1)
        if bench.onnx_judge is not None and naive is not None:
            add(
                bench.run_engine("pooled", size, bench.alt, items, cache=bench.new_cache(), judge=bench.onnx_judge),
                naive,
            )
    for n_q, n_r in args.sweep:
        items = sweep_job(questions, n_q, n_r)
        size = f"{n_q}x{n_r}"
        full = (n_q, n_r) in args.sweep_naive
        naive = add(bench.run_naive("sweep", size, items), None) if full else None
        if full:
            add(bench.run_naive("sweep", size, items, batched=True), naive)
            add(bench.run_engine("sweep", size, "dedup", items, cache=bench.new_cache(), pruner=bench.none), naive)
        cache = bench.new_cache()
        cold = add(bench.run_engine("sweep", size, "engine", items, cache=cache), naive)
        warm = add(bench.run_engine("sweep", size, "warm", items, cache=cache), naive)
        warm.extra["cold_over_warm"] = round(cold.wall_s / warm.wall_s, 1)
    return runs


def compare(run: Run, naive: Run, own: dict[str, set[str]]) -> dict[str, Any]:
    """Document labels against the naive loop's: equal where the judge ran; where the pruner
    said IRRELEVANT, how many the judge calls SUPPORT / CONTRADICT, against the item's own
    documents and (pooled jobs) against other questions' documents, irrelevant by construction."""
    same = differ = missed_own = missed_other = 0
    for (item, claim, doc), lab in run.labels.items():
        want = naive.labels.get((item, claim, doc))
        if lab == want:
            same += 1
        elif lab == "IRRELEVANT" and want in ("SUPPORT", "CONTRADICT"):
            if item in own and doc not in own[item]:
                missed_other += 1
            else:
                missed_own += 1
        else:
            differ += 1
    return {
        "labels_same_as_naive": same,
        "labels_other": differ,
        "pruned_sided_own_docs": missed_own,
        "pruned_sided_other_docs": missed_other,
    }


def profile(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """py-spy samples of the cold engine on the largest pooled job, sorted by pipeline stage."""
    n_items, n_docs = args.pooled[-1]
    raw = out.with_name(out.name + "_profile.txt")
    cmd = [
        str(Path(sys.executable).with_name("py-spy")),
        "record",
        "--format",
        "raw",
        "--rate",
        "50",
        "--nonblocking",
        "-o",
        str(raw),
        "--",
        sys.executable,
        "-m",
        __spec__.name,
        "--profile-child",
        f"{n_items}x{n_docs}",
        "--threads",
        str(args.threads),
    ]
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    shares = stage_shares(raw.read_text(encoding="utf-8"))
    raw.unlink()
    return {"job": f"pooled {n_items}x{n_docs}", "command": " ".join(["py-spy"] + cmd[1:6] + ["..."]), **shares}


STAGES: list[tuple[str, Callable[[str], bool]]] = [
    ("judge forward", lambda s: "judge/nli" in s and "forward (" in s),
    ("judge tokenize+pad", lambda s: "judge/nli" in s),
    ("pruner embedding forward", lambda s: "prune/embedding.py" in s and "forward (" in s),
    ("pruner other", lambda s: "prune/" in s),
    ("chunking", lambda s: "conflictscore_local/chunk.py" in s),
    ("judgment cache", lambda s: "conflictscore_local/cache.py" in s),
    ("aggregation", lambda s: "conflictscore_local/aggregate.py" in s),
    ("engine other", lambda s: "conflictscore_local/engine.py" in s),
]


def stage_shares(raw: str) -> dict[str, Any]:
    """Samples inside the profiled engine run (:func:`profiled_run`) by stage, first matching rule wins."""
    counts: dict[str, int] = defaultdict(int)
    total = 0
    for line in raw.splitlines():
        stack, _, n = line.rpartition(" ")
        if "profiled_run" not in stack:
            continue
        total += int(n)
        counts[next((name for name, rule in STAGES if rule(stack)), "other")] += int(n)
    return {
        "samples": total,
        "shares": {k: round(v / total, 3) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])},
    }


def profile_child(args: argparse.Namespace) -> None:
    n_items, n_docs = (int(x) for x in args.profile_child.split("x"))
    questions = ramdocs_questions(Path(args.data_dir) if args.data_dir else None)
    items = pooled_job(questions, n_items, n_docs)
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp), onnx=False)
        bench.run_engine("warmup", "-", "engine", items[:2], cache=None)
        profiled_run(bench, items)


def profiled_run(bench: "Bench", items: Sequence[Item]) -> Run:
    """The run the profile counts (its frame marks the samples, the warm-up's are left out)."""
    return bench.run_engine("pooled", "profile", "engine", items, cache=bench.new_cache())


def summarize(runs: Sequence[Run]) -> dict[str, Any]:
    by = {(r.job, r.size, r.variant): r for r in runs}
    out: dict[str, Any] = {"pooled": {}, "sweep": {}}
    for (job, size, variant), r in by.items():
        if variant == "engine" and (job, size, "naive") in by:
            naive = by[(job, size, "naive")]
            entry = out[job].setdefault(size, {})
            entry["cold_speedup"] = round(naive.wall_s / r.wall_s, 2)
            entry["cold_over_warm"] = round(r.wall_s / by[(job, size, "warm")].wall_s, 1)
            if job == "sweep" and (job, size, "batched") in by:
                b, d = by[(job, size, "batched")], by[(job, size, "dedup")]
                entry["batching"] = round(naive.wall_s / b.wall_s, 2)
                entry["dedup"] = round(b.wall_s / d.wall_s, 2)
                entry["pruning"] = round(d.wall_s / r.wall_s, 2)
                entry["distinct_share"] = round(d.forwards / d.passage_pairs, 3) if d.passage_pairs else None
    return out


def write_table(runs: Sequence[Run], path: Path, head: str) -> None:
    lines = [
        head,
        "",
        "| job | size | variant | items | claim×doc pairs | wall s | pairs/s | items/s | peak RSS MB "
        "| judged share | × naive | labels = naive | pruned, judge says S/C (own / others' docs) | load |",
        "|" + "---|" * 14,
    ]
    for r in runs:
        w = r.row()
        same = f"{r.extra['labels_same_as_naive']}/{len(r.labels)}" if "labels_same_as_naive" in r.extra else ""
        missed = (
            f"{r.extra['pruned_sided_own_docs']} / {r.extra['pruned_sided_other_docs']}"
            if "pruned_sided_own_docs" in r.extra
            else ""
        )
        lines.append(
            f"| {r.job} | {r.size} | {r.variant} | {r.items} | {r.doc_pairs} | {w['wall_s']:.2f} "
            f"| {w['pairs_per_s']:.1f} | {w['items_per_s']:.2f} | {w['peak_rss_mb']:.0f} "
            f"| {w['judged_fraction'] if w['judged_fraction'] is not None else ''} "
            f"| {r.extra.get('speedup_vs_naive', '')} | {same} | {missed} | {w['load_avg_1m']} |"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def plot(runs: Sequence[Run], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, job in zip(axes, ("pooled", "sweep")):
        for variant, style in (
            ("naive", "o-"),
            ("batched", "v--"),
            ("dedup", "^--"),
            ("engine", "s-"),
            ("warm", "d:"),
            ("onnx", "x-"),
            ("torch", "x-"),
        ):
            pts = sorted((r.doc_pairs, r.wall_s) for r in runs if r.job == job and r.variant == variant)
            if pts:
                ax.loglog(*zip(*pts), style, label=variant)
        ax.set_title(f"{job}: wall time vs claim × document pairs")
        ax.set_xlabel("claim × document pairs (items × claims × documents)")
        ax.set_ylabel("seconds")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    compact_png(path)


def parse_sizes(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in s.split("x")) for s in text.split(",") if s]  # type: ignore[misc]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="benchmarks/results/speed/throughput", help="results prefix (.json, .md, .png)")
    ap.add_argument("--data-dir", help="the shared data folder (default ../shared/data)")
    ap.add_argument("--pooled", type=parse_sizes, default=POOLED_ENGINE, help="pooled sizes ITEMSxDOCS,...")
    ap.add_argument("--pooled-naive", type=parse_sizes, default=POOLED_NAIVE, help="pooled sizes that also run naive")
    ap.add_argument("--sweep", type=parse_sizes, default=SWEEP_SIZES, help="sweep sizes QUESTIONSxRESPONSES,...")
    ap.add_argument("--sweep-naive", type=parse_sizes, default=SWEEP_NAIVE, help="sweep sizes that also run naive")
    ap.add_argument("--no-onnx", action="store_true", help="skip the ONNX Runtime row")
    ap.add_argument("--profile", action="store_true", help="also profile the cold engine (py-spy)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1; see the module docstring)")
    ap.add_argument("--profile-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    if args.profile_child:
        profile_child(args)
        return
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    spy = Path(sys.executable).with_name("py-spy")
    if args.profile and not spy.is_file():  # found before measuring, not after
        sys.exit(f"--profile needs py-spy beside this Python ({spy}): pip install py-spy")
    questions = ramdocs_questions(Path(args.data_dir) if args.data_dir else None)
    started, load = time.perf_counter(), os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp), onnx=not args.no_onnx)
        bench.warm_up(pooled_job(questions, 2, 4))
        runs = measure(args, bench, questions, lambda m: print(m, flush=True))
    prof = profile(args, out) if args.profile else None
    record = {
        "meta": run_meta(__file__, argv, started, load, torch_threads=args.threads),
        "judge": portable(bench.judge.describe()),
        "runtime_as_shipped": bench.runtime,
        "other_runtime": bench.alt if bench.onnx_judge is not None else bench.onnx_note,
        "cold_speedup": summarize(runs),
        "runs": [r.row() for r in runs],
        "profile": prof,
        "peak_rss_process_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    out.with_suffix(".json").write_text(json.dumps(portable(record), indent=2) + "\n", encoding="utf-8")
    said = f"; nli runtime as shipped: {bench.runtime}; torch threads {args.threads}"
    head = "# Whole-pipeline throughput\n\n" + "\n".join(header(record["meta"], said)).rstrip()
    write_table(runs, out.with_suffix(".md"), head)
    plot(runs, out.with_suffix(".png"))
    print(json.dumps(record["cold_speedup"], indent=2))
    if prof:
        print(json.dumps(prof, indent=2))


if __name__ == "__main__":
    main()
