"""The ``Pruner`` role: drop claim × passage pairs that clearly cannot matter."""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

from ..types import Judgment, Pair


@runtime_checkable
class Pruner(Protocol):
    """Choose which candidate pairs go to the judge.

    ``select`` receives every candidate pair of an engine step (each claim against every
    passage of its own item's documents) and returns the pairs to judge (with
    ``similarity`` filled in where computed) and, for the others, IRRELEVANT judgments
    with ``source="pruned"``. Every input pair lands in exactly one of the two lists.
    """

    name: str

    def select(self, pairs: Sequence[Pair]) -> tuple[list[Pair], list[Judgment]]: ...

    def describe(self) -> dict[str, Any]: ...

    def stats(self) -> dict[str, Any]: ...
