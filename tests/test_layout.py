"""The house in layers: CONTRIBUTING's Layout lists the package's rooms from the ground up, and every
import of the package runs from a room to one listed below it (never back up), with no room missing
from the list and none listed that is gone. Every import of the package, in the package, its tests and
benchmarks, names a module that exists (the 0.1 paths that ``_moved.py`` still answers included: only
its own test imports them)."""

from __future__ import annotations

import ast
import functools
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


@functools.cache
def module_file(module: str) -> Path | None:
    """The file of an absolute ``conflictscore_local.x.y`` module name (a package's ``__init__.py``), None if
    there is none."""
    where = ROOT.joinpath(*module.split("."))
    for path in (where / "__init__.py", where.with_suffix(".py")):
        if path.is_file():
            return path
    return None


@functools.cache
def bound_names(path: Path) -> set[str]:
    """The names a module binds at its top level (inside ``if``/``try`` too); ``*`` where it has a module
    ``__getattr__`` (it answers any name)."""
    names: set[str] = set()
    todo = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add("*" if node.name == "__getattr__" else node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            todo += [
                *node.body,
                *getattr(node, "orelse", []),
                *getattr(node, "finalbody", []),
                *(n for h in getattr(node, "handlers", []) for n in h.body),
            ]
    return names


def module_room(module: str) -> str | None:
    """The room of an absolute ``conflictscore_local.x.y`` module name (None: the package's face)."""
    parts = module.split(".")[1:]
    if not parts:
        return "__init__.py"
    return parts[0] + "/" if (PACKAGE / parts[0]).is_dir() else parts[0] + ".py"


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import of the package in ``path``, function-level ones included."""
    return [(line, module) for line, module, _ in imports_from(path)]


def imports_from(path: Path, *, standing: Path | None = None) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, names taken from it) of every import of the package in ``path`` (a file of
    the package, its tests or benchmarks), function-level ones included; ``from A import b`` gives
    ``A.b`` where ``A.b`` is a module. ``standing``: where the file is read as standing (relative imports)."""
    at = standing or path
    package = ["conflictscore_local", *at.relative_to(PACKAGE).parts[:-1]] if at.is_relative_to(PACKAGE) else []
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name == "conflictscore_local" or name.startswith("conflictscore_local."):
                taken = [a.name for a in node.names]
                modules = [a for a in taken if module_file(f"{name}.{a}") is not None]
                out += [(node.lineno, f"{name}.{a}", []) for a in modules]
                if len(modules) < len(taken) or module_file(name) is None:
                    out.append((node.lineno, name, [a for a in taken if a not in modules]))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names if a.name.startswith("conflictscore_local")]
    return out


def test_every_import_names_a_module_that_exists() -> None:
    """A module that is gone has no floor, so the test below cannot place it: it must fail here. The 0.1
    paths (``conflictscore_local.registry``, ...) are gone too: ``_moved.py`` answers them with a warning,
    and only its own test imports them."""
    files = [p for folder in ("conflictscore_local", "tests", "benchmarks") for p in (ROOT / folder).rglob("*.py")]
    missing = []
    for path in sorted(files):
        if path == ROOT / "tests" / "test_moved.py":
            continue
        for line, module, names in imports_from(path):
            where = module_file(module)
            if where is None:
                missing.append(f"{path.relative_to(ROOT)}:{line} imports {module}, which does not exist")
                continue
            bound = bound_names(where)
            gone = [n for n in names if n != "*" and n not in bound and "*" not in bound]
            if gone:
                missing.append(
                    f"{path.relative_to(ROOT)}:{line} imports {', '.join(gone)} from {module}, which does not define it"
                )
    assert missing == []


def test_the_checks_catch_a_missing_module(tmp_path: Path) -> None:
    mine = tmp_path / "x.py"
    mine.write_text(
        "from ..devices import torch_device\nfrom ..util.devices import nothing_here\n"
        "from ..util.devices import torch_device\n",
        encoding="utf-8",
    )
    assert imports_from(mine, standing=PACKAGE / "judge" / "x.py") == [
        (1, "conflictscore_local.devices", ["torch_device"]),
        (2, "conflictscore_local.util.devices", ["nothing_here"]),
        (3, "conflictscore_local.util.devices", ["torch_device"]),
    ]
    assert module_file("conflictscore_local.devices") is None
    assert "nothing_here" not in bound_names(module_file("conflictscore_local.util.devices"))
    assert "torch_device" in bound_names(module_file("conflictscore_local.util.devices"))


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
            if there is not None and there != me and floor[there] > floor[me]:  # KeyError: a room not listed
                up.append(f"{path.relative_to(PACKAGE)}:{line} ({me}) imports {module} ({there})")
    assert up == []


def test_the_public_names_are_listed_once_and_imported_on_use() -> None:
    """The package's face: ``__all__``, the lazy table of names (``_EXPORTS``) and the imports for type checkers
    and the API docs name the same things, each from the module that defines it; importing the package
    imports none of its modules."""
    import subprocess
    import sys

    import conflictscore_local as package

    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    typing_only: dict[str, str | None] = {}
    for node in tree.body:
        if isinstance(node, ast.If):  # if TYPE_CHECKING:
            for sub in node.body:
                if isinstance(sub, ast.ImportFrom):
                    typing_only.update({a.asname or a.name: sub.module for a in sub.names})
    assert typing_only == package._EXPORTS
    assert sorted(package.__all__) == sorted(["__version__", *package._EXPORTS])
    for name, module in package._EXPORTS.items():
        assert getattr(package, name) is getattr(__import__(f"conflictscore_local.{module}", fromlist=[name]), name)
    fresh = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, conflictscore_local\n"
            "print(sorted(m for m in sys.modules if m.startswith('conflictscore_local')))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert fresh.stdout.strip() == str(
        ["conflictscore_local", "conflictscore_local._moved", "conflictscore_local._version"]
    )
