"""``models verify``: a staged folder matches its lock and manifest, and every kind of drift is caught."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends.modelstore.lock import lock_digest
from conflictscore_local.cli import main
from conflictscore_local.models import LOCK_FILE, get_manifest, make_lock, read_lock, verify, write_lock

from .conftest import COMMIT, Staging, fake_checkpoint


@pytest.fixture
def staged(staging: Staging) -> Path:
    staging.manifest("tiny")
    folder = fake_checkpoint(staging.store / "tiny")
    write_lock(folder, make_lock(folder, get_manifest("tiny"), COMMIT))
    return folder


def test_lock_holds_every_file_with_its_sha256(staged: Path) -> None:
    lock = read_lock(staged)
    assert lock is not None
    assert sorted(lock["files"]) == ["1_Pooling/config.json", "config.json", "model.safetensors", "tokenizer.json"]
    weights = (staged / "model.safetensors").read_bytes()
    assert lock["files"]["model.safetensors"] == {"size": 16384, "sha256": hashlib.sha256(weights).hexdigest()}
    assert (lock["name"], lock["source"], lock["revision"]) == ("tiny", "hub:org/tiny", COMMIT)
    assert lock["lock_sha256"] == lock_digest(lock)


def test_an_intact_folder_passes_by_name_and_by_path(staged: Path) -> None:
    for target in ("tiny", str(staged)):
        result = verify(target)
        assert result.ok and result.files == 4 and result.name == "tiny", result.text()
        assert result.lock_sha256 == read_lock(staged)["lock_sha256"]  # type: ignore[index]


def test_a_missing_file_is_caught(staged: Path) -> None:
    (staged / "tokenizer.json").unlink()
    assert verify("tiny").problems == ["missing file tokenizer.json"]


def test_a_changed_byte_is_caught(staged: Path) -> None:
    data = bytearray((staged / "model.safetensors").read_bytes())
    data[1000] ^= 1
    (staged / "model.safetensors").write_bytes(bytes(data))
    (problem,) = verify("tiny").problems
    assert problem.startswith("model.safetensors: sha256 ") and problem.endswith("(the file changed)")


def test_a_wrong_label_map_is_caught(staged: Path, staging: Staging) -> None:
    # the manifest now says the checkpoint's classes are in another order than its config.json has them
    staging.manifest(
        "tiny",
        id2label={"0": "contradiction", "1": "neutral", "2": "entailment"},
        mapping={"0": "CONTRADICT", "1": "IRRELEVANT", "2": "SUPPORT"},
    )
    assert verify("tiny").problems == [
        'config.json id2label {"0": "entailment", "1": "neutral", "2": "contradiction"} is not the manifest\'s '
        '{"0": "contradiction", "1": "neutral", "2": "entailment"}'
    ]


def test_an_extra_file_and_an_edited_lock_are_caught(staged: Path) -> None:
    (staged / "pytorch_model.bin").write_bytes(b"other weights")
    lock = json.loads((staged / LOCK_FILE).read_text())
    lock["files"]["tokenizer.json"]["sha256"] = "0" * 64
    (staged / LOCK_FILE).write_text(json.dumps(lock))
    problems = verify(str(staged)).problems
    assert problems[0] == f"{LOCK_FILE} was edited: its lock_sha256 does not match its content"
    assert problems[1].startswith("tokenizer.json: sha256 ")
    assert problems[2] == "unexpected file pytorch_model.bin (not in the lock)"


def test_another_revision_is_not_the_manifest_model(staged: Path, staging: Staging) -> None:
    staging.manifest("tiny", revision="9" * 40)
    result = verify(str(staged))
    assert result.problems == [f"locked revision {COMMIT} is not the manifest's {'9' * 40}"]


def test_a_folder_without_lock_fails(tmp_path: Path) -> None:
    folder = fake_checkpoint(tmp_path / "loose")
    (problem,) = verify(str(folder)).problems
    assert problem.startswith(f"no {LOCK_FILE}: nothing to check the files against")


def test_cli_exit_status_and_json(staged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "verify", "tiny", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    (staged / "config.json").unlink()
    assert main(["models", "verify", str(staged), "--json"]) == 4
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and "missing file config.json" in out["problems"]
    assert main(["models", "verify", "no-such-model"]) == 2
    assert "'no-such-model' is neither a directory nor a known model name" in capsys.readouterr().err


def test_list_and_show_say_what_is_here(staged: Path, staging: Staging, capsys: pytest.CaptureFixture[str]) -> None:
    staging.manifest("elsewhere")
    assert main(["models", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert (rows["tiny"]["state"], rows["tiny"]["path"]) == ("staged", str(staged))
    assert (rows["elsewhere"]["state"], rows["elsewhere"]["path"]) == ("not staged", None)
    assert "models pull elsewhere" in rows["elsewhere"]["detail"]
    assert rows["default-judge"]["state"] == "shipped" and rows["qwen3-8b"]["uses"] == ["judge vllm", "decomposer llm"]
    assert main(["models", "show", "tiny"]) == 0
    out = capsys.readouterr().out
    assert f"  here      staged at {staged}" in out
    assert "  labels    0=entailment→SUPPORT, 1=neutral→IRRELEVANT, 2=contradiction→CONTRADICT" in out
    assert "  run       --judge nli --judge-arg model=tiny" in out


def test_a_lock_whose_manifest_is_unknown_here_is_checked_against_the_lock_alone(
    staged: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONFLICTSCORE_MANIFESTS")  # e.g. a bundle carried to a box without the user's manifests
    result = verify(str(staged))
    assert result.ok and result.name == "tiny" and result.files == 4, result.text()
    assert result.notes == ["no manifest 'tiny' in this version: checked against the lock alone"]
    config = json.loads((staged / "config.json").read_text())
    config["id2label"] = {"0": "contradiction", "1": "neutral", "2": "entailment"}
    (staged / "config.json").write_text(json.dumps(config))
    problems = verify(str(staged)).problems
    assert problems[0].startswith("config.json: ") and problems[1] == (  # the size or sha256, then the locked map
        'config.json id2label {"0": "contradiction", "1": "neutral", "2": "entailment"} is not the manifest\'s '
        '{"0": "entailment", "1": "neutral", "2": "contradiction"}'
    )


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda lock: lock["files"].update({"config.json": 5}), "files.config.json"),
        (lambda lock: lock["files"]["tokenizer.json"].pop("size"), "files.tokenizer.json"),
        (lambda lock: lock.update(name=["tiny"]), "name"),
        (lambda lock: lock.update(revision=7), "revision"),
        (lambda lock: lock.update(labels={"map": {}}), "labels"),
    ],
)
def test_a_malformed_lock_is_a_problem_and_stops_a_run_not_a_traceback(
    staged: Path, tmp_path: Path, edit: Any, field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = json.loads((staged / LOCK_FILE).read_text())
    edit(lock)
    (staged / LOCK_FILE).write_text(json.dumps(lock))
    (problem,) = verify("tiny").problems  # was an AttributeError / KeyError traceback
    assert problem.startswith(f"{staged / LOCK_FILE}: field '{field}': expected ")
    items = Path(__file__).resolve().parents[2] / "examples" / "items.jsonl"
    assert (
        main(
            [
                "score",
                str(items),
                "-o",
                str(tmp_path / "o.jsonl"),
                "-q",
                "--no-cache",
                "--pruner",
                "none",
                "--judge-arg",
                "model=tiny",
            ]
        )
        == 2
    )
    assert f"conflictscore score: error: {staged / LOCK_FILE}: field '{field}'" in capsys.readouterr().err
