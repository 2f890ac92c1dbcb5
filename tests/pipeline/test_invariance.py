"""The same input gives the same rows however the run is cut: batch size, the token budget of a
batch, shards merged, a resumed run, a warm cache and the order of an item's documents.

The judge is the shipped default judge (``models/default-judge``) at float32 on the torch runtime,
pinned, so the matrix means the same on every CPU kind. Labels, verdicts and metrics must be
equal; probabilities (written with 6 decimals) may differ in the last decimals: a batched
forward's float summation order depends on the other pairs in its padded batch (the matmul
kernels block by the batch's shape), which moved a written value by 2e-6 on an AVX2-only CPU
(1e-6 on an AVX-512 one): the bound is 1e-5, Ray's test's. The fixture has documents split into several
passages, where the ``relevant`` document rule picks the deciding passage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.jobs import ResumableJsonlWriter
from conflictscore_local.pipeline import Shard, merge_shards
from conflictscore_local.pipeline.config import RunConfig
from conflictscore_local.pipeline.scoring import score_file

from ..support.rows import row_differences

pytestmark = pytest.mark.slow  # the real default judge over ~150 pairs, about ten times

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "items.jsonl"
PROB_TOL = 1e-5  # labels, verdicts and metrics exactly; probabilities to 1e-5 (seen: 2e-6 on AVX2)

CURIE = (
    "Maria Sklodowska-Curie was born in Warsaw on 7 November 1867, the youngest of five children. "
    "Her father taught mathematics and physics, and her mother ran a boarding school for girls. "
)
PARIS = "In 1891 she moved to Paris, where she studied physics and mathematics at the Sorbonne. "
NOBEL = "She won the Nobel Prize in Physics in 1903 and the Nobel Prize in Chemistry in 1911. "
FILLER = (
    "The weather in the region is mild in spring, and the rivers rise after the snow melts in the hills. "
    "Local markets sell bread, cheese and apples from the surrounding farms every Saturday morning. "
)


def long_items() -> list[dict[str, Any]]:
    """Items whose documents split into several passages under the default judge's window."""
    return [
        {
            "id": "long-curie",
            "claims": [
                "Marie Curie was born in Warsaw.",
                "Curie moved to Paris in 1891.",
                "Curie won two Nobel Prizes.",
                "Curie was born in 1867.",
            ],
            "documents": [
                {"id": "bio", "text": FILLER * 3 + CURIE + FILLER * 2 + PARIS + FILLER * 2 + NOBEL},
                {
                    "id": "rumour",
                    "text": FILLER * 2
                    + "Some say Curie was born in Krakow in 1869 and never lived in Paris. "
                    + FILLER * 3,
                },
                {"id": "dup", "text": (CURIE + FILLER) * 4},  # the same passage text several times
                {"id": "short", "text": "Curie moved to Paris in 1891."},
            ],
        },
        {
            "id": "long-bridge",
            "claims": ["The bridge opened in 1932.", "The bridge is painted red."],
            "documents": [
                {
                    "id": "city",
                    "text": FILLER * 2
                    + "The bridge was opened to traffic in March 1932. "
                    + FILLER * 4
                    + "Its steel arch is painted grey every ten years. "
                    + FILLER,
                },
                {"id": "blog", "text": "The bridge only opened in 1934, two years late, and it is red. " + FILLER * 5},
                {"id": "empty", "text": ""},
            ],
        },
    ]


def write_items(path: Path, reverse_documents: bool = False) -> Path:
    rows = [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows += long_items()
    if reverse_documents:
        for r in rows:
            r["documents"] = r["documents"][::-1]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def config(cache: Path | None = None, step_items: int = 1024, **judge: Any) -> RunConfig:
    args = {"name": "nli", "dtype": "float32", "runtime": "torch", "device": "cpu", **judge}
    return RunConfig.from_mapping(
        {
            "judge": args,
            "pruner": {"name": "none"},
            "engine": {"step_items": step_items},
            "cache": {"enabled": cache is not None, "path": str(cache) if cache else None},
        }
    )


def rows(path: Path, drop_source: bool = False) -> list[dict[str, Any]]:
    out = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if drop_source:
        for r in out:
            for c in r["claims"]:
                for j in c["judgments"]:
                    j.pop("source")
    return out


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]], dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("invariance")
    items = write_items(tmp / "items.jsonl")
    summary = score_file(items, tmp / "base.jsonl", config=config(batch_size=64)).to_json()
    base = rows(tmp / "base.jsonl")
    passages = [j.get("n_passages", 1) for r in base for c in r["claims"] for j in c["judgments"]]
    assert max(passages) >= 3  # the fixture exercises the document rule over several passages
    return items, base, summary


