"""A local checkpoint: offline model resolution, fingerprints from content, token counting."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from conflictscore_local.backends import checkpoints
from conflictscore_local.backends.checkpoints import (
    load_tokenizer,
    model_fingerprint,
    resolve_model,
    token_counter,
    tokenizer_fingerprint,
)
from conflictscore_local.core.errors import BackendUnavailable

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def checkpoint(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    (path / "model.safetensors").write_bytes(b"weights-1")
    (path / "extra.bin").write_bytes(b"weights-2")
    return path


def test_directory_fingerprint_is_a_content_hash(tmp_path: Path) -> None:
    path = checkpoint(tmp_path / "ckpt")

    def digest(*files: tuple[str, bytes]) -> str:
        h = hashlib.sha256()
        for name, data in files:
            h.update(name.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
        return h.hexdigest()

    assert model_fingerprint(path) == {
        "weights_sha256": digest(("extra.bin", b"weights-2"), ("model.safetensors", b"weights-1")),
        "config_sha256": digest(("config.json", b"{}")),
    }
    copy = checkpoint(tmp_path / "elsewhere")
    assert model_fingerprint(copy) == model_fingerprint(path)  # same weights, another place: same key
    (copy / "model.safetensors").write_bytes(b"weights-X")
    assert model_fingerprint(copy) != model_fingerprint(path)


def test_large_checkpoints_are_identified_by_path_and_file_stats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "FULL_HASH_LIMIT", 0)
    path = checkpoint(tmp_path / "big")
    fp = model_fingerprint(path)
    assert fp["path"] == str(path) and len(fp["weights_stat"]) == 16
    assert fp["hash"] == (
        "skipped (18 bytes of weights > FULL_HASH_LIMIT 0): identified by path, file sizes and modification times"
    )
    (path / "model.safetensors").write_bytes(b"retrained in place")
    assert model_fingerprint(path) != fp


def test_no_weights_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(BackendUnavailable, match="no weight files"):
        model_fingerprint(tmp_path)


def test_tokenizer_fingerprint_covers_vocabulary_and_chat_template_not_weights(tmp_path: Path) -> None:
    path = checkpoint(tmp_path / "ckpt")
    (path / "tokenizer.json").write_text('{"vocab": 1}')
    (path / "chat_template.jinja").write_text("{{ messages }}")
    (path / "additional_chat_templates").mkdir()
    (path / "additional_chat_templates" / "tools.jinja").write_text("{{ tools }}")
    fp = tokenizer_fingerprint(path)
    assert set(fp) == {"tokenizer_sha256"} and len(fp["tokenizer_sha256"]) == 64
    (path / "model.safetensors").write_bytes(b"retrained")
    (path / "config.json").write_text('{"hidden_size": 8}')
    assert tokenizer_fingerprint(path) == fp
    copy = tmp_path / "copy"
    shutil.copytree(path, copy)
    assert tokenizer_fingerprint(copy) == fp
    for changed, text in (
        ("chat_template.jinja", "{{ messages }}!"),
        ("tokenizer.json", '{"vocab": 2}'),
        ("additional_chat_templates/tools.jinja", "{{ tools }}!"),
    ):
        edited = tmp_path / changed.replace("/", "-")
        shutil.copytree(path, edited)
        (edited / changed).write_text(text)
        assert tokenizer_fingerprint(edited) != fp, changed


def test_token_counter_counts_text_tokens_only(tokenizer_dir: Path) -> None:
    count = token_counter(load_tokenizer(tokenizer_dir))
    assert count("The Eiffel Tower opened in 1889.") == 9  # no [CLS] / [SEP]
    assert count("") == 0 and count("word " * 600) == 600  # longer than the model's window: no cut


def test_hub_ids_resolve_from_the_local_cache_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "hub" / "models--org--tiny-judge"
    snapshot = checkpoint(repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    resolved = resolve_model("org/tiny-judge", what="test")
    assert resolved == snapshot
    # identified by content, not by the snapshot's name (see test_fingerprint.py)
    assert model_fingerprint(resolved) == model_fingerprint(checkpoint(tmp_path / "plain"))
    assert resolve_model(str(snapshot), what="test") == snapshot.resolve()
    with pytest.raises(BackendUnavailable, match="'org/absent' is neither a directory nor in the local Hugging Face"):
        resolve_model("org/absent", what="test")


def test_a_hash_is_remembered_by_stat_and_a_rewrite_is_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    (tmp_path / "model.safetensors").write_bytes(b"weights-1")
    reads: list[str] = []
    real_open = Path.open

    def counting_open(self: Path, *a, **kw):  # type: ignore[no-untyped-def]
        reads.append(self.name)
        return real_open(self, *a, **kw)

    monkeypatch.setattr(Path, "open", counting_open)
    first = model_fingerprint(tmp_path)["weights_sha256"]
    assert model_fingerprint(tmp_path)["weights_sha256"] == first and reads == ["model.safetensors"]
    st = (tmp_path / "model.safetensors").stat()
    (tmp_path / "model.safetensors").write_bytes(b"weights-2")  # same size, mtime put back: ctime moves
    os.utime(tmp_path / "model.safetensors", ns=(st.st_atime_ns, st.st_mtime_ns))
    reads.clear()
    second = model_fingerprint(tmp_path)["weights_sha256"]
    assert reads == ["model.safetensors"] and second != first
    expected = hashlib.sha256(b"model.safetensors\0" + (9).to_bytes(8, "little") + b"weights-2").hexdigest()
    assert second == expected


def _old_weights(path: Path, data: bytes) -> Path:
    """``data`` as ``path/model.safetensors``, its times moved an hour back (settled, as installed weights are)."""
    import os
    import time

    path.mkdir(parents=True, exist_ok=True)
    (path / "model.safetensors").write_bytes(data)
    old = time.time_ns() - 3600 * 10**9
    os.utime(path / "model.safetensors", ns=(old, old))
    return path


def test_a_later_process_takes_the_hash_from_the_memo_beside_the_judgment_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import time

    from conflictscore_local.backends import checkpoints as ck

    monkeypatch.setattr(ck, "HASH_MEMO_MIN_BYTES", 8)
    monkeypatch.setattr(ck, "HASH_MEMO_SETTLED_S", 0.0)  # ctime cannot be moved back: count it settled
    path = _old_weights(tmp_path / "ckpt", b"weights-1")
    expected = hashlib.sha256(b"model.safetensors\0" + (9).to_bytes(8, "little") + b"weights-1").hexdigest()
    assert model_fingerprint(path)["weights_sha256"] == expected
    memo = json.loads(
        (tmp_path / "content-hashes.json").read_text()
    )  # CONFLICTSCORE_CACHE is tmp_path/judgments.sqlite
    assert memo["format"] == 2 and [e["sha256"] for e in memo["hashes"].values()] == [expected]

    ck._HASHED.clear()  # a new process: nothing remembered in memory
    reads: list[str] = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *a, **kw: reads.append(self.name) or real_open(self, *a, **kw))
    assert model_fingerprint(path)["weights_sha256"] == expected and reads == ["model.safetensors"]  # its blocks

    ck._HASHED.clear()
    (path / "model.safetensors").write_bytes(b"weights-2")  # rewritten: its stat no longer matches
    time.sleep(0.01)
    got = model_fingerprint(path)["weights_sha256"]
    assert "model.safetensors" in reads and got != expected
    assert len(json.loads((tmp_path / "content-hashes.json").read_text())["hashes"]) == 2


def test_a_corrupt_memo_is_not_trusted_and_a_fresh_file_is_not_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from conflictscore_local.backends import checkpoints as ck

    monkeypatch.setattr(ck, "HASH_MEMO_MIN_BYTES", 8)
    path = _old_weights(tmp_path / "ckpt", b"weights-1")
    expected = hashlib.sha256(b"model.safetensors\0" + (9).to_bytes(8, "little") + b"weights-1").hexdigest()
    memo = tmp_path / "content-hashes.json"
    # the file was just written (its ctime is now): within HASH_MEMO_SETTLED_S nothing is remembered
    assert model_fingerprint(path)["weights_sha256"] == expected and not memo.exists()

    monkeypatch.setattr(ck, "HASH_MEMO_SETTLED_S", 0.0)
    ck._HASHED.clear()
    model_fingerprint(path)
    key = next(iter(json.loads(memo.read_text())["hashes"]))
    good = json.loads(memo.read_text())
    forged = {key: {**good["hashes"][key], "sha256": "0" * 64}}
    for bad in (
        "not json",
        json.dumps({"format": 1, "hashes": {key: "0" * 64}}),
        json.dumps({**good, "hashes": forged}),
        json.dumps({"format": 2, "hashes": forged}),
        json.dumps({"format": 2, "hashes": [key]}),
    ):
        memo.write_text(bad)
        ck._HASHED.clear()
        assert model_fingerprint(path)["weights_sha256"] == expected, bad
        assert {k: e["sha256"] for k, e in json.loads(memo.read_text())["hashes"].items()} == {key: expected}


def test_small_file_sets_skip_the_memo_and_an_unwritable_folder_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conflictscore_local.backends import checkpoints as ck

    monkeypatch.setattr(ck, "HASH_MEMO_SETTLED_S", 0.0)
    path = _old_weights(tmp_path / "ckpt", b"weights-1")  # 9 bytes < 1 MiB
    model_fingerprint(path)
    assert not (tmp_path / "content-hashes.json").exists()
    monkeypatch.setattr(ck, "HASH_MEMO_MIN_BYTES", 8)
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("CONFLICTSCORE_CACHE", str(blocker / "judgments.sqlite"))  # its folder is a file
    ck._HASHED.clear()
    assert len(model_fingerprint(path)["weights_sha256"]) == 64
