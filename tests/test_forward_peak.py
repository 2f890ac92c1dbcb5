"""The parts of ``benchmarks/forward_peak.py`` that need no run: the linear layers' FLOPs on the padded
tokens of the judge's batches against the measured peak, and the profiled time's shares."""

from __future__ import annotations

from typing import Any

import pytest

CFG = {"num_hidden_layers": 6, "hidden_size": 384, "intermediate_size": 1536}
PER_TOKEN = 2 * 6 * (4 * 384 * 384 + 2 * 384 * 1536)  # 21,233,664 matmul FLOPs a token


@pytest.fixture(scope="module")
def fp(benchmark_script: Any) -> Any:
    return benchmark_script("forward_peak")


def test_linear_layers_count_the_padded_tokens_of_the_judges_batches(fp: Any) -> None:
    profile = [{"op": "aten::addmm", "self_ms": 10.0, "share": 0.5, "calls": 12}]
    # one batch, sorted 30, 20, 10 and padded to 30: 90 tokens
    got = fp.linear_layers(profile, CFG, [10, 30, 20], {"512": 300.0, "2048": 382.2})
    rate = PER_TOKEN * 90 / 1e9 / 0.01  # 191.10 GFLOP/s
    assert got == {"padded_tokens": 90, "gflop": 1.9, "addmm_s": 0.01, "gflops": round(rate, 1),
                   "share_of_peak": round(rate / 382.2, 3)}
    assert got["share_of_peak"] == 0.5
    # 2,048 tokens a batch: [1500] alone, then [1000, 600] padded to 1000
    assert fp.linear_layers(profile, CFG, [600, 1500, 1000], {"2048": 1.0})["padded_tokens"] == 1500 + 2 * 1000
    assert fp.linear_layers([{"op": "aten::mm", "self_ms": 1.0, "share": 1.0, "calls": 1}], CFG, [10], {"2048": 1.0}) == {}


def test_op_shares_split_linear_attention_and_the_rest(fp: Any) -> None:
    fused = [{"op": "aten::addmm", "share": 0.5}, {"op": "aten::_scaled_dot_product_flash_attention_for_cpu", "share": 0.3},
             {"op": "aten::gelu", "share": 0.1}]
    assert fp.op_shares(fused) == {"linear": 0.5, "attention": 0.3, "other": 0.2}
    plain = [{"op": "aten::addmm", "share": 0.4}, {"op": "aten::bmm", "share": 0.2}, {"op": "aten::_softmax", "share": 0.15}]
    assert fp.op_shares(plain) == {"linear": 0.4, "attention": 0.35, "other": 0.25}
