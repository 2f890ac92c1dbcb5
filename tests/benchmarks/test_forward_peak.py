"""The parts of ``benchmarks/speed/forward_peak.py`` that need no run: the linear layers' FLOPs on the padded
tokens of the judge's batches against the measured peak, and the profiled time's shares."""

from __future__ import annotations

from typing import Any

import pytest

CFG = {"num_hidden_layers": 6, "hidden_size": 384, "intermediate_size": 1536}
PER_TOKEN = 2 * 6 * (4 * 384 * 384 + 2 * 384 * 1536)  # 21,233,664 matmul FLOPs a token


@pytest.fixture(scope="module")
def fp() -> Any:
    from benchmarks.speed import forward_peak

    return forward_peak


def test_linear_layers_count_the_padded_tokens_of_the_judges_batches(fp: Any) -> None:
    profile = [{"op": "aten::addmm", "self_ms": 10.0, "share": 0.5, "calls": 12}]
    # one batch, sorted 30, 20, 10 and padded to 30: 90 tokens
    got = fp.linear_layers(profile, CFG, [10, 30, 20], {"512": 300.0, "2048": 382.2})
    rate = PER_TOKEN * 90 / 1e9 / 0.01  # 191.10 GFLOP/s
    assert got == {
        "padded_tokens": 90,
        "gflop": 1.9,
        "addmm_s": 0.01,
        "gflops": round(rate, 1),
        "share_of_peak": round(rate / 382.2, 3),
    }
    assert got["share_of_peak"] == 0.5
    # 2,048 tokens a batch: [1500] alone, then [1000, 600] padded to 1000
    assert fp.linear_layers(profile, CFG, [600, 1500, 1000], {"2048": 1.0})["padded_tokens"] == 1500 + 2 * 1000
    assert (
        fp.linear_layers([{"op": "aten::mm", "self_ms": 1.0, "share": 1.0, "calls": 1}], CFG, [10], {"2048": 1.0}) == {}
    )


def test_op_shares_split_linear_attention_and_the_rest(fp: Any) -> None:
    fused = [
        {"op": "aten::addmm", "share": 0.5},
        {"op": "aten::_scaled_dot_product_flash_attention_for_cpu", "share": 0.3},
        {"op": "aten::gelu", "share": 0.1},
    ]
    assert fp.op_shares(fused) == {"linear": 0.5, "attention": 0.3, "other": 0.2}
    plain = [
        {"op": "aten::addmm", "share": 0.4},
        {"op": "aten::bmm", "share": 0.2},
        {"op": "aten::_softmax", "share": 0.15},
    ]
    assert fp.op_shares(plain) == {"linear": 0.4, "attention": 0.35, "other": 0.25}


def test_batch_shapes_are_the_runtimes_length_sorted_batches(fp: Any) -> None:
    # sorted 150, 100, 90, 40, 30: 2,048 // 150 = 13 would take all five, so the pair cap (2) cuts them
    assert fp.batch_shapes([40, 150, 30, 100, 90], 2, 2048) == [(2, 150), (2, 90), (1, 30)]
    # a budget of 200 tokens: 200 // 150 = 1, then 200 // 90 = 2 (90 and 40), then 30 alone is left
    assert fp.batch_shapes([40, 150, 30, 90], 8, 200) == [(1, 150), (2, 90), (1, 30)]


def test_bound_counts_the_faster_linear_kernel_and_adds_the_parts(fp: Any) -> None:
    parts = {"linear": 2.0, "linear_prepacked": 1.6, "attention": 0.4, "elementwise": 0.5}
    # 100 GFLOP at a 50 GFLOP/s peak: 2 s would be the whole peak
    assert fp.bound(100.0, parts, 50.0, 3.0) == {
        "linear_only": 1.25,  # 100 / 1.6 / 50
        "with_attention": 1.0,  # 100 / 2.0 / 50
        "all_parts": 0.8,  # 100 / 2.5 / 50
        "parts_s": 2.5,
        "forward_s": 3.0,
        "parts_over_forward": 0.833,
    }
    assert fp.bound(100.0, {"linear": 4.0, "attention": 1.0, "elementwise": 0.0}, 50.0, 5.0)["with_attention"] == 0.4


def test_parts_alone_times_every_part_on_tiny_shapes(fp: Any) -> None:
    cfg = {"num_hidden_layers": 1, "hidden_size": 8, "intermediate_size": 16, "num_attention_heads": 2}
    got = fp.parts_alone(cfg, [(2, 5), (1, 3)], "float32", 1)
    assert set(got) == {"linear", "attention", "elementwise"}
    assert all(v >= 0.0 for v in got.values())
