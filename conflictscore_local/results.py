"""Scored output read back: ``score``'s OUTPUT lines as :class:`ItemResult` objects, and a run's
summary (``score --summary`` or ``bench run`` results) checked for the fields readers use.

The format itself is :mod:`.types`' (``to_json`` / ``from_json``); here each item's metrics
are recomputed from its verdicts with the metric table, never trusted from the file.
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping

from .metrics import item_metrics
from .errors import InputError
from .types import ItemResult


def result_from_json(d: Mapping[str, Any]) -> ItemResult:
    """An :class:`ItemResult` from one output line; the metrics are recomputed from the
    verdicts (``aggregate.item_metrics``), not trusted from the file."""
    return ItemResult.from_json(d, item_metrics)


def read_results(path: str | os.PathLike[str]) -> list[ItemResult]:
    """Read a scored OUTPUT file back into :class:`ItemResult` objects."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if raw.strip():
                try:
                    out.append(result_from_json(json.loads(raw)))
                except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as e:
                    raise InputError(f"not a scored result line: {e}", path=str(path), line=n) from None
    return out


def is_bench_results(summary: Mapping[str, Any]) -> bool:
    """True for a ``bench run`` results file, False for a ``score`` summary."""
    return "bench" in summary and "detection" in summary


def load_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A ``score`` summary or a ``bench run`` results file, checked for the fields the report reads."""
    import json

    p = str(path)
    try:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=p) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"not JSON: {e}", path=p) from None
    check_summary(data, p)
    return data


def check_summary(data: Any, where: str) -> None:
    """Refuse anything that is neither a ``score`` summary nor a ``bench run`` results file."""
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {type(data).__name__}", path=where)
    if is_bench_results(data):
        need = {"conflictscore": ("macro", "micro"), "bench": ("n_items", "n_claims"), "pairs": ("confusion",)}
        optional = ("detection", "engine_pairs", "timing", "config", "versions", "stages")
    elif "macro" in data and "micro" in data:
        need = {"": ("n_items", "n_claims", "macro", "micro")}
        optional = ("ci95", "pairs", "timing", "config", "versions", "stages")
    else:
        raise InputError("neither a score summary (n_items, macro, micro, ci95, pairs) nor a bench run results "
                         "file (bench, detection, pairs)", path=where)
    for section, keys in need.items():
        body = data.get(section) if section else data
        for k in keys:
            name = f"{section}.{k}" if section else k
            if not isinstance(body, dict) or k not in body:
                raise InputError("missing", path=where, field=name)
            _check_type(body[k], int if k in ("n_items", "n_claims") else dict, where, name)
    for k in optional:
        if data.get(k) is not None:
            _check_type(data[k], dict, where, k)


def _check_type(value: Any, kind: type, where: str, name: str) -> None:
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise InputError(f"expected a whole number, got {type(value).__name__}", path=where, field=name)
    if kind is dict and not isinstance(value, dict):
        raise InputError(f"expected an object, got {type(value).__name__}", path=where, field=name)
