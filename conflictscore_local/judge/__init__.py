"""Judge backends (registered by name in :mod:`conflictscore_local.backends.registry`)."""

from ._base import Judge, JudgeBase, ProgressFn

__all__ = ["Judge", "JudgeBase", "ProgressFn"]
