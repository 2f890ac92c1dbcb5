"""Issue 23's hostile cases, one test each, met as a user meets them: through the command line.

Every command keeps `score`'s promises: nothing it reads or writes is destroyed (a refusal is
exit 2 before any work, every file as it was), no traceback (one line, exit 2 for bad input, 1
for an I/O failure, 3 for a run whose requests failed), nothing accepted silently, and no secret
in any file it writes. These tests use the command line and the public loaders only, so they
run unchanged against a checkout from before the job layer (where each of them failed).
"""

from __future__ import annotations

import base64
import fcntl
import gzip
import json
import os
import re
import resource
import signal
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any, Iterator, Sequence

import pytest

from conflictscore_local.bench import make_item
from conflictscore_local.cli import main
from conflictscore_local.core.types import CONTRADICT, IRRELEVANT, SUPPORT, Judgment, Pair
from conflictscore_local.judge._base import JudgeBase
from conflictscore_local.prune._base import PrunerBase

ROOT = Path(__file__).resolve().parents[2]
TRUTHFULQA = ROOT / "tests" / "experiments" / "data" / "truthfulqa_sample.csv"
KEY = "sk-hostile-4f9c2d7e1b"
PASSWORD = "hunter2-pw-99x"


# -- small things the cases are built from ---------------------------------------------------------


def item(i: int, labels: list[str] | None = None) -> dict[str, Any]:
    """A one-claim item over two documents; with ``labels`` it needs no judge."""
    row: dict[str, Any] = {
        "id": f"item-{i:02d}",
        "question": f"Is {i} even?",
        "response": f"{i} is even.",
        "claims": [f"{i} is even."],
        "documents": [{"id": "a", "text": f"yes: {i} is even."}, {"id": "b", "text": "cats purr"}],
    }
    if labels is not None:
        row["labels"] = [labels]
    return row


def write_jsonl(path: Path, rows: Sequence[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def labelled(path: Path, n: int = 6) -> Path:
    return write_jsonl(path, [item(i, [SUPPORT, CONTRADICT if i % 2 else IRRELEVANT]) for i in range(n)])


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes: what a refused command must leave as it was."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``conflictscore ARGS``: its exit status (argparse's refusals included), stdout and stderr."""
    capsys.readouterr()
    try:
        rc = main([*args])
    except SystemExit as e:
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return rc, out, err


def refused(capsys: pytest.CaptureFixture[str], folder: Path, *args: str, says: str = "") -> str:
    """The command exits 2 with one error line (containing ``says``) and leaves every file as it was."""
    before = files(folder)
    rc, _, err = cli(capsys, *args)
    assert rc == 2, err
    assert "error:" in err and says in err, err
    assert files(folder) == before
    return err


class YesJudge(JudgeBase):
    """SUPPORT when the passage says 'yes: <claim>', else IRRELEVANT; counts what it judged."""

    name = "hostile-yes"
    role = "judge"
    judged: list[str] = []

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        out = []
        for p in pairs:
            YesJudge.judged.append(p.claim.text)
            yes = p.passage.text.startswith("yes: ")
            label = SUPPORT if yes else IRRELEVANT
            out.append(
                Judgment(p, label, {SUPPORT: 0.9 if yes else 0.05, CONTRADICT: 0.05, IRRELEVANT: 0.05 if yes else 0.9})
            )
        return out

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "version": 1}

    def passage_budget(self) -> None:
        return None


class StopJudge(YesJudge):
    """:class:`YesJudge` that is interrupted (Ctrl-C) on its third call."""

    name = "hostile-stop"
    calls = 0

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        StopJudge.calls += 1
        if StopJudge.calls == 3:
            raise KeyboardInterrupt
        return super().judge(pairs, on_progress)

    def spec(self) -> dict[str, Any]:
        return {"name": "hostile-yes", "version": 1}  # the same labels as the yes judge


class StoredPruner(PrunerBase):
    """Keeps every pair, and lets the engine store its selections in the judgment cache."""

    name = "hostile-keep"
    role = "pruner"
    cache_selections = True

    def select(self, pairs: Sequence[Pair]) -> tuple[list[Pair], list[Judgment]]:
        return list(pairs), []

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "version": 1}


@pytest.fixture
def judges(register_backend: Any) -> None:
    YesJudge.judged = []
    StopJudge.calls = 0
    register_backend("judge", "hostile-yes", YesJudge)
    register_backend("judge", "hostile-stop", StopJudge)
    register_backend("pruner", "hostile-keep", StoredPruner)


def unlabelled(path: Path, n: int = 6) -> Path:
    return write_jsonl(path, [item(i) for i in range(n)])


JUDGED = ["--judge", "hostile-yes", "--pruner", "hostile-keep", "-q"]


@pytest.fixture
def shards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Path]:
    """``in.jsonl`` scored as two shards (``o1``/``s1``, ``o2``/``s2``), from given labels."""
    return scored_shards(tmp_path, capsys)


def scored_shards(folder: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Path]:
    folder.mkdir(exist_ok=True)
    p = {"in": labelled(folder / "in.jsonl", 8)}
    for i in (1, 2):
        p[f"o{i}"], p[f"s{i}"] = folder / f"o{i}.jsonl", folder / f"s{i}.json"
        assert (
            cli(
                capsys,
                "score",
                str(p["in"]),
                "--shard",
                f"{i}/2",
                "-o",
                str(p[f"o{i}"]),
                "--summary",
                str(p[f"s{i}"]),
                "-q",
            )[0]
            == 0
        )
    return p


