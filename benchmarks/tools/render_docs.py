"""Figures where people read them: the Markdown in the repository carries the values, rendered from
``benchmarks/results/`` by this one command, so a page opened on a code host, the raw file and the built
site say the same.

A figure is written once, as its value between two HTML comments (invisible on every renderer), the
first naming where the value comes from:

    over <!-- fig result("speed/cpu_bf16.json", "measured.items", "d") -->1234<!-- /fig --> items

The expression between ``fig`` and ``-->`` is one of

- ``result(FILE, PATH)`` or ``result(FILE, PATH, FORMAT)``: the value at the dotted ``PATH`` of
  ``benchmarks/results/FILE`` (a list index is a number), formatted by ``FORMAT`` (a Python format
  spec; ``.3f`` for numbers by default, strings as they are);
- ``config.extra.KEY.KEY``: a value of ``mkdocs.yml``'s ``extra`` (the default judge's name and results
  files: point them at a retrained judge's files and render again);
- ``path(FILE)``: ```benchmarks/results/FILE``` as inline code (a results file cited beside its figures);
- ``result_table(FILE)`` or ``result_table(FILE, PATH)``: a table a benchmark recorded whole
  (``{"columns": [...], "rows": [[...], ...]}`` at ``PATH``, default ``table``) as a Markdown table, between
  blank lines (write its markers on lines of their own);

and ``FILE`` may itself be ``config.extra.default_judge.conflictbench``. The files rendered are
``docs/*.md``, ``README.md`` and ``models/*/README.md``; a model card's tables (``<!-- card:NAME -->``
blocks) are filled by ``benchmarks/judge/judge_card.py``'s renderers in the same pass.

    python -m benchmarks.tools.render_docs           # rewrite every figure (and the cards' tables)
    python -m benchmarks.tools.render_docs --check   # exit 1, naming file and line, where one differs
    python -m benchmarks.tools.render_docs --convert # first turn mkdocs-macros calls ({{ result(...) }}) into figures

The site build checks the same (``docs/_tools/hooks.py`` fails ``mkdocs build --strict`` on a figure
that differs from its results), and so does ``tests/docs/test_rendered_figures.py``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Mapping

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
MARKER = re.compile(r"<!-- fig (?P<expr>.+?) -->(?P<value>.*?)<!-- /fig -->", re.S)
"""A rendered figure: its expression and the value it holds now."""


def pages(root: Path = ROOT) -> list[Path]:
    """The Markdown files whose figures are rendered: the docs pages, the README, the model cards."""
    return sorted((root / "docs").glob("*.md")) + [root / "README.md"] + sorted((root / "models").glob("*/README.md"))


@lru_cache(maxsize=None)
def _load(name: str, results: Path = RESULTS) -> Any:
    path = results / name
    if not path.is_file():
        raise KeyError(f"benchmarks/results/{name} does not exist")
    return json.loads(path.read_text(encoding="utf-8"))


def lookup(name: str, path: str, results: Path = RESULTS) -> Any:
    """The value at ``path`` (keys joined by dots) of ``benchmarks/results/NAME``; KeyError naming both."""
    value = _load(name, results)
    for key in path.split("."):
        try:
            value = value[int(key)] if isinstance(value, list) else value[key]
        except (KeyError, IndexError, ValueError, TypeError):
            raise KeyError(f"benchmarks/results/{name} has no {path!r} (stopped at {key!r})") from None
    return value


def site_extra(root: Path = ROOT) -> dict[str, Any]:
    """``mkdocs.yml``'s ``extra`` (what ``config.extra...`` reads)."""
    import yaml

    return dict(yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8")).get("extra") or {})


def evaluate(expr: str, extra: Mapping[str, Any], results: Path = RESULTS) -> str:
    """The text of one figure's expression (see the module docstring); ValueError for one it cannot read."""
    try:
        tree = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        raise ValueError(
            f"cannot read {expr.strip()!r}: write result(FILE, PATH[, FORMAT]), path(FILE) or config.extra.KEY"
        ) from None

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Attribute):
            keys: list[str] = []
            while isinstance(node, ast.Attribute):
                keys.insert(0, node.attr)
                node = node.value
            if isinstance(node, ast.Name) and node.id == "config" and keys[:1] == ["extra"]:
                found: Any = extra
                for k in keys[1:]:
                    if not isinstance(found, Mapping) or k not in found:
                        raise ValueError(f"mkdocs.yml's extra has no {'.'.join(keys[1:])!r}")
                    found = found[k]
                return found
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            args = [value(a) for a in node.args]
            if node.func.id == "result" and len(args) in (2, 3):
                got = lookup(args[0], args[1], results)
                fmt = args[2] if len(args) == 3 else ".3f"
                return format(got, fmt) if isinstance(got, (int, float)) and not isinstance(got, bool) else str(got)
            if node.func.id == "path" and len(args) == 1:
                return f"`benchmarks/results/{args[0]}`"
            if node.func.id == "result_table" and len(args) in (1, 2):
                path = args[1] if len(args) == 2 else "table"
                table = markdown_table(lookup(args[0], path, results), f"benchmarks/results/{args[0]} {path}")
                return f"\n\n{table}\n\n"
        raise ValueError(
            f"cannot read {ast.unparse(node)} in {expr.strip()}: allowed: result(FILE, PATH[, "
            "FORMAT]), result_table(FILE[, PATH]), path(FILE), config.extra.KEY and quoted strings"
        )

    return str(value(tree))


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


