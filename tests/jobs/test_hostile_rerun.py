"""Issue 35's hostile rerun, beyond redaction (``test_verbatim.py``): a judgment cache that rejects
the rows it cannot trust, a cascade whose second judge is down, and the smaller holes. Met as a
user meets them: through the command line."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .test_hostile import JUDGED, YesJudge, cli, judges, running, scored, unlabelled, verdicts, write_jsonl  # noqa: F401,E501 (fixtures)

# == the judgment cache checks every row against its contract =====================================


def summary_of(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def cached_score(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, *flags: str) -> tuple[int, str]:
    rc, _, err = cli(
        capsys,
        "score",
        str(tmp_path / "in.jsonl"),
        "-o",
        str(tmp_path / f"{name}.jsonl"),
        "--summary",
        str(tmp_path / f"{name}.json"),
        "--cache",
        str(tmp_path / "c.sqlite"),
        *flags,
    )
    return rc, err


def tamper(cache: Path, sql: str, *args: Any) -> None:
    db = sqlite3.connect(cache)
    with db:
        db.execute(sql, args)
    db.close()


def test_spans_that_do_not_cover_the_document_are_a_counted_miss(tmp_path, capsys, judges):
    """A ``[[0, 5]]`` row looks valid (5 characters of each document) but leaves the rest unjudged:
    before, every judgment of the item became IRRELEVANT, nothing counted, nothing said."""
    unlabelled(tmp_path / "in.jsonl")
    assert cached_score(tmp_path, capsys, "first", *JUDGED)[0] == 0
    tamper(tmp_path / "c.sqlite", "UPDATE spans SET spans = ?", "[[0, 5]]")
    tamper(tmp_path / "c.sqlite", "DELETE FROM judgments")  # the cut passages' labels are not in the cache
    rc, err = cached_score(tmp_path, capsys, "second", *JUDGED)
    assert rc == 0, err
    assert verdicts(tmp_path / "second.jsonl") == verdicts(tmp_path / "first.jsonl")
    assert summary_of(tmp_path / "second.json")["stages"]["engine"]["cache_rows_rejected"] == 7  # 6 + "cats purr"
    assert err.count("warning: judgment cache") == 1 and "passage spans" in err
    stored = [r[0] for r in sqlite3.connect(tmp_path / "c.sqlite").execute("SELECT spans FROM spans")]
    assert "[[0, 5]]" not in stored  # split again and replaced


SIX_DOCS = {
    "id": "six",
    "question": "Where is the Eiffel Tower?",
    "response": "The Eiffel Tower is in Paris.",
    "claims": ["The Eiffel Tower is in Paris."],
    "documents": [
        {"id": f"d{i}", "text": t}
        for i, t in enumerate(
            [
                "yes: The Eiffel Tower is in Paris, France.",
                "The Eiffel Tower stands on the Champ de Mars in Paris.",
                "Bananas are rich in potassium and grow in tropical climates.",
                "The stock market closed lower on Tuesday after weak earnings.",
                "Photosynthesis converts light energy into chemical energy in plants.",
                "The tower was built by Gustave Eiffel's company for the 1889 World's Fair in Paris.",
            ]
        )
    ],
}


@pytest.mark.slow
def test_a_vector_of_another_width_is_a_counted_miss(tmp_path, capsys, judges):
    """A 4-byte ``vectors`` blob (1,536 bytes expected from MiniLM's 384 floats) read as an embedding
    made every similarity 0.0: on this 6-document item pruning went from 3 pairs pruned to 0."""
    pytest.importorskip("sentence_transformers")
    write_jsonl(tmp_path / "in.jsonl", [SIX_DOCS])
    flags = ["--judge", "hostile-yes", "--pruner", "embedding", "--pruner-arg", "k=1", "-q"]
    assert cached_score(tmp_path, capsys, "first", *flags)[0] == 0
    pruned = summary_of(tmp_path / "first.json")["pairs"]["pruned"]
    assert pruned >= 3
    tamper(tmp_path / "c.sqlite", "DELETE FROM selections")  # the selections would answer without vectors
    tamper(tmp_path / "c.sqlite", "UPDATE vectors SET rows = 1, vector = ?", b"\x00\x00\x80\x3f")  # one float: 1.0
    rc, err = cached_score(tmp_path, capsys, "second", *flags)
    assert rc == 0, err
    second = summary_of(tmp_path / "second.json")
    assert second["pairs"]["pruned"] == pruned
    assert verdicts(tmp_path / "second.jsonl") == verdicts(tmp_path / "first.jsonl")
    assert second["stages"]["engine"]["cache_rows_rejected"] == 7  # the claim and the 6 documents
    assert err.count("warning: judgment cache") == 1


def test_a_cascade_row_that_names_no_judge_of_the_cascade_is_a_counted_miss(tmp_path, capsys, judges):
    unlabelled(tmp_path / "in.jsonl", 2)
    flags = [
        "--judge",
        "cascade",
        "--judge-arg",
        'first={"name": "hostile-yes"}',
        "--judge-arg",
        'second={"name": "hostile-yes"}',
        "--judge-arg",
        "escalate_below=0.5",
        "--pruner",
        "none",
        "-q",
    ]
    assert cached_score(tmp_path, capsys, "first", *flags)[0] == 0
    first = summary_of(tmp_path / "first.json")
    tamper(tmp_path / "c.sqlite", "UPDATE judgments SET decided_by = 'third' WHERE decided_by IS NOT NULL")
    YesJudge.judged = []
    rc, err = cached_score(tmp_path, capsys, "second", *flags)
    assert rc == 0, err
    assert summary_of(tmp_path / "second.json")["stages"]["engine"]["cache_rows_rejected"] == first["pairs"]["judged"]
    assert verdicts(tmp_path / "second.jsonl") == verdicts(tmp_path / "first.jsonl")
    assert "warning: judgment cache" in err


# == a cascade whose second judge is down says so =================================================

DEAD = '{"name": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "max_retries": 0, "timeout_s": 2}'


def cascade_down(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    unlabelled(tmp_path / "in.jsonl", 3)
    return cli(
        capsys,
        "score",
        str(tmp_path / "in.jsonl"),
        "-o",
        str(tmp_path / "out.jsonl"),
        "--summary",
        str(tmp_path / "s.json"),
        "--no-cache",
        "--pruner",
        "none",
        "--judge",
        "cascade",
        "--judge-arg",
        'first={"name": "hostile-yes"}',
        "--judge-arg",
        f"second={DEAD}",
        "--judge-arg",
        "escalate_below=1",
        *extra,
    )


def test_a_cascade_whose_second_judge_is_down_says_so_and_exits_3(tmp_path, capsys, judges):
    """Before: 6 of 6 escalations failed, every row `decided_by: first`, warnings [], exit 0."""
    rc, out, err = cascade_down(tmp_path, capsys)
    assert rc == 3, err
    line = "judge cascade: the second judge gave no label for 6 of 6 escalated pairs (100.0%); they are UNSCORED"
    assert f"warning: {line}" in err
    summary = summary_of(tmp_path / "s.json")
    assert any(w.startswith(line) for w in summary["warnings"])
    judge = summary["stages"]["judge"]
    assert (judge["escalated"], judge["second_failed"], judge["decided_by_second"]) == (6, 6, 0)
    assert summary["pairs"]["unscored"] == 6
    rows = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    js = [j for r in rows for c in r["claims"] for j in c["judgments"]]
    assert [j["label"] for j in js] == [None] * 6 and all("connection" in j["note"] for j in js)
    assert (
        "cascade: escalated 6 of 6 passage pairs (100.0%), decided by the second judge 0, second judge failed 6 "
        "(100.0% of escalated; on_second_failure=unscored)"
    ) in out


def test_keep_first_keeps_the_first_label_says_so_and_is_recorded(tmp_path, capsys, judges):
    rc, out, err = cascade_down(tmp_path, capsys, "--judge-arg", "on_second_failure=keep_first", "-q")
    assert rc == 0, err
    assert (
        "warning: judge cascade: the second judge gave no label for 6 of 6 escalated pairs (100.0%); the first "
        "judge's label was kept for them, as on_second_failure=keep_first asks (6 kept)"
    ) in err
    summary = summary_of(tmp_path / "s.json")
    assert summary["config"]["run"]["judge"]["on_second_failure"] == "keep_first"
    assert summary["config"]["backends"]["judge"]["spec"]["on_second_failure"] == "keep_first"
    rows = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {j["decided_by"] for r in rows for c in r["claims"] for j in c["judgments"]} == {"first"}
    assert summary["pairs"]["unscored"] == 0


# == text that is not UTF-8 on the command line: replacement characters, never a traceback =========

NOT_UTF8 = os.fsdecode(b"\xff\xfe")  # what Python makes of argv bytes that are not UTF-8: lone surrogates


def test_a_report_title_that_is_not_utf8_is_written_with_replacement_characters(scored, tmp_path, capsys):
    page = tmp_path / "r.html"
    rc, _, err = cli(capsys, "report", str(scored["sc"]), "-o", str(page), "--title", NOT_UTF8, "-q")
    assert rc == 0, err
    assert "<title>\ufffd\ufffd" in page.read_text(encoding="utf-8")


def test_a_compare_label_that_is_not_utf8_is_written_with_replacement_characters(scored, tmp_path, capsys):
    out, page = tmp_path / "c.json", tmp_path / "c.html"
    rc, _, err = cli(
        capsys,
        "compare",
        str(scored["sc"]),
        str(scored["sc"]),
        "--label-a",
        NOT_UTF8,
        "-o",
        str(out),
        "--report",
        str(page),
        "-q",
    )
    assert rc == 0, err
    assert "\ufffd\ufffd" in page.read_text(encoding="utf-8")
    json.loads(out.read_text(encoding="utf-8"))  # JSON keeps the label as its \\u escapes


def test_score_of_a_file_name_that_is_not_utf8_with_a_report(tmp_path, capsys):
    inp = tmp_path / (NOT_UTF8 + ".jsonl")
    labelled_copy = tmp_path / "in.jsonl"
    from .test_hostile import labelled

    inp.write_bytes(labelled(labelled_copy).read_bytes())
    page = tmp_path / (NOT_UTF8 + ".html")
    rc, out, err = cli(
        capsys,
        "score",
        str(inp),
        "-o",
        str(tmp_path / "o.jsonl"),
        "--summary",
        str(tmp_path / "s.json"),
        "--report",
        str(page),
    )
    assert rc == 0, err
    assert "\ufffd\ufffd.jsonl" in page.read_text(encoding="utf-8")
    assert "report " in out


def test_a_path_that_is_not_utf8_is_printed_with_replacement_characters_on_a_strict_stdout(scored, tmp_path):
    """A UTF-8 locale's stdout refuses lone surrogates (``errors="strict"``): the line is printed with U+FFFD."""
    import subprocess
    import sys

    from .test_hostile import ROOT

    page = os.fsencode(tmp_path) + b"/\xfd.html"
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "conflictscore_local.cli", "report", os.fsencode(scored["sc"]), "-o", page],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert done.stdout.startswith(b"wrote ") and "\ufffd.html".encode() in done.stdout


