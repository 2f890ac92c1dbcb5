"""The old hand-written training loop (commit f61cf2b's ``conflictscore_local/train.py``) against
the ``transformers.Trainer`` loop of ``conflictscore_local.train``: same pairs, same number of
steps, same options.

    .venv/bin/python benchmarks/train_loop_compare.py [--pairs 1500] [--epochs 3] [--lr 5e-5]
        [--same-batches] [--lrs 1.5e-4 3e-4] [-o benchmarks/results/train_loop_compare.json]

Both loops start from all-MiniLM-L6-v2 with the same seed, read the same sampled training
pairs (written once as a plain pair file, so neither loop's data reading differs) and one eval
file, and train with the same batch size, max_length, warm-up, weight decay, class weights and
frozen word embeddings. Each runs in its own process (the old code from ``git archive`` of the
commit, in a temporary directory) with three probes that leave the computation unchanged:
``torch.nn.functional.cross_entropy`` records each training step's loss (the loss optimised),
``torch.optim.AdamW.step`` the learning rate the step applies, ``torch.nn.utils.clip_grad_norm_``
the gradient norm before clipping. Per-epoch dev figures of both loops come from
``conflictscore_local.train.evaluate`` (pair macro-F1, scikit-learn convention).

Default mode: each loop as it is (its own batch order, dropout on), side by side so that load
from other processes hits both alike. ``--same-batches``: dropout off (a copy of the base's
config) and the Trainer fed the batches the old loop drew, run one after the other; if the two
loops optimise the same thing, their per-step losses, learning rates and gradient norms agree
to float rounding. ``--lrs``: the Trainer loop again at other learning rates (same pairs).
Prints the curves and writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = "benchmarks/work/judge-data"
WORK = "benchmarks/work/train_loop_compare"


def write_inputs(args: argparse.Namespace) -> tuple[str, str]:
    """The sampled training pairs and the eval file, written as the two loops' inputs."""
    from transformers import AutoTokenizer

    from conflictscore_local.train.data import ID2LABEL, read_training_data
    from conflictscore_local.train.loop import make_chunker
    from conflictscore_local.train.model import resolve_base

    tok = AutoTokenizer.from_pretrained(resolve_base("minilm"))
    examples, _ = read_training_data(args.train, make_chunker(tok, args.max_length))
    examples = random.Random(args.seed).sample(examples, min(args.pairs, len(examples)))
    work = ROOT / WORK
    work.mkdir(parents=True, exist_ok=True)
    train_file, eval_file = work / "train.jsonl", work / "eval.jsonl"
    train_file.write_text(
        "".join(
            json.dumps({"claim": e.claim, "passage": e.passage, "label": ID2LABEL[e.label]}) + "\n" for e in examples
        ),
        encoding="utf-8",
    )
    eval_file.write_text("".join(Path(p).read_text(encoding="utf-8") for p in args.eval), encoding="utf-8")
    return str(train_file.relative_to(ROOT)), str(eval_file.relative_to(ROOT))


def probe() -> dict[str, list[float]]:
    """Record the training loss, the applied learning rate and the gradient norm of every step."""
    import torch

    rec: dict[str, list[float]] = {"loss": [], "lr": [], "grad_norm": []}
    ce, step, clip = torch.nn.functional.cross_entropy, torch.optim.AdamW.step, torch.nn.utils.clip_grad_norm_

    def cross_entropy(*a: Any, **k: Any) -> Any:
        out = ce(*a, **k)
        if torch.is_grad_enabled():  # training steps only, not evaluation
            rec["loss"].append(float(out.detach()))
        return out

    def adamw_step(self: Any, *a: Any, **k: Any) -> Any:
        rec["lr"].append(float(self.param_groups[0]["lr"]))
        return step(self, *a, **k)

    def clip_grad_norm_(*a: Any, **k: Any) -> Any:
        out = clip(*a, **k)
        rec["grad_norm"].append(float(out))
        return out

    torch.nn.functional.cross_entropy = cross_entropy
    torch.optim.AdamW.step = adamw_step
    torch.nn.utils.clip_grad_norm_ = clip_grad_norm_
    return rec


def base_without_dropout(tmp: str) -> str:
    """A copy of all-MiniLM-L6-v2 (links to its files) whose config turns dropout off."""
    from conflictscore_local.train.model import resolve_base

    src = Path(resolve_base("minilm"))
    dst = Path(tmp) / "base-no-dropout"
    dst.mkdir()
    for f in src.iterdir():
        if f.name != "config.json":
            (dst / f.name).symlink_to(f)
    cfg = json.loads((src / "config.json").read_text())
    cfg.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (dst / "config.json").write_text(json.dumps(cfg))
    return str(dst)