TEMPLATE = re.compile(r"\{\{\s*(?P<expr>(?:result|result_table|path)\(.*?\)|config\.extra\.[\w.]+)\s*\}\}")
"""An mkdocs-macros call of the kind this script renders (what pages held before it)."""


def convert(text: str) -> str:
    """``text`` with every mkdocs-macros figure call made a figure marker (still to render) and the front
    matter that switched the macros on removed; a file name in inline code becomes ``path(...)``."""
    text = re.sub(r"\A---\nrender_macros: true\n---\n\n?", "", text)
    text = re.sub(
        r"`benchmarks/results/\{\{\s*(config\.extra\.[\w.]+)\s*\}\}`", r"<!-- fig path(\1) --><!-- /fig -->", text
    )
    return TEMPLATE.sub(lambda m: f"<!-- fig {m.group('expr')} --><!-- /fig -->", text)


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def figures(text: str) -> Iterator[re.Match[str]]:
    """Every rendered figure of a page's text."""
    return MARKER.finditer(text)


def stale(text: str, extra: Mapping[str, Any], results: Path = RESULTS) -> list[tuple[int, str, str, str]]:
    """``(line, expression, value now, value from the results)`` of every figure that differs (or cannot be
    read: then the last is the reason, starting with ``error:``)."""
    out = []
    for m in figures(text):
        try:
            want = evaluate(m.group("expr"), extra, results)
        except (KeyError, ValueError) as e:
            want = f"error: {str(e).strip(chr(34))}"
        if want != m.group("value"):
            out.append((_line(text, m.start()), m.group("expr").strip(), m.group("value"), want))
    return out


def render(text: str, extra: Mapping[str, Any], results: Path = RESULTS) -> str:
    """``text`` with every figure's value rendered again from the results (KeyError / ValueError: one cannot)."""
    return MARKER.sub(
        lambda m: f"<!-- fig {m.group('expr')} -->{evaluate(m.group('expr'), extra, results)}<!-- /fig -->", text
    )


def render_file(path: Path, extra: Mapping[str, Any], results: Path = RESULTS) -> str:
    """A file's text with its figures rendered, and a model card's tables filled (``judge_card.py``)."""
    text = path.read_text(encoding="utf-8")
    new = render(text, extra, results)
    if path.parent.parent.name == "models" and "<!-- card:" in new:
        from benchmarks.judge import judge_card as card

        new = card.render(new, results / "judge", tables=card.tables_for(path), where=path)
    return new


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 naming every figure that differs")
    ap.add_argument(
        "--convert",
        action="store_true",
        help="first make mkdocs-macros calls ({{ result(...) }}, "
        "{{ result_table(...) }}, {{ config.extra... }}) figure markers, then render them",
    )
    ap.add_argument(
        "files", nargs="*", type=Path, help="only these files (default: docs/*.md, README.md, models/*/README.md)"
    )
    args = ap.parse_args(argv)
    extra = site_extra()
    bad = 0
    for path in args.files or pages():
        text = path.read_text(encoding="utf-8")
        if args.convert and not args.check and convert(text) != text:
            path.write_text(convert(text), encoding="utf-8")
        try:
            new = render_file(path, extra)
        except (KeyError, ValueError) as e:
            print(f"{path}: {str(e).strip(chr(34))}", file=sys.stderr)
            bad += 1
            continue
        if new == text:
            continue
        if args.check:
            for line, expr, now, want in stale(text, extra) or [(0, "a card:NAME table", "", "")]:
                where = f"{path}:{line}" if line else str(path)
                print(
                    f"{where}: {expr} reads {now!r}, its results give {want!r}"
                    if line
                    else f"{where}: {expr} differs from its results",
                    file=sys.stderr,
                )
            bad += 1
        else:
            path.write_text(new, encoding="utf-8")
            print(f"rendered {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    if bad and args.check:
        print("run: python -m benchmarks.tools.render_docs", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