@pytest.mark.parametrize(
    "judge",
    [{"batch_size": 1}, {"batch_size": 8}, {"batch_size": 64, "max_batch_tokens": 300}],
    ids=["batch-1", "batch-8", "tokens-300"],
)
def test_batching_changes_no_row(baseline: Any, tmp_path: Path, judge: dict[str, Any]) -> None:
    items, base, summary = baseline
    got = score_file(items, tmp_path / "out.jsonl", config=config(**judge)).to_json()
    assert row_differences(base, rows(tmp_path / "out.jsonl"), prob_tol=PROB_TOL) == []
    assert (got["macro"], got["micro"], got["pairs"]) == (summary["macro"], summary["micro"], summary["pairs"])


@pytest.mark.parametrize("n", [2, 3])
def test_shards_merged_give_the_rows_of_one_run(baseline: Any, tmp_path: Path, n: int) -> None:
    items, base, summary = baseline
    outputs, summaries = [], []
    for i in range(1, n + 1):
        o, s = tmp_path / f"s{i}.jsonl", tmp_path / f"s{i}.json"
        score_file(items, o, config=config(batch_size=64), summary_path=s, shard=Shard(i, n))
        outputs.append(o)
        summaries.append(s)
    merge_shards(items, outputs, summaries, tmp_path / "merged.jsonl", summary_path=tmp_path / "merged.json")
    assert row_differences(base, rows(tmp_path / "merged.jsonl"), prob_tol=PROB_TOL) == []
    merged = json.loads((tmp_path / "merged.json").read_text(encoding="utf-8"))
    assert (merged["macro"], merged["micro"]) == (summary["macro"], summary["micro"])


def test_a_resumed_run_gives_the_rows_of_one_run(
    baseline: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items, base, _ = baseline
    cfg = config(batch_size=64, step_items=2)
    real, written = ResumableJsonlWriter.write, []

    def write(self: ResumableJsonlWriter, row: Any) -> None:
        if len(written) == 3:
            raise KeyboardInterrupt
        written.append(row["id"])
        real(self, row)

    with monkeypatch.context() as m:
        m.setattr(ResumableJsonlWriter, "write", write)
        with pytest.raises(KeyboardInterrupt):
            score_file(items, tmp_path / "out.jsonl", config=cfg)
    assert len(rows(tmp_path / "out.jsonl.partial")) == 3
    score_file(items, tmp_path / "out.jsonl", config=cfg, resume=True)
    assert row_differences(base, rows(tmp_path / "out.jsonl"), prob_tol=PROB_TOL) == []


def test_a_warm_cache_gives_the_rows_of_a_cold_run(baseline: Any, tmp_path: Path) -> None:
    items, base, _ = baseline
    cache = tmp_path / "cache.sqlite"
    score_file(items, tmp_path / "cold.jsonl", config=config(cache, batch_size=8))
    warm = score_file(items, tmp_path / "warm.jsonl", config=config(cache, batch_size=64)).to_json()
    assert warm["pairs"]["cached"] > 0 and warm["pairs"]["judged"] == 0
    cold_rows, warm_rows = (
        rows(tmp_path / "cold.jsonl", drop_source=True),
        rows(tmp_path / "warm.jsonl", drop_source=True),
    )
    assert row_differences(cold_rows, warm_rows) == []  # the cache holds exactly what the cold run wrote
    assert row_differences(rows(tmp_path / "cold.jsonl"), base, prob_tol=PROB_TOL) == []


def by_document(row: dict[str, Any]) -> dict[str, Any]:
    """A row with every list of documents in document-id order."""
    out = dict(row)
    out["claims"] = [
        {
            **c,
            **{k: sorted(v) for k, v in c.items() if k in ("support", "contradict", "irrelevant", "unscored")},
            "judgments": sorted(c["judgments"], key=lambda j: j["doc_id"]),
        }
        for c in row["claims"]
    ]
    return out


def test_document_order_within_an_item_changes_no_verdict(baseline: Any, tmp_path: Path) -> None:
    _, base, summary = baseline
    items = write_items(tmp_path / "reversed.jsonl", reverse_documents=True)
    got = score_file(items, tmp_path / "out.jsonl", config=config(batch_size=64)).to_json()
    reordered = [by_document(r) for r in rows(tmp_path / "out.jsonl")]
    assert row_differences([by_document(r) for r in base], reordered, prob_tol=PROB_TOL) == []
    assert (got["macro"], got["micro"]) == (summary["macro"], summary["micro"])
