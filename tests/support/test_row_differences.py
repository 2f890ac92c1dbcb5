"""``testing.row_differences``: the comparison the shard, Ray and throughput checks rely on."""

from __future__ import annotations

from .rows import row_differences

ROW = {
    "id": "a",
    "claims": [
        {
            "text": "c",
            "judgments": [
                {
                    "doc_id": "d",
                    "label": "SUPPORT",
                    "probs": {"SUPPORT": 0.900001, "CONTRADICT": 0.05, "IRRELEVANT": 0.049999},
                    "similarity": 0.5,
                }
            ],
        }
    ],
    "metrics": {"cs_c": 0.0},
}


def with_(path: list, value: object) -> dict:
    import copy

    row = copy.deepcopy(ROW)
    target = row
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    return row


def test_probabilities_within_tolerance_everything_else_exact() -> None:
    j = ["claims", 0, "judgments", 0]
    assert row_differences([ROW], [with_(j + ["probs", "SUPPORT"], 0.900002)], prob_tol=1e-5) == []
    assert row_differences([ROW], [with_(j + ["probs", "SUPPORT"], 0.900002)]) == [
        "[0].claims[0].judgments[0].probs.SUPPORT: 0.900001 vs 0.900002"
    ]
    assert row_differences([ROW], [with_(j + ["probs", "SUPPORT"], 0.9001)], prob_tol=1e-5) != []
    assert row_differences([ROW], [with_(j + ["similarity"], 0.500001)], prob_tol=1e-5) == [
        "[0].claims[0].judgments[0].similarity: 0.5 vs 0.500001"
    ]
    assert row_differences([ROW], [with_(j + ["label"], "CONTRADICT")], prob_tol=1) == [
        "[0].claims[0].judgments[0].label: 'SUPPORT' vs 'CONTRADICT'"
    ]
    assert row_differences([ROW], [ROW, ROW]) == [": 1 vs 2 entries"]
    assert row_differences(ROW, {**ROW, "extra": 1}) == [": keys ['extra'] in one only"]
