"""Pair pruning backends (registered by name in :mod:`conflictscore_local.backends.registry`)."""

from ._base import Pruner, PrunerBase, VectorStore

__all__ = ["Pruner", "PrunerBase", "VectorStore"]