# == wrongly typed fields of a scored file ==========================================================


@pytest.mark.parametrize(
    "field, value, says",
    [
        (
            "conflicted",
            "yes",
            "field 'claims[0].conflicted': not a scored result line: expected true or false, got a JSON string \"yes\"",
        ),
        ("ratio", "0.5", "field 'claims[0].ratio': not a scored result line: expected null or a number from 0 to 1"),
        ("ratio", 1.5, "field 'claims[0].ratio': not a scored result line: expected null or a number from 0 to 1"),
    ],
)
def test_compare_refuses_a_wrongly_typed_claim_field_naming_file_line_and_field(
    scored, tmp_path, capsys, field, value, says
):
    rows = [json.loads(x) for x in scored["sc"].read_text().splitlines()]
    rows[2]["claims"][0][field] = value
    bad = write_jsonl(tmp_path / "b.jsonl", rows)
    from .test_hostile import refused

    err = refused(
        capsys, tmp_path, "compare", str(scored["sc"]), str(bad), "-o", str(tmp_path / "c.json"), "-q", says=says
    )
    assert f"{bad}:3" in err


# == the six minor findings ========================================================================


def score_under_a_file_size_limit(tmp_path: Path, size: int, *flags: str) -> subprocess.CompletedProcess[str]:
    """``score`` of 6 unlabelled items with the yes judge, every write beyond ``size`` bytes refused (RLIMIT_FSIZE)."""
    from .test_hostile import ROOT

    unlabelled(tmp_path / "in.jsonl")
    run = (
        "import sys; sys.path.insert(0, sys.argv[1]); import conflictscore_local as cs; "
        "from tests.jobs.test_hostile import YesJudge, StoredPruner; cs.register('judge', 'hostile-yes', YesJudge); "
        "cs.register('pruner', 'hostile-keep', StoredPruner); from conflictscore_local.cli import main; "
        "sys.exit(main(sys.argv[2:]))"
    )

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            run,
            str(ROOT),
            "score",
            str(tmp_path / "in.jsonl"),
            "-o",
            str(tmp_path / "out.jsonl"),
            *JUDGED,
            *flags,
        ],
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=120,
    )


