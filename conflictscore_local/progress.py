"""Progress bars: one kind, on stderr, shown only when the caller asks (the CLI: a terminal and no ``-q``).

tqdm, imported when a bar is shown; a disabled bar is a no-op object, so long work reports
progress the same way whether anyone watches. Messages (warnings, notes) never go through a
bar: they go to ``logging`` (see :mod:`conflictscore_local.cli`)."""

from __future__ import annotations

import sys
from typing import Any


class NoBar:
    """A progress bar that shows nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "NoBar":
        return self

    def __exit__(self, *_: Any) -> None:
        pass


def bar(total: int | None, unit: str, *, enabled: bool, desc: str | None = None, **tqdm_args: Any) -> Any:
    """A tqdm bar on stderr counting ``unit`` up to ``total`` (a :class:`NoBar` unless ``enabled``)."""
    if not enabled:
        return NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc or unit, file=sys.stderr, dynamic_ncols=True, leave=False,
                **tqdm_args)
