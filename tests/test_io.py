"""Input validation names file, line and field; output is atomic and resumable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conflictscore_local.errors import ConfigError, InputError
from conflictscore_local.io import ResumableJsonlWriter, item_to_json, parse_item, read_items

GOOD = {
    "id": "q1",
    "question": "Where was Curie born?",
    "response": "Curie was born in Warsaw.",
    "documents": [{"id": "d1", "text": "Marie Curie was born in Warsaw.", "url": "http://x"}, {"id": "d2", "text": "x"}],
    "claims": ["Curie was born in Warsaw."],
    "labels": [["support", "IRRELEVANT"]],
    "gold": 1,
}


def write(tmp_path: Path, *rows: object) -> Path:
    p = tmp_path / "items.jsonl"
    p.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return p


def test_good_item_round_trips_and_keeps_metadata(tmp_path: Path):
    (item,) = read_items(write(tmp_path, GOOD))
    assert item.labels == (("SUPPORT", "IRRELEVANT"),)
    assert item.documents[0].meta == {"url": "http://x"}
    assert item.meta == {"gold": 1}
    back = item_to_json(item)
    assert parse_item(back) == item


def bad(**changes: object) -> dict:
    d = json.loads(json.dumps(GOOD))
    for k, v in changes.items():
        if v is ...:
            del d[k]
        else:
            d[k] = v
    return d


@pytest.mark.parametrize(
    "row, field, fragment",
    [
        (bad(id=...), "id", "missing"),
        (bad(id=3), "id", "expected a string, got int"),
        (bad(id=""), "id", "must not be empty"),
        (bad(documents=...), "documents", "missing"),
        (bad(documents={"id": "d"}), "documents", "expected an array, got object"),
        (bad(documents=[{"id": "d1"}]), "documents[0].text", "missing"),
        (bad(documents=[{"id": "d1", "text": 5}]), "documents[0].text", "expected a string, got int"),
        (bad(documents=[{"id": "d1", "text": "a"}, {"id": "d1", "text": "b"}]), "documents[1].id", "duplicate document id"),
        (bad(question=["x"]), "question", "expected a string"),
        (bad(response=..., claims=...), "response", "missing"),
        (bad(claims="one claim"), "claims", "expected an array of strings"),
        (bad(claims=["ok", 7]), "claims[1]", "expected a string"),
        (bad(claims=..., labels=[["SUPPORT", "SUPPORT"]]), "labels", "without 'claims'"),
        (bad(labels=[["SUPPORT", "SUPPORT"], ["SUPPORT", "SUPPORT"]]), "labels", "2 rows but there are 1 claims"),
        (bad(labels=[["SUPPORT"]]), "labels[0]", "1 labels but there are 2 documents"),
        (bad(labels=[["SUPPORT", "MAYBE"]]), "labels[0][1]", "unknown label 'MAYBE'; allowed: SUPPORT, CONTRADICT, IRRELEVANT"),
        ([1, 2], None, "expected a JSON object, got array"),
    ],
)
def test_bad_input_names_file_line_and_field(tmp_path: Path, row: object, field: str | None, fragment: str):
    p = write(tmp_path, GOOD | {"id": "ok"}, row)
    with pytest.raises(InputError) as e:
        read_items(p)
    assert e.value.path == str(p) and e.value.line == 2 and e.value.field == field
    assert fragment in str(e.value)
    assert str(e.value).startswith(f"{p}:2: ")


def test_invalid_json_and_duplicate_ids(tmp_path: Path):
    with pytest.raises(InputError, match=r":3: invalid JSON"):
        read_items(write(tmp_path, GOOD, "", '{"id": "x",'))
    with pytest.raises(InputError, match=r":2: field 'id': duplicate id 'q1' \(first on line 1\)"):
        read_items(write(tmp_path, GOOD, GOOD))
    with pytest.raises(InputError, match="cannot open"):
        read_items(tmp_path / "nope.jsonl")


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
    from conflictscore_local.io import write_json_atomic, write_text_atomic

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


# -- reading: whatever the bytes, an InputError naming file, line and field ----------------

@pytest.mark.parametrize(
    "line, field, fragment",
    [
        ('{"id": "a", "response": "r", "documents": [], "n": ' + "9" * 5000 + "}", None,
         "invalid JSON: Exceeds the limit (4300 digits) for integer string conversion"),
        ("[" * 100_000 + "]" * 100_000, None, "invalid JSON: arrays or objects nested too deeply"),
        ('{"id": "a", "response": "r", "documents": [], "claims": ["ok", "x\\ud800y"]}', "claims[1]",
         "lone surrogate \\ud800 at character 1"),
        ('{"id": "a", "response": "r", "documents": [{"id": "\\udfff", "text": "t"}]}', "documents[0].id",
         "lone surrogate \\udfff at character 0"),
        ('{"id": "a", "response": "\\ud83d", "documents": []}', "response", "lone surrogate \\ud83d"),
    ],
)
def test_unreadable_json_is_an_input_error(tmp_path: Path, line: str, field: str | None, fragment: str):
    p = write(tmp_path, GOOD, line)
    with pytest.raises(InputError) as e:
        read_items(p)
    assert (e.value.path, e.value.line, e.value.field) == (str(p), 2, field)
    assert fragment in str(e.value)


def test_a_surrogate_pair_is_text_and_reading_counts_lines(tmp_path: Path):
    from conflictscore_local.io import InputStats, file_sha256

    p = write(tmp_path, GOOD | {"response": "smile \U0001F600"}, "", "  ", GOOD | {"id": "q2"})
    assert "\\ud83d\\ude00" in p.read_text()  # json.dumps wrote the emoji as an escaped surrogate pair
    stats = InputStats()
    a, _ = read_items(p, stats=stats)
    assert a.response == "smile \U0001F600"
    assert (stats.lines, stats.blank_lines, stats.sha256) == (4, 2, file_sha256(p))


# -- writing: never destroy, one writer, streams and symlinks --------------------------------

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

    from conflictscore_local.io import write_json_atomic

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
    from conflictscore_local.errors import OutputBusy

    out = tmp_path / "out.jsonl"
    with ResumableJsonlWriter(out) as first:
        first.write({"id": "a"})
        with pytest.raises(OutputBusy, match=r"out.jsonl is being written by another run .*choose another -o"):
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
        "import sys\nfrom conflictscore_local.io import ResumableJsonlWriter\n"
        "from conflictscore_local.errors import OutputBusy\n"
        "try:\n    ResumableJsonlWriter(sys.argv[1])\nexcept OutputBusy as e:\n    print('busy:', e)\n"
    )
    with ResumableJsonlWriter(out) as w:
        w.write({"id": "a"})
        r = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True, check=True)
        assert r.stdout.startswith(f"busy: output {out} is being written by another run")
    r = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True, check=True)
    assert r.stdout == ""


def test_resume_rewrites_beside_the_partial_file_so_a_crash_loses_nothing(tmp_path: Path, monkeypatch):
    from conflictscore_local import io

    out = tmp_path / "out.jsonl"
    partial = tmp_path / "out.jsonl.partial"
    partial.write_text('{"id": "a"}\n{"id": "b"}\n')
    real_dumps = io.dumps
    calls = []

    def failing(obj, **kw):
        calls.append(obj)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_dumps(obj, **kw)

    monkeypatch.setattr(io, "dumps", failing)
    with pytest.raises(OSError, match="No space left"):
        ResumableJsonlWriter(out, resume=True)
    assert partial.read_text() == '{"id": "a"}\n{"id": "b"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl.partial"]
    monkeypatch.setattr(io, "dumps", real_dumps)
    with ResumableJsonlWriter(out, resume=True) as w:
        assert w.done == [{"id": "a"}, {"id": "b"}]


def test_one_file_mode_for_everything_written(tmp_path: Path):
    import os
    import stat

    from conflictscore_local.io import write_json_atomic

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
        assert modes == {"out.jsonl.partial": 0o640, "out.jsonl.partial.meta.json": 0o640, "summary.json": 0o640,
                         "out.jsonl": 0o640}
        out.chmod(0o600)  # a file that is replaced keeps its mode
        with ResumableJsonlWriter(out) as w:
            w.write({"id": "b"})
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_names_of_open_files_are_streams_and_checked_without_writing(tmp_path: Path):
    from conflictscore_local.io import OutputTarget

    for name in ("/dev/stdout", "/dev/stderr", "/proc/self/fd/1", "/dev/fd/2"):
        assert OutputTarget.of(name).stream, name  # written to directly: never renamed onto
    regular = OutputTarget.of(tmp_path / "a" / "b.jsonl")
    assert not regular.stream and regular.sibling(".partial") == tmp_path / "a" / "b.jsonl.partial"
    with pytest.raises(ConfigError, match="is a directory; name a file"):
        OutputTarget.of(tmp_path)


def test_text_is_written_atomically_through_the_same_rules(tmp_path: Path):
    import os

    from conflictscore_local.io import write_text_atomic

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
