"""Figures for the docs pages, read from benchmarks/results/ at build time (mkdocs-macros).

A page that sets ``render_macros: true`` in its front matter can write
``{{ result("conflictbench_default-judge.json", "detection.overall.f1") }}``: the value at that
dotted path of the recorded results file, formatted (``.3f`` by default). The files of the
default judge are named once, in mkdocs.yml's ``extra.default_judge``, so a retrained judge's
results change every page (and a missing file or key fails the strict build).
``{{ result_table("peers.json") }}``: a table a benchmark recorded whole (``{"columns": [...],
"rows": [[...], ...]}`` at ``path``, default ``table``), as a markdown table.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


@lru_cache(maxsize=None)
def _load(name: str) -> Any:
    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


def lookup(name: str, path: str) -> Any:
    """The value at ``path`` (keys joined by dots) of ``benchmarks/results/NAME``; KeyError naming both."""
    value = _load(name)
    for key in path.split("."):
        try:
            value = value[int(key)] if isinstance(value, list) else value[key]
        except (KeyError, IndexError, ValueError):
            raise KeyError(f"benchmarks/results/{name} has no {path!r} (stopped at {key!r})") from None
    return value


def define_env(env: Any) -> None:
    @env.macro
    def result(name: str, path: str, fmt: str = ".3f") -> str:
        value = lookup(name, path)
        return format(value, fmt) if isinstance(value, (int, float)) else str(value)

    @env.macro
    def result_table(name: str, path: str = "table") -> str:
        return markdown_table(lookup(name, path), f"benchmarks/results/{name} {path}")


def markdown_table(table: Any, where: str) -> str:
    """``{"columns": [...], "rows": [[...], ...]}`` as a markdown table; ValueError naming ``where`` when a
    row's width is not the columns'."""
    columns = [str(c) for c in table["columns"]]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for k, row in enumerate(table["rows"]):
        if len(row) != len(columns):
            raise ValueError(f"{where}: row {k} has {len(row)} cells for {len(columns)} columns")
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)
