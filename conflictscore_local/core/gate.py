"""The CI gate: ``--fail-if "cs_c>0.3"`` conditions on a run's metrics (``score``) or on a
comparison's paired differences (``compare``), judged after the run; any that holds makes the
command exit :data:`EXIT_GATE` with one line per condition that held.

A condition is ``[SCOPE.]METRIC OP NUMBER`` (spaces allowed), with METRIC any key of the metric
table (:data:`~conflictscore_local.core.metrics.METRICS`) and OP one of ``>``, ``>=``, ``<``, ``<=``.

- ``score``: SCOPE ``macro`` (the default: the mean over items) or ``micro`` (pooled claims):
  the condition holds when the run's value satisfies it.
- ``compare``: ``METRIC.diff`` (B − A), ``METRIC.a`` or ``METRIC.b`` (each run's mean over the
  paired items). A ``diff`` condition is judged on the paired 95% bootstrap interval of B − A:
  ``diff > x`` and ``diff >= x`` hold when its **lower** bound does (the whole interval lies
  above x: B exceeds A by more than x beyond noise), ``diff < x`` and ``diff <= x`` when its
  **upper** bound does (the whole interval lies below x). Without an interval (``--bootstrap 0``,
  fewer than two paired items) the point difference is judged, and the line says so.

A metric the run leaves undefined (CS-R with no conflicted claim, a weighted metric without
reliability) cannot cross a line: the condition does not hold, and a warning says it was not judged.

NUMBER must be finite (``1e999`` reads as infinity) and within what the value can take: the
metric's bounds (:attr:`~conflictscore_local.core.metrics.Metric.bounds`, 0 to 1 for each metric), or
for ``diff`` the difference of two such values (-1 to 1); outside them a condition could never
hold, or always would, and is refused before any work.
"""

from __future__ import annotations

import logging
import math
import operator
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .errors import ConfigError
from .metrics import METRICS

log = logging.getLogger(__name__)

