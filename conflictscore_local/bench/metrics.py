"""Moved to :mod:`conflictscore_local.detection` (pair and conflict-detection metrics); this name stays for one release."""

from ..detection import (all_conflicted_f1, detection_counts, detection_metrics, grouped_detection, pair_metrics,
                         prf)

__all__ = ["all_conflicted_f1", "detection_counts", "detection_metrics", "grouped_detection", "pair_metrics", "prf"]
