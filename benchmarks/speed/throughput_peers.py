"""The engine against what a user would write instead, with the CPU's limit in the same run.

Peers, on the same pairs and the same weights (the shipped default judge, whatever
``models/default-judge`` holds), every document split by the engine's chunker for all of
them, each (passage, claim) pair read as the judge reads it (premise = passage, truncating
the passage only), and every peer's class probabilities turned into labels by the judge's
own rule (calibrated thresholds) and into document labels by the engine's aggregation:

- ``crossencoder``: ``sentence_transformers.CrossEncoder(model).predict(pairs, batch_size=32)``
  over every claim × passage pair (its own tokenization: it truncates both sides to the
  window, ``longest_first``, where the judge cuts only the passage; pairs that long are rare);
- ``hf_batch``: a plain ``transformers`` loop: the pairs in input order, 32 at a time,
  padded to the longest of the batch, softmax;
- ``engine_none``: ``Engine`` cold (new cache file) with ``--pruner none``;
- ``engine_default``: ``Engine`` cold with the default pruner (``auto``);
- ``warm``: ``engine_default`` again on its filled cache.

Models are loaded before any timing, except the ``auto`` pruner's embedder, which loads inside
the first cold run where it decides to prune (as in a user's first run). Workloads (claims given):
``rag`` RAMDocs questions against their own 5-10 documents; ``pooled`` RAMDocs items each against one pooled corpus
of other questions' documents; ``long`` SciFact dev claims against their cited abstracts
plus three uncited ones (whole abstracts: split into several passages).

The limit: fp32 and bf16 matmul GFLOP/s measured with torch at ``--threads`` threads (the
judge's own shape: tokens × hidden @ hidden × intermediate); the judge's matmul FLOPs per
forward from its config and the tokens each variant actually ran
(:mod:`conflictscore_local.util.flops`), the achieved share of the fp32 peak, and padded ÷ real
tokens. Optionally (``--growth``) the engine's cold time as documents per item grow 1×, 2×, 4×,
8× (other questions' documents pooled in).

    .venv/bin/python -m benchmarks.speed.throughput_peers --out benchmarks/results/speed/throughput_peers
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Sequence

from benchmarks._lib.recording import compact_png, uptime
from benchmarks._lib.workloads import (
    PEER_BATCH,
    base_parser,
    data_dir,
    doc_labels,
    grown_job,
    long_job,
    matmul_peak,
    plain_folder,
    pooled_job,
    rag_job,
    ramdocs_questions,
    token_counts,
)
from conflictscore_local import Engine, RunConfig
from conflictscore_local.core.aggregate import document_judgment
from conflictscore_local.core.types import LABELS, Claim, Item, Judgment, Pair
from conflictscore_local.judge.labels import decide
from conflictscore_local.judge.nli import encode_pairs
from conflictscore_local.util.environment import versions


# -- peers -------------------------------------------------------------------------------------
class Peers:
    """The default judge's weights as a user would run them, beside the engine."""

    def __init__(
        self,
        tmp: Path,
        threads: int,
        device: str = "cpu",
        runtime: str = "auto",
        pruner: str | None = None,
        judge_args: dict[str, Any] | None = None,
    ):
        import torch

        from conflictscore_local.backends import registry

        self.tmp = tmp
        self.pruner = pruner  # engine_default's and warm's (None: the engine's default)
        self.threads = threads
        self.device = device
        self.judge = registry.build("judge", "nli", {"device": device, "runtime": runtime, **(judge_args or {})})
        rt = self.judge.runtime()
        # the peers run in the engine's dtype (onnx and openvino: float32 at dtype=auto)
        self.dtype = rt.resolved_dtype()[0] if hasattr(rt, "resolved_dtype") else torch.float32
        self.labels = self.judge.labels()
        self.thresholds = self.judge.thresholds()
        self.max_length = self.judge.max_length()
        engine = Engine(pruner="none", judge=self.judge)
        self.chunker = engine.chunker()
        self.document_rule = engine.document_rule()  # the rule a run of the engine decides documents by
        self.config = self.judge._json("config.json")
        self.cache_n = 0
        self._cross: Any = None
        self._model: Any = None
        self._folder: Path | None = None

    def pairs(self, items: Sequence[Item]) -> list[Pair]:
        return [
            Pair(Claim(it.id, i, c), p)
            for it in items
            for p in self.chunker.split(it.id, [d for d in it.documents if d.text.strip()])
            for i, c in enumerate(it.claims or ())
        ]

    def model_folder(self) -> Path:
        """The judge's checkpoint as the peers read it: a plain float32 ``transformers`` folder (a packed
        checkpoint unpacked, float16 weights cast, exactly), written once under the temporary folder."""
        if self._folder is None:
            self._folder = plain_folder(self.judge.checkpoint(), self.tmp / "judge")
        return self._folder

    def cross_encoder(self) -> Any:
        if self._cross is None:
            from sentence_transformers import CrossEncoder

            # the engine's dtype (float32 on a CPU without native bf16; the checkpoint is stored in float16)
            self._cross = CrossEncoder(
                str(self.model_folder()),
                max_length=self.max_length,
                device=self.device,
                local_files_only=True,
                model_kwargs={"dtype": self.dtype},
            )
        return self._cross

    def hf_model(self) -> Any:
        if self._model is None:
            from transformers import AutoModelForSequenceClassification

            self._model = (
                AutoModelForSequenceClassification.from_pretrained(str(self.model_folder()), dtype=self.dtype)
                .to(self.device)
                .eval()
            )
        return self._model

    def doc_labels_of(self, items: Sequence[Item], pairs: Sequence[Pair], rows: Sequence[Sequence[float]]) -> dict:
        """Class-probability rows → the judge's labels → document labels by the engine's aggregation."""
        by_doc: dict[tuple[str, int, str], list[Judgment]] = defaultdict(list)
        for pair, row in zip(pairs, rows):
            probs = dict.fromkeys(LABELS, 0.0)
            for k, v in enumerate(row):
                probs[self.labels[k]] += float(v)
            by_doc[(pair.claim.item_id, pair.claim.index, pair.passage.doc_id)].append(
                Judgment(pair, decide(probs, self.thresholds), probs)
            )
        return {key: document_judgment(key[2], js, rule=self.document_rule).label for key, js in by_doc.items()}

    def run_crossencoder(self, items: Sequence[Item]) -> dict[str, Any]:
        import numpy as np
        import torch

        model = self.cross_encoder()
        t0 = time.perf_counter()
        pairs = self.pairs(items)
        logits = model.predict(
            [(p.passage.text, p.claim.text) for p in pairs],
            batch_size=PEER_BATCH,
            show_progress_bar=False,
            activation_fn=torch.nn.Identity(),
            convert_to_numpy=True,
        )
        z = np.asarray(logits, dtype=np.float64)
        z = np.exp(z - z.max(axis=1, keepdims=True))
        rows = (z / z.sum(axis=1, keepdims=True)).tolist()
        labels = self.doc_labels_of(items, pairs, rows)
        wall = time.perf_counter() - t0
        tok = model.tokenizer
        enc = [
            tok(p.passage.text, p.claim.text, truncation="longest_first", max_length=self.max_length)["input_ids"]
            for p in pairs
        ]
        return {
            "wall_s": wall,
            "labels": labels,
            "passage_pairs": len(pairs),
            "forwards": len(pairs),
            **self.tokens([len(e) for e in enc], in_order=True),
        }

    def run_hf_batch(self, items: Sequence[Item]) -> dict[str, Any]:
        import torch
        from transformers import AutoTokenizer

        model = self.hf_model()
        # a user's loop: transformers' own tokenizer (the judge's may be the native runtime's, which pads nothing)
        tok = AutoTokenizer.from_pretrained(str(self.model_folder()), local_files_only=True)
        t0 = time.perf_counter()
        pairs = self.pairs(items)
        rows: list[list[float]] = []
        for s in range(0, len(pairs), PEER_BATCH):
            batch = pairs[s : s + PEER_BATCH]
            enc = tok(
                [p.passage.text for p in batch],
                [p.claim.text for p in batch],
                padding=True,
                truncation="only_first",
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                rows.extend(torch.softmax(model(**enc).logits.float(), dim=-1).tolist())
        labels = self.doc_labels_of(items, pairs, rows)
        wall = time.perf_counter() - t0
        feats, _ = encode_pairs(tok, [p.passage.text for p in pairs], [p.claim.text for p in pairs], self.max_length)
        return {
            "wall_s": wall,
            "labels": labels,
            "passage_pairs": len(pairs),
            "forwards": len(pairs),
            **self.tokens([len(f["input_ids"]) for f in feats], in_order=True),
        }

    def new_cache(self) -> Path:
        self.cache_n += 1
        return self.tmp / f"cache-{self.cache_n}.sqlite"

    def run_engine(self, items: Sequence[Item], *, pruner: str | None, cache: Path) -> dict[str, Any]:
        cfg = RunConfig.from_mapping({"cache": {"enabled": True, "path": str(cache)}})
        if pruner is not None:
            cfg = cfg.updated({"pruner": {"name": pruner}})
        before = dict(self.judge.stats())
        with Engine(cfg, judge=self.judge) as engine:
            t0 = time.perf_counter()
            results, report = engine.score_all(list(items))
            wall = time.perf_counter() - t0
            stages = report.stages.get("pruner", {})
        forwards = self.judge.stats().get("forward_inputs", 0) - before.get("forward_inputs", 0)
        # the tokens the judge ran: the distinct judged inputs, in the runtime's length-sorted token batches
        judged = self._judged_lengths(items, report)
        out = {
            "wall_s": wall,
            "labels": doc_labels(results),
            "passage_pairs": int(report.stages["engine"].get("passage_pairs", 0)),
            "forwards": forwards,
            "judge_s": report.timing.get("judge_s", 0.0),
            "prune_s": report.timing.get("prune_s", 0.0),
            "pairs": dict(report.pairs),
            "pruner_decisions": stages.get("decisions"),
        }
        if forwards and forwards == len(judged):  # nothing pruned: the judged inputs are known exactly
            out.update(self.tokens(judged, in_order=False))
        return out

    def _judged_lengths(self, items: Sequence[Item], report: Any) -> list[int]:  # noqa: ARG002
        """Token lengths of the distinct pairs of ``items`` (what the judge ran when nothing was pruned)."""
        pairs = self.pairs(items)
        uniq = list(dict.fromkeys((p.passage.text, p.claim.text) for p in pairs))
        feats, _ = encode_pairs(self.judge.tokenizer(), [u[0] for u in uniq], [u[1] for u in uniq], self.max_length)
        return [len(f["input_ids"]) for f in feats]

    def tokens(self, lengths: Sequence[int], *, in_order: bool) -> dict[str, Any]:
        default = 2048 if self.device == "cpu" else 65536  # the torch runtime's defaults
        return token_counts(
            lengths,
            self.config,
            in_order=in_order,
            batch_size=self.judge.config.batch_size,
            max_tokens=self.judge.config.max_batch_tokens or default,
        )


# -- the benchmark -----------------------------------------------------------------------------
VARIANTS = ("crossencoder", "hf_batch", "engine_none", "engine_default", "warm")


def run_workload(peers: Peers, name: str, items: list[Item], log: Callable[[str], None]) -> dict[str, Any]:
    runs: dict[str, dict[str, Any]] = {}
    load = [os.getloadavg()[0]]
    runs["crossencoder"] = peers.run_crossencoder(items)
    runs["engine_none"] = peers.run_engine(items, pruner="none", cache=peers.new_cache())
    runs["hf_batch"] = peers.run_hf_batch(items)
    cache = peers.new_cache()
    runs["engine_default"] = peers.run_engine(items, pruner=peers.pruner, cache=cache)
    runs["warm"] = peers.run_engine(items, pruner=peers.pruner, cache=cache)
    load.append(os.getloadavg()[0])
    ref = runs["crossencoder"]["labels"]
    doc_pairs = sum(len(it.claims or ()) * len(it.documents) for it in items)
    out: dict[str, Any] = {
        "items": len(items),
        "claims": sum(len(it.claims or ()) for it in items),
        "doc_pairs": doc_pairs,
        "passage_pairs": runs["crossencoder"]["passage_pairs"],
        "load_avg_1m": [round(x, 2) for x in load],
        "variants": {},
    }
    own = {it.id: set(it.meta["own_documents"]) for it in items if "own_documents" in it.meta}
    for v in VARIANTS:
        r = runs[v]
        labels = r.pop("labels")
        same = sum(labels.get(k) == lab for k, lab in ref.items())
        if own:  # pooled: a differing label on another question's document is one the peer got wrong
            differ = [k for k, lab in ref.items() if labels.get(k) != lab]
            r["differing_on_other_questions_documents"] = sum(k[0] in own and k[2] not in own[k[0]] for k in differ)
        r["wall_s"] = round(r["wall_s"], 3)
        r["doc_pairs_per_s"] = round(doc_pairs / r["wall_s"], 2)
        r["speedup_vs_crossencoder"] = round(runs["crossencoder"]["wall_s"] / r["wall_s"], 3)
        r["label_agreement_with_crossencoder"] = round(same / len(ref), 4) if ref else None
        r["labels_differing"] = len(ref) - same
        out["variants"][v] = r
        log(
            f"{name} {v}: {r['wall_s']:.2f} s, {r['speedup_vs_crossencoder']:.2f}x the CrossEncoder, "
            f"agreement {r['label_agreement_with_crossencoder']}"
        )
    eng = out["variants"]["engine_default"]
    out["speedup_vs_crossencoder"] = eng["speedup_vs_crossencoder"]
    out["label_agreement"] = eng["label_agreement_with_crossencoder"]
    out["warm_over_cold"] = round(eng["wall_s"] / out["variants"]["warm"]["wall_s"], 1)
    return out


def roofline(peers: Peers, workloads: dict[str, Any], threads: int) -> dict[str, Any]:
    cfg = peers.config
    h, i = int(cfg["hidden_size"]), int(cfg.get("intermediate_size") or 4 * cfg["hidden_size"])
    peak = {d: matmul_peak(d, 2048, h, i, device=peers.device) for d in ("float32", "bfloat16")}
    rows = {}
    for name, w in workloads.items():
        for v, r in w["variants"].items():
            if not r.get("judge_gflop"):
                continue
            busy = r.get("judge_s") or r["wall_s"]
            achieved = r["judge_gflop"] / busy
            rows[f"{name}/{v}"] = {
                "gflop": r["judge_gflop"],
                "seconds": round(busy, 3),
                "seconds_are": "judge_s" if r.get("judge_s") else "wall_s",
                "achieved_gflops": round(achieved, 2),
                "share_of_fp32_peak": round(achieved / peak["float32"], 3),
                "padded_over_real": r.get("padded_over_real"),
            }
            if str(peers.dtype) == "torch.bfloat16":  # a GPU (or a CPU with native bf16): its bf16 peak
                rows[f"{name}/{v}"]["share_of_bf16_peak"] = round(achieved / peak["bfloat16"], 3)
    return {"threads": threads, "matmul_shape": f"2048x{h} @ {h}x{i}", "peak_gflops": peak, "variants": rows}


def load_note(uptime_line: str) -> str:
    """What the 1-minute load before the run says of the figures (idle below 1.5 on 2 cores)."""
    m = re.search(r"load average: ([\d.]+)", uptime_line)
    load = float(m.group(1)) if m else None
    if load is not None and load < 1.5:
        return (
            f"The machine was idle (load {load} before the run); the ratios come from one run, the variants "
            "back to back on the same pairs.  "
        )
    said = f" (load {load} before the run)" if load is not None else ""
    return (
        f"**The machine was not idle**{said}, so absolute times are slow and noisy; the ratios come from one run, "
        "the variants back to back on the same pairs.  "
    )


def write_md(data: dict[str, Any], path: Path) -> None:
    lines = [
        "# The engine against CrossEncoder.predict and a transformers batch loop, with the roofline",
        "",
        f"Command: `{data['command']}`  ",
        f"Date: {data['date']}. Machine: {data['machine']}; CPU flags: {data['cpu']}; torch threads "
        f"{data['threads']}; judge: {data['judge']}, runtime {data.get('runtime', 'auto')} (ran: "
        f"{data.get('runtime_resolved') or '?'}).  ",
        load_note(data["uptime_before"]),
        f"uptime before: `{data['uptime_before']}`  ",
        f"uptime after: `{data['uptime_after']}`",
        "",
        "| workload | items | claims | claim × doc pairs | passage pairs | variant | wall s | ×CrossEncoder | "
        "label agreement | judged inputs | padded ÷ real tokens |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, w in data["workloads"].items():
        for v, r in w["variants"].items():
            lines.append(
                f"| {name} | {w['items']} | {w['claims']} | {w['doc_pairs']} | {w['passage_pairs']} | {v} | "
                f"{r['wall_s']} | {r['speedup_vs_crossencoder']} | {r['label_agreement_with_crossencoder']} "
                f"({r['labels_differing']} differ{_other(r)}) | {r['forwards']} | "
                f"{r.get('padded_over_real', '-')} |"
            )
    rf = data["roofline"]
    lines += [
        "",
        "Label agreement: the share of claim × document labels equal to the CrossEncoder's (the same rule "
        "and aggregation applied to its probabilities). Judged inputs: forwards the judge ran (distinct "
        "pairs, after pruning and the cache). Padded ÷ real: for the engine, its length-sorted token "
        "batches; for the peers, batches of 32 in input order. Every model was loaded before the timing "
        "except the auto pruner's embedder, loaded inside engine_default where it pruned (pooled).",
    ]
    lines += [
        "",
        f"## The limit ({rf['threads']} threads, {rf['matmul_shape']})",
        "",
        f"Measured matmul peak: fp32 {rf['peak_gflops']['float32']} GFLOP/s, bf16 "
        f"{rf['peak_gflops']['bfloat16']} GFLOP/s. `dtype=auto` chose **{data['dtype_auto']}** here "
        f"({data['dtype_reason']}).",
        "",
        "| workload/variant | judge GFLOP | seconds | achieved GFLOP/s | share of fp32 peak | padded ÷ real |",
        "|---|---|---|---|---|---|",
    ]
    for k, r in rf["variants"].items():
        lines.append(
            f"| {k} | {r['gflop']} | {r['seconds']} ({r['seconds_are']}) | {r['achieved_gflops']} | "
            f"{r['share_of_fp32_peak']} | {r['padded_over_real']} |"
        )
    if data.get("growth"):
        lines += [
            "",
            "## Growth: engine cold (default pruner) as documents per item grow",
            "",
            "| documents × | claim × doc pairs | wall s | s per 1,000 pairs |",
            "|---|---|---|---|",
        ]
        for g in data["growth"]:
            lines.append(f"| {g['factor']} | {g['doc_pairs']} | {g['wall_s']} | {g['s_per_1000_pairs']} |")
    lines += ["", "## Targets", ""] + [f"- {t}" for t in data["targets"]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _other(r: dict[str, Any]) -> str:
    n = r.get("differing_on_other_questions_documents")
    return f", {n} of them on other questions' documents" if n and r["labels_differing"] else ""


def plot(data: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(data["workloads"])
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(VARIANTS)
    for k, v in enumerate(VARIANTS):
        vals = [data["workloads"][n]["variants"][v]["speedup_vs_crossencoder"] for n in names]
        ax.bar([x + k * width for x in range(len(names))], vals, width, label=v)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(names))], names)
    ax.set_ylabel("speed-up over CrossEncoder.predict (log)")
    ax.set_title(f"Same pairs, same weights, {data['threads']} threads (loaded machine)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    compact_png(path)


def ceiling(data: dict[str, Any], name: str) -> tuple[float, str] | None:
    """The most the engine could beat the CrossEncoder by on ``name`` while running the same
    forwards (every pair judged, identical labels): its judge FLOPs at the measured matmul
    peak, nothing else spent; and the sentence that says so. None where a figure is missing."""
    key = data.get("dtype_auto") or "float32"
    peak = data["roofline"].get("peak_gflops", {}).get(key)  # fp32 and bf16 are measured; float16 is not
    row = data["roofline"]["variants"].get(f"{name}/engine_none")
    peer = data["workloads"][name].get("variants", {}).get("crossencoder")
    if not (peak and row and peer and row.get("gflop")):
        return None
    best = peer["wall_s"] / (row["gflop"] / peak)
    return best, (
        f"the same-forwards ceiling is {best:.2f}x (the {row['gflop']} judge GFLOP at the measured {key} "
        f"peak of {peak} GFLOP/s, nothing else spent)"
    )


def targets(data: dict[str, Any]) -> list[str]:
    """The issue's targets, each with its verdict: on RAG-style items the cold engine at 0.9 or more of
    the same-forwards ceiling; on a pooled corpus 3x the CrossEncoder or more with every label on a
    question's own documents identical; warm 50x cold; the judge forward at half its dtype's peak."""
    out = []
    w = data["workloads"]
    if "rag" in w:
        s, a = w["rag"]["speedup_vs_crossencoder"], w["rag"]["label_agreement"]
        c = ceiling(data, "rag")
        if c is None:
            out.append(f"rag: engine cold {s}x the CrossEncoder; label agreement {a}; no ceiling measured")
        else:
            share = s / c[0]
            out.append(
                f"rag: engine cold {s}x the CrossEncoder = {share:.2f} of the ceiling (target 0.9): "
                f"{'met' if share >= 0.9 else 'MISSED'}; label agreement {a}; {c[1]}"
            )
    if "pooled" in w:
        s, a = w["pooled"]["speedup_vs_crossencoder"], w["pooled"]["label_agreement"]
        cold = w["pooled"].get("variants", {}).get("engine_default", {})
        differ = cold.get("labels_differing")
        own = None if differ is None else differ - cold.get("differing_on_other_questions_documents", 0)
        ok = s >= 3.0 and own == 0
        said = "" if differ is None else f" ({differ} differ, {own} of them on the question's own documents)"
        out.append(
            f"pooled: engine cold {s}x the CrossEncoder (target 3.0x, every label on a question's own "
            f"documents identical): {'met' if ok else 'MISSED'}; label agreement {a}{said}"
        )
    for name, r in w.items():
        out.append(
            f"{name}: warm {r['warm_over_cold']}x cold (target 50x): {'met' if r['warm_over_cold'] >= 50 else 'MISSED'}"
        )
    key = "share_of_bf16_peak" if data.get("dtype_auto") == "bfloat16" else "share_of_fp32_peak"
    best = max((r[key] for k, r in data["roofline"]["variants"].items() if "engine" in k), default=0.0)
    out.append(
        f"judge forward: best engine {key.replace('_', ' ')} {best} (goal 0.5): {'met' if best >= 0.5 else 'MISSED'}"
    )
    return out


def main() -> None:
    ap = base_parser(__doc__, "throughput_peers", ".json, .md, .png")
    ap.add_argument("--rag", type=int, default=8, help="RAMDocs questions of the rag workload")
    ap.add_argument("--pooled", default="4x16", help="ITEMSxDOCS of the pooled workload")
    ap.add_argument("--long", type=int, default=6, help="SciFact claims of the long workload")
    ap.add_argument("--growth", default="", help="documents-per-item factors, e.g. 1,2,4,8 (default: none)")
    ap.add_argument("--growth-items", type=int, default=4, help="RAMDocs questions of the growth runs")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2: the machine's cores)")
    ap.add_argument("--only", default="rag,pooled,long", help="workloads to run")
    ap.add_argument("--device", default="cpu", help="where every variant runs: cpu (default) or cuda")
    ap.add_argument(
        "--pruner",
        help="the pruner of engine_default and warm (default: the engine's, auto; none "
        "where its embedder is not installed, as on the bare GPU box of benchmarks/gpu/gpu_check.sh)",
    )
    ap.add_argument(
        "--runtime",
        default="auto",
        help="the engine's judge runtime (default auto, what a user gets; "
        "e.g. openvino: the opt-in runtime measured against the same peers)",
    )
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from conflictscore_local.util.devices import cpu_flags, native_cpu_bf16, resolve_dtype, torch_device

    root = data_dir(args.data_dir)
    before = uptime()
    logs: list[str] = []

    def log(msg: str) -> None:
        logs.append(msg)
        print(msg, file=sys.stderr, flush=True)

    questions = ramdocs_questions(root)
    jobs: dict[str, list[Item]] = {}
    wanted = args.only.split(",")
    if "rag" in wanted:
        jobs["rag"] = rag_job(questions, args.rag)
    if "pooled" in wanted:
        n_items, n_docs = (int(x) for x in args.pooled.split("x"))
        jobs["pooled"] = pooled_job(questions, n_items, n_docs)
    if "long" in wanted:
        jobs["long"] = long_job(root, args.long)
    with tempfile.TemporaryDirectory() as tmp:
        peers = Peers(Path(tmp), args.threads, args.device, args.runtime, args.pruner)
        warm_items = rag_job(questions[-2:], 1)
        peers.run_crossencoder(warm_items)
        peers.run_hf_batch(warm_items)
        peers.run_engine(warm_items, pruner=peers.pruner, cache=peers.new_cache())  # loads the judge (and pruner)
        workloads = {}
        for name, items in jobs.items():
            t0 = time.perf_counter()
            workloads[name] = run_workload(peers, name, items, log)
            workloads[name]["workload_s"] = round(time.perf_counter() - t0, 1)
        growth = []
        for f in [int(x) for x in args.growth.split(",") if x]:
            items = grown_job(questions, args.growth_items, f)
            r = peers.run_engine(items, pruner=peers.pruner, cache=peers.new_cache())
            pairs = sum(len(it.claims or ()) * len(it.documents) for it in items)
            growth.append(
                {
                    "factor": f,
                    "doc_pairs": pairs,
                    "wall_s": round(r["wall_s"], 3),
                    "s_per_1000_pairs": round(1000 * r["wall_s"] / pairs, 2),
                }
            )
            log(f"growth {f}x: {pairs} pairs, {r['wall_s']:.2f} s")
        rf = roofline(peers, workloads, args.threads)
    dtype, why = resolve_dtype("auto", torch_device(args.device))
    flags = sorted(f for f in cpu_flags() if f.startswith(("avx", "amx")))
    data: dict[str, Any] = {
        "command": "python -m benchmarks.speed.throughput_peers " + " ".join(sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs ({platform.platform()})"
        + (f", GPU {torch.cuda.get_device_name(0)}" if args.device.startswith("cuda") else ""),
        "cpu": " ".join(flags) + f" (native bf16: {native_cpu_bf16()[0]})",
        "threads": args.threads,
        "device": args.device,
        "judge": "models/default-judge (weights sha256 "
        + str(peers.judge.spec()["model"].get("weights_sha256", "?"))[:16]
        + ")",
        "dtype_auto": str(dtype).removeprefix("torch."),
        "dtype_reason": why,
        "runtime": args.runtime,
        "runtime_resolved": peers.judge.describe()["resolved"].get("runtime"),
        "uptime_before": before,
        "uptime_after": uptime(),
        "versions": versions(),
        "workloads": workloads,
        "roofline": rf,
        "growth": growth,
        "log": logs,
    }
    data["targets"] = targets(data)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    write_md(data, out.with_suffix(".md"))
    try:
        plot(data, out.with_suffix(".png"))
    except ImportError:  # a bare GPU box has no matplotlib: the figures are in the .json and .md
        print("no matplotlib here: no plot", file=sys.stderr)
    print(out.with_suffix(".md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