EXIT_GATE = 4
"""Exit status of a run whose ``--fail-if`` conditions held (written and finished otherwise)."""
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
RUN_SCOPES = ("macro", "micro")
COMPARE_SCOPES = ("diff", "a", "b")
_FORM = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(>=|<=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


@dataclass(frozen=True)
class Condition:
    """One ``--fail-if``: ``scope`` (macro, micro; diff, a, b), ``metric``, ``op``, ``threshold``, as typed."""

    scope: str
    metric: str
    op: str
    threshold: float
    text: str

    def holds(self, value: float) -> bool:
        return OPERATORS[self.op](value, self.threshold)


def allowed(compare: bool) -> str:
    """What a condition may say, for error messages."""
    metrics = ", ".join(METRICS)
    ops = ", ".join(sorted(OPERATORS, key=len))
    if compare:
        return f"METRIC.diff, METRIC.a or METRIC.b with METRIC one of {metrics}; operators {ops}; e.g. cs_c.diff>0.05"
    return f"[macro.|micro.]METRIC with METRIC one of {metrics}; operators {ops}; e.g. cs_c>0.3 or micro.cs_c>=0.25"


def parse_condition(text: str, *, compare: bool = False) -> Condition:
    """A condition of ``score`` (``compare=False``) or ``compare``; :class:`ConfigError` naming
    what is allowed otherwise."""
    m = _FORM.match(text)
    if not m:
        left = re.split(r"[<>=]", text, maxsplit=1)[0].strip()
        meant = _meant(left.split(".")[0] if compare else left.split(".")[-1], METRICS) if left else ""
        raise ConfigError(f"--fail-if {text!r}: not METRIC OP NUMBER{meant}; allowed: {allowed(compare)}")
    name, op, number = m.groups()
    parts = name.split(".")
    scopes = COMPARE_SCOPES if compare else RUN_SCOPES
    if compare:
        metric, scope = (parts[0], parts[1]) if len(parts) == 2 else (name, None)
    else:
        scope, metric = (parts[0], parts[1]) if len(parts) == 2 else ("macro", parts[0] if len(parts) == 1 else name)
    if scope is None or scope not in scopes or metric not in METRICS or len(parts) > 2:
        meant = _meant(metric if metric not in METRICS else scope, METRICS if metric not in METRICS else scopes)
        raise ConfigError(
            f"--fail-if {text!r}: unknown {'metric' if metric not in METRICS else 'scope'} in "
            f"{name!r}{meant}; allowed: {allowed(compare)}"
        )
    threshold = float(number)
    low, high = METRICS[metric].bounds
    if scope == "diff":
        low, high = low - high, high - low
    what = f"{'B − A of ' if scope == 'diff' else ''}{METRICS[metric].label}"
    if not math.isfinite(threshold):
        raise ConfigError(
            f"--fail-if {text!r}: {number} is not a finite number (it reads as {threshold}); give a "
            f"threshold from {_show(low)} to {_show(high)}, the values {what} takes"
        )
    if not low <= threshold <= high:
        raise ConfigError(
            f"--fail-if {text!r}: {what} lies from {_show(low)} to {_show(high)}, so a threshold of "
            f"{number} means the condition {_never_or_always(op, threshold, low)}; give one from "
            f"{_show(low)} to {_show(high)}"
        )
    return Condition(scope, metric, op, threshold, text.strip())


def _never_or_always(op: str, threshold: float, low: float) -> str:
    below = threshold < low  # else above the top
    return "always holds" if (op in (">", ">=")) == below else "never holds"


def _meant(word: str | None, known: Any) -> str:
    """``; did you mean 'cs_c'?`` for a metric (or scope) name written another way (``csc``, ``CS-C``), or ''."""
    import difflib

    names = list(known)
    if word is None or word in names:  # no scope given (compare's METRIC alone), or a name that is right
        return ""
    folded = {k.replace("_", "").lower(): k for k in names}
    key = word.replace("-", "").replace("_", "").replace(" ", "").lower()
    found = folded.get(key) or next(iter(difflib.get_close_matches(word.lower(), names, n=1, cutoff=0.6)), None)
    return f" (did you mean {found}?)" if found is not None else ""


def _show(v: float) -> str:
    return f"{v:.4g}"


def _undefined(c: Condition, what: str) -> None:
    log.warning(f"--fail-if {c.text}: {what} is undefined in this run, so the condition was not judged")


def check_run(conditions: Sequence[Condition], summary: Mapping[str, Any]) -> list[str]:
    """The lines of the conditions that hold for a run's summary (``macro`` / ``micro`` of a
    ``score`` summary, or of a ``bench run`` results file's ``conflictscore``)."""
    body = summary.get("conflictscore", summary) if "conflictscore" in summary else summary
    failed = []
    for c in conditions:
        value = (body.get(c.scope) or {}).get(c.metric)
        label = f"{c.scope} {METRICS[c.metric].label}"
        if value is None:
            _undefined(c, label)
        elif c.holds(float(value)):
            failed.append(f"--fail-if {c.text}: {label} is {_show(float(value))}")
    return failed


def check_comparison(conditions: Sequence[Condition], result: Mapping[str, Any]) -> list[str]:
    """The lines of the conditions that hold for a comparison (``diff`` on its paired interval)."""
    failed = []
    for c in conditions:
        entry = result["metrics"].get(c.metric)
        label = METRICS[c.metric].label
        if entry is None or entry.get("diff") is None:
            _undefined(c, f"{label} (no item defines it in both runs)")
            continue
        if c.scope in ("a", "b"):
            who = result[c.scope]["label"]
            if c.holds(float(entry[c.scope])):
                failed.append(
                    f"--fail-if {c.text}: {label} of {who} is {_show(float(entry[c.scope]))} over "
                    f"{entry['n']} paired items"
                )
            continue
        ci = entry.get("ci95")
        if ci is None:
            value, said = (
                float(entry["diff"]),
                f"B − A is {_show(float(entry['diff']))} (no interval: the point difference)",
            )
        else:
            lower = c.op in (">", ">=")
            value = float(ci[0] if lower else ci[1])
            said = (
                f"B − A is {_show(float(entry['diff']))}, 95% interval [{_show(ci[0])}, {_show(ci[1])}]: its "
                f"{'lower' if lower else 'upper'} bound {_show(value)} {c.op} {_show(c.threshold)}"
            )
        if c.holds(value):
            failed.append(f"--fail-if {c.text}: {label} {said}")
    return failed


__all__ = [
    "COMPARE_SCOPES",
    "Condition",
    "EXIT_GATE",
    "OPERATORS",
    "RUN_SCOPES",
    "allowed",
    "check_comparison",
    "check_run",
    "parse_condition",
]