def merge_args(p: dict[str, Path], **flags: Path) -> list[str]:
    out = ["merge", str(p["in"]), "--outputs", str(p["o1"]), str(p["o2"]), "--summaries", str(p["s1"]), str(p["s2"])]
    for flag, path in flags.items():
        out += [f"--{flag}" if len(flag) > 1 else f"-{flag}", str(path)]
    return out + ["-q"]


@pytest.fixture
def scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Path]:
    """``it.jsonl`` scored into ``sc.jsonl`` with summary ``s.json``."""
    p = {"it": labelled(tmp_path / "it.jsonl"), "sc": tmp_path / "sc.jsonl", "s": tmp_path / "s.json"}
    assert cli(capsys, "score", str(p["it"]), "-o", str(p["sc"]), "--summary", str(p["s"]), "-q")[0] == 0
    return p


def bench_file(path: Path) -> Path:
    rows = [
        make_item(
            source="synthetic",
            id=f"b{i}",
            question=None,
            claims=[f"claim {i}"],
            documents=[{"id": "d0", "text": "yes"}, {"id": "d1", "text": "no"}],
            gold_labels=[[SUPPORT, CONTRADICT]],
            conflict_type="contradiction",
            split_key=f"claim {i}",
        )
        for i in range(3)
    ]
    return write_jsonl(path, rows)


RAMDOCS_ROW = {
    "question": "Who wrote X?",
    "gold_answers": ["A"],
    "disambig_entity": ["X"],
    "wrong_answers": [],
    "documents": [{"text": "A wrote X.", "type": "correct", "answer": "A"}],
}


def truthfulqa(tmp_path: Path) -> Path:
    path = tmp_path / "tqa.csv"
    path.write_bytes(TRUTHFULQA.read_bytes())
    return path


def answering(openai_stub: Any, text: str = "A") -> Any:
    return lambda request: openai_stub.Reply(body=openai_stub.chat_reply(text))


def generator_args(server: Any, *extra: str) -> list[str]:
    return [
        "--generator",
        "openai",
        "--generator-arg",
        f"base_url={server.url}",
        "--generator-arg",
        "max_retries=0",
        *extra,
    ]


# == data loss: every other command overwrote its own inputs ==========================================


@pytest.mark.parametrize(
    "flags, says",
    [
        ({"o": "in"}, "is the input"),
        ({"o": "o1"}, "o1.jsonl is"),
        ({"o": "out", "summary": "s1"}, "s1.json is"),
        ({"o": "out", "report": "in"}, "is the input"),
        ({"o": "same", "summary": "same"}, "is OUTPUT (-o)"),
    ],
    ids=[
        "-o is the input",
        "-o is a shard output",
        "--summary is a shard summary",
        "--report is the input",
        "-o and --summary the same file",
    ],
)
def test_merge_never_writes_over_what_it_reads_or_writes(shards, tmp_path, capsys, flags, says):
    paths = {k: shards.get(v, tmp_path / f"{v}.jsonl") for k, v in flags.items()}
    refused(capsys, tmp_path, *merge_args(shards, **paths), says=says)


