"""``benchmarks/README.md`` indexes every script of ``benchmarks/``, and every command it shows runs a module
that exists; no script edits ``sys.path`` (they run as ``python -m benchmarks.GROUP.NAME``)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
INDEX = (BENCHMARKS / "README.md").read_text(encoding="utf-8")


def scripts() -> list[Path]:
    """The scripts and shared modules of every folder of ``benchmarks/`` (``__init__.py`` aside)."""
    return sorted(
        p
        for p in BENCHMARKS.rglob("*")
        if p.suffix in (".py", ".sh") and p.name != "__init__.py" and "results" not in p.parts
    )


def test_every_script_has_its_line_in_the_index() -> None:
    missing = [str(p.relative_to(ROOT)) for p in scripts() if f"`{p.stem}`" not in INDEX and f"`{p.name}`" not in INDEX]
    assert not missing, f"benchmarks/README.md names none of {missing}"


def test_every_command_in_the_index_names_a_module_that_exists() -> None:
    modules = set(re.findall(r"python -m (benchmarks(?:\.\w+)+)", INDEX))
    assert len(modules) > 30
    absent = sorted(m for m in modules if importlib.util.find_spec(m) is None)
    assert not absent, absent


def test_no_script_edits_sys_path() -> None:
    editing = [str(p.relative_to(ROOT)) for p in scripts() if "sys.path.insert" in p.read_text(encoding="utf-8")]
    assert not editing, editing
