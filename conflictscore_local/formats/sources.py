"""The one table of the public data sets the project reads: :data:`DATA_SOURCES`, the registry's
``data_source`` namespace (``REGISTRY["data_source"]``).

A :class:`DataSource` says where a set lies under the data folder, what it is for (``use``: ``bench``,
a ConflictBench source; ``train``, what the shipped judge may train on; ``eval``, evaluation only;
``corpus``, the abstracts claims of other sets cite), its licence, and its loader. The rows are
declared beside their loaders (the ``SOURCES`` of each module of :data:`SOURCE_TABLES`) and read on
first use, so this module imports no feature. ConflictBench's loaders take ``(path, options)``
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

SOURCE_TABLES: tuple[str, ...] = (
    "conflictscore_local.bench.sources:SOURCES",
    "conflictscore_local.train.sources:SOURCES",
    "conflictscore_local.train.nli_extra:SOURCES",
    "conflictscore_local.train.nli_general:SOURCES",
)
"""Where the rows are declared, beside their loaders: ConflictBench's (``bench build``), the judge's
training and evaluation sets (``train-judge prepare``), ``nli_extra``'s, ``nli_general``'s. Read on first use."""


class SourceTable(MutableMapping[str, DataSource]):
    """Name → :class:`DataSource`: the rows of :data:`SOURCE_TABLES`, read (and checked: one name
    once, a known ``use``) on first use, and those registered since (a plugin's)."""

    def __init__(self, tables: Iterable[str]) -> None:
        self._tables = tuple(tables)
        self._rows: dict[str, DataSource] | None = None

    def _all(self) -> dict[str, DataSource]:
        if self._rows is None:
            rows: dict[str, DataSource] = {}
            for ref in self._tables:
                for r in _resolve(ref):
                    if r.name in rows:
                        raise ValueError(f"data source {r.name!r} declared twice ({ref})")
                    if r.use not in USES:
                        raise ValueError(f"data source {r.name!r} ({ref}): use {r.use!r}; allowed: {', '.join(USES)}")
                    rows[r.name] = r
            self._rows = rows
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


DATA_SOURCES: SourceTable = SourceTable(SOURCE_TABLES)
"""Every data set the project reads, by name: the one table (the registry's ``data_source`` namespace)."""


def by_use(table: Mapping[str, DataSource], *uses: str) -> dict[str, DataSource]:
    """The sources of ``table`` whose ``use`` is one of ``uses``."""
    return {n: s for n, s in table.items() if s.use in uses}


__all__ = ["DATA_SOURCES", "SOURCE_TABLES", "USES", "BenchSource", "DataSource", "NoOptions", "SourceTable", "by_use"]