@pytest.mark.parametrize(
    "flags",
    [
        {"scored": "sc", "o": "sc"},
        {"items": "it", "o": "it"},
        {"summary": "s", "o": "s"},
    ],
    ids=["-o is SCORED", "-o is --items", "-o is --summary"],
)
def test_report_never_replaces_its_inputs_with_html(scored, tmp_path, capsys, flags):
    args = [
        "report",
        str(scored["sc"]),
        "--items",
        str(scored["it"]),
        "--summary",
        str(scored["s"]),
        "-o",
        str(scored[flags["o"]]),
        "-q",
    ]
    refused(capsys, tmp_path, *args, says="is")


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Path]:
    """``OUT.partial`` as a `score` run that is still writing holds it: under its exclusive lock."""
    partial = tmp_path / "OUT.jsonl.partial"
    partial.write_text('{"id": "item-00"}\n')
    fd = os.open(partial, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    yield partial
    os.close(fd)


def test_report_onto_the_partial_file_of_a_running_score_is_refused(scored, running, tmp_path, capsys):
    # its extension says it is no page: refused before the destination is looked at
    refused(
        capsys,
        tmp_path,
        "report",
        str(scored["sc"]),
        "-o",
        str(running),
        "-q",
        says=".partial is not a format this command writes; allowed: .html",
    )


def test_a_second_score_onto_a_running_scores_partial_file_is_refused(scored, running, tmp_path, capsys):
    refused(
        capsys,
        tmp_path,
        "score",
        str(scored["it"]),
        "-o",
        str(running),
        "-q",
        says=".partial is not a format this command writes; allowed: .jsonl",
    )
    refused(capsys, tmp_path, "score", str(scored["it"]), "-o", str(running.with_suffix("")), "-q", says="another run")


def test_bench_build_never_replaces_its_source(tmp_path, capsys):
    src = write_jsonl(tmp_path / "ramdocs.jsonl", [RAMDOCS_ROW])
    refused(
        capsys,
        tmp_path,
        "bench",
        "build",
        "--source",
        "ramdocs",
        "--source",
        f"ramdocs={src}",
        "-o",
        str(src),
        "-q",
        says="is",
    )


@pytest.mark.parametrize("how", ["--data-dir", "$CONFLICTSCORE_DATA"])
def test_bench_build_never_replaces_a_source_it_reads_from_the_data_folder(tmp_path, capsys, monkeypatch, how):
    """Beyond the issue's list: `--source ramdocs=F -o F`, for the file the data folder gives ramdocs."""
    data = tmp_path / "data"
    (data / "ramdocs").mkdir(parents=True)
    src = write_jsonl(data / "ramdocs" / "RAMDocs_test.jsonl", [RAMDOCS_ROW])
    where = ["--data-dir", str(data)] if how == "--data-dir" else []
    monkeypatch.setenv("CONFLICTSCORE_DATA", str(data if how != "--data-dir" else tmp_path / "elsewhere"))
    for out in ([str(src)], [str(tmp_path / "b.jsonl"), "--summary", str(src)]):
        refused(
            capsys,
            tmp_path,
            "bench",
            "build",
            *where,
            "--source",
            "ramdocs",
            "-o",
            *out,
            "-q",
            says=f"{src} is the source file of ramdocs",
        )
    rc, _, err = cli(capsys, "bench", "build", *where, "--source", "ramdocs", "-o", str(data / "bench.jsonl"), "-q")
    assert rc == 0, err  # the data folder itself is no input file


def test_bench_build_output_and_stats_the_same_file_is_refused(tmp_path, capsys):
    src = write_jsonl(tmp_path / "ramdocs.jsonl", [RAMDOCS_ROW])
    out = tmp_path / "bench.jsonl"
    refused(
        capsys,
        tmp_path,
        "bench",
        "build",
        "--source",
        "ramdocs",
        "--source",
        f"ramdocs={src}",
        "-o",
        str(out),
        "--summary",
        str(out),
        "-q",
        says="is",
    )


@pytest.mark.parametrize("flag", ["-o", "--summary", "--report", "--predictions"])
def test_bench_run_never_writes_over_its_input(tmp_path, capsys, flag):
    bench = bench_file(tmp_path / "bench.jsonl")
    args = ["bench", "run", str(bench), "--given-labels", "-q"]
    args += [flag, str(bench)] if flag == "-o" else ["-o", str(tmp_path / "r.json"), flag, str(bench)]
    called = {"-o": "output (-o)", "--predictions": "output (--predictions)"}.get(flag, flag)  # -o is the rows
    refused(capsys, tmp_path, *args, says=f"{called} {bench} is the input file")


def test_generate_never_writes_over_its_input(tmp_path, capsys, openai_server, openai_stub):
    openai_server.respond = answering(openai_stub, "a report")
    items = labelled(tmp_path / "items.jsonl")
    refused(
        capsys,
        tmp_path,
        "generate",
        str(items),
        "--strategy",
        "standard",
        "-o",
        str(items),
        *generator_args(openai_server),
        "-q",
        says="is",
    )
    assert openai_server.posts() == []  # refused before any request


@pytest.mark.parametrize(
    "case", ["-o is the CSV", "--summary is the CSV", "-o and --summary the same file", "--trace is the CSV"]
)
def test_regenerate_never_writes_over_its_input_or_itself(tmp_path, capsys, openai_server, openai_stub, case):
    openai_server.respond = answering(openai_stub)
    csv = truthfulqa(tmp_path)
    out, flag, other = {
        "-o is the CSV": (csv, "--summary", None),
        "--summary is the CSV": (tmp_path / "t.jsonl", "--summary", csv),
        "-o and --summary the same file": (tmp_path / "t.jsonl", "--summary", tmp_path / "t.jsonl"),
        "--trace is the CSV": (tmp_path / "r.json", "--trace", csv),
    }[case]
    args = [
        "regenerate",
        "--truthfulqa",
        str(csv),
        "--conditions",
        "closed-book",
        "-o",
        str(out),
        *generator_args(openai_server),
        "--no-cache",
        "-q",
    ]
    refused(capsys, tmp_path, *args, *([flag, str(other)] if other else []), says="is")
    assert openai_server.posts() == []


def train_files(tmp_path: Path) -> tuple[Path, Path]:
    rows = [
        {"claim": f"{s} is here.", "passage": f"{w} {s} {w}.", "label": label}
        for s in ("the river", "a cat", "the tower")
        for label, w in ((SUPPORT, "yes indeed"), (CONTRADICT, "no never"), (IRRELEVANT, "banana bread"))
    ]
    return write_jsonl(tmp_path / "train.jsonl", rows), write_jsonl(tmp_path / "eval.jsonl", rows[:3])


def fit_args(train: Path, evals: Path, out: Path, *extra: str) -> list[str]:
    return [
        "train-judge",
        "fit",
        "--base",
        "minilm",
        "--train",
        str(train),
        "--eval",
        str(evals),
        "-o",
        str(out),
        "--epochs",
        "1",
        "--device",
        "cpu",
        "-q",
        *extra,
    ]


def test_fit_refuses_to_write_over_an_existing_model(tmp_path, capsys):
    train, evals = train_files(tmp_path)
    model = tmp_path / "my-judge"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "bert"}')
    (model / "training.json").write_text('{"epochs": 7}')
    refused(capsys, tmp_path, *fit_args(train, evals, model), says="-o")


