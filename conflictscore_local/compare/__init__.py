"""``conflictscore compare``: two scored runs item by item and claim by claim (see :mod:`.core`)."""

from __future__ import annotations

from .core import ComparisonSettings, compare_results, describe_difference, permutation_test, sign_test
from .files import compare_files, read_run

__all__ = [
    "ComparisonSettings",
    "compare_files",
    "compare_results",
    "describe_difference",
    "permutation_test",
    "read_run",
    "sign_test",
]
