"""A job's declared inputs and outputs: checked before any work, locked while it runs, released after."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from collections import namedtuple
from pathlib import Path

import pytest

from conflictscore_local.core.errors import ConfigError, OutputBusy
from conflictscore_local.jobs import Input, Job, Output, ResumableJsonlWriter, write_json_atomic, write_text_atomic


def test_outputs_clash_with_inputs_other_outputs_and_their_partial_files(tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text("{}\n")
    (tmp_path / "link.jsonl").symlink_to(inp)
    cases = [
        ([Output(tmp_path / "link.jsonl", "-o")], "-o {t}/link.jsonl is the input file"),
        (
            [
                Output(tmp_path / "o.jsonl", "-o", kind="rows"),
                Output(tmp_path / "o.jsonl.partial.meta.json", "--summary"),
            ],
            "--summary {t}/o.jsonl.partial.meta.json is the .partial.meta.json file of -o",
        ),
        (
            [Output(tmp_path / "s.json.partial", "-o"), Output(tmp_path / "s.json", "--summary")],
            "--summary {t}/s.json: its .partial file {t}/s.json.partial is -o",
        ),
        ([Output(tmp_path, "-o")], "-o {t} is a directory; name a file"),
        ([Output(inp, "-o", kind="dir")], "-o {t}/in.jsonl is the input file"),
    ]
    for outputs, message in cases:
        with pytest.raises(ConfigError) as e:
            Job([Input(inp, "the input file")], outputs).check()
        assert message.format(t=tmp_path) in str(e.value)


def test_an_output_inside_a_closed_input_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    with pytest.raises(ConfigError, match="is inside the model folder .*; choose another path outside it"):
        Job(
            [Input(tmp_path / "model", "the model folder", "dir", closed=True)],
            [Output(tmp_path / "model" / "m.tar", "-o")],
        ).check()
    Job([Input(tmp_path / "model", "a data folder", "dir")], [Output(tmp_path / "model" / "b.jsonl", "-o")]).check()


def test_a_file_system_without_room_is_refused_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10 << 20, (10 << 20) - 4096, 4096))
    with pytest.raises(ConfigError, match=r"only 4096 bytes free on the file system of .*, at least 1.0 MiB needed"):
        Job([], [Output(tmp_path / "o.json", "--summary")]).check()


def test_a_job_holds_its_outputs_from_start_to_end(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    probe = (
        "import sys\nfrom conflictscore_local.jobs import Job, Output\nfrom conflictscore_local.core.errors import "
        "OutputBusy\ntry:\n    Job([], [Output(sys.argv[1], '--summary')]).__enter__()\nexcept OutputBusy as e:\n"
        "    print('busy:', e)\n"
    )
    with Job([], [Output(out, "--summary")]):
        r = subprocess.run([sys.executable, "-c", probe, str(out)], capture_output=True, text=True, check=True)
        assert r.stdout.startswith(f"busy: output {out} is being written by another run")
        refused: list[BaseException] = []

        def other() -> None:  # a job in another thread of this process is another job too
            try:
                Job([], [Output(out, "--summary")]).__enter__()
            except OutputBusy as e:
                refused.append(e)

        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert len(refused) == 1
        write_json_atomic(out, {"a": 1})  # the job itself writes through its lock
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]
    r = subprocess.run([sys.executable, "-c", probe, str(out)], capture_output=True, text=True, check=True)
    assert r.stdout == ""


def test_a_job_that_fails_before_writing_leaves_no_partial_file(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        with Job([], [Output(tmp_path / "o.jsonl", "-o", kind="rows"), Output(tmp_path / "s.json", "--summary")]):
            raise RuntimeError("the input was bad")
    assert list(tmp_path.iterdir()) == []


def test_a_job_within_a_job_shares_its_locks(tmp_path: Path) -> None:
    with Job([], [Output(tmp_path / "o.jsonl", "-o", kind="rows"), Output(tmp_path / "r.html", "--report")]):
        with ResumableJsonlWriter(tmp_path / "o.jsonl") as w:
            w.write({"id": "a"})
        with Job([Input(tmp_path / "o.jsonl", "SCORED")], [Output(tmp_path / "r.html", "-o")]):
            write_text_atomic(tmp_path / "r.html", "<p>report</p>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.jsonl", "r.html"]


def test_the_partial_file_of_an_interrupted_run_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    with pytest.raises(RuntimeError):
        with ResumableJsonlWriter(out, fingerprint={"x": 1}) as w:
            w.write({"id": "a"})
            raise RuntimeError
    with pytest.raises(ConfigError, match="holds the rows of an interrupted run writing .*--resume"):
        write_text_atomic(out, "another command's text")
    with pytest.raises(ConfigError, match="is the partial file of an interrupted run"):
        Job([], [Output(tmp_path / "o.jsonl.partial", "-o")]).check()
    assert (tmp_path / "o.jsonl.partial").read_text() == '{"id": "a"}\n'


def test_the_fingerprint_of_an_interrupted_run_is_no_output_and_its_rows_are_refused_before_any_work(
    tmp_path: Path,
) -> None:
    out = tmp_path / "o.jsonl"
    with pytest.raises(RuntimeError):
        with ResumableJsonlWriter(out, fingerprint={"x": 1}) as w:
            w.write({"id": "a"})
            raise RuntimeError
    meta = tmp_path / "o.jsonl.partial.meta.json"
    kept = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for kind in ("file", "rows"):  # the fingerprint itself, under its own name or through a symlink
        for name in ("o.jsonl.partial.meta.json", "fingerprint-link.json"):
            if name != meta.name and not (tmp_path / name).exists():
                (tmp_path / name).symlink_to(meta)
            with pytest.raises(ConfigError, match=r"is the fingerprint .* of an interrupted run.*--resume"):
                Job([], [Output(tmp_path / name, "--summary", kind=kind)]).check()
    # a whole-file output onto OUTPUT itself would empty its partial file: refused by the check, not after the work
    with pytest.raises(ConfigError, match=r"o.jsonl\.partial holds the rows of an interrupted run .*--resume"):
        Job([], [Output(out, "--report")]).check()
    Job([], [Output(out, "-o", kind="rows")]).check()  # the run's own output: rerun (--resume or start over)
    (tmp_path / "fingerprint-link.json").unlink()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == kept


def test_the_fingerprint_of_a_running_job_is_no_output(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    with ResumableJsonlWriter(out, fingerprint={"x": 1}) as w:
        with pytest.raises(
            OutputBusy, match=r"o.jsonl.partial.meta.json is the fingerprint of a run writing .*o.jsonl"
        ):
            Job([], [Output(tmp_path / "o.jsonl.partial.meta.json", "--summary")]).check()
        w.write({"id": "a"})
    assert out.read_text() == '{"id": "a"}\n'
