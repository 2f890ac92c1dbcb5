"""The ``Judge`` role: label claim × passage pairs SUPPORT / CONTRADICT / IRRELEVANT."""

from __future__ import annotations

from typing import Callable, Protocol, Sequence, runtime_checkable

from ..backend import Role
from ..types import Judgment, Pair

ProgressFn = Callable[[int], None]


@runtime_checkable
class Judge(Role, Protocol):
    """Label pairs; the cost centre, so backends batch over everything they are given.

    ``judge`` returns one :class:`Judgment` per input pair, in input order, with
    ``source="judge"``. An output the backend cannot read becomes ``label=None`` with the
    reason in ``note``: never a guessed label. ``on_progress(n)`` is called as pairs finish.

    ``spec()`` is everything that changes the labels (backend, model path and revision,
    prompt version, thresholds): it keys the judgment cache and goes into reports.

    ``passage_budget()`` returns ``(count_tokens, max_tokens)`` for splitting long
    documents into passages that fit the judge's window next to a claim, or None when
    the backend has no such limit.
    """

    def judge(self, pairs: Sequence[Pair], on_progress: ProgressFn | None = None) -> list[Judgment]: ...

    def passage_budget(self) -> tuple[Callable[[str], int], int] | None: ...
