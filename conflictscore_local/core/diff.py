"""Where two JSON-like values differ, leaf by leaf: what a refused resume and a refused merge report."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

ABSENT: Any = object()
"""Stands for the side of a difference where the key does not exist."""


def leaf_differences(a: Any, b: Any, where: str = "") -> Iterator[tuple[str, Any, Any]]:
    """``(dotted path, a's value, b's value)`` for every leaf where ``a`` and ``b`` differ,
    keys in ``a``'s order then ``b``'s new ones; a key missing on one side gives :data:`ABSENT`."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for k in list(a) + [k for k in b if k not in a]:
            sub = f"{where}.{k}" if where else str(k)
            if k not in b:
                yield sub, a[k], ABSENT
            elif k not in a:
                yield sub, ABSENT, b[k]
            else:
                yield from leaf_differences(a[k], b[k], sub)
    elif a != b:
        yield where, a, b
