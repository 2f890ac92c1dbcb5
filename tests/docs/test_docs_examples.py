"""Every example of README.md and docs/*.md runs, against the bundled examples.

Sybil parses the Markdown: ```` ```python ```` blocks run in one namespace per page (``>>>`` lines are
doctests: their printed output is compared), ```` ```bash ```` blocks run in bash (``-euo pipefail``)
and must exit 0, ```` ```console ```` blocks are ``$ command`` lines followed by the output the page
shows, compared with doctest's rules (``...`` matches anything, whitespace is normalised). Each page
runs in its own folder holding a copy of ``examples/``, with ``conflictscore`` on ``PATH``, so
``conflictscore score examples/items.jsonl ...`` works as written. A block that needs a GPU, a
server, a model we cannot have or a long run is preceded by ``<!-- skip: next "the reason" -->``
(the reason is shown by ``pytest -ra``); ``<!-- skip: next if(not DATA, reason="...") -->`` skips
where the public data folder is missing.

One test per example, in page order; a test first runs the examples of its page before it that have
not run yet, so ``-k`` picks one example and still gets the files it needs.
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import SkipTest

import pytest

sybil = pytest.importorskip("sybil", reason="the docs extra (pip install -e '.[docs]') runs the docs' examples")

from sybil import Document, Example  # noqa: E402
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser  # noqa: E402

from conflictscore_local.core.errors import ConfigError  # noqa: E402
from conflictscore_local.util.locations import default_data_dir  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
TIMEOUT_S = 900
# Languages a page may fence; the shell and Python ones run, the rest are shown only.
RUN = {"bash", "console", "python"}
SHOWN = {"json", "toml", "text", "yaml", ""}
# An example whose text matches runs models or a whole benchmark: marked slow (still run by `make test`).
SLOW = re.compile(r"conflictscore (score|bench run|generate|regenerate|merge|train-judge)|Engine\(")


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        text=True,
        capture_output=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def _failed(command: str, done: subprocess.CompletedProcess[str]) -> str:
    return (
        f"exit status {done.returncode} from:\n{command}\n--- stdout ---\n{done.stdout[-3000:]}"
        f"\n--- stderr ---\n{done.stderr[-3000:]}"
    )


def evaluate_bash(example: Example) -> str | None:
    page = example.namespace["PAGE"]
    done = _run(example.parsed, page.cwd, page.env)
    return _failed(example.parsed, done) if done.returncode else None


def console_steps(text: str) -> list[tuple[str, str]]:
    """``$ command`` lines (a trailing backslash continues one) and the output shown under each."""
    steps: list[tuple[str, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise ValueError(f"console block line {i + 1} is output before any '$ ' command: {lines[i]!r}")
        command = lines[i][2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command + "\n" + lines[i]
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        steps.append((command, "\n".join(shown).strip("\n") + "\n" if any(s.strip() for s in shown) else ""))
    return steps


def evaluate_console(example: Example) -> str | None:
    page = example.namespace["PAGE"]
    checker = doctest.OutputChecker()
    for command, shown in console_steps(example.parsed):
        done = _run(command, page.cwd, page.env)
        if done.returncode:
            return _failed(command, done)
        if shown and not checker.check_output(shown, done.stdout, FLAGS):
            return f"$ {command}\nthe page shows:\n{shown}\nit printed:\n{done.stdout}"
    return None


class Page:
    """One page's working folder, environment, parsed examples and how far they have run."""

    def __init__(self, path: Path, cwd: Path, bindir: Path, cache: Path) -> None:
        self.path, self.cwd = path, cwd
        shutil.copytree(ROOT / "examples", cwd / "examples")
        self.env = {
            **os.environ,
            "PATH": f"{bindir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(ROOT),
            "HF_HUB_OFFLINE": "1",
            "CONFLICTSCORE_CACHE": str(cache),
            "NO_COLOR": "1",
        }
        self.document = parse(path)
        self.document.namespace.update(PAGE=self, DATA=_have_data())
        self.examples = list(self.document)
        self.next = 0

    def run_through(self, index: int) -> None:
        while self.next <= index:
            example = self.examples[self.next]
            self.next += 1
            cwd = os.getcwd()
            os.chdir(self.cwd)
            try:
                example.evaluate()
            except SkipTest:
                if self.next - 1 == index:
                    raise
            finally:
                os.chdir(cwd)


