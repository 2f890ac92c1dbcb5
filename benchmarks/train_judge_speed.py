"""Training throughput of the MiniLM judge on this machine, in one run on the same batches:
torch threads = all cores vs one thread, and full fine-tuning vs frozen word embeddings,
for three sequence lengths.

    .venv/bin/python benchmarks/train_judge_speed.py [--steps 6] [--batch-size 16]

The variants alternate step by step (A, B, C, A, B, C, ...) so that load from other
processes on a shared machine hits them alike; the printed ratios are what to read, the
absolute pairs/s only describe this machine at this moment. Sizes the default judge's
training run (see models/build_default_judge.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch
from transformers import AutoModelForSequenceClassification, logging

from conflictscore_local.train import ID2LABEL, LABEL2ID
from conflictscore_local.train.model import freeze_word_embeddings, resolve_base


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=6, help="timed steps per variant and length (after one warm-up)")
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args()
    logging.set_verbosity_error()
    cores = len(os.sched_getaffinity(0))
    base = resolve_base("minilm")
    variants = {}
    for name, threads, frozen in (
        (f"full_{cores}_threads", cores, False),
        ("full_1_thread", 1, False),
        ("frozen_embeddings_1_thread", 1, True),
    ):
        torch.manual_seed(0)
        model = AutoModelForSequenceClassification.from_pretrained(
            base, num_labels=3, id2label=ID2LABEL, label2id=LABEL2ID, ignore_mismatched_sizes=True
        )
        if frozen:
            freeze_word_embeddings(model)
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=3e-5)
        variants[name] = (threads, model.train(), opt)
    gen = torch.Generator().manual_seed(0)
    out: dict[str, dict[str, float]] = {"pairs_per_s": {}, "ratio_to_first": {}}
    first = next(iter(variants))
    for length in (64, 128, 256):
        x = torch.randint(1000, 29000, (args.batch_size, length), generator=gen)
        y = torch.randint(0, 3, (args.batch_size,), generator=gen)
        spent = dict.fromkeys(variants, 0.0)
        for step in range(args.steps + 1):
            for name, (threads, model, opt) in variants.items():
                torch.set_num_threads(threads)
                t0 = time.perf_counter()
                loss = torch.nn.functional.cross_entropy(
                    model(input_ids=x, attention_mask=torch.ones_like(x)).logits, y
                )
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                if step:
                    spent[name] += time.perf_counter() - t0
        for name, s in spent.items():
            out["pairs_per_s"][f"{name}/len{length}"] = round(args.steps * args.batch_size / s, 2)
            out["ratio_to_first"][f"{name}/len{length}"] = round(spent[first] / s, 3)
        print(
            f"length {length}: "
            + ", ".join(
                f"{n} {out['pairs_per_s'][f'{n}/len{length}']} pairs/s "
                f"(x{out['ratio_to_first'][f'{n}/len{length}']:.2f})"
                for n in variants
            ),
            flush=True,
        )
    print(json.dumps({"batch_size": args.batch_size, "steps": args.steps, "cores": cores, **out}, indent=1))


if __name__ == "__main__":
    main()
