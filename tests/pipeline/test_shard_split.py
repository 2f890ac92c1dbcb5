"""``--shard I/N``: a deterministic split by a hash of the item id."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections import Counter

import pytest

from conflictscore_local.cli import main
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.pipeline import Shard, shard_of

# sha256 of the UTF-8 id, first 8 bytes big-endian, modulo N, plus one. Worked out once and
# kept literal: the split must never change (shards of one run may run on several versions).
KNOWN = {  # (id, N): (first 16 hex digits of the sha256, shard)
    ("curie", 4): ("b2adb213f8226417", 4),
    ("q1", 3): ("c75de8c1b7c3ae52", 2),
    ("Kraków", 7): ("e9a2167b94f5de9e", 4),
}


def test_known_ids_land_in_fixed_shards() -> None:
    for (item_id, n), (digest, want) in KNOWN.items():
        assert hashlib.sha256(item_id.encode()).hexdigest()[:16] == digest
        assert int(digest, 16) % n + 1 == want
        assert shard_of(item_id, n) == want
        assert Shard(want, n).holds(item_id)
        assert not Shard(want % n + 1, n).holds(item_id)
    assert shard_of("anything", 1) == 1


def test_same_split_in_another_process_with_another_hash_seed() -> None:
    ids = [f"item-{i}" for i in range(50)] + ["Kraków", "曲"]
    here = [shard_of(i, 5) for i in ids]
    code = (
        "import sys; from conflictscore_local.pipeline import shard_of; "
        f"print(','.join(str(shard_of(i, 5)) for i in {ids!r}))"
    )
    for seed in ("1", "12345"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        assert out == ",".join(map(str, here))


def test_every_id_in_exactly_one_shard_and_the_split_is_balanced() -> None:
    ids = [f"q{i}" for i in range(4000)]
    shards = [Shard(i, 4) for i in range(1, 5)]
    parts = [s.select(ids, key=str) for s in shards]
    assert sorted(x for p in parts for x in p) == sorted(ids)
    counts = Counter(shard_of(i, 4) for i in ids)
    assert set(counts) == {1, 2, 3, 4}
    assert all(900 <= c <= 1100 for c in counts.values()), counts  # 1000 ± 3 sd of a binomial
    # the order within a shard is the input order
    assert parts[0] == [i for i in ids if shard_of(i, 4) == 1]


@pytest.mark.parametrize("text,want", [("2/4", Shard(2, 4)), (" 1 / 1 ", Shard(1, 1)), ("8/8", Shard(8, 8))])
def test_parse(text: str, want: Shard) -> None:
    assert Shard.parse(text) == want
    assert str(want) == f"{want.index}/{want.count}"


@pytest.mark.parametrize(
    "text,msg",
    [
        ("0/4", "need 1 <= I <= N (shards are numbered 1..N)"),
        ("5/4", "need 1 <= I <= N"),
        ("2", "expects I/N (e.g. 2/8: the second of eight shards), got '2'"),
        ("a/b", "expects I/N"),
        ("-1/4", "expects I/N"),
    ],
)
def test_parse_refuses(text: str, msg: str) -> None:
    with pytest.raises(ConfigError, match=msg.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        Shard.parse(text)


def test_cli_bad_shard_exit_2(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["score", "x.jsonl", "-o", str(tmp_path / "o.jsonl"), "--shard", "5/4"])
    assert e.value.code == 2
    assert "argument --shard: 5/4: need 1 <= I <= N" in capsys.readouterr().err


def test_cli_shard_without_summary_exit_2(tmp_path, capsys) -> None:
    src = tmp_path / "items.jsonl"
    src.write_text('{"id": "a", "claims": ["x"], "documents": [], "labels": [[]]}\n')
    code = main(["score", str(src), "-o", str(tmp_path / "o.jsonl"), "--shard", "1/2", "-q"])
    assert code == 2
    assert "--shard 1/2 needs --summary: `conflictscore merge` reads each shard's summary" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()
