"""Claim decomposition backends (registered by name in :mod:`conflictscore_local.backends.registry`)."""

from ._base import Decomposer, DecomposerBase

__all__ = ["Decomposer", "DecomposerBase"]