def _have_data() -> bool:
    try:
        return default_data_dir().is_dir()
    except ConfigError:
        return False


def parse(path: Path) -> Document:
    return Document.parse(
        str(path),
        SkipParser(),
        PythonCodeBlockParser(doctest_optionflags=FLAGS),
        CodeBlockParser("bash", evaluate_bash),
        CodeBlockParser("console", evaluate_console),
    )


def _cases() -> list[Any]:
    cases = []
    for path in PAGES:
        for index, example in enumerate(parse(path)):
            text = str(example.region.parsed)
            marks = [pytest.mark.slow] if SLOW.search(text) else []
            cases.append(pytest.param(path, index, id=f"{path.relative_to(ROOT)}:{example.line}", marks=marks))
    return cases


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Page]:
    return {}


@pytest.fixture(scope="module")
def bindir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bin")
    script = folder / "conflictscore"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m conflictscore_local.cli "$@"\n')
    script.chmod(0o755)
    return folder


@pytest.mark.timeout(TIMEOUT_S)
@pytest.mark.parametrize(("path", "index"), _cases())
def test_example(
    path: Path, index: int, pages: dict[Path, Page], bindir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if path not in pages:
        cache = tmp_path_factory.getbasetemp() / "docs-judgments.sqlite"
        pages[path] = Page(path, tmp_path_factory.mktemp(path.stem), bindir, cache)
    try:
        pages[path].run_through(index)
    except SkipTest as skip:
        pytest.skip(str(skip))


FENCE = re.compile(r"^(\s*)(`{3,})([\w-]*)[^\n]*$", re.M)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_is_run_or_shown(path: Path) -> None:
    """A shell or Python block in any other spelling (sh, shell, py, pycon) would be silently not run."""
    text = path.read_text(encoding="utf-8")
    languages, open_fence = [], None
    for match in FENCE.finditer(text):
        if open_fence is None:
            open_fence = match.group(2)
            languages.append(match.group(3))
        elif match.group(2) == open_fence and not match.group(3):
            open_fence = None
    assert open_fence is None, f"{path.name}: a code fence is never closed"
    assert set(languages) <= RUN | SHOWN, f"{path.name}: unknown block languages {set(languages) - RUN - SHOWN}"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_skip_says_why(path: Path) -> None:
    for directive in re.findall(r"<!--\s*skip:\s*(.*?)\s*-->", path.read_text(encoding="utf-8")):
        assert re.match(r'(next|start) ("[^"]{10,}"|if\(.+reason=".{10,}"\))$', directive) or directive == "end", (
            f"{path.name}: skip without a reason: {directive!r}"
        )


def test_console_steps() -> None:
    assert console_steps("$ echo a \\\n  b\na b\n$ true\n") == [("echo a \\\n  b", "a b\n"), ("true", "")]
    with pytest.raises(ValueError, match="output before any"):
        console_steps("oops\n$ true")


def test_a_wrong_output_fails(tmp_path: Path, bindir: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```console\n$ echo 1\n2\n```\n\n```console\n$ echo 'a   b'\na ...\n```\n\n```bash\nfalse\n```\n")
    loaded = Page(page, tmp_path / "work", bindir, tmp_path / "c.sqlite")
    wrong, right, failing = loaded.examples
    with pytest.raises(Exception, match="the page shows:\n2\n"):
        wrong.evaluate()
    right.evaluate()
    with pytest.raises(Exception, match="exit status 1 from:\nfalse"):
        failing.evaluate()