def test_a_full_disk_while_opening_the_cache_never_says_delete_the_file(tmp_path):
    """Before: `judgment cache c.sqlite: database or disk is full; delete the file or choose another`
    (exit 2): the advice destroys a cache that only met a full disk."""
    cache = tmp_path / "c.sqlite"
    p = score_under_a_file_size_limit(tmp_path, 3000, "--cache", str(cache))
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.strip()]
    assert "judgment cache" in line and "delete" not in line and "make room" in line, line


@pytest.mark.parametrize("where", ["/dev/null", "a FIFO", "a link to /dev/null"])
def test_a_cache_that_is_not_a_regular_file_is_refused_before_any_work(tmp_path, capsys, judges, where):
    """Before: `/dev/null` passed the checks, and opening it failed with "disk I/O error ... delete the file"."""
    from .test_hostile import refused

    unlabelled(tmp_path / "in.jsonl")
    cache = Path("/dev/null")
    if where == "a FIFO":
        cache = tmp_path / "fifo"
        os.mkfifo(cache)
    elif where == "a link to /dev/null":
        cache = tmp_path / "link.sqlite"
        cache.symlink_to("/dev/null")
    refused(
        capsys,
        tmp_path,
        "score",
        str(tmp_path / "in.jsonl"),
        "-o",
        str(tmp_path / "out.jsonl"),
        "--cache",
        str(cache),
        *JUDGED,
        says=f"judgment cache {cache} is not a regular file",
    )
    assert YesJudge.judged == []


