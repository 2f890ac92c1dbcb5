"""Paths as recorded in committed results: relative to the repository, never this machine's.

Results of ``bench run``, ``train-judge`` (``training.json``) and the scripts under
``benchmarks/`` are committed and compared across machines, so an absolute path in them
(``/home/me/conflictscore/models/default-judge``, a temporary directory) is noise at best
and a leak at worst. :func:`portable` rewrites every absolute path in a JSON-like value:

- inside an installed-packages folder → ``<site-packages>/...``
- inside the data folder → ``../shared/data/...`` (its default place, beside the
  repository), or ``$CONFLICTSCORE_DATA/...`` when that variable moved it
- inside the repository → relative to its root (``models/default-judge``)
- inside the temporary folder → ``<tmp>/...``; inside the home folder → ``~/...``
- anywhere else → unchanged (``/models/deberta-v3-large`` names a place you chose).

The most specific folder wins (a virtual environment inside the repository is
``<site-packages>``). A run's own summary (``score --summary``) keeps absolute paths: it
describes this machine's run, and they say exactly where its models came from.
"""

from __future__ import annotations

import os
import re
import site
import sysconfig
import tempfile
from pathlib import Path
from typing import Any, Sequence

from .locations import DATA_ENV, default_data_dir, repo_root


def path_roots() -> list[tuple[str, str]]:
    """``(absolute folder, what it is written as)`` for this machine, most specific first."""
    data = default_data_dir()
    data_as = f"${DATA_ENV}" if os.environ.get(DATA_ENV) else os.path.relpath(data, repo_root()).replace(os.sep, "/")
    packages = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")} | set(site.getsitepackages())
    if site.ENABLE_USER_SITE and site.getusersitepackages():
        packages.add(site.getusersitepackages())
    named: list[tuple[str | Path, str]] = [(p, "<site-packages>") for p in packages]
    named += [(data, data_as), (repo_root(), ""), (tempfile.gettempdir(), "<tmp>"), (Path.home(), "~")]
    roots: dict[str, str] = {}
    for folder, as_ in named:
        for form in {str(folder), str(Path(folder).resolve())}:  # /tmp may be a link (macOS: /private/tmp)
            if os.path.isabs(form) and form != os.sep:
                roots.setdefault(form.rstrip(os.sep), as_)
    return sorted(roots.items(), key=lambda kv: -len(kv[0]))


def portable_text(text: str, roots: Sequence[tuple[str, str]] | None = None) -> str:
    """``text`` with every absolute path under one of ``roots`` (default :func:`path_roots`)
    written relative to it; a path that *is* the repository root becomes ``.``."""
    for folder, as_ in roots if roots is not None else path_roots():
        pattern = re.compile(r"(?<![\w./~$<>-])" + re.escape(folder) + r"(/|(?![\w.-]))")

        def sub(m: re.Match[str], as_: str = as_) -> str:
            if as_:
                return as_ + m.group(1)
            return "" if m.group(1) else "."

        text = pattern.sub(sub, text)
    return text


def portable(value: Any, roots: Sequence[tuple[str, str]] | None = None) -> Any:
    """A JSON-like ``value`` (dicts, lists, strings, numbers) with :func:`portable_text`
    applied to every string in it, keys included."""
    roots = roots if roots is not None else path_roots()
    if isinstance(value, str):
        return portable_text(value, roots)
    if isinstance(value, os.PathLike):
        return portable_text(os.fspath(value), roots)
    if isinstance(value, dict):
        return {portable(k, roots): portable(v, roots) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [portable(v, roots) for v in value]
    return value
