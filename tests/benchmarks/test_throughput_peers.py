"""The parts of ``benchmarks/speed/throughput_peers.py`` and ``benchmarks/speed/profile_cold.py`` that need no run:
padding and FLOP counts, the targets' verdicts, the profile's stages."""

from __future__ import annotations

from typing import Any

import pytest

CFG = {"num_hidden_layers": 6, "hidden_size": 384, "intermediate_size": 1536}


@pytest.fixture(scope="module")
def tp() -> Any:
    from benchmarks.speed import throughput_peers

    return throughput_peers


def test_padding_of_the_peers_and_of_the_engine_by_hand(tp: Any) -> None:
    # the peers: one batch in input order, padded to 30
    peers = tp.token_counts([10, 30, 20], CFG, in_order=True, batch_size=64, max_tokens=40)
    assert (peers["real_tokens"], peers["padded_tokens"], peers["padded_over_real"]) == (60, 90, 1.5)
    # the engine: sorted 30, 20, 10; 40 tokens a batch: [30] then [20, 10] padded to 20
    engine = tp.token_counts([10, 30, 20], CFG, in_order=False, batch_size=64, max_tokens=40)
    assert (engine["padded_tokens"], engine["padded_over_real"]) == (70, 1.167)
    flops = sum(n * 21233664 + 4 * 6 * n * n * 384 for n in (10, 30, 20))
    assert peers["judge_gflop"] == engine["judge_gflop"] == round(flops / 1e9, 3)


def test_targets_say_met_and_missed(tp: Any) -> None:
    data = {
        "dtype_auto": "float32",
        "workloads": {
            "rag": {
                "speedup_vs_crossencoder": 3.2,
                "label_agreement": 1.0,
                "warm_over_cold": 49.9,
                "variants": {"crossencoder": {"wall_s": 4.0}},
            },
            "pooled": {
                "speedup_vs_crossencoder": 3.1,
                "label_agreement": 0.84,
                "warm_over_cold": 94.3,
                "variants": {"engine_default": {"labels_differing": 5, "differing_on_other_questions_documents": 5}},
            },
        },
        "roofline": {
            "peak_gflops": {"float32": 200.0, "bfloat16": 1.0},
            "variants": {
                "rag/engine_none": {"share_of_fp32_peak": 0.49, "gflop": 200.0},
                "rag/hf_batch": {"share_of_fp32_peak": 0.65},
            },
        },
    }
    assert tp.targets(data) == [
        # 200 GFLOP at 200 GFLOP/s is 1 s at best, against the CrossEncoder's 4.0 s: 4x, and 3.2 / 4 = 0.80
        "rag: engine cold 3.2x the CrossEncoder = 0.80 of the ceiling (target 0.9): MISSED; label agreement 1.0; "
        "the same-forwards ceiling is 4.00x (the 200.0 judge GFLOP at the measured float32 peak of 200.0 GFLOP/s, "
        "nothing else spent)",
        "pooled: engine cold 3.1x the CrossEncoder (target 3.0x, every label on a question's own documents "
        "identical): met; label agreement 0.84 (5 differ, 0 of them on the question's own documents)",
        "rag: warm 49.9x cold (target 50x): MISSED",
        "pooled: warm 94.3x cold (target 50x): met",
        "judge forward: best engine share of fp32 peak 0.49 (goal 0.5): MISSED",
    ]
    data["workloads"]["pooled"]["variants"]["engine_default"]["differing_on_other_questions_documents"] = 4
    assert tp.targets(data)[1].endswith(
        "MISSED; label agreement 0.84 (5 differ, 1 of them on the question's own documents)"
    )
    data["roofline"]["variants"]["rag/engine_none"]["gflop"] = 177.0  # ceiling 4.52x: 3.2 / 4.52 = 0.708
    assert tp.targets(data)[0].startswith("rag: engine cold 3.2x the CrossEncoder = 0.71 of the ceiling")


def test_profile_stages() -> None:
    from benchmarks.speed import profile_cold as pc

    forward = (
        "main (cli.py:1);judge (conflictscore_local/judge/nli.py:400);"
        "forward (transformers/models/bert/modeling_bert.py:9)"
    )
    assert pc.stage_of(forward) == "judge forward"
    assert (
        pc.stage_of("main (cli.py:1);_find_and_load (<frozen importlib._bootstrap>:1);forward (x/modeling_y.py:2)")
        == "imports"
    )
    assert pc.stage_of("main (cli.py:1);put_many (conflictscore_local/cache.py:3)") == "judgment cache (SQLite)"
    assert pc.shares(f"{forward} 3\nmain (cli.py:1) 1\n") == {
        "samples": 4,
        "shares": {"judge forward": 0.75, "other": 0.25},
    }
