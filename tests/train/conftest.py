"""Fixtures of the train-judge tests: a tiny encoder base and small separable pair files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import pytest

LABEL_WORDS = {"SUPPORT": "yes indeed", "CONTRADICT": "no never", "IRRELEVANT": "banana bread"}
SUBJECTS = (
    "the river",
    "a cat",
    "the old tower",
    "my neighbour",
    "the committee",
    "a small boat",
    "the city",
    "our team",
    "the garden",
    "a tall tree",
)


def write_jsonl(path: Path, rows: Iterable[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def separable_pairs(n: int, offset: int = 0) -> list[dict[str, str]]:
    """Pairs whose label is written in the passage (one word pair per label): separable."""
    rows = []
    for i in range(offset, offset + n):
        label = ("SUPPORT", "CONTRADICT", "IRRELEVANT")[i % 3]
        s = SUBJECTS[i % len(SUBJECTS)]
        w = LABEL_WORDS[label]
        rows.append({"claim": f"{s} is here.", "passage": f"{w} {s} {w}.", "label": label})
    return rows


@pytest.fixture(scope="session")
def tiny_base(tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT encoder with no classification head (like a sentence-transformers base)."""
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    tok = transformers.AutoTokenizer.from_pretrained(str(tokenizer_dir))
    cfg = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    out = tmp_path_factory.mktemp("tiny-base")
    transformers.BertModel(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def pair_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(train, eval) JSONL files of separable pairs."""
    d = tmp_path_factory.mktemp("pairs")
    return write_jsonl(d / "train.jsonl", separable_pairs(60)), write_jsonl(d / "eval.jsonl", separable_pairs(30, 60))
