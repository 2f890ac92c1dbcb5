"""Output is atomic, locked and resumable; a write goes where the path really points."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conflictscore_local.core.errors import ConfigError, WriteFailed
from conflictscore_local.jobs import ResumableJsonlWriter


def test_writer_is_atomic_under_a_crash(tmp_path: Path):
    out = tmp_path / "out.jsonl"
    with pytest.raises(RuntimeError):
        with ResumableJsonlWriter(out) as w:
            w.write({"id": "a"})
            raise RuntimeError("crash")
    assert not out.exists()
    assert (tmp_path / "out.jsonl.partial").read_text() == '{"id": "a"}\n'


def test_resume_keeps_finished_rows_and_drops_a_cut_line(tmp_path: Path):
    out = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.partial").write_text('{"id": "a"}\n{"id": "b"}\n{"id": "c", "tr')
    with ResumableJsonlWriter(out, resume=True, keep=lambda r: r["id"] != "b") as w:
        assert w.done == [{"id": "a"}] and w.dropped == 1
        w.write({"id": "z"})
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["a", "z"]
    assert not (tmp_path / "out.jsonl.partial").exists()


def test_resume_refuses_another_configuration(tmp_path: Path):
    out = tmp_path / "out.jsonl"
    with pytest.raises(RuntimeError):
        with ResumableJsonlWriter(out, fingerprint={"judge": "a"}) as w:
            w.write({"id": "a"})
            raise RuntimeError
    with pytest.raises(ConfigError, match="another configuration"):
        ResumableJsonlWriter(out, resume=True, fingerprint={"judge": "b"})
    with ResumableJsonlWriter(out, resume=True, fingerprint={"judge": "a"}) as w:
        assert w.done == [{"id": "a"}]


def test_atomic_writes_get_the_umask_permissions_of_a_plain_open(tmp_path: Path):
    from conflictscore_local.jobs import write_json_atomic, write_text_atomic

    old = os.umask(0o022)
    try:
        write_json_atomic(tmp_path / "s.json", {"a": 1})
        write_text_atomic(tmp_path / "r.html", "<p>é</p>")
    finally:
        os.umask(old)
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "r.html").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == "<p>é</p>"
    assert json.loads((tmp_path / "s.json").read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_symlinked_output_is_written_through_to_its_target(tmp_path: Path):
    real_dir = tmp_path / "store"
    real_dir.mkdir()
    target = real_dir / "results.jsonl"
    target.write_text("old\n")
    link = tmp_path / "out.jsonl"
    link.symlink_to(target)
    with ResumableJsonlWriter(link) as w:
        assert w.partial == real_dir / "results.jsonl.partial"
        w.write({"id": "a"})
    assert link.is_symlink() and link.resolve() == target
    assert target.read_text() == '{"id": "a"}\n'
    assert sorted(p.name for p in real_dir.iterdir()) == ["results.jsonl"]


def test_fifo_output_is_streamed_to_never_replaced(tmp_path: Path):
    import os
    import stat
    import threading

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    with ResumableJsonlWriter(fifo) as w:
        w.write({"id": "a"})
        w.write({"id": "b"})
    reader.join(10)
    assert got == ['{"id": "a"}\n{"id": "b"}\n']
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.fifo"]
    with pytest.raises(ConfigError, match="is not a regular file .* nothing to resume"):
        ResumableJsonlWriter(fifo, resume=True)


def test_json_to_a_symlink_or_fifo_keeps_them(tmp_path: Path):
    import os
    import threading

    from conflictscore_local.jobs import write_json_atomic

    target = tmp_path / "t.json"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_json_atomic(link, {"a": 1})
    assert link.is_symlink() and json.loads(target.read_text()) == {"a": 1}
    fifo = tmp_path / "s.fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    write_json_atomic(fifo, {"b": 2})
    reader.join(10)
    assert json.loads(got[0]) == {"b": 2} and fifo.is_fifo()
    write_json_atomic(tmp_path / "paths.json", {"cache": "caches/\udcff.sqlite"})  # argv bytes that are not UTF-8
    assert json.loads((tmp_path / "paths.json").read_text(encoding="utf-8")) == {"cache": "caches/\udcff.sqlite"}
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        write_json_atomic(tmp_path / "nan.json", {"x": float("nan")})
    assert not (tmp_path / "nan.json").exists()


def test_a_second_writer_of_the_same_output_is_refused(tmp_path: Path):
    from conflictscore_local.core.errors import OutputBusy

    out = tmp_path / "out.jsonl"
    with ResumableJsonlWriter(out) as first:
        first.write({"id": "a"})
        with pytest.raises(OutputBusy, match=r"out.jsonl is being written by another run .*choose another path"):
            ResumableJsonlWriter(out)
        (tmp_path / "link.jsonl").symlink_to(out)
        with pytest.raises(OutputBusy):  # another name of the same file
            ResumableJsonlWriter(tmp_path / "link.jsonl")
        first.write({"id": "b"})
    assert out.read_text() == '{"id": "a"}\n{"id": "b"}\n'
    with ResumableJsonlWriter(out) as again:  # the lock went with the first writer
        again.write({"id": "c"})
    assert out.read_text() == '{"id": "c"}\n'


def test_the_lock_is_held_across_processes(tmp_path: Path):
    import subprocess
    import sys

    out = tmp_path / "out.jsonl"
    code = (
        "import sys\nfrom conflictscore_local.jobs import ResumableJsonlWriter\n"
        "from conflictscore_local.core.errors import OutputBusy\n"
        "try:\n    ResumableJsonlWriter(sys.argv[1])\nexcept OutputBusy as e:\n    print('busy:', e)\n"
    )
    with ResumableJsonlWriter(out) as w:
        w.write({"id": "a"})
        r = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True, check=True)
        assert r.stdout.startswith(f"busy: output {out} is being written by another run")
    r = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True, check=True)
    assert r.stdout == ""


def test_resume_rewrites_beside_the_partial_file_so_a_crash_loses_nothing(tmp_path: Path, monkeypatch):
    from conflictscore_local.jobs import atomic, resumable

    out = tmp_path / "out.jsonl"
    partial = tmp_path / "out.jsonl.partial"
    partial.write_text('{"id": "a"}\n{"id": "b"}\n')
    real_dumps = atomic.dumps
    calls = []

    def failing(obj, **kw):
        calls.append(obj)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_dumps(obj, **kw)

    monkeypatch.setattr(resumable, "dumps", failing)
    with pytest.raises(WriteFailed, match="No space left on device; its rows are as they were"):
        ResumableJsonlWriter(out, resume=True)
    assert partial.read_text() == '{"id": "a"}\n{"id": "b"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl.partial"]
    monkeypatch.setattr(resumable, "dumps", real_dumps)
    with ResumableJsonlWriter(out, resume=True) as w:
        assert w.done == [{"id": "a"}, {"id": "b"}]


def test_one_file_mode_for_everything_written(tmp_path: Path):
    import os
    import stat

    from conflictscore_local.jobs import write_json_atomic

    old = os.umask(0o027)
    try:
        out = tmp_path / "out.jsonl"
        with pytest.raises(RuntimeError):
            with ResumableJsonlWriter(out, fingerprint={"x": 1}) as w:
                w.write({"id": "a"})
                raise RuntimeError
        write_json_atomic(tmp_path / "summary.json", {})
        with ResumableJsonlWriter(out, resume=True, fingerprint={"x": 1}) as w:
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
        modes["out.jsonl"] = stat.S_IMODE(out.stat().st_mode)
        assert modes == {
            "out.jsonl.partial": 0o640,
            "out.jsonl.partial.meta.json": 0o640,
            "summary.json": 0o640,
            "out.jsonl": 0o640,
            "out.jsonl.partial.digests": 0o640,
        }
        out.chmod(0o600)  # a file that is replaced keeps its mode
        with ResumableJsonlWriter(out) as w:
            w.write({"id": "b"})
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_names_of_open_files_are_streams_and_checked_without_writing(tmp_path: Path):
    from conflictscore_local.jobs import OutputTarget

    for name in ("/dev/stdout", "/dev/stderr", "/proc/self/fd/1", "/dev/fd/2"):
        assert OutputTarget.of(name).stream, name  # written to directly: never renamed onto
    regular = OutputTarget.of(tmp_path / "a" / "b.jsonl")
    assert not regular.stream and regular.sibling(".partial") == tmp_path / "a" / "b.jsonl.partial"
    with pytest.raises(ConfigError, match="is a directory; name a file"):
        OutputTarget.of(tmp_path)


def test_text_is_written_atomically_through_the_same_rules(tmp_path: Path):
    import os

    from conflictscore_local.jobs import write_text_atomic

    old = os.umask(0o022)
    try:
        target = tmp_path / "reports" / "r.html"
        target.parent.mkdir()
        (tmp_path / "r.html").symlink_to(target)
        write_text_atomic(tmp_path / "r.html", "<p>é</p>")
    finally:
        os.umask(old)
    assert (tmp_path / "r.html").is_symlink() and target.read_text(encoding="utf-8") == "<p>é</p>"
    assert target.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in target.parent.iterdir()] == ["r.html"]


def test_a_ctrl_c_between_a_row_and_its_digest_is_raised_after_both(tmp_path: Path, monkeypatch, ctrl_c):
    """A real SIGINT sent as the row is on disk and its digest is not: the write finishes (row, digest, count)
    and the Ctrl-C is raised after it, so a resume keeps that row instead of scoring it again."""
    from conflictscore_local.jobs import resumable

    real = resumable._chain

    def ctrl_c_then_chain(previous: bytes, line: str) -> bytes:
        ctrl_c()
        return real(previous, line)

    out = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        with ResumableJsonlWriter(out, fingerprint={"judge": "a"}) as w:
            w.write({"id": "a"})
            monkeypatch.setattr(resumable, "_chain", ctrl_c_then_chain)
            w.write({"id": "b"})
    monkeypatch.undo()
    assert w.written == 2
    assert (tmp_path / "out.jsonl.partial").read_text() == '{"id": "a"}\n{"id": "b"}\n'
    assert len((tmp_path / "out.jsonl.partial.digests").read_text().splitlines()) == 2
    with ResumableJsonlWriter(out, resume=True, fingerprint={"judge": "a"}) as w:
        assert w.done == [{"id": "a"}, {"id": "b"}] and w.redone == 0
