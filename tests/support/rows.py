"""A comparison of scored outputs for tests: where two runs' rows differ, probabilities within a tolerance."""

from __future__ import annotations

from typing import Any


def row_differences(a: Any, b: Any, *, prob_tol: float = 0.0, where: str = "") -> list[str]:
    """Where two scored outputs (JSON rows, or any JSON-like values) differ: ``path: A vs B``.

    Probabilities (numbers under a ``probs`` key) may differ by up to ``prob_tol``: a
    classifier's probabilities change in the last digits with the other pairs of its padded
    batch (float summation order), so two runs that batch pairs differently (shards, Ray
    workers, another ``batch_size``) agree on every label but not always on the sixth decimal.
    Everything else must be equal.
    """
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{where}: keys {sorted(set(a) ^ set(b))} in one only"]
        return [d for k in a for d in row_differences(a[k], b[k], prob_tol=prob_tol, where=f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} vs {len(b)} entries"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b))
            for d in row_differences(x, y, prob_tol=prob_tol, where=f"{where}[{i}]")
        ]
    if all(isinstance(v, float) for v in (a, b)) and ".probs." in f"{where}." and abs(a - b) <= prob_tol:
        return []
    return [] if a == b else [f"{where}: {a!r} vs {b!r}"]
