"""Resume fingerprints: what decided an interrupted run's rows, and in words what differs now.

A job stores its fingerprint beside its partial output (see :mod:`.resumable`); a resume
whose fingerprint differs is refused with :func:`explain_fingerprint_change`'s sentence. The
fingerprint's content is the job's (``jobs.score_file``: format, input sha256, settings and
backend specs); its ``format`` is :data:`FINGERPRINT_FORMAT`.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..core.diff import ABSENT, leaf_differences
from ..core.errors import shown

FINGERPRINT_FORMAT = 3
"""Bumped when what a fingerprint holds changes: a partial file of another format is never resumed (3: the
rows' digests beside the partial file; the nli judge's torch and native runtimes at float32 as one)."""


def explain_fingerprint_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """What differs between an interrupted run's fingerprint and this run's, in words."""
    if old.get("format") != new.get("format"):
        return "it was written by another version of conflictscore, whose runs cannot be compared with this one's"
    if old.get("input") != new.get("input"):
        o, n = (str((f.get("input") or {}).get("sha256", "?"))[:12] for f in (old, new))
        return f"the input file changed since (sha256 {o}… then, {n}… now)"
    parts = []
    for section, what in (("settings", "setting"), ("backends", "backend")):
        diffs = _diff(old.get(section) or {}, new.get(section) or {})
        if diffs:
            parts.append(
                f"{what}s differ: " + "; ".join(diffs[:6]) + (f"; and {len(diffs) - 6} more" if len(diffs) > 6 else "")
            )
    return ", and ".join(parts) or "its fingerprint differs"


def _diff(old: Any, new: Any) -> list[str]:
    out = []
    for where, o, n in leaf_differences(old, new):
        if n is ABSENT:
            out.append(f"{where} was {shown(o, 48)}, now absent")
        elif o is ABSENT:
            out.append(f"{where} is new ({shown(n, 48)})")
        else:
            out.append(f"{where}: {shown(o, 48)} then, {shown(n, 48)} now")
    return out
