"""Issue 47 (review reliability-4: M-memo-forged, RT-memo-fifo, RT-memo-fifo2): the weights' content-hash memo
(``content-hashes.json``) can cost a re-hash, never a wrong answer, lives beside ``--cache`` as the docs say,
and a FIFO in its place is named, never waited on. Met through ``score`` in real subprocesses over a real
(tiny) checkpoint whose weights are changed in place, as the review changed them."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import conflictscore_local
from conflictscore_local.backends import checkpoints as ck

PACKAGE_ROOT = Path(conflictscore_local.__file__).resolve().parents[1]
ITEMS = [
    {
        "id": f"i{i}",
        "response": "x",
        "claims": [f"The bridge opened in {1900 + i}."],
        "documents": [f"The bridge opened in {1900 + i}.", "Bananas grow in tropical climates."],
    }
    for i in range(3)
]


def score(
    folder: Path, model: Path, name: str, *flags: str, timeout: float = 600
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    env = {
        **os.environ,
        "PYTHONPATH": str(PACKAGE_ROOT),
        "CONFLICTSCORE_NLI_RUNTIME": "torch",
        "CONFLICTSCORE_CACHE": str(folder / "default" / "j.sqlite"),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "conflictscore_local.cli",
            "score",
            "in.jsonl",
            "-q",
            "--judge",
            "nli",
            "--judge-arg",
            f"model={model}",
            "--pruner",
            "none",
            "-o",
            f"{name}.jsonl",
            "--summary",
            f"{name}.json",
            *flags,
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    summary = json.loads((folder / f"{name}.json").read_text()) if (folder / f"{name}.json").exists() else {}
    return done, summary


def weights_sha256(summary: dict[str, Any]) -> str:
    return summary["config"]["backends"]["judge"]["resolved"]["model_fingerprint"]["weights_sha256"]


def labels(folder: Path, name: str) -> list[str]:
    return [
        j["label"]
        for line in (folder / f"{name}.jsonl").read_text().splitlines()
        for c in json.loads(line)["claims"]
        for j in c["judgments"]
    ]


def settled(path: Path) -> None:
    """Wait until the files' change times are older than the memo's settling time (they are remembered then)."""
    newest = max(p.stat().st_ctime for p in path.iterdir())
    time.sleep(max(0.0, newest + ck.HASH_MEMO_SETTLED_S + 0.2 - time.time()))


def set_bias(model: Path, bias: tuple[float, float, float]) -> None:
    """Rewrite the classifier's bias in the weights file in place, its modification time put back (as the
    review's setbias.py and ``touch -r`` did)."""
    from safetensors.torch import load_file, save_file

    f = model / "model.safetensors"
    st = f.stat()
    tensors = load_file(str(f))
    name = next(k for k in tensors if k.endswith("classifier.bias"))
    tensors[name] = tensors[name].new_tensor(bias)
    save_file(tensors, str(f), metadata={"format": "pt"})
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.slow
def test_a_forged_memo_entry_costs_a_rehash_never_the_old_weights_labels(tmp_path: Path, tiny_nli_dir: Path) -> None:
    """Before: the memo's entry for the changed weights, set by ``sed`` to the old weights' hash, made the summary
    report the old hash and every judgment come from the cache with the old model's labels."""
    model = tmp_path / "model"
    shutil.copytree(tiny_nli_dir, model)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ITEMS))
    set_bias(model, (20.0, -20.0, -20.0))  # entailment everywhere: SUPPORT
    settled(model)
    done, a = score(tmp_path, model, "a", "--cache", "c/j.sqlite")
    assert done.returncode == 0, done.stderr
    memo = tmp_path / "c" / "content-hashes.json"  # beside --cache, not beside the default cache
    assert memo.is_file() and not (tmp_path / "default" / "content-hashes.json").exists()
    old = weights_sha256(a)
    assert (
        old
        == hashlib.sha256(
            b"model.safetensors\0"
            + (model / "model.safetensors").stat().st_size.to_bytes(8, "little")
            + (model / "model.safetensors").read_bytes()
        ).hexdigest()
    )
    assert set(labels(tmp_path, "a")) == {"SUPPORT"}

    set_bias(model, (-20.0, -20.0, 20.0))  # contradiction everywhere, same size, same mtime
    settled(model)
    done, b = score(tmp_path, model, "b", "--cache", "c/j.sqlite")
    assert done.returncode == 0, done.stderr
    new = weights_sha256(b)
    assert new != old and set(labels(tmp_path, "b")) == {"CONTRADICT"}
    assert new in memo.read_text()

    memo.write_text(memo.read_text().replace(new, old))  # the review's sed
    done, c = score(tmp_path, model, "c", "--cache", "c/j.sqlite")
    assert done.returncode == 0, done.stderr
    assert weights_sha256(c) == new and set(labels(tmp_path, "c")) == {"CONTRADICT"}
    assert old not in memo.read_text()  # written again, whole


