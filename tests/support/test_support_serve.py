"""``tests/support/serve.py``'s ``TransformersServer``: its process handling, on a stand-in server (a
few lines of ``http.server`` with a child process of its own) instead of ``transformers serve``:
ready only once ``/health`` answers, stopped or killed with its whole process group, restarted
on its port, dead with the process that started it, and loud when it never gets ready."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from .serve import TransformersServer

STAND_IN = textwrap.dedent("""
    import http.server, subprocess, sys, time
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "exit":
        print("cannot load the model", flush=True); sys.exit(7)
    if mode == "ok":  # a child in the server's process group
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        print("child", child.pid, flush=True)

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(503 if mode == "unhealthy" else 200); self.end_headers()
        def log_message(self, *a):
            pass

    time.sleep(0.3)  # a model loading
    http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
""")


class StandIn(TransformersServer):
    def __init__(self, tmp_path: Path, mode: str = "ok", **kw: object) -> None:
        super().__init__("unused", tmp_path / f"{mode}.log", **kw)  # type: ignore[arg-type]
        self.mode = mode

    def command(self) -> list[str]:
        return [sys.executable, "-c", STAND_IN, self.mode, str(self.port)]

    def child(self) -> int:
        """The pid of the child the latest start made."""
        children = [int(line.split()[1]) for line in self.log.read_text().splitlines() if line.startswith("child ")]
        assert children, self.log_tail()
        return children[-1]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc; the parent-death signal is Linux's")


def test_ready_on_health_then_stopped_with_its_children_and_restarted_on_its_port(tmp_path: Path) -> None:
    server = StandIn(tmp_path).start()
    assert server.healthy() and server.url == f"http://127.0.0.1:{server.port}/v1"
    port, first, child = server.port, server.proc.pid, server.child()
    server.kill()  # a crash: the group goes at once
    assert gone(first) and gone(child) and not server.healthy()
    server.start()  # the same port, a new process
    assert server.port == port and server.healthy() and server.proc.pid != first
    assert server.child() != child
    child = server.child()
    server.stop()
    assert gone(server.proc.pid) and gone(child) and not server.healthy()
    server.stop()  # nothing left to signal: a second stop does nothing


def test_the_server_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    parent = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).parents[2])!r})
        from pathlib import Path
        from tests.support.test_support_serve import StandIn
        server = StandIn(Path({str(tmp_path)!r}), "lone").start()
        print(server.proc.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no finalizer runs
    """),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert parent.returncode == -9, parent.stderr
    assert gone(int(parent.stdout.split()[0]))


def test_a_server_that_exits_or_never_gets_ready_is_reported_with_its_log(tmp_path: Path) -> None:
    with pytest.raises(
        RuntimeError, match=r"(?s)exited with status 7 before it was ready; .*ends:\ncannot load the model"
    ):
        StandIn(tmp_path, "exit").start()
    never = StandIn(tmp_path, "unhealthy", start_timeout_s=1.0)
    t0 = time.perf_counter()
    with pytest.raises(TimeoutError, match=r"was not ready within 1s"):
        never.start()
    assert time.perf_counter() - t0 < 15 and gone(never.proc.pid)
