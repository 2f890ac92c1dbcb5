"""MkDocs hooks: pages may link to the repository's recorded results, and the site stays whole offline.

A page under docs/ links to ``../benchmarks/results/NAME.png`` (an image) or ``../benchmarks/...md``
(a results file) so that it reads right on a forge. The site has no such files, so here an image is
copied into the site as ``results/NAME.png`` (from the one recorded file: nothing is copied by hand)
and its link pointed there, and a link to any other file outside docs/ becomes its path in code.

Every figure a page renders from ``benchmarks/results/`` (``<!-- fig ... -->VALUE<!-- /fig -->``,
``benchmarks/tools/render_docs.py``) is checked against its file here: one that differs fails the build.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
IMAGE = re.compile(r"(!\[[^\]]*\]\()\.\./benchmarks/results/([^)\s]+\.(?:png|svg|jpg))\)")
OUTSIDE = re.compile(r"(?<!!)\[([^\]]+)\]\(\.\./((?:benchmarks|models|conflictscore_local|examples|tests)/[^)\s#]*)\)")


def on_files(files: Files, config: Any) -> Files:
    for path in sorted(RESULTS.rglob("*")):
        if path.suffix in (".png", ".svg", ".jpg"):
            files.append(
                File.generated(config, f"results/{path.relative_to(RESULTS).as_posix()}", abs_src_path=str(path))
            )
    return files


def _renderer() -> Any:
    spec = importlib.util.spec_from_file_location("render_docs", ROOT / "benchmarks" / "tools" / "render_docs.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    stale = _renderer().stale(markdown, config.get("extra") or {})
    if stale:
        where = f"docs/{page.file.src_uri}"
        raise PluginError(
            "\n".join(
                f"{where}:{line}: {expr} reads {now!r}, its results give {want!r}" for line, expr, now, want in stale
            )
            + "\nrun: python -m benchmarks.tools.render_docs"
        )
    markdown = IMAGE.sub(lambda m: f"{m.group(1)}results/{m.group(2)})", markdown)

    def code(m: re.Match[str]) -> str:
        text, target = m.group(1), m.group(2)
        return f"`{target}`" if text.strip("`") in (target, target.rsplit("/", 1)[-1]) else f"{text} (`{target}`)"

    return OUTSIDE.sub(code, markdown)
