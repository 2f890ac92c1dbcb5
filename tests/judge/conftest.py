"""Fixtures of the judge tests: classifiers whose answer is known."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import pytest

WIN_LOGIT = 4.0


@pytest.fixture(scope="session")
def winner_prob() -> Callable[[int], float]:
    """``p(n)``: softmax probability of the crafted winning class among ``n`` classes."""
    return lambda num_labels: math.exp(WIN_LOGIT) / (math.exp(WIN_LOGIT) + num_labels - 1)


@pytest.fixture(scope="session")
def crafted_nli(tiny_nli_factory: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``make(id2label, winner, arch)`` → a tiny classifier that always predicts class ``winner``.

    The classifier's weights are zeroed and its bias is ``WIN_LOGIT`` for ``winner``, 0
    elsewhere, so the logits (and the softmax, see ``winner_prob``) are known exactly whatever
    the input, in any dtype; the label comes out only through the checkpoint's id2label.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    built: dict[tuple, Path] = {}

    def make(id2label: dict[int, str], winner: int, arch: str = "bert") -> Path:
        key = (tuple(sorted(id2label.items())), winner, arch)
        if key not in built:
            src = tiny_nli_factory(id2label=id2label, arch=arch)
            model = AutoModelForSequenceClassification.from_pretrained(str(src))
            with torch.no_grad():
                model.classifier.weight.zero_()
                model.classifier.bias.zero_()
                model.classifier.bias[winner] = WIN_LOGIT
            out = tmp_path_factory.mktemp(f"crafted-{arch}")
            model.save_pretrained(out)
            AutoTokenizer.from_pretrained(str(src)).save_pretrained(out)
            built[key] = out
        return built[key]

    return make


@pytest.fixture(scope="session")
def spread_nli(
    tiny_nli_factory: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Path]:
    """``make(arch)`` → a tiny random classifier whose probabilities differ clearly between inputs.

    Freshly initialised weights (std 0.02) give near-uniform outputs that differ by 1e-6
    between inputs; scaling every weight matrix makes attention and the classifier depend
    on the input, so a pair judged with another pair's input (or in another's slot) shows.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    scale = {"bert": 25.0, "deberta-v2": 10.0}
    built: dict[str, Path] = {}

    def make(arch: str) -> Path:
        if arch not in built:
            src = tiny_nli_factory(arch=arch, seed=3)
            model = AutoModelForSequenceClassification.from_pretrained(str(src))
            with torch.no_grad():
                for param in model.parameters():
                    if param.dim() >= 2:
                        param.mul_(scale[arch])
            out = tmp_path_factory.mktemp(f"spread-{arch}")
            model.save_pretrained(out)
            AutoTokenizer.from_pretrained(str(src)).save_pretrained(out)
            built[arch] = out
        return built[arch]

    return make


@pytest.fixture(scope="session")
def bench_pairs(shared_data: Path) -> list:
    """Real claim × document pairs: ConflictBench test items of each source (built from
    ``../shared/data``), every claim against every document of its item, 96 pairs."""
    from conflictscore_local.bench import build_bench
    from conflictscore_local.core.types import Claim, Pair, Passage

    items = [it for it in build_bench(shared_data) if it["split"] == "test"]
    pairs = []
    for source in ("contraqa_en555", "ramdocs", "climate_fever"):
        chosen = [it for it in items if it["source"] == source][:12]
        pairs += [
            Pair(Claim(it["id"], k, claim), Passage(it["id"], doc["id"], 0, doc["text"]))
            for it in chosen
            for k, claim in enumerate(it["claims"])
            for doc in it["documents"]
        ][:32]
    return pairs
