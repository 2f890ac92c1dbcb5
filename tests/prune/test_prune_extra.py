"""The ``prune`` extra installs what the pruner imports, and nothing it never imports
(faiss-cpu was listed but never used: the exact numpy product measured faster)."""

from __future__ import annotations

import ast
import re
import tomllib
from importlib import metadata
from pathlib import Path

import conflictscore_local
from conflictscore_local.util.locations import repo_root


def imported_distributions() -> set[str]:
    """Distributions whose top-level modules some module of the package imports."""
    modules: set[str] = set()
    for path in Path(conflictscore_local.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "requires"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):  # extras.requires("module", ...)
                modules.add(str(node.args[0].value).split(".")[0])
    owners = metadata.packages_distributions()
    return {canon(d) for m in modules for d in owners.get(m, [])}


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_prune_requirement_is_imported() -> None:
    extras = tomllib.loads((repo_root() / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    wanted = {canon(re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0]) for req in extras["prune"]}
    assert wanted - imported_distributions() == set()
    assert "faiss-cpu" not in wanted
