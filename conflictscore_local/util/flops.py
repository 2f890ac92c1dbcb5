"""Matmul FLOPs of a transformer encoder's forward pass, from its ``config.json``.

What the roofline (``benchmarks/speed/throughput_peers.py``) divides by the measured peak, and what
the ``auto`` pruner scales its judge-cost prior by. Counted: the four attention projections
and the two feed-forward matrices per layer (``2 * (4 h^2 + 2 h i)`` per token), and the
attention scores and their weighted sum (``4 n h`` per token for a sequence of ``n``);
embeddings, norms, softmax and the classifier head are left out (under 1% at these sizes).
"""

from __future__ import annotations

from typing import Any, Mapping


def _dims(config: Mapping[str, Any]) -> tuple[int, int, int] | None:
    try:
        layers, hidden = int(config["num_hidden_layers"]), int(config["hidden_size"])
    except (KeyError, TypeError, ValueError):
        return None
    inner = config.get("intermediate_size") or 4 * hidden
    return layers, hidden, int(inner)


def flops_per_token(config: Mapping[str, Any]) -> float | None:
    """Matmul FLOPs per token of the encoder's linear layers; None when the config does not say."""
    dims = _dims(config)
    if dims is None:
        return None
    layers, h, i = dims
    return 2.0 * layers * (4 * h * h + 2 * h * i)


def sequence_flops(config: Mapping[str, Any], length: int) -> float | None:
    """Matmul FLOPs of one forward over a sequence of ``length`` tokens (linear layers + attention)."""
    dims = _dims(config)
    per_token = flops_per_token(config)
    if dims is None or per_token is None:
        return None
    layers, h, _ = dims
    return per_token * length + 4.0 * layers * length * length * h
