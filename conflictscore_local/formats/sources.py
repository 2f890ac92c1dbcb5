"""The one table of the public data sets the project reads: :data:`DATA_SOURCES`, the registry's
``data_source`` namespace (``REGISTRY["data_source"]``).

A :class:`DataSource` says where a set lies under the data folder, what it is for (``use``: ``bench``,
a ConflictBench source; ``train``, what the shipped judge may train on; ``eval``, evaluation only;
``corpus``, the abstracts claims of other sets cite), its licence, and its loader. The rows are
declared beside their loaders, in the ``SOURCES`` of a module of the room that reads them (``bench/``,
``train/``); that room's package declares its tables here when it is imported
(:meth:`SourceTable.declare`), and they are read on first use, so this module names no room above it.
ConflictBench's loaders take ``(path, options)``
(``Options``: the dataclass ``--source-opt`` fills); the others ``(path, **kwargs)``, the row's
``kwargs`` merged with the caller's (a corpus for the claims of a corpus).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, MutableMapping

from ..core.errors import ConfigError

USES: tuple[str, ...] = ("bench", "train", "eval", "corpus")
"""What a data source may be for."""


@dataclass(frozen=True)
class NoOptions:
    """Options of a source that takes none."""


def _resolve(target: Any) -> Any:
    if isinstance(target, str) and ":" in target:
        mod, _, attr = target.partition(":")
        return getattr(importlib.import_module(mod), attr)
    return target


@dataclass(frozen=True)
class DataSource:
    """A public data set: its name, loader, path under the data folder (None: no file in the shared
    data, give one), what it is, what it is for, its options class, licence and a note."""

    name: str
    load: "Callable[..., Iterable[Any]] | str"  # the function, or "module:function"
    path: str | None
    description: str = ""
    options: "type | str" = NoOptions
    use: str = "bench"
    licence: str = ""
    note: str = ""
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def default_path(self) -> str | None:
        """``path`` (ConflictBench's name for it)."""
        return self.path

    @property
    def Options(self) -> type:  # noqa: N802 (the class ``--source-opt`` fills)
        """The options dataclass (imported now where it is named by path)."""
        return _resolve(self.options)

    def loader(self) -> Callable[..., Iterable[Any]]:
        """The loading function (imported now where it is named by path)."""
        return _resolve(self.load)

    def read(self, path: str | Path, *args: Any, **kwargs: Any) -> Iterable[Any]:
        """What the loader yields for the file or folder ``path`` (``kwargs`` over this row's)."""
        return self.loader()(Path(path), *args, **{**self.kwargs, **kwargs})

    def read_from(self, data_dir: str | Path, *args: Any, **kwargs: Any) -> Iterable[Any]:
        """:meth:`read` of this source's own ``path`` under ``data_dir``."""
        if self.path is None:
            raise ConfigError(f"data source {self.name!r} has no file in the shared data; give one")
        return self.read(Path(data_dir) / self.path, *args, **kwargs)


BenchSource = DataSource
"""The name of a ConflictBench source's row until this release (positional fields unchanged)."""


class SourceTable(MutableMapping[str, DataSource]):
    """Name → :class:`DataSource`: the rows of the tables declared (``"module:attr"``, at construction or
    by :meth:`declare`), read (and checked: one name once, a known ``use``) on first use, and those
    registered since (a plugin's)."""

    def __init__(self, tables: Iterable[str] = ()) -> None:
        self._tables: list[str] = []
        self._unread: list[str] = []
        self._rows: dict[str, DataSource] = {}
        self.declare(*tables)

    def declare(self, *tables: str) -> None:
        """Add the rows of each ``"module:attr"`` table (read on the next look-up); a table declared
        again is read once."""
        for ref in tables:
            if ref not in self._tables:
                self._tables.append(ref)
                self._unread.append(ref)

    def tables(self) -> list[str]:
        """The tables declared, in order."""
        return list(self._tables)

    def _all(self) -> dict[str, DataSource]:
        while self._unread:
            ref = self._unread.pop(0)
            for r in _resolve(ref):
                if r.name in self._rows:
                    raise ValueError(f"data source {r.name!r} declared twice ({ref})")
                if r.use not in USES:
                    raise ValueError(f"data source {r.name!r} ({ref}): use {r.use!r}; allowed: {', '.join(USES)}")
                self._rows[r.name] = r
        return self._rows

    def __getitem__(self, name: str) -> DataSource:
        return self._all()[name]

    def __setitem__(self, name: str, source: DataSource) -> None:
        self._all()[name] = source

    def __delitem__(self, name: str) -> None:
        del self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


DATA_SOURCES: SourceTable = SourceTable()
"""Every data set the project reads, by name: the one table (the registry's ``data_source`` namespace).
Its rows come from the tables the ``bench`` and ``train`` packages declare when imported
(ConflictBench's; the judge's training and evaluation sets, ``nli_extra``'s, ``nli_general``'s)."""


def by_use(table: Mapping[str, DataSource], *uses: str) -> dict[str, DataSource]:
    """The sources of ``table`` whose ``use`` is one of ``uses``."""
    return {n: s for n, s in table.items() if s.use in uses}


__all__ = ["DATA_SOURCES", "USES", "BenchSource", "DataSource", "NoOptions", "SourceTable", "by_use"]
