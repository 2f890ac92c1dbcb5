"""How the ``conflictscore`` process ends (``cli.app.run`` / ``exit_process``): once PyTorch is loaded
and nothing runs beside the main thread, without the interpreter's teardown, every output flushed
and the exit status kept; the ordinary way otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARK = "teardown ran"


def ends(tmp_path: Path, body: str, *, code: int = 3) -> tuple[subprocess.CompletedProcess[str], bool]:
    """Run ``body`` then ``exit_process(code)`` in a fresh interpreter with an exit handler that
    writes a file; returns the process and whether the handler (the interpreter's teardown) ran."""
    flag = tmp_path / "flag"
    script = (
        f"import atexit, pathlib, sys\n"
        f"atexit.register(lambda: pathlib.Path({str(flag)!r}).write_text({MARK!r}))\n"
        f"from conflictscore_local.cli.app import exit_process\n"  # first: the body's thread still runs at the exit
        f"{body}\n"
        f"exit_process({code})\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONUNBUFFERED", None)  # buffered streams, as a user's shell has them: only a flush empties them
    p = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    return p, flag.exists()


def test_with_torch_loaded_it_skips_the_teardown_and_flushes_what_was_written(tmp_path):
    body = (
        "import torch, logging\n"
        "logging.basicConfig(stream=sys.stderr, level=logging.INFO)\n"
        "sys.stdout.write('x' * 200000)\n"  # more than a pipe's buffer
        "sys.stdout.write('end')\n"  # what stays in the buffer until a flush
        "logging.getLogger('t').info('the last log line')"
    )
    p, teardown = ends(tmp_path, body)
    assert p.returncode == 3 and not teardown
    assert p.stdout == "x" * 200000 + "end"
    assert p.stderr.rstrip().endswith("the last log line")


@pytest.mark.parametrize(
    "body, why",
    [
        ("pass", "torch was never loaded: its teardown costs nothing"),
        (
            "import torch, threading, time\nthreading.Thread(target=time.sleep, args=(0.5,)).start()",
            "a non-daemon thread still runs",
        ),
        ("import torch, multiprocessing.popen_spawn_posix", "a multiprocessing child may run"),
    ],
)
def test_elsewhere_it_exits_the_ordinary_way(tmp_path, body, why):
    p, teardown = ends(tmp_path, body, code=4)
    assert p.returncode == 4 and teardown, why


def test_a_daemon_thread_does_not_keep_the_teardown(tmp_path):
    p, teardown = ends(
        tmp_path, "import torch, threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()"
    )
    assert p.returncode == 3 and not teardown


def test_a_score_run_ends_fast_with_its_outputs_and_cache_rows_written(tmp_path):
    """The command a user runs, on the default judge: the rows, the summary, the JSON on stdout, and
    the judgment cache's rows, which the second run reads instead of judging."""
    item = {
        "id": "q1",
        "response": "The tower is in Paris.",
        "claims": ["The tower is in Paris."],
        "documents": [
            {"id": "d1", "text": "The tower stands in Paris, France."},
            {"id": "d2", "text": "The tower stands in Rome, Italy."},
        ],
    }
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps(item) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    env.pop("CONFLICTSCORE_NLI_RUNTIME", None)
    env.pop("PYTHONUNBUFFERED", None)
    summaries = []
    for n in (1, 2):
        out, summary = tmp_path / f"out{n}.jsonl", tmp_path / f"summary{n}.json"
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "conflictscore_local.cli",
                "score",
                str(inp),
                "-o",
                str(out),
                "--summary",
                str(summary),
                "--json",
                "--cache",
                str(tmp_path / "cache.sqlite"),
                "--judge-arg",
                "runtime=native",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert p.returncode == 0, p.stderr
        printed = json.loads(p.stdout)
        assert printed == json.loads(summary.read_text(encoding="utf-8"))
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert [r["id"] for r in rows] == ["q1"] and len(rows[0]["claims"][0]["judgments"]) == 2
        summaries.append(printed)
    first, second = (s["pairs"] for s in summaries)
    assert first["total"] == 2 and first["judged"] >= 1 and first["cached"] == 0, first
    assert second["judged"] == 0 and second["cached"] == first["judged"], second
