"""The ``Judge`` role: label claim × passage pairs SUPPORT / CONTRADICT / IRRELEVANT."""

from __future__ import annotations

import os
from typing import Any, Callable, ClassVar, Protocol, Sequence, runtime_checkable

from ..backends.backend import Backend, Role
from ..core.types import Judgment, Pair

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

    The optional members, with their defaults in :class:`JudgeBase`: ``document_rule()``,
    ``flops_per_token()``, ``use_judgment_cache(path)`` and ``generator_engines()``.
    """

    def judge(self, pairs: Sequence[Pair], on_progress: ProgressFn | None = None) -> list[Judgment]: ...

    def passage_budget(self) -> tuple[Callable[[str], int], int] | None: ...

    def document_rule(self) -> str | None: ...

    def flops_per_token(self) -> float | None: ...

    def use_judgment_cache(self, path: str | os.PathLike[str]) -> None: ...

    def generator_engines(self) -> tuple[str, Any] | None: ...


class JudgeBase(Backend):
    """The base class of judges: every optional member of :class:`Judge`, with its default."""

    role: ClassVar[str] = "judge"
    OPTIONAL: ClassVar[tuple[str, ...]] = (
        "document_rule",
        "flops_per_token",
        "use_judgment_cache",
        "generator_engines",
    )

    def document_rule(self) -> str | None:
        """The document rule (``aggregate.document_rule``) the judge's checkpoint was evaluated with, which
        ``auto`` takes; default None (``max``)."""
        return None

    def flops_per_token(self) -> float | None:
        """The forward pass's matmul FLOPs per token (the ``auto`` pruner's judge-cost prior); default None:
        unknown, so the pruner measures the judge instead."""
        return None

    def use_judgment_cache(self, path: str | os.PathLike[str]) -> None:
        """The judgment cache file, for a judge made of judges that keeps each one's answers there under
        that judge's spec (``cascade``); default: nothing to keep."""

    def generator_engines(self) -> tuple[str, Any] | None:
        """``(generator name, its config)`` when the judge labels through a generator whose engines a judge
        that distributes work (``ray``) may replace with its own, through ``use_generator``; default None:
        the judge labels by itself (the ``ray`` judge builds it on its workers)."""
        return None
