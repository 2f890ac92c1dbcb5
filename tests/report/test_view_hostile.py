"""Issue 47's cases of ``conflictscore view`` (review reliability-4: V-view-o-runfile, V-view-o-summary,
V-serve-symlink-escape, V-serve-host-header, V-serve-nul, V-view-fifo, V-view-keys), met as a user meets
them: the command line in a real subprocess, and ``view --serve`` as a real server on 127.0.0.1 asked with
raw HTTP requests (the exact bytes a browser, curl or a rebinding page would send)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

import conflictscore_local

PACKAGE_ROOT = Path(conflictscore_local.__file__).resolve().parents[1]  # the checkout under test, in subprocesses too
ITEMS = [
    {
        "id": "a",
        "response": "c1. c2.",
        "claims": ["c1", "c2"],
        "documents": ["one", "two"],
        "labels": [["SUPPORT", "CONTRADICT"], ["SUPPORT", "IRRELEVANT"]],
    },
    {"id": "b", "response": "c3.", "claims": ["c3"], "documents": ["three"], "labels": [["CONTRADICT"]]},
]


def cs(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "conflictscore_local.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def make_runs(tmp_path: Path) -> Path:
    """``runs/ok.scored.jsonl`` + ``ok.summary.json`` + ``ok.report.html`` (one score run) and a file outside."""
    items = tmp_path / "in.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in ITEMS), encoding="utf-8")
    d = tmp_path / "runs"
    d.mkdir()
    done = cs(
        "score",
        str(items),
        "-o",
        str(d / "ok.scored.jsonl"),
        "--summary",
        str(d / "ok.summary.json"),
        "--report",
        str(d / "ok.report.html"),
        "-q",
        "--no-cache",
    )
    assert done.returncode == 0, done.stderr
    (tmp_path / "secret.txt").write_text("outside the runs folder\n")
    return d


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return make_runs(tmp_path)


@pytest.fixture(scope="module")
def served_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_runs(tmp_path_factory.mktemp("served"))


# == view -o never replaces a file it lists ======================================================


@pytest.mark.parametrize("name", ["ok.scored.jsonl", "ok.summary.json", "ok.report.html"])
def test_view_o_onto_a_run_file_it_lists_is_refused(runs: Path, name: str) -> None:
    """Before: ``view runs -o runs/ok.scored.jsonl`` replaced the scored rows by the HTML page, exit 0."""
    before = {p.name: p.read_bytes() for p in runs.iterdir()}
    done = cs("view", str(runs), "-o", str(runs / name), "-q")
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    if name.endswith(".html"):
        assert f"-o {runs / name} is a run file it lists ({name})" in done.stderr
    else:  # refused sooner: -o names the page's format by its extension
        ext = name[name.rindex(".") :]
        assert f"-o {runs / name}: {ext} is not a format this command writes; allowed: .html" in done.stderr
    assert {p.name: p.read_bytes() for p in runs.iterdir()} == before


def test_view_o_through_another_spelling_of_a_run_file_is_refused(runs: Path, tmp_path: Path) -> None:
    (tmp_path / "alias.html").symlink_to(runs / "ok.scored.jsonl")  # a page's name, a run file behind it
    keep = (runs / "ok.scored.jsonl").read_bytes()
    done = cs("view", str(runs), "-o", str(tmp_path / "alias.html"), "-q")
    assert done.returncode == 2 and "is a run file it lists (ok.scored.jsonl)" in done.stderr
    assert (runs / "ok.scored.jsonl").read_bytes() == keep


def test_view_o_elsewhere_and_the_default_page_still_write(runs: Path, tmp_path: Path) -> None:
    assert cs("view", str(runs), "-q").returncode == 0
    assert cs("view", str(runs), "-q").returncode == 0  # its own page, written again: not a run file
    assert (runs / "conflictscore-view.html").read_text().startswith("<!doctype html>")
    assert cs("view", str(runs), "-o", str(tmp_path / "index.html"), "-q").returncode == 0


# == a FIFO or a damaged run file is named, never waited on =======================================


def test_a_fifo_among_the_runs_is_left_out_with_a_warning_not_waited_on(runs: Path) -> None:
    """Before: ``mkfifo runs/hang.scored.jsonl`` made ``view`` wait for a writer forever (no message)."""
    os.mkfifo(runs / "hang.scored.jsonl")
    os.mkfifo(runs / "hang.summary.json")
    done = cs("view", str(runs), "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"view: {runs / 'hang.scored.jsonl'} is left out: not a regular file" in done.stderr
    assert f"view: {runs / 'hang.summary.json'} is left out: not a regular file" in done.stderr
    assert [r["key"] for r in json.loads(done.stdout)["runs"]] == ["ok"]


def test_a_damaged_scored_file_or_summary_is_left_out_with_a_warning(runs: Path) -> None:
    """Before: random bytes in ``rnd.scored.jsonl`` and a truncated ``bad.summary.json`` vanished silently."""
    (runs / "rnd.scored.jsonl").write_bytes(bytes(range(256)) * 4)
    (runs / "bad.summary.json").write_text(json.dumps(json.loads((runs / "ok.summary.json").read_text()))[:50])
    (runs / "notes.json").write_text('{"not": "a summary"}')  # not named as a run file: no word
    done = cs("view", str(runs), "--json")
    assert done.returncode == 0, done.stderr
    warnings = [ln for ln in done.stderr.splitlines() if ln.startswith("warning:")]
    assert warnings == [
        f"warning: view: {runs / 'bad.summary.json'} is left out: not a summary this release reads (damaged, or not "
        "one)",
        f"warning: view: {runs / 'rnd.scored.jsonl'} is left out: its first line is not a scored result (damaged, or "
        "not one)",
    ]


# == view --serve: only the listed run files, only to a loopback Host ==============================


class Served:
    def __init__(self, proc: subprocess.Popen[str], port: int):
        self.proc, self.port = proc, port

    def get(self, target: str, host: str | None = None) -> tuple[int, bytes]:
        """``GET target`` as raw bytes (no client library to clean the path), with ``Host: host``."""
        host = f"127.0.0.1:{self.port}" if host is None else host
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            s.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode("latin-1"))
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0]
        assert status.startswith(b"HTTP/1."), data[:200]
        return int(status.split()[1]), body


@pytest.fixture(scope="module")
def served(served_runs: Path) -> Iterator[Served]:
    runs = served_runs
    (runs / "etc_link").symlink_to("/etc")
    (runs / "host_link.txt").symlink_to("/etc/hostname")
    (runs / "secret_link.scored.jsonl").symlink_to(runs.parent / "secret.txt")
    (runs / "sub").mkdir()
    (runs / "sub" / "notes.txt").write_text("not a run file\n")
    (runs / "items.jsonl").write_text((runs.parent / "in.jsonl").read_text())  # an input, not a run file
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    log = runs.parent / "serve.err"
    with open(log, "w") as err:  # a file, not a pipe: a full pipe would stop the server
        proc = subprocess.Popen(
            [sys.executable, "-m", "conflictscore_local.cli", "view", str(runs), "--serve", "--port", "0"],
            env=env,
            stderr=err,
            text=True,
            # a terminal's Ctrl-C: a suite started in the background (`make test &`) ignores SIGINT, and a
            # child would inherit that and never stop
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    found = None
    deadline = time.monotonic() + 120
    while found is None and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
        found = re.search(r"serving 1 runs of .* on http://127\.0\.0\.1:(\d+)/", log.read_text())
    assert found, log.read_text()
    yield Served(proc, int(found.group(1)))
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    assert "Traceback" not in log.read_text(), log.read_text()


def test_served_run_files_are_the_listed_ones(served: Served, served_runs: Path) -> None:
    runs = served_runs
    status, body = served.get("/")
    assert status == 200 and b'data-key="ok"' in body
    for name in ("ok.scored.jsonl", "ok.summary.json", "ok.report.html"):
        assert served.get("/" + name) == (200, (runs / name).read_bytes())
    assert served.get("/ok.scored%2Ejsonl") == (200, (runs / "ok.scored.jsonl").read_bytes())  # a %-escape is the name


@pytest.mark.parametrize(
    "target",
    [
        "/etc_link/shadow",
        "/etc_link/passwd",
        "/host_link.txt",
        "/secret_link.scored.jsonl",
        "/sub/",
        "/sub/notes.txt",
        "/items.jsonl",
        "/../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2fetc%2fpasswd",
        "//etc/passwd",
        "/nope.json",
        "/compare?a=../../etc/passwd&b=x",
    ],
)
def test_served_nothing_but_the_listed_run_files(served: Served, target: str) -> None:
    """Before: a symbolic link inside DIR was followed (``/etc_link/shadow`` served /etc/shadow), folders
    were listed and every file under DIR was served."""
    status, body = served.get(target)
    assert status == 404, (target, body[:200])
    assert b"root:" not in body and b"outside the runs folder" not in body


@pytest.mark.parametrize("target", ["/%00", "/ok.scored.jsonl%00", "/%ff%fe", "http://evil.example.com/", "*"])
def test_served_an_odd_path_is_a_4xx_and_no_traceback(served: Served, target: str) -> None:
    """Before: ``GET /%00`` printed a traceback (``ValueError: embedded null byte``) and dropped the connection."""
    status, _ = served.get(target)
    assert status in (400, 404), target
    assert served.get("/")[0] == 200  # still serving


@pytest.mark.parametrize(
    "host",
    ["evil.example.com", "evil.example.com:{port}", "127.0.0.1.nip.io:{port}", "127.0.0.1:1", "localhost.:{port}", ""],
)
def test_served_only_to_a_loopback_host(served: Served, host: str) -> None:
    """Before: ``Host: evil.example.com`` got the rows (a page rebinding its name to 127.0.0.1 could read them)."""
    for target in ("/", "/ok.scored.jsonl", "/compare?a=ok&b=ok"):
        status, body = served.get(target, host=host.format(port=served.port))
        assert status == 421, (host, target)
        assert b'"claims"' not in body and b"run-row" not in body


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.1:{port}", "localhost", "LOCALHOST:{port}", "[::1]", "[::1]:{port}"]
)
def test_served_to_127_0_0_1_localhost_and_ipv6_loopback(served: Served, host: str, served_runs: Path) -> None:
    runs = served_runs
    assert served.get("/ok.scored.jsonl", host=host.format(port=served.port)) == (
        200,
        (runs / "ok.scored.jsonl").read_bytes(),
    )


def test_a_run_named_in_bytes_that_are_not_utf8_is_listed_as_valid_json(runs: Path) -> None:
    """Before: ``--json`` listed it as ``"name\\udcff"``, a lone surrogate the project's own readers refuse."""
    odd = os.fsencode(runs) + b"/name\xff.scored.jsonl"
    with open(odd, "wb") as fh:
        fh.write((runs / "ok.scored.jsonl").read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "conflictscore_local.cli", "view", str(runs), "--json"],
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)},
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode("utf-8")
    assert "\\udcff" not in text
    keys = sorted(r["key"] for r in json.loads(text)["runs"])
    assert keys == ["name\ufffd", "ok"]
