"""Scored output read back: ``score``'s OUTPUT lines as :class:`ItemResult` objects.

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