def test_fit_refuses_an_unrelated_folder_that_is_not_empty(tmp_path, capsys):
    train, evals = train_files(tmp_path)
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "chapter1.tex").write_text("\\section{Intro}")
    refused(capsys, tmp_path, *fit_args(train, evals, folder), says="-o")


def locked_model(folder: Path, name: str = "alpha") -> Path:
    """A model folder with a lock file, as `models pull --to` leaves it."""
    from conflictscore_local.backends.modelstore.lock import LOCK_FILE, hash_files, lock_digest, model_files

    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "id2label": {"0": "entailment"}}))
    (folder / "model.safetensors").write_bytes(bytes(range(256)) * 16)
    lock = {
        "format": 1,
        "name": name,
        "source": f"hub:test/{name}",
        "revision": "0" * 40,
        "files": hash_files(folder, list(model_files(folder))),
    }
    lock["lock_sha256"] = lock_digest(lock)
    (folder / LOCK_FILE).write_text(json.dumps(lock))
    return folder


def test_bundle_refuses_a_tar_inside_the_folder_it_bundles(tmp_path, capsys):
    folder = locked_model(tmp_path / "alpha")
    refused(capsys, tmp_path, "models", "bundle", str(folder), "-o", str(folder / "self.tar"), "-q", says="inside")
    rc, _, err = cli(capsys, "models", "verify", str(folder), "-q")
    assert rc == 0, err


@pytest.mark.parametrize("to", ["alpha", "alpha/sub"], ids=["the model folder", "a folder inside it"])
def test_unpack_refuses_to_extract_into_a_model_folder(tmp_path, capsys, to):
    """Beyond the issue's list, the twin of `bundle DIR -o DIR/self.tar`: `unpack --to` a model folder
    put the bundle's models inside it, after which `models verify` of that folder failed."""
    folder = locked_model(tmp_path / "alpha")
    tar = tmp_path / "b.tar"
    assert cli(capsys, "models", "bundle", str(folder), "-o", str(tar), "-q")[0] == 0
    refused(capsys, tmp_path, "models", "unpack", str(tar), "--to", str(tmp_path / to), "-q", says="model folder")
    rc, _, err = cli(capsys, "models", "verify", str(folder), "-q")
    assert rc == 0, err


@pytest.fixture
def interrupted(tmp_path: Path, capsys: pytest.CaptureFixture[str], judges: None) -> list[str]:
    """A `score` run cut by Ctrl-C after two finished items: OUT.partial and its fingerprint remain."""
    inp = unlabelled(tmp_path / "in.jsonl")
    args = [
        "score",
        str(inp),
        "-o",
        str(tmp_path / "out.jsonl"),
        "--judge",
        "hostile-stop",
        "--pruner",
        "none",
        "--set",
        "engine.step_items=1",
        "--no-cache",
        "-q",
    ]
    rc, _, _ = cli(capsys, *args)
    assert rc == 130 and len((tmp_path / "out.jsonl.partial").read_text().splitlines()) == 2
    assert (tmp_path / "out.jsonl.partial.meta.json").is_file()
    return args


def test_resume_refuses_a_partial_file_without_its_fingerprint(interrupted, tmp_path, capsys):
    (tmp_path / "out.jsonl.partial.meta.json").unlink()
    rows = [item(i) for i in range(6)]
    rows[0]["documents"][0]["text"] = "cats purr"  # the input changed: item-00 would now be IRRELEVANT
    write_jsonl(tmp_path / "in.jsonl", rows)
    refused(capsys, tmp_path, *interrupted, "--resume", says="--resume")
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(
    "case",
    [
        "report -o its fingerprint",
        "score --summary its fingerprint",
        "score --summary its OUTPUT",
        "merge -o its OUTPUT",
    ],
)
def test_an_interrupted_runs_fingerprint_and_rows_are_never_overwritten(interrupted, tmp_path, capsys, case):
    """Beyond the issue's list: what `report -o OUT.partial` was, for the fingerprint beside it (without
    it the run cannot resume) and for OUTPUT itself (whose partial file another command's write would
    empty): refused before any work, and the interrupted run still resumes."""
    meta, out = tmp_path / "out.jsonl.partial.meta.json", tmp_path / "out.jsonl"
    shards = scored_shards(tmp_path / "other", capsys)
    args = {
        "report -o its fingerprint": ["report", str(shards["o1"]), "-o", str(meta), "-q"],
        "score --summary its fingerprint": [
            "score",
            str(shards["in"]),
            "-o",
            str(tmp_path / "z.jsonl"),
            "--summary",
            str(meta),
            "-q",
        ],
        "score --summary its OUTPUT": [
            "score",
            str(shards["in"]),
            "-o",
            str(tmp_path / "z.jsonl"),
            "--summary",
            str(out),
            "-q",
        ],
        "merge -o its OUTPUT": merge_args(shards, o=out),
    }[case]
    refused(
        capsys,
        tmp_path,
        *args,
        says=".json is not a format this command writes; allowed: .html"
        if case == "report -o its fingerprint"
        else "interrupted run",
    )
    rc, _, err = cli(capsys, *interrupted, "--resume", "--judge", "hostile-yes")
    assert rc == 0, err
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == [f"item-{i:02d}" for i in range(6)]


