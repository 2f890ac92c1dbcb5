"""Opt-in reduced precision on the CPU: bfloat16 where the CPU multiplies it natively (AVX512-BF16
or AMX) keeps the default judge's labels on the bundled example, probabilities within
``BF16_TOLERANCE`` of float32; elsewhere the test skips, saying why. What bfloat16 changes on a
larger set is measured, not asserted: ``benchmarks/results/speed/cpu_bf16.md``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local import Engine, RunConfig, read_items
from conflictscore_local.util.devices import native_cpu_bf16

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "items.jsonl"
BF16_TOLERANCE = 0.03
"""bfloat16 keeps 8 bits of mantissa: measured shifts of the default judge's probabilities reach
0.012 at the 99th percentile (``cpu_bf16.md``); 0.03 leaves room for the example's pairs."""

NATIVE, WHY = native_cpu_bf16()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not NATIVE, reason=f"bfloat16 is emulated here, not native: {WHY}")]


def judged(dtype: str, batch_size: int) -> tuple[list, dict]:
    engine = Engine(
        RunConfig.from_mapping({"cache": {"enabled": False}}),
        pruner="none",
        judge={"name": "nli", "dtype": dtype, "runtime": "torch", "device": "cpu", "batch_size": batch_size},
    )
    results, summary = engine.score_all(read_items(EXAMPLES))
    return [j for r in results for v in r.verdicts for j in v.judgments], summary.to_json()


def test_bfloat16_keeps_the_labels_of_float32_on_the_example() -> None:
    ref, ref_summary = judged("float32", 64)
    for batch_size in (64, 8):
        got, summary = judged("bfloat16", batch_size)
        assert [j.label for j in got] == [j.label for j in ref]
        worst = max(abs(a.probs[k] - b.probs[k]) for a, b in zip(got, ref) for k in a.probs)
        assert 0 < worst <= BF16_TOLERANCE  # it is another precision, within the stated bound
        resolved = summary["config"]["backends"]["judge"]["resolved"]
        assert (resolved["dtype"], resolved["dtype_reason"]) == ("bfloat16", f"given ({WHY})")
        assert summary["config"]["backends"]["judge"]["spec"]["dtype"] == "bfloat16"  # cached apart from float32
        assert json.dumps(summary["macro"]) == json.dumps(ref_summary["macro"])
