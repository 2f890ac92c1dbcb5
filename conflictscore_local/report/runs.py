"""Which files belong to one run: a scored file, its summary and its HTML report share a folder and a
stem (``x.scored.jsonl``, ``x.summary.json``, ``x.report.html``; ``x.jsonl``, ``x.json``, ``x.html``).
``conflictscore view`` lists runs by it; the comparison page links each run's report by it."""

from __future__ import annotations

import os
from pathlib import Path

_ROLES = (".scored", ".summary", ".results", ".report", ".pred", ".predictions")


def stem(name: str) -> str:
    """A file's run name: ``x`` for ``x.scored.jsonl``, ``x.summary.json``, ``x.report.html``, ``x.jsonl``."""
    base = name.rsplit(".", 1)[0]
    for role in _ROLES:
        if base.endswith(role):
            return base[: -len(role)]
    return base


def report_beside(scored: str | os.PathLike[str], *, besides: str | os.PathLike[str] | None = None) -> Path | None:
    """The HTML report of a scored file's run, paired as :func:`~.view.find_runs` pairs them: in the same folder,
    of the same :func:`stem` (``x.report.html`` or ``x.html`` for ``x.jsonl`` / ``x.scored.jsonl``; the first
    by name). ``besides``: a page that is not the report (the comparison page being written). None: none there."""
    p = Path(scored)
    folder = p.parent
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    skip = os.path.realpath(besides) if besides is not None else None
    for n in names:
        if (
            n.endswith(".html")
            and not n.startswith(".")
            and ".partial" not in n
            and stem(n) == stem(p.name)
            and os.path.realpath(folder / n) != skip
        ):
            return folder / n
    return None
