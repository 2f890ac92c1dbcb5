"""Rewrite machine paths in recorded result files into repository-relative ones, in place.

The writers (``bench run``, ``train-judge``, the scripts here) already record portable paths
(:mod:`conflictscore_local.util.paths`); this fixes files written before that, or in another
checkout of the repository (``--checkout DIR``: that checkout's root and its ``.venv``
site-packages are rewritten like this one's).

  python -m benchmarks.tools.portable_paths --checkout ../main benchmarks/results/*.json benchmarks/results/*.md
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
from pathlib import Path

from conflictscore_local.util.paths import path_roots, portable_text


def checkout_roots(checkout: str) -> list[tuple[str, str]]:
    """Another checkout's root and the site-packages of its ``.venv`` (same Python version)."""
    root = Path(checkout).resolve()
    packages = root / ".venv" / Path(sysconfig.get_paths()["purelib"]).relative_to(sys.prefix)
    return [(str(packages), "<site-packages>"), (str(root), "")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--checkout", action="append", default=[], help="another checkout whose paths to rewrite too")
    args = ap.parse_args(argv)
    roots = path_roots() + [r for c in args.checkout for r in checkout_roots(c)]
    roots.sort(key=lambda kv: -len(kv[0]))
    for name in args.files:
        path = Path(name)
        old = path.read_text(encoding="utf-8")
        new = portable_text(old, roots)
        if new != old:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
