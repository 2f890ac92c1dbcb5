"""The pipeline: the run configuration (``config``), the engine that wires the stages (``engine``), the
scoring runner (``scoring``), splitting a run into shards (``shards``: ``--shard I/N``) and merging their
outputs (``merge``: ``conflictscore merge``).

Shards are for several processes, GPUs or machines working through one input file at once,
each with its own judge; the merge gives the output and summary one run would have given.
Light: nothing here imports torch, and importing the package imports none of its modules until one of
the names below is used (a command that needs only ``pipeline.config`` loads no merge).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Merged": "merge",
    "merge_shards": "merge",
    "Shard": "shards",
    "shard_of": "shards",
    "shard_record": "shards",
}

if TYPE_CHECKING:
    from .merge import Merged, merge_shards
    from .shards import Shard, shard_of, shard_record

__all__ = ["Merged", "Shard", "merge_shards", "shard_of", "shard_record"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
