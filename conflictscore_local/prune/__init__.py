"""Pair pruning backends (registered by name in :mod:`conflictscore_local.backends.registry`)."""

from ._base import Pruner

__all__ = ["Pruner"]