# == secrets: never in any file ===================================================================


def served_echoing_the_key(openai_server: Any, openai_stub: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose `GET /models` entry echoes the Authorization header (owned_by, root)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    openai_server.models = [{"id": "judge-model", "owned_by": f"Bearer {KEY}", "root": KEY}]
    openai_server.respond = answering(openai_stub, "SUPPORT")


def stored_text(tmp_path: Path, *names: str) -> dict[str, str]:
    """What each named file holds as text: the HTML report with its packed item records unpacked,
    the SQLite cache as every text value of every table."""
    out = {}
    for name in names:
        path = tmp_path / name
        if name.endswith(".sqlite"):
            db = sqlite3.connect(path)
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            out[name] = "\n".join(str(v) for t in tables for row in db.execute(f"SELECT * FROM {t}") for v in row)
            db.close()
            continue
        text = path.read_text(encoding="utf-8")
        for blob in re.findall(r"[A-Za-z0-9+/]{200,}={0,2}", text):
            try:
                text += gzip.decompress(base64.b64decode(blob)).decode("utf-8")
            except (OSError, ValueError):
                pass
        out[name] = text
    return out


def score_with_openai(capsys: pytest.CaptureFixture[str], tmp_path: Path, base_url: str, *extra: str) -> None:
    inp = unlabelled(tmp_path / "in.jsonl", 2)
    rc, _, err = cli(
        capsys,
        "score",
        str(inp),
        "-o",
        str(tmp_path / "out.jsonl"),
        "--summary",
        str(tmp_path / "s.json"),
        "--report",
        str(tmp_path / "r.html"),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--judge",
        "openai",
        "--judge-arg",
        f"base_url={base_url}",
        "--judge-arg",
        "max_retries=0",
        "--judge-arg",
        "timeout_s=2",
        "--pruner",
        "none",
        "-q",
        *extra,
    )
    assert rc in (0, 3), err


@pytest.mark.parametrize("where", ["s.json", "r.html", "c.sqlite"], ids=["summary", "HTML report", "cache specs"])
def test_an_api_key_the_server_echoes_is_stored_nowhere(
    tmp_path, capsys, openai_server, openai_stub, monkeypatch, where
):
    served_echoing_the_key(openai_server, openai_stub, monkeypatch)
    score_with_openai(capsys, tmp_path, openai_server.url)
    text = stored_text(tmp_path, where, "out.jsonl")
    assert "judge-model" in text[where] or where == "c.sqlite"
    assert all(KEY not in t for t in text.values())


@pytest.mark.parametrize(
    "where", ["s.json", "r.html", "c.sqlite", "out.jsonl"], ids=["summary", "HTML report", "cache", "output rows"]
)
def test_an_api_key_from_api_key_env_is_stored_nowhere(
    tmp_path, capsys, openai_server, openai_stub, monkeypatch, where
):
    """The key read through ``api_key_env=`` from a variable whose name says nothing of a secret:
    only the generator knows it is one (what it hands the redaction point), echoed by `GET /models`
    and in every reply."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LLM_BOX", KEY)
    openai_server.models = [{"id": "judge-model", "owned_by": f"Bearer {KEY}", "root": KEY}]
    openai_server.respond = answering(openai_stub, f"SUPPORT ({KEY})")
    score_with_openai(capsys, tmp_path, openai_server.url, "--judge-arg", "api_key_env=LLM_BOX")
    assert openai_server.posts()[0].headers["Authorization"] == f"Bearer {KEY}"
    text = stored_text(tmp_path, where)
    assert "LLM_BOX" in text[where] or where in ("c.sqlite", "out.jsonl")
    assert KEY not in text[where]


@pytest.mark.parametrize("where", ["s.json", "r.html"], ids=["summary", "HTML report"])
def test_an_api_key_in_extra_body_is_stored_nowhere(tmp_path, capsys, openai_server, openai_stub, where):
    openai_server.respond = answering(openai_stub, "SUPPORT")
    score_with_openai(capsys, tmp_path, openai_server.url, "--judge-arg", f'extra_body={{"api_key": "{KEY}"}}')
    assert openai_server.posts()[0].body["api_key"] == KEY  # still sent: only never stored
    text = stored_text(tmp_path, where, "c.sqlite")
    assert "extra_body" in text[where] and all(KEY not in t for t in text.values())


@pytest.mark.parametrize("where", ["s.json", "r.html", "c.sqlite"], ids=["summary", "HTML report", "cache specs"])
def test_a_password_in_the_base_url_is_stored_nowhere(tmp_path, capsys, openai_server, openai_stub, where):
    openai_server.respond = answering(openai_stub, "SUPPORT")
    url = openai_server.url.replace("http://", f"http://user:{PASSWORD}@")
    score_with_openai(capsys, tmp_path, url)
    text = stored_text(tmp_path, where)
    assert "user:" in text[where] or where != "s.json"
    assert PASSWORD not in text[where]


def echo_authorization(openai_stub: Any, template: str) -> Any:
    return lambda r: openai_stub.Reply(body=openai_stub.chat_reply(template.format(r.headers.get("Authorization"))))


def test_generate_stores_no_reply_that_echoes_the_bearer_token(
    tmp_path, capsys, openai_server, openai_stub, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    openai_server.respond = echo_authorization(openai_stub, "The report. (you sent Authorization: {})")
    out = tmp_path / "out.jsonl"
    rc, _, err = cli(
        capsys,
        "generate",
        str(labelled(tmp_path / "items.jsonl", 2)),
        "--strategy",
        "standard",
        "-o",
        str(out),
        *generator_args(openai_server),
        "-q",
    )
    assert rc == 0, err
    assert openai_server.posts()[0].headers["Authorization"] == f"Bearer {KEY}"
    assert "The report." in out.read_text() and KEY not in out.read_text()


def test_regenerate_trace_stores_no_reply_that_echoes_the_bearer_token(
    tmp_path, capsys, openai_server, openai_stub, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    openai_server.respond = echo_authorization(openai_stub, "A ({})")
    args = [
        "regenerate",
        "--truthfulqa",
        str(truthfulqa(tmp_path)),
        "--conditions",
        "closed-book",
        "-o",
        str(tmp_path / "t.jsonl"),
        "--summary",
        str(tmp_path / "r.json"),
        *generator_args(openai_server),
        "--no-cache",
        "-q",
    ]
    rc, _, err = cli(capsys, *args)
    assert rc in (0, 3), err
    for name in ("t.jsonl", "r.json"):
        assert KEY not in (tmp_path / name).read_text()
    assert "A (Bearer" in (tmp_path / "t.jsonl").read_text()


# == tracebacks: each one clear line with its exit status, nothing lost ================================


def test_a_bootstrap_too_large_to_allocate_is_refused_before_anything_is_written(tmp_path, capsys):
    inp = labelled(tmp_path / "in.jsonl")
    refused(
        capsys,
        tmp_path,
        "score",
        str(inp),
        "-o",
        str(tmp_path / "out.jsonl"),
        "--set",
        "engine.bootstrap=10000000000000",
        "-q",
        says="bootstrap",
    )


def test_a_negative_backoff_is_refused(tmp_path, capsys, openai_server):
    inp = unlabelled(tmp_path / "in.jsonl")
    refused(
        capsys,
        tmp_path,
        "score",
        str(inp),
        "-o",
        str(tmp_path / "out.jsonl"),
        "--judge",
        "openai",
        "--judge-arg",
        f"base_url={openai_server.url}",
        "--judge-arg",
        "backoff_s=-1",
        "-q",
        says="backoff_s",
    )
    assert openai_server.requests == []


def one_error_line(err: str) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_disk_full_while_writing_output_is_one_line_and_exit_1(tmp_path, capsys):
    rc, _, err = cli(capsys, "score", str(labelled(tmp_path / "in.jsonl")), "-o", "/dev/full", "-q")
    assert rc == 1 and "No space left on device" in one_error_line(err)


def test_disk_full_while_writing_the_summary_is_one_line_and_exit_1(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    rc, _, err = cli(
        capsys, "score", str(labelled(tmp_path / "in.jsonl")), "-o", str(out), "--summary", "/dev/full", "-q"
    )
    assert rc == 1 and "No space left on device" in one_error_line(err) and "--summary" in err
    assert len(out.read_text().splitlines()) == 6  # OUTPUT itself is whole


def stopped_by_a_full_disk(cmd: list[str], out: Path, size: int, ids: list[str], rows_kept: int) -> str:
    """Run ``cmd`` under a file-size limit (RLIMIT_FSIZE: writes fail as on a full disk); it must
    exit 1 with one line, keep at least ``rows_kept`` rows in ``OUT.partial`` and nothing in OUT,
    and the same command with ``--resume`` must finish OUT with ``ids``. Returns that one line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    p = subprocess.run(cmd, env=env, capture_output=True, text=True, preexec_fn=limit, timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    line = one_error_line(p.stderr)
    kept = Path(f"{out}.partial").read_text()
    assert kept.count("\n") >= rows_kept and not out.exists()
    p = subprocess.run(cmd + ["--resume"], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ids
    return line


def test_a_write_that_fails_midway_keeps_the_rows_and_points_to_resume(tmp_path):
    """A file-size limit (RLIMIT_FSIZE) stops the writes after a few rows, as a full disk would."""
    inp = labelled(tmp_path / "in.jsonl", 60)
    out = tmp_path / "out.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "conflictscore_local.cli",
        "score",
        str(inp),
        "-o",
        str(out),
        "-q",
        "--set",
        "engine.step_items=1",
        "--no-cache",
    ]
    line = stopped_by_a_full_disk(cmd, out, 6000, [f"item-{i:02d}" for i in range(60)], rows_kept=3)
    assert "--resume" in line and "File too large" in line


def test_a_cache_write_that_fails_midway_is_one_line_and_keeps_the_rows(tmp_path):
    """Beyond the issue's list: the judgment cache is an output too; a full disk (here a file-size
    limit) under SQLite was a traceback (`sqlite3.OperationalError: disk I/O error`)."""
    inp = unlabelled(tmp_path / "in.jsonl", 200)
    out = tmp_path / "out.jsonl"
    run = (
        "import sys; sys.path.insert(0, sys.argv[1]); import conflictscore_local as cs; "
        "from tests.jobs.test_hostile import YesJudge, StoredPruner; cs.register('judge', 'hostile-yes', YesJudge); "
        "cs.register('pruner', 'hostile-keep', StoredPruner); from conflictscore_local.cli import main; "
        "sys.exit(main(sys.argv[2:]))"
    )
    cmd = [
        sys.executable,
        "-c",
        run,
        str(ROOT),
        "score",
        str(inp),
        "-o",
        str(out),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--set",
        "engine.step_items=5",
        *JUDGED,
    ]
    # 90,000 bytes: the cache's tables (judgments, selections, vectors, passage spans) and a few
    # steps of rows fit, the 200 items' do not
    line = stopped_by_a_full_disk(cmd, out, 90000, [f"item-{i:02d}" for i in range(200)], rows_kept=5)
    assert "judgment cache" in line and "disk I/O error" in line and "--resume" in line, line


@pytest.mark.parametrize(
    "content",
    [bytes(range(128, 256)) + bytes(range(128)), '{"id": "caf\xe9"}\n'.encode("latin-1")],
    ids=["binary", "latin-1 text"],
)
def test_report_on_a_file_that_is_not_utf8_names_file_and_line(tmp_path, capsys, content):
    bad = tmp_path / "scored.jsonl"
    bad.write_bytes(content)
    err = refused(capsys, tmp_path, "report", str(bad), "-o", str(tmp_path / "r.html"), "-q", says="not UTF-8")
    assert f"{bad}:1" in err


def cached_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, cache: Path) -> tuple[int, str]:
    rc, _, err = cli(
        capsys, "score", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / name), "--cache", str(cache), *JUDGED
    )
    return rc, err