def test_unpack_of_a_file_that_is_not_a_tar_is_one_line(tmp_path, capsys):
    """Before: tarfile's message, a line per method it tried (gz, bz2, xz, tar)."""
    import gzip as gz

    for name, data in (("x.tar", b"not a tar at all\n"), ("z.tar.gz", gz.compress(b"a gzip file of no tar\n"))):
        (tmp_path / name).write_bytes(data)
        rc, _, err = cli(capsys, "models", "unpack", str(tmp_path / name), "--to", str(tmp_path / "box"), "-q")
        assert rc == 2 and len(err.strip().splitlines()) == 1, err
        assert f"{tmp_path / name} is not a tar archive (plain, or compressed with gzip, bzip2 or xz)" in err
    assert not (tmp_path / "box").exists()


@pytest.mark.parametrize("command", ["compare", "report", "merge"])
def test_a_running_scores_partial_file_is_no_input(scored, running, tmp_path, capsys, command):
    """Before: `compare OUT.jsonl.partial B.jsonl` compared the rows a running score had written so far
    as a whole run (exit 0); the same for `report` and `merge`."""
    from .test_hostile import refused

    args = {
        "compare": ["compare", str(running), str(scored["sc"]), "-o", str(tmp_path / "c.json")],
        "report": ["report", str(running), "-o", str(tmp_path / "r.html")],
        "merge": [
            "merge",
            str(scored["it"]),
            "--outputs",
            str(running),
            str(scored["sc"]),
            "--summaries",
            str(scored["s"]),
            str(scored["s"]),
            "-o",
            str(tmp_path / "m.jsonl"),
        ],
    }[command]
    refused(capsys, tmp_path, *args, "-q", says=f"{running} is being written by a running run")


