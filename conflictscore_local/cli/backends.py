"""``conflictscore backends``: every registered backend of each role (installed plugins' too), what it does,
its arguments with their defaults, ranges and help."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..backends.registry import ROLES
from ..core.errors import ConflictScoreError
from .flags import add_output_args
from .text import emit

BACKENDS_EPILOG = """examples:
  conflictscore backends                       every role's backends, their arguments and defaults
  conflictscore backends --role judge          only the judges
  conflictscore backends --role generator      the generators of `generate` and `regenerate`
  conflictscore backends --json | python -m json.tool
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("backends", epilog=BACKENDS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--role", choices=ROLES, help="only this role (generator: the backends of generate and regenerate)")
    add_output_args(p, json_help="each backend's arguments and defaults as JSON")
    p.set_defaults(func=cmd_backends)


def cmd_backends(args: argparse.Namespace) -> int:
    import dataclasses

    from ..backends import registry
    from ..backends.arguments import argument_defaults, field_help, number_kind, numeric_fields

    listing: dict[str, dict[str, Any]] = {}
    for role in [args.role] if args.role else ROLES:
        listing[role] = {}
        for name in registry.available(role):
            try:
                cls = registry.resolve(role, name)
                config = cls.Config
                defaults = argument_defaults(config)
                listing[role][name] = {
                    "description": _first_line(cls.__doc__),
                    "args": {k: None if v is dataclasses.MISSING else v for k, v in defaults.items()},
                    "required": [k for k, v in defaults.items() if v is dataclasses.MISSING],
                    "ranges": {k: r.text(number_kind(h) is int) for k, h, r in numeric_fields(config) if r is not None},
                    "help": field_help(config),
                }
            except ConflictScoreError as e:
                listing[role][name] = {"unavailable": str(e)}

    def text() -> str:
        lines = []
        for role, names in listing.items():
            lines.append(f"{role}:")
            for name, entry in names.items():
                if "unavailable" in entry:
                    lines.append(f"  {name:12} (unavailable: {entry['unavailable']})")
                    continue
                lines.append(f"  {name:12} {entry['description']}")
                for k, v in entry["args"].items():
                    arg = (k if k in entry["required"] else f"{k}={v!r}") + (
                        f" ({entry['ranges'][k].removeprefix('an integer ').removeprefix('a finite number ')})"
                        if k in entry["ranges"]
                        else ""
                    )
                    lines.append(f"      {arg.ljust(34)}  {_short(entry['help'].get(k, ''))}".rstrip())
        return "\n".join(lines)

    emit(args, json.loads(json.dumps(listing, default=str)), text)
    return 0


def _first_line(doc: str | None) -> str:
    """A backend's one-line description: the first line of its class docstring."""
    from ..backends.arguments import plain_text

    return plain_text((doc or "").strip().split("\n")[0].strip())


def _short(text: str, width: int = 90) -> str:
    """An argument's help on one line: its first sentence, cut at ``width`` characters."""
    first = text.split(". ")[0].rstrip(".")
    return first if len(first) <= width else first[: width - 1].rstrip() + "…"