def test_an_entry_forged_with_the_memos_own_digest_is_caught_by_the_sampled_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone who rewrites an entry and the memo's digest with it must also forge the block digests the
    entry kept: the first and last block of every file and one at random are read again every run."""
    monkeypatch.setattr(ck, "HASH_MEMO_MIN_BYTES", 8)
    monkeypatch.setattr(ck, "HASH_MEMO_BLOCK", 4)
    monkeypatch.setattr(ck, "HASH_MEMO_SETTLED_S", 0.0)
    monkeypatch.setattr(ck, "_MEMO_FOLDER", [tmp_path / "c"])
    path = tmp_path / "ckpt"
    path.mkdir()
    data = bytes(range(40))
    (path / "model.safetensors").write_bytes(data)
    expected = hashlib.sha256(b"model.safetensors\0" + (40).to_bytes(8, "little") + data).hexdigest()
    assert ck.model_fingerprint(path)["weights_sha256"] == expected
    memo = tmp_path / "c" / "content-hashes.json"
    good = json.loads(memo.read_text())
    ((key, entry),) = good["hashes"].items()
    assert entry["block"] == 4 and len(entry["blocks"]) == 10
    counted: list[int] = []
    real = ck._block_digest
    monkeypatch.setattr(ck, "_block_digest", lambda b: counted.append(len(b)) or real(b))
    ck._HASHED.clear()
    assert ck.model_fingerprint(path)["weights_sha256"] == expected
    assert 2 <= len(counted) <= 3  # first, last and one at random: not the 10 blocks of a full hash

    for forged in (
        {**entry, "sha256": "0" * 64},  # the hash alone: the sampled blocks still match the file
        {**entry, "sha256": "0" * 64, "blocks": ["f" * 16] + entry["blocks"][1:]},
        {**entry, "sha256": "0" * 64, "blocks": entry["blocks"][:-1] + ["f" * 16]},
    ):
        hashes = {key: forged}
        memo.write_text(
            json.dumps({"format": ck.HASH_MEMO_FORMAT, "digest": ck._memo_digest(hashes), "hashes": hashes})
        )
        ck._HASHED.clear()
        got = ck.model_fingerprint(path)["weights_sha256"]
        if forged["blocks"] == entry["blocks"]:
            assert got == "0" * 64  # the limit, documented: a memo forged with its digest and the file's blocks
        else:
            assert got == expected  # a block that does not match: hashed again, the entry replaced
            assert json.loads(memo.read_text())["hashes"][key]["sha256"] == expected


@pytest.mark.slow
def test_a_fifo_in_place_of_the_memo_is_named_and_the_run_goes_on(tmp_path: Path, tiny_nli_dir: Path) -> None:
    """Before: ``score`` waited forever on a FIFO named content-hashes.json beside $CONFLICTSCORE_CACHE
    (killed by timeout), and one beside --cache was never looked at."""
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ITEMS))
    (tmp_path / "c").mkdir()
    os.mkfifo(tmp_path / "c" / "content-hashes.json")
    started = time.monotonic()
    done, s = score(tmp_path, tiny_nli_dir, "o", "--cache", "c/j.sqlite", timeout=300)
    assert time.monotonic() - started < 280
    assert done.returncode == 0, done.stderr
    assert re.search(
        r"warning: the weights' hash memo c/content-hashes\.json is not a regular file \(a FIFO, a "
        r"device or a socket\); it is not read nor written, so the weights are hashed every run",
        done.stderr,
    ), done.stderr
    assert (tmp_path / "c" / "content-hashes.json").is_fifo()  # left alone
    assert len(weights_sha256(s)) == 64