def feed_batches(batches_file: str) -> None:
    """Make the Trainer iterate the batches the old loop drew (one list of batches per epoch)."""
    import torch
    import transformers

    epochs = json.loads(Path(batches_file).read_text())

    class Recorded(torch.utils.data.Sampler):  # type: ignore[type-arg]
        def __init__(self) -> None:
            self.epoch = 0

        def __len__(self) -> int:
            return len(epochs[0])

        def __iter__(self):  # noqa: ANN204
            self.epoch += 1
            return iter(epochs[self.epoch - 1])

    def get_train_dataloader(self: Any) -> Any:
        return torch.utils.data.DataLoader(self.train_dataset, batch_sampler=Recorded(), collate_fn=self.data_collator)

    transformers.Trainer.get_train_dataloader = get_train_dataloader


def run_one(args: argparse.Namespace) -> None:
    """One loop in this process; prints its record as JSON on the last line."""
    from transformers import logging

    logging.set_verbosity_error()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    rec = probe()
    tmp = tempfile.mkdtemp(prefix=f"loop-{args.run}-")
    base = base_without_dropout(tmp) if args.batches_file else "minilm"
    kw = dict(
        epochs=args.epochs,
        lr=args.lr,
        batch_size=args.batch_size,
        max_length=args.max_length,
        seed=args.seed,
        warmup=args.warmup,
        weight_decay=0.01,
        patience=args.epochs,
        class_weights="balanced",
        freeze_embeddings=True,
        threads=1,
    )
    out = str(Path(tmp) / "out")
    t0 = time.perf_counter()
    try:
        if args.run == "old":
            record = run_old(args, base, out, kw, tmp)
        else:
            from conflictscore_local.train import TrainOptions, train

            if args.batches_file:
                feed_batches(args.batches_file)
            record = train(
                TrainOptions(base=base, train=(args.train_file,), eval=(args.eval_file,), output=out, **kw),
                log=lambda m: print(m, file=sys.stderr),
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    epochs = [
        {
            "epoch": h["epoch"],
            "train_loss": h["train_loss"],
            "dev_macro_f1": round(h["eval"]["macro_f1"], 4),
            "train_s": h["train_s"],
        }
        for h in record["history"]
    ]
    print(
        json.dumps(
            {
                "loop": args.run,
                "lr": args.lr,
                "steps": rec,
                "epochs": epochs,
                "wall_s": round(time.perf_counter() - t0, 1),
            }
        )
    )


def run_old(args: argparse.Namespace, base: str, out: str, kw: dict[str, Any], tmp: str) -> dict[str, Any]:
    """The old loop from ``git archive``, scored with this checkout's evaluation function."""
    from conflictscore_local.train.evaluate import evaluate  # loaded first: its modules stay bound to it

    src = Path(tmp) / "old-src"
    src.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", args.old_commit, "conflictscore_local"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    for name in [m for m in sys.modules if m.startswith("conflictscore_local")]:
        del sys.modules[name]
    sys.path.insert(0, str(src))
    import conflictscore_local.train as old  # the old single module

    assert old.__file__.startswith(str(src)), old.__file__

    def same_metrics(probs: Any, ev: Any, thresholds: Any = None) -> dict[str, Any]:
        m = evaluate(probs, ev, thresholds)
        return {**m, "macro_f1_gold": m["macro_f1"]}  # the key the old loop selects epochs by

    old.evaluate = same_metrics
    drawn: list[list[list[int]]] = []
    length_batches = old.length_batches

    def recording_batches(*a: Any, **k: Any) -> list[list[int]]:
        drawn.append(length_batches(*a, **k))
        return drawn[-1]

    old.length_batches = recording_batches
    record = old.train(
        old.TrainOptions(base=base, train=(args.train_file,), eval=args.eval_file, output=out, **kw),
        log=lambda m: print(m, file=sys.stderr),
    )
    if args.save_batches:
        Path(args.save_batches).write_text(json.dumps(drawn))
    return record


def spawn(loop: str, args: argparse.Namespace, files: tuple[str, str], lr: float, extra: list[str]) -> subprocess.Popen:
    passed = [
        f"--{k.replace('_', '-')}={getattr(args, k)}"
        for k in ("epochs", "batch_size", "max_length", "warmup", "seed", "old_commit")
    ]
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--run",
            loop,
            "--train-file",
            files[0],
            "--eval-file",
            files[1],
            f"--lr={lr}",
            *passed,
            *extra,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def collect(procs: dict[str, subprocess.Popen]) -> dict[str, Any]:
    runs = {}
    for name, p in procs.items():
        out, _ = p.communicate()
        if p.returncode:
            sys.exit(f"{name} run failed (exit {p.returncode})")
        runs[name] = json.loads(out.strip().splitlines()[-1])
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=1500, help="training pairs sampled from the training mix")
    ap.add_argument("--train", nargs="+", default=[f"{DATA}/pairs.jsonl", f"{DATA}/bench_train.jsonl"])
    ap.add_argument(
        "--eval",
        nargs="+",
        default=[f"{DATA}/check_covid_dev.jsonl", f"{DATA}/healthver_dev.jsonl"],
        help="eval files, concatenated into one (the old loop takes one)",
    )
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-length", type=int, default=192)
    ap.add_argument("--warmup", type=float, default=0.06)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--same-batches",
        action="store_true",
        help="dropout off and the Trainer fed the old loop's batches (run one after the other)",
    )
    ap.add_argument(
        "--lrs", nargs="*", type=float, default=[], help="also run the Trainer loop at these learning rates"
    )
    ap.add_argument("--old-commit", default="f61cf2b")
    ap.add_argument("--window", type=int, default=20, help="steps per window of the printed curves")
    ap.add_argument("-o", "--output", default="benchmarks/results/train_loop_compare.json")
    ap.add_argument("--run", choices=["old", "new"], help=argparse.SUPPRESS)
    ap.add_argument("--train-file", help=argparse.SUPPRESS)
    ap.add_argument("--eval-file", help=argparse.SUPPRESS)
    ap.add_argument("--save-batches", help=argparse.SUPPRESS)
    ap.add_argument("--batches-file", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.chdir(ROOT)
    if args.run:
        run_one(args)
        return
    files = write_inputs(args)
    if args.same_batches:
        batches = str(ROOT / WORK / "old_batches.json")
        runs = collect({"old": spawn("old", args, files, args.lr, ["--save-batches", batches])})
        runs.update(collect({"new": spawn("new", args, files, args.lr, ["--batches-file", batches])}))
    else:
        runs = collect({"old": spawn("old", args, files, args.lr, []), "new": spawn("new", args, files, args.lr, [])})
    for i in range(0, len(args.lrs), 2):  # two at a time (one torch thread each)
        runs.update(collect({f"new lr {lr:g}": spawn("new", args, files, lr, []) for lr in args.lrs[i : i + 2]}))
    report(args, runs, files)


def report(args: argparse.Namespace, runs: dict[str, Any], files: tuple[str, str]) -> None:
    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs) if xs else float("nan")

    w = args.window
    curves = {}
    for name, r in runs.items():
        s = r["steps"]
        curves[name] = [
            {
                "steps": f"{i + 1}-{min(i + w, len(s['loss']))}",
                "loss": round(mean(s["loss"][i : i + w]), 4),
                "lr": s["lr"][min(i + w, len(s["lr"])) - 1],
                "grad_norm": round(mean(s["grad_norm"][i : i + w]), 3),
            }
            for i in range(0, len(s["loss"]), w)
        ]
        # the loss the loop logs per epoch against the mean of the losses it optimised in that epoch
        per_epoch = len(s["loss"]) // len(r["epochs"])
        for k, e in enumerate(r["epochs"]):
            e["mean_optimised_loss"] = round(mean(s["loss"][k * per_epoch : (k + 1) * per_epoch]), 5)
    out: dict[str, Any] = {
        "command": "python benchmarks/train_loop_compare.py " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()}-core CPU, no GPU, one torch thread per run",
        "train_file": files[0],
        "eval_file": files[1],
        "options": {
            k: getattr(args, k)
            for k in (
                "pairs",
                "train",
                "eval",
                "epochs",
                "lr",
                "batch_size",
                "max_length",
                "warmup",
                "seed",
                "same_batches",
                "lrs",
                "old_commit",
            )
        },
        "runs": {
            name: {
                "lr": r["lr"],
                "steps": len(r["steps"]["loss"]),
                "epochs": r["epochs"],
                "wall_s": r["wall_s"],
                "curve": curves[name],
            }
            for name, r in runs.items()
        },
    }
    if "old" in runs and "new" in runs:
        a, b = runs["old"]["steps"], runs["new"]["steps"]
        out["max_abs_step_difference"] = {
            k: max((abs(x - y) for x, y in zip(a[k], b[k])), default=None) for k in ("loss", "lr", "grad_norm")
        }
        out["same_step_count"] = all(len(a[k]) == len(b[k]) for k in a)
    for name, r in out["runs"].items():
        print(
            f"{name} (lr {r['lr']:g}): {r['steps']} steps; "
            + "; ".join(
                f"epoch {e['epoch']}: loss {e['train_loss']} (optimised {e['mean_optimised_loss']}), dev macro-F1 "
                f"{e['dev_macro_f1']}"
                for e in r["epochs"]
            )
        )
    if "max_abs_step_difference" in out:
        print(f"old vs new, largest per-step difference: {out['max_abs_step_difference']}")
    names = list(curves)
    print("steps | " + " | ".join(f"{n}: loss / lr / grad norm" for n in names))
    for i in range(max(len(c) for c in curves.values())):
        row = [curves[names[0]][i]["steps"] if i < len(curves[names[0]]) else "-"]
        row += [
            f"{c[i]['loss']} / {c[i]['lr']:.3g} / {c[i]['grad_norm']}" if i < len(c) else "-" for c in curves.values()
        ]
        print(" | ".join(row))
    Path(args.output).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"written: {args.output}")


if __name__ == "__main__":
    main()
