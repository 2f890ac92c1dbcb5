"""``_moved.py``: the 0.1 module paths still import, as the same module objects, with a DeprecationWarning
that names the new path and the release that removes the old one. Each check runs in a fresh interpreter
(an old name imported once stays in ``sys.modules`` and the package's attributes, and warns no more)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conflictscore_local import __version__
from conflictscore_local._moved import MOVED, REMOVED_IN

ROOT = Path(__file__).resolve().parents[1]


def warned(code: str) -> list[dict[str, str]]:
    """The warnings ``code`` raised in a fresh interpreter (category, message, file name), and its result."""
    script = (
        "import json, warnings\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + "print(json.dumps([{'category': w.category.__name__, 'message': str(w.message), "
        "'file': w.filename} for w in seen]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("old", ["types", "registry", "models.lock", "shards.merge", "devices"])
def test_an_old_path_warns_and_is_the_new_module(old: str) -> None:
    new = MOVED[old]
    seen = warned(
        f"import conflictscore_local.{old} as old, conflictscore_local.{new} as new\nassert old is new, (old, new)"
    )
    olds = [old.rpartition(".")[0]] * (old.rpartition(".")[0] in MOVED) + [old]  # shards, then shards.merge
    assert seen == [
        {
            "category": "DeprecationWarning",
            "file": "<string>",
            "message": f"conflictscore_local.{o} is deprecated and will be removed in {REMOVED_IN}: "
            f"import conflictscore_local.{MOVED[o]}",
        }
        for o in olds
    ]


def test_from_the_package_import_an_old_module_warns() -> None:
    seen = warned(
        "from conflictscore_local import registry\n"
        "from conflictscore_local.backends import registry as new\n"
        "assert registry is new"
    )
    assert [w["message"] for w in seen] == [
        f"conflictscore_local.registry is deprecated and will be removed in {REMOVED_IN}: "
        "import conflictscore_local.backends.registry"
    ]


def test_the_new_paths_and_the_package_warn_nothing() -> None:
    assert (
        warned(
            "import conflictscore_local\nfrom conflictscore_local.backends import registry\n"
            "from conflictscore_local.core.types import Summary"
        )
        == []
    )


def test_every_old_path_has_a_new_module_and_the_removal_is_still_ahead() -> None:
    for old, new in MOVED.items():
        assert (ROOT / "conflictscore_local" / new.replace(".", "/")).with_suffix(".py").is_file() or (
            ROOT / "conflictscore_local" / new.replace(".", "/") / "__init__.py"
        ).is_file(), (old, new)
        assert not (ROOT / "conflictscore_local" / old.replace(".", "/")).with_suffix(".py").exists(), old

    def release(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in v.split(".")[:3])

    # the release that removes the shim must drop it (this module, the test and CHANGELOG's promise)
    assert release(__version__) < release(REMOVED_IN)