def test_a_cache_of_another_schema_is_refused_before_any_work(tmp_path, capsys, judges):
    unlabelled(tmp_path / "in.jsonl")
    cache = tmp_path / "c.sqlite"
    db = sqlite3.connect(cache)
    db.executescript("PRAGMA user_version=2; CREATE TABLE judgments (key TEXT PRIMARY KEY, answer TEXT);")
    db.close()
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
        says="judgment cache",
    )
    assert YesJudge.judged == []  # nothing judged, no OUT.partial left behind


@pytest.mark.parametrize(
    "table, column, value",
    [
        ("judgments", "label", "MAYBE"),
        ("judgments", "probs", "{not json"),
        ("judgments", "probs", '{"SUPPORT": NaN, "CONTRADICT": 0.0, "IRRELEVANT": 0.0}'),
        ("selections", "selection", "garbage"),
    ],
    ids=["label MAYBE", "probabilities not JSON", "probabilities NaN", "garbage pruner selections"],
)
def test_a_bad_cache_row_is_a_counted_miss(tmp_path, capsys, judges, table, column, value):
    unlabelled(tmp_path / "in.jsonl")
    cache = tmp_path / "c.sqlite"
    assert cached_run(tmp_path, capsys, "first.jsonl", cache)[0] == 0
    db = sqlite3.connect(cache)
    with db:
        db.execute(f"UPDATE {table} SET {column} = ?", (value,))
    db.close()
    YesJudge.judged = []
    rc, err = cached_run(tmp_path, capsys, "second.jsonl", cache)
    assert rc == 0, err
    assert verdicts(tmp_path / "second.jsonl") == verdicts(tmp_path / "first.jsonl")
    assert "cache" in err and "warning:" in err  # counted and said
    db = sqlite3.connect(cache)
    stored = [row[0] for row in db.execute(f"SELECT {column} FROM {table}")]
    db.close()
    assert value not in stored  # the bad rows were made again (judged, or pruned) and replaced
    assert len(YesJudge.judged) == (12 if table == "judgments" else 0)


