"""One version, said three times: ``_version.py`` (the package's), ``pyproject.toml`` (the wheel's) and a section of
CHANGELOG.md that also lists every module path that release moved."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from conflictscore_local import __version__
from conflictscore_local._moved import MOVED, SPLIT

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_and_the_package_have_one_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == __version__ == "0.2.0"


def test_the_changelog_has_this_release_and_lists_what_moved() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^]]+)\]", text, flags=re.M)
    assert headings[0] == __version__, headings
    this_release = text.split(f"## [{__version__}]", 1)[1].split("\n## [", 1)[0]
    for old, new in MOVED.items():
        assert f"| `conflictscore_local.{old}` | `conflictscore_local.{new}` |" in this_release, old
    for old, parts in SPLIT.items():
        listed = ", ".join(f"`conflictscore_local.{p}`" for p in parts)
        assert f"| `conflictscore_local.{old}` | {listed} |" in this_release, old


def test_the_package_ships_its_type_marker() -> None:
    """PEP 561: ``py.typed`` beside the package's ``__init__.py`` and in the wheel's package data."""
    assert (ROOT / "conflictscore_local" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["conflictscore_local"]
