"""Leaf-by-leaf differences of JSON-like values: paths, order, and a missing key on either side."""

from __future__ import annotations

from conflictscore_local.core.diff import ABSENT, leaf_differences


def test_leaf_differences_walk_nested_mappings_in_key_order() -> None:
    a = {"judge": {"name": "nli", "spec": {"weights": "aa", "runtime": "torch"}}, "gone": 1, "same": [1, 2]}
    b = {
        "judge": {"name": "nli", "spec": {"weights": "bb", "runtime": "torch", "int8": True}},
        "same": [1, 2],
        "new": {"x": 1},
    }
    assert list(leaf_differences(a, b)) == [
        ("judge.spec.weights", "aa", "bb"),
        ("judge.spec.int8", ABSENT, True),
        ("gone", 1, ABSENT),
        ("new", ABSENT, {"x": 1}),
    ]


def test_values_that_are_not_mappings_compare_whole() -> None:
    assert list(leaf_differences([1, 2], [1, 3])) == [("", [1, 2], [1, 3])]
    assert list(leaf_differences({"a": 1}, 5)) == [("", {"a": 1}, 5)]
    assert list(leaf_differences({"a": {"b": None}}, {"a": {"b": None}})) == []