def test_an_interrupted_runs_partial_file_is_no_input(scored, tmp_path, capsys):
    from .test_hostile import refused

    partial = tmp_path / "OUT.jsonl.partial"
    partial.write_text(scored["sc"].read_text().splitlines()[0] + "\n")
    (tmp_path / "OUT.jsonl.partial.meta.json").write_text("{}")
    refused(
        capsys,
        tmp_path,
        "compare",
        str(partial),
        str(scored["sc"]),
        "-o",
        str(tmp_path / "c.json"),
        "-q",
        says="is the partial file of an interrupted run",
    )


@pytest.mark.parametrize("command", ["compare", "report"])
def test_a_summary_of_another_run_is_refused(tmp_path, capsys, command):
    """Before: `--summary-a` of another run with as many items was taken for A's (its configuration
    and, in the report, its headline figures shown as this run's); only the item count was checked."""
    from .test_hostile import labelled, refused

    a_in = labelled(tmp_path / "a_in.jsonl")
    rows = [json.loads(x) for x in a_in.read_text().splitlines()]
    for r in rows:
        r["labels"] = [[r["labels"][0][0], "SUPPORT" if r["labels"][0][1] == "IRRELEVANT" else "IRRELEVANT"]]
    b_in = write_jsonl(tmp_path / "b_in.jsonl", rows)  # the same items, other labels: another run
    for name, inp in (("a", a_in), ("b", b_in)):
        assert (
            cli(
                capsys,
                "score",
                str(inp),
                "-o",
                str(tmp_path / f"{name}.jsonl"),
                "--summary",
                str(tmp_path / f"{name}.json"),
                "-q",
            )[0]
            == 0
        )
    a, b, sb = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "b.json"
    args = {
        "compare": ["compare", str(a), str(b), "--summary-a", str(sb), "-o", str(tmp_path / "c.json")],
        "report": ["report", str(a), "--summary", str(sb), "-o", str(tmp_path / "r.html")],
    }[command]
    err = refused(capsys, tmp_path, *args, "-q", says="not the summary of that run")
    assert f"{sb}: field 'macro.cs_c'" in err and f"rows of {a} give" in err
    ok = {
        "compare": [
            "compare",
            str(a),
            str(b),
            "--summary-a",
            str(tmp_path / "a.json"),
            "--summary-b",
            str(sb),
            "-o",
            str(tmp_path / "c.json"),
        ],
        "report": ["report", str(a), "--summary", str(tmp_path / "a.json"), "-o", str(tmp_path / "r.html")],
    }[command]
    rc, _, err = cli(capsys, *ok, "-q")
    assert rc == 0, err


@pytest.mark.parametrize("where, field", [("item", "weights"), ("item", "reliability"), ("document", "weights")])
def test_weights_where_none_are_read_are_refused_naming_where_they_go(tmp_path, capsys, where, field):
    """Before: item-level `weights` (or `reliability`, or a document's `weights`) were kept as metadata and
    ignored: exit 0, no weighted metric, nothing said. (A document's `weight` is warned about with
    "did you mean 'reliability'?": tests/formats/test_input_shapes.py.)"""
    from .test_hostile import item, refused

    rows = [item(i, ["SUPPORT", "CONTRADICT"]) for i in range(3)]
    if where == "item":
        rows[1][field] = [0.9, 0.2] if field == "weights" else 0.5
        at = field
    else:
        rows[1]["documents"][1][field] = 0.2
        at = f"documents[1].{field}"
    inp = write_jsonl(tmp_path / "in.jsonl", rows)
    err = refused(
        capsys,
        tmp_path,
        "score",
        str(inp),
        "-o",
        str(tmp_path / "out.jsonl"),
        "-q",
        says=f"field '{at}': not {'an item' if where == 'item' else 'a document'} field: a source's weight "
        "is its document's reliability: documents[j].reliability",
    )
    assert f"{inp}:2" in err
