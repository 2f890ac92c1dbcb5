"""What travels to an air-gapped GPU box (docs/gpu.md): the checkout's tracked files, the untracked
files git does not ignore, and the carry folder ``benchmarks/gpu_carry/`` (its wheels and its data),
against the limits: tracked files under 40 MiB (the target), everything together under 64 MiB.

    python3 -m benchmarks.tools.tree_size            # prints the table; exit 1 when the sum is over 64 MiB
    python3 -m benchmarks.tools.tree_size --json

Only the standard library and ``git`` (it runs on the bare box and on a fresh checkout alike).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CARRY = REPO / "benchmarks" / "gpu_carry"
MIB = 1 << 20
TRACKED_TARGET = 40 * MIB
TRAVEL_LIMIT = 64 * MIB


def git_files(root: Path, *args: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z", *args], cwd=root, capture_output=True, check=True).stdout
    return [root / p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def size(paths: list[Path]) -> int:
    """Bytes of the regular files among ``paths`` (a symlink counts as itself, as git stores it)."""
    return sum(p.lstat().st_size for p in paths if p.is_symlink() or p.is_file())


def folder_size(folder: Path) -> int:
    return size([p for p in folder.rglob("*")]) if folder.is_dir() else 0


def sizes(root: Path = REPO) -> dict[str, int]:
    """Bytes of the checkout at ``root``: tracked files, untracked files git does not ignore, the carry folder."""
    tracked = [p for p in git_files(root) if p.exists() or p.is_symlink()]  # a deleted, uncommitted file is gone
    untracked = git_files(root, "--others", "--exclude-standard")
    carry = root / CARRY.relative_to(REPO)
    out = {
        "tracked": size(tracked),
        "untracked_not_ignored": size(untracked),
        "carry_wheels": folder_size(carry / "wheels"),
        "carry_data": folder_size(carry / "data"),
        "carry_other": folder_size(carry) - folder_size(carry / "wheels") - folder_size(carry / "data"),
    }
    out["total"] = sum(out.values())
    return out


def table(s: dict[str, int]) -> str:
    def row(name: str, n: int, note: str = "") -> str:
        return f"{name:<34} {n:>12,d} B {n / MIB:8.2f} MiB  {note}".rstrip()

    over = s["tracked"] > TRACKED_TARGET
    return "\n".join(
        [
            row("tracked files", s["tracked"], f"target < {TRACKED_TARGET // MIB} MiB: {'OVER' if over else 'ok'}"),
            row("untracked, not ignored", s["untracked_not_ignored"], "(travel with the working tree)"),
            row("benchmarks/gpu_carry/wheels", s["carry_wheels"]),
            row("benchmarks/gpu_carry/data", s["carry_data"]),
            row("benchmarks/gpu_carry (other)", s["carry_other"]),
            row(
                "sum: what travels",
                s["total"],
                f"limit {TRAVEL_LIMIT // MIB} MiB: "
                f"{'OVER' if s['total'] > TRAVEL_LIMIT else 'ok'}, {(TRAVEL_LIMIT - s['total']) / MIB:.2f} MiB left",
            ),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print the sizes as JSON")
    ap.add_argument("--root", type=Path, default=REPO, help="the checkout (default: this script's)")
    args = ap.parse_args(argv)
    try:
        s = sizes(args.root)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"tree_size: cannot list the checkout's files with git: {e}", file=sys.stderr)
        return 2
    print(json.dumps({**s, "tracked_target": TRACKED_TARGET, "limit": TRAVEL_LIMIT}) if args.json else table(s))
    return 1 if s["total"] > TRAVEL_LIMIT else 0


if __name__ == "__main__":
    sys.exit(main())
