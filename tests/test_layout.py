"""The house in layers: CONTRIBUTING's Layout lists the package's rooms from the ground up, and every
import of the package runs from a room to one listed below it (never back up), with no room missing
from the list and none listed that is gone."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "conflictscore_local"


def rooms_in_order() -> list[str]:
    """The rooms CONTRIBUTING's layout block names under ``conflictscore_local/``, ground floor first."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    rooms, inside = [], False
    for line in block.splitlines():
        if line.startswith("conflictscore_local/"):
            inside = True
            continue
        if inside and re.match(r"\S", line):
            break
        m = re.match(r"  (\S+?/?)\s", line + " ")
        if inside and m and not line.startswith("   "):
            rooms.append(m.group(1))
    return rooms


def room_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE).parts
    return rel[0] + "/" if len(rel) > 1 else rel[0]


def module_room(module: str) -> str | None:
    """The room of an absolute ``conflictscore_local.x.y`` module name (None: the package's face)."""
    parts = module.split(".")[1:]
    if not parts:
        return "__init__.py"
    return parts[0] + "/" if (PACKAGE / parts[0]).is_dir() else parts[0] + ".py"


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import of the package in ``path``, function-level ones included."""
    package = ["conflictscore_local", *path.relative_to(PACKAGE).parts[:-1]]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name == "conflictscore_local" or name.startswith("conflictscore_local."):
                if not node.module or name.count(".") == len(package) - node.level:  # from .. import mod
                    out += [(node.lineno, f"{name}.{a.name}") for a in node.names]
                else:
                    out.append((node.lineno, name))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("conflictscore_local")]
    return out


def test_the_layout_lists_every_room_once() -> None:
    listed = rooms_in_order()
    assert len(listed) == len(set(listed)), listed
    present = {room_of(p) for p in PACKAGE.rglob("*.py")}
    assert set(listed) == present, (sorted(present - set(listed)), sorted(set(listed) - present))


def test_no_import_runs_back_up() -> None:
    floor = {room: k for k, room in enumerate(rooms_in_order())}
    up = []
    for path in sorted(PACKAGE.rglob("*.py")):
        me = room_of(path)
        for line, module in imports(path):
            there = module_room(module)
            if there is not None and there != me and floor.get(there, -1) > floor[me]:
                up.append(f"{path.relative_to(PACKAGE)}:{line} ({me}) imports {module} ({there})")
    assert up == []