def verdicts(path: Path) -> list[Any]:
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    return [(r["id"], [(c["support"], c["contradict"], c["irrelevant"]) for c in r["claims"]]) for r in rows]


def test_json_into_a_closed_pipe_exits_quietly(tmp_path):
    inp = labelled(tmp_path / "in.jsonl", 40)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.Popen(
        [sys.executable, "-m", "conflictscore_local.cli", "score", str(inp), "-o", str(tmp_path / "o.jsonl"), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    p.stdout.close()  # `| true`
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141 and err == "", err
    assert len((tmp_path / "o.jsonl").read_text().splitlines()) == 40


def test_generate_refuses_a_temperature_of_nan(tmp_path, capsys, openai_server):
    items = labelled(tmp_path / "items.jsonl")
    refused(
        capsys,
        tmp_path,
        "generate",
        str(items),
        "--strategy",
        "standard",
        "-o",
        str(tmp_path / "o.jsonl"),
        *generator_args(openai_server),
        "--temperature",
        "NaN",
        says="--temperature",
    )
    assert openai_server.requests == []


@pytest.mark.parametrize("loader", ["load_healthver_csv", "load_sick"])
def test_prepare_names_file_and_line_of_a_garbage_source(tmp_path, loader):
    from conflictscore_local.core.errors import InputError
    from conflictscore_local.train import sources

    bad = tmp_path / "source.csv"
    bad.write_bytes(b"claim,evidence,label\n" + bytes(range(128, 256)) + b"\n")
    with pytest.raises(InputError) as e:
        list(getattr(sources, loader)(bad))
    assert e.value.path == str(bad) and e.value.line == 2 and "not UTF-8" in str(e.value)


def test_prepare_refuses_an_output_that_is_a_file_before_any_work(tmp_path, capsys):
    out = tmp_path / "data.jsonl"
    out.write_text("mine\n")
    (tmp_path / "shared").mkdir()
    refused(
        capsys,
        tmp_path,
        "train-judge",
        "prepare",
        "-o",
        str(out),
        "--data-dir",
        str(tmp_path / "shared"),
        says=f"-o {out}",
    )


def test_fit_refuses_a_weight_decay_of_nan(tmp_path, capsys):
    train, evals = train_files(tmp_path)
    refused(capsys, tmp_path, *fit_args(train, evals, tmp_path / "m", "--weight-decay", "NaN"), says="--weight-decay")


def test_fit_refuses_an_output_that_is_the_train_file(tmp_path, capsys):
    train, evals = train_files(tmp_path)
    refused(capsys, tmp_path, *fit_args(train, evals, train), says="--train")


# == silent no more ===============================================================================


def test_regenerate_with_every_request_failed_exits_3(tmp_path, capsys, openai_server, openai_stub):
    openai_server.respond = lambda r: openai_stub.Reply(503, {"error": "overloaded"})
    rc, _, err = cli(
        capsys,
        "regenerate",
        "--truthfulqa",
        str(truthfulqa(tmp_path)),
        "--conditions",
        "closed-book",
        "-o",
        str(tmp_path / "t.jsonl"),
        "--summary",
        str(tmp_path / "r.json"),
        *generator_args(openai_server),
        "--no-cache",
        "-q",
    )
    assert rc == 3 and "warning:" in err and "failed" in err.lower()
    assert json.loads((tmp_path / "r.json").read_text())["conditions"]["closed-book"]["failed"] == 3


def test_unpack_refuses_a_model_folder_renamed_to_another_model(tmp_path, capsys):
    folder = locked_model(tmp_path / "alpha")
    tar = tmp_path / "renamed.tar"
    with tarfile.open(tar, "w") as t:
        t.add(folder, arcname="beta")
    box = tmp_path / "box"
    rc, _, err = cli(capsys, "models", "unpack", str(tar), "--to", str(box), "-q")
    assert rc in (1, 2) and "alpha" in err and "beta" in err
    assert not (box / "beta").exists()


def test_merge_validates_shard_rows_as_input_is_validated(shards, tmp_path, capsys):
    rows = [json.loads(x) for x in shards["o1"].read_text().splitlines()]
    rows[0]["claims"][0]["support"] = "x"
    write_jsonl(shards["o1"], rows)
    err = refused(capsys, tmp_path, *merge_args(shards, o=tmp_path / "m.jsonl"), says="claims[0].support")
    assert f"{shards['o1']}:1" in err


def test_an_empty_bench_source_is_warned_about(tmp_path, capsys):
    empty = tmp_path / "ramdocs.jsonl"
    empty.write_text("")
    rc, _, err = cli(
        capsys,
        "bench",
        "build",
        "--source",
        "ramdocs",
        "--source",
        f"ramdocs={empty}",
        "-o",
        str(tmp_path / "b.jsonl"),
        "-q",
    )
    assert "warning:" in err and "ramdocs" in err and "no item" in err


def test_replaying_a_summary_of_another_major_version_warns(scored, tmp_path, capsys):
    summary = json.loads(scored["s"].read_text())
    summary["versions"]["conflictscore-local"] = "7.0.0"
    (tmp_path / "old.json").write_text(json.dumps(summary))
    rc, _, err = cli(
        capsys,
        "score",
        str(scored["it"]),
        "-o",
        str(tmp_path / "again.jsonl"),
        "--config",
        str(tmp_path / "old.json"),
        "-q",
    )
    assert rc == 0 and "warning:" in err and "7.0.0" in err


def test_generate_refuses_max_tokens_of_0(tmp_path, capsys, openai_server):
    items = labelled(tmp_path / "items.jsonl")
    refused(
        capsys,
        tmp_path,
        "generate",
        str(items),
        "--strategy",
        "standard",
        "-o",
        str(tmp_path / "o.jsonl"),
        *generator_args(openai_server),
        "--max-tokens",
        "0",
        says="--max-tokens",
    )


def test_prepare_refuses_negative_easy_negatives(tmp_path, capsys):
    refused(
        capsys,
        tmp_path,
        "train-judge",
        "prepare",
        "-o",
        str(tmp_path / "data"),
        "--data-dir",
        str(tmp_path),
        "--easy-negatives",
        "-5",
        says="--easy-negatives",
    )


def test_resume_of_an_unsharded_run_as_one_shard_says_the_rows_are_in_other_shards(interrupted, tmp_path, capsys):
    rc, _, err = cli(
        capsys,
        *interrupted,
        "--resume",
        "--shard",
        "1/2",
        "--summary",
        str(tmp_path / "s1.json"),
        "--judge",
        "hostile-yes",
    )
    assert rc == 0, err
    dropped = [line for line in err.splitlines() if "dropped" in line]
    assert dropped and "shard" in dropped[0] and "not in" not in dropped[0]
