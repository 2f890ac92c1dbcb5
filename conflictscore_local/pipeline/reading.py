"""A run's input as read, the same way from a command and from the API: every item validated before
anything is written, an empty input, empty responses and items without documents noted, and what
reading saw (the summary's ``stages.input``, :class:`~..core.types.InputRecord`)."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from ..core.types import InputRecord, Item
from ..formats.inputs import InputShapes, as_items, read_items
from ..util.jsonl import InputStats
from .shards import Shard

log = logging.getLogger(__name__)


class Notes(list):
    """What deserves a look: kept for the summary's ``warnings`` and logged as it happens."""

    def add(self, message: str) -> None:
        self.append(message)
        log.warning(message)


@dataclass
class ScoringInput:
    """A run's input as read: the items to score (a shard's, for ``--shard``), every id the file
    holds, what reading saw (sha256, lines; ``stats`` None when the reader keeps no counts), the
    items with neither response nor claims, the shard, and the items with no document."""

    path: str | os.PathLike[str]
    items: list[Item]
    all_ids: list[str]
    stats: InputStats | None = None
    empty: list[str] = field(default_factory=list)
    shard: Shard | None = None
    no_documents: list[str] = field(default_factory=list)
    shapes: dict[str, Any] = field(default_factory=dict)
    file_ids: list[str] | None = None
    """Every id the file holds when ``all_ids`` are a selection of them (bench run's --split, --source, --limit)."""

    def record(self) -> InputRecord | None:
        """What reading saw, for the summary's ``stages.input`` (None where the reader kept no counts: a
        ``bench run`` reads its selection itself)."""
        if self.stats is None and not self.shapes:
            return None
        return InputRecord(
            items=len(self.all_ids),
            empty_responses=len(self.empty),
            no_documents=len(self.no_documents),
            lines=self.stats.lines if self.stats is not None else None,
            blank_lines=self.stats.blank_lines if self.stats is not None else None,
            file=os.path.basename(str(self.path)) if self.stats is not None else None,
            format=self.stats.format if self.stats is not None else "jsonl",
            **self.shapes,
        )


def read_input(
    path: str | os.PathLike[str], shard: Shard | None, notes: Notes, limit: int | None = None
) -> ScoringInput:
    """Every line of a `score` input validated before anything is written; an empty input and
    empty responses noted; with ``limit``, only the first N items (of the shard) are scored."""
    stats = InputStats()
    shapes = InputShapes(warn=notes.add)
    items = read_items(path, stats=stats, shapes=shapes)
    read_as = shapes.described()
    if read_as is not None or stats.format != "jsonl":
        source = "one JSON array" if stats.format == "json" else "JSON Lines"
        log.info(f"{path}: {len(items)} items read from {source}, as {read_as or 'conflictscore items'}")
    return _input(path, items, stats, shapes, notes, shard, limit)


def items_input(items: Iterable[Item | Mapping[str, Any]], notes: Notes) -> ScoringInput:
    """Items as the Python API takes them (:class:`Item` objects, or objects of any input shape: see
    :func:`~..formats.inputs.as_items`), checked and noted as :func:`read_input` checks a file's."""
    shapes = InputShapes(warn=notes.add)
    return _input("the items", as_items(items, shapes), None, shapes, notes, None, None)


def _input(
    path: str | os.PathLike[str],
    items: list[Item],
    stats: InputStats | None,
    shapes: InputShapes,
    notes: Notes,
    shard: Shard | None,
    limit: int | None,
) -> ScoringInput:
    empty = [it.id for it in items if it.claims is None and not it.response.strip()]
    _check_input(path, stats, len(items), empty, notes.add)
    # with claims to judge (or a response to find them in) but nothing to judge them against
    no_documents = [
        it.id for it in items if not it.documents and (it.claims if it.claims is not None else it.response.strip())
    ]
    if no_documents:
        notes.add(
            f"{len(no_documents)} item(s) have no documents, so none of their claims can be supported or "
            f"contradicted (CS-C 0 by construction, support rate 0): {_shown(no_documents)}"
        )
    chosen = shard.select(items) if shard is not None else items
    if limit is not None and len(chosen) > limit:
        log.info(f"--limit {limit}: scoring the first {limit} of {len(chosen)} items")
        chosen = chosen[:limit]
    return ScoringInput(path, chosen, [it.id for it in items], stats, empty, shard, no_documents, shapes.record())


def _check_input(
    path: Any, stats: InputStats | None, n_items: int, empty: list[str], note: Callable[[str], None]
) -> None:
    if n_items == 0:
        if stats is None:
            note(f"{path}: no items to score")
        elif stats.format == "json":
            note(f"{path} holds an empty JSON array: no items to score")
        elif stats.lines == 0:
            note(f"{path} is empty: no items to score")
        else:
            note(f"{path} holds only blank lines ({stats.blank_lines}): no items to score")
    if empty:
        note(f"{len(empty)} item(s) have an empty response and no claims, so no claims and no metrics: {_shown(empty)}")


def _shown(ids: list[str]) -> str:
    """The first five ids, and how many more."""
    return ", ".join(repr(i) for i in ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
