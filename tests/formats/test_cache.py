"""The SQLite judgment cache: hits and misses, what the key depends on, two processes writing."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.core.errors import ConfigError
from conflictscore_local.core.types import Claim, Judgment, Pair, Passage
from conflictscore_local.formats.cache import _SCHEMA, JudgmentCache, check_cache_file, valid_spans

SPEC = {"backend": "nli", "model": {"weights_sha256": "ab" * 32}, "prompt_version": None, "thresholds": None}


def pair(claim: str, passage: str, item: str = "i1", doc: str = "d1") -> Pair:
    return Pair(Claim(item, 0, claim), Passage(item, doc, 0, passage))


def judged(p: Pair, label: str | None = "SUPPORT", probs: dict | None = None) -> Judgment:
    return Judgment(p, label, probs, "judge", None if label else "timeout")  # type: ignore[arg-type]


def test_hit_and_miss(tmp_path: Path) -> None:
    a, b, c = pair("c1", "p1"), pair("c2", "p1"), pair("c1", "p2")
    probs = {"SUPPORT": 0.7, "CONTRADICT": 0.1, "IRRELEVANT": 0.2}
    with JudgmentCache(tmp_path / "j.sqlite", SPEC) as cache:
        assert cache.get_many([a, b]) == [None, None]
        assert cache.put_many([judged(a, "CONTRADICT", probs), judged(b, None)]) == 1  # unscored is not cached
        hit, miss, other = cache.get_many([a, b, c])
        assert miss is None and other is None
        assert hit == Judgment(a, "CONTRADICT", probs, "cache")
        assert len(cache) == 1


def test_key_is_judge_spec_claim_text_and_passage_text(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    a = pair("The bridge opened in 1932.", "Some passage.")
    with JudgmentCache(path, SPEC) as cache:
        cache.put_many([judged(a, "SUPPORT")])
    with JudgmentCache(path, json.loads(json.dumps(SPEC))) as again:
        # a rerun or another sweep: same texts under other item and document ids hit
        (hit,) = again.get_many([pair(a.claim.text, a.passage.text, item="other", doc="d9")])
        assert hit is not None and hit.label == "SUPPORT" and hit.pair.claim.item_id == "other"
        assert again.get_many([pair(a.claim.text + " ", a.passage.text)]) == [None]
    for changed in (
        {**SPEC, "prompt_version": "judge-v2"},
        {**SPEC, "thresholds": {"SUPPORT": 0.5, "CONTRADICT": 0.5}},
        {**SPEC, "model": {"weights_sha256": "cd" * 32}},
    ):
        with JudgmentCache(path, changed) as other:
            assert other.get_many([a]) == [None]
            assert len(other) == 0
    with sqlite3.connect(path) as db:
        specs = [json.loads(s) for (s,) in db.execute("SELECT spec FROM specs")]
    assert SPEC in specs and len(specs) == 4


def _writer(path: str, worker: int, start: Any, n: int) -> None:
    start.wait()
    with JudgmentCache(path, SPEC, timeout_s=30) as cache:
        for k in range(0, n, 10):
            batch = [pair(f"claim {i}", "shared" if i % 2 else f"passage {worker}") for i in range(k, k + 10)]
            cache.put_many([judged(p, "CONTRADICT" if worker else "SUPPORT") for p in batch])
            cache.get_many(batch)


def test_two_processes_writing_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_writer, args=(path, w, start, 300)) for w in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    with JudgmentCache(path, SPEC) as cache:
        # odd claims share the passage (both wrote them: one row each), even claims have one row per worker
        assert len(cache) == 150 + 2 * 150
        got = cache.get_many([pair("claim 2", "passage 0"), pair("claim 2", "passage 1"), pair("claim 3", "shared")])
        assert [g.label for g in got[:2]] == ["SUPPORT", "CONTRADICT"] and got[2].label in ("SUPPORT", "CONTRADICT")
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_incompatible_files_are_refused(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as db:
        db.execute("CREATE TABLE judgments (key TEXT PRIMARY KEY, label TEXT, probs TEXT, spec TEXT)")
    with pytest.raises(ConfigError, match="schema version 0, this version uses 2; delete the file"):
        JudgmentCache(old, SPEC)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConfigError, match="junk.sqlite: file is not a database"):
        JudgmentCache(junk, SPEC)


def test_pruner_selections_round_trip_under_their_own_spec(tmp_path: Path) -> None:
    prune_spec = {"backend": "embedding", "model": {"weights_sha256": "ef" * 32}, "threshold": 0.14}
    group = [pair("c1", "p1", doc="a"), pair("c1", "p2", doc="a"), pair("c1", "p3", doc="b")]
    kept = [Pair(group[0].claim, group[0].passage, 0.5), Pair(group[1].claim, group[1].passage, 0.25)]
    pruned = [Judgment(Pair(group[2].claim, group[2].passage, 0.0625), "IRRELEVANT", None, "pruned", "cosine 0.062")]
    with JudgmentCache(tmp_path / "j.sqlite", SPEC) as cache:
        assert cache.get_selections(prune_spec, [group]) == [None]
        assert cache.put_selections(prune_spec, [group], kept, pruned) == 1
    with JudgmentCache(tmp_path / "j.sqlite", {**SPEC, "model": "another judge"}) as cache:
        # the same texts under other ids, read by a run of another judge: the selection still applies
        moved = [
            pair("c1", "p1", item="i9", doc="x"),
            pair("c1", "p2", item="i9", doc="x"),
            pair("c1", "p3", item="i9", doc="y"),
        ]
        ((k, pr),) = cache.get_selections(prune_spec, [moved])  # type: ignore[misc]
        assert [(p.passage.doc_id, p.similarity) for p in k] == [("x", 0.5), ("x", 0.25)]
        assert pr == [
            Judgment(Pair(moved[2].claim, moved[2].passage, 0.0625), "IRRELEVANT", None, "pruned", "cosine 0.062")
        ]
        regrouped = [moved[0], pair("c1", "p2", item="i9", doc="y"), moved[2]]  # p2 now in the other document
        assert cache.get_selections(prune_spec, [regrouped]) == [None]
        assert cache.get_selections({**prune_spec, "threshold": 0.2}, [moved]) == [None]


def test_cache_file_mode_and_a_directory_for_a_path(tmp_path: Path) -> None:
    import os
    import stat

    old = os.umask(0o027)
    try:
        with JudgmentCache(tmp_path / "new" / "j.sqlite", SPEC) as cache:
            cache.put_many([judged(pair("c", "p"))])
        assert stat.S_IMODE((tmp_path / "new" / "j.sqlite").stat().st_mode) == 0o640
    finally:
        os.umask(old)
    with pytest.raises(ConfigError, match=r"judgment cache .*/new: Is a directory; choose another with --cache PATH"):
        JudgmentCache(tmp_path / "new", SPEC)


def test_which_cascade_judge_decided_is_kept_and_an_older_file_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    a, b = pair("c1", "p1"), pair("c2", "p1")
    with sqlite3.connect(path) as db:  # a file written before the column existed (schema 2 all the same)
        for stmt in _SCHEMA:
            db.execute(stmt.replace(",\n        decided_by TEXT,\n        rule TEXT", ""))
        db.execute("PRAGMA user_version=2")
    with sqlite3.connect(path) as db:
        assert "decided_by" not in {row[1] for row in db.execute("PRAGMA table_info(judgments)")}
    check_cache_file(path)  # read before a run: accepted as it is
    with JudgmentCache(path, SPEC) as cache:
        db_key = cache.key(b)
        cache.put_many([Judgment(a, "SUPPORT", None, "judge", decided_by="second", rule="reply text")])
        with sqlite3.connect(path) as db:  # a row an older version wrote, without the column
            db.execute(
                "INSERT INTO judgments (key, spec_hash, label, probs) VALUES (?, ?, 'IRRELEVANT', NULL)",
                (db_key, cache.spec_hash),
            )
        hit_a, hit_b = cache.get_many([a, b])
        with sqlite3.connect(path) as db:  # a decided_by this version never writes: a miss, counted
            db.execute("UPDATE judgments SET decided_by = x'01' WHERE key = ?", (db_key,))
        assert cache.get_many([b]) == [None] and cache.rejected == 1
    assert hit_a == Judgment(a, "SUPPORT", None, "cache", decided_by="second", rule="reply text")
    assert hit_b == Judgment(b, "IRRELEVANT", None, "cache")
    with sqlite3.connect(path) as db:
        assert [row[1] for row in db.execute("PRAGMA table_info(judgments)")][-2:] == ["decided_by", "rule"]
        db.execute("ALTER TABLE judgments ADD COLUMN other TEXT")  # a column no version of schema 2 has
    with pytest.raises(
        ConfigError, match="has the columns key, spec_hash, label, probs, created, decided_by, rule, other"
    ):
        check_cache_file(path)
    middle = tmp_path / "middle.sqlite"
    with sqlite3.connect(middle) as db:  # a file of the version that added decided_by but not rule: accepted
        for stmt in _SCHEMA:
            db.execute(stmt.replace(",\n        rule TEXT", ""))
        db.execute("PRAGMA user_version=2")
    check_cache_file(middle)
    with JudgmentCache(middle, SPEC) as cache:
        cache.put_many(
            [
                Judgment(
                    a,
                    "SUPPORT",
                    {"SUPPORT": 0.9, "CONTRADICT": 0.05, "IRRELEVANT": 0.05},
                    "judge",
                    rule="thresholds S>=0.45 C>=0.30",
                )
            ]
        )
        assert cache.get_many([a])[0].rule == "thresholds S>=0.45 C>=0.30"


def test_embedder_vectors_round_trip_by_spec_and_content_and_damaged_rows_are_misses(tmp_path: Path) -> None:
    import numpy as np

    spec = {"backend": "embedding", "vectors": 1, "kind": "passage", "model": {"weights_sha256": "ab" * 32}}
    one = np.array([[0.6, 0.8, 0.0]], dtype=np.float32)
    two = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)  # a passage of two windows
    with JudgmentCache(tmp_path / "j.sqlite", SPEC) as cache:
        assert cache.get_vectors(spec, ["short", "long"]) == {}
        assert cache.put_vectors(spec, {"short": one, "long": two, "empty": np.zeros((0, 3))}) == 2
    with JudgmentCache(tmp_path / "j.sqlite", {**SPEC, "model": "another judge"}) as cache:  # any judge reads them
        got = cache.get_vectors(spec, ["long", "short", "never stored", "short"])
        assert list(got) == ["long", "short"] and got["long"].dtype == np.float32
        np.testing.assert_array_equal(got["long"], two)
        np.testing.assert_array_equal(got["short"], one)
        assert cache.get_vectors({**spec, "kind": "claim"}, ["short"]) == {}  # another spec, another key
        cache.put_vectors(spec, {"wide": np.ones((1, 4), dtype=np.float32)})  # not the width of the others
        with sqlite3.connect(tmp_path / "j.sqlite") as db:
            db.execute("UPDATE vectors SET vector = ? WHERE rows = 2", (np.array([np.nan] * 6, "<f4").tobytes(),))
        got = cache.get_vectors(spec, ["short", "long", "wide"])
        assert list(got) == ["short"] and cache.rejected == 2
        # the embedder's width, when its spec says it, decides: a row of any other width is a miss
        sized = {**spec, "dim": 4}
        cache.put_vectors(sized, {"right": np.ones((1, 4), dtype=np.float32), "tiny": np.ones((1, 1))})
        got = cache.get_vectors(sized, ["tiny", "right"])
        assert list(got) == ["right"] and cache.rejected == 3


def test_an_older_schema_2_file_without_the_vectors_table_is_read_and_gains_it(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        for stmt in _SCHEMA:
            if "vectors" not in stmt and "spans" not in stmt:
                db.execute(stmt)
        db.execute("PRAGMA user_version=2")
    check_cache_file(path)
    with JudgmentCache(path, SPEC) as cache:
        assert cache.put_vectors({"kind": "claim"}, {"c": [[1.0, 0.0]]}) == 1
        assert cache.put_spans({"splitter": 1}, {"doc": [(0, 3)]}) == 1
    with sqlite3.connect(path) as db:
        assert [r[1] for r in db.execute("PRAGMA table_info(vectors)")] == [
            "key",
            "spec_hash",
            "rows",
            "vector",
            "created",
        ]
        assert [r[1] for r in db.execute("PRAGMA table_info(spans)")] == ["key", "spec_hash", "spans", "created"]


def test_passage_spans_round_trip_by_spec_and_content_and_invalid_rows_are_misses(tmp_path: Path) -> None:
    spec = {"splitter": 1, "max_tokens": 8, "overlap": 1, "judge": SPEC}
    text, other = "One two. Three four. Five.", "Short."
    with JudgmentCache(tmp_path / "j.sqlite", SPEC) as cache:
        assert cache.get_spans(spec, [text]) == {}
        assert cache.put_spans(spec, {text: [(0, 8), (9, 20), (21, 26)], other: [(0, 6)], "none": []}) == 2
        got = cache.get_spans(spec, [other, text, "never stored", other])
        assert got == {text: ((0, 8), (9, 20), (21, 26)), other: ((0, 6),)}
        assert cache.get_spans({**spec, "max_tokens": 9}, [text]) == {}  # another budget, another key
        with sqlite3.connect(tmp_path / "j.sqlite") as db:
            db.execute("UPDATE spans SET spans = ? WHERE spans = ?", ("[[0, 7]", "[[0, 6]]"))  # not JSON
        cache.put_spans(spec, {"beyond": [(0, 99)], "backwards": [(3, 5), (1, 2)], "floats": [[0.0, 1.0]]})
        got = cache.get_spans(spec, [text, other, "beyond", "backwards", "floats"])
        assert got == {text: ((0, 8), (9, 20), (21, 26))} and cache.rejected == 4


def test_valid_spans_accepts_only_ordered_integer_spans_that_cover_the_text() -> None:
    assert valid_spans("abcdef", [[0, 4], [2, 6]]) == ((0, 4), (2, 6))  # overlapping passages are fine
    for bad in (
        [],
        [[0, 7]],
        [[3, 3]],
        [[2, 4], [2, 5]],
        [[0, True]],
        [[0, 1, 2]],
        {"0": 1},
        "[[0, 1]]",
        [[0, 5]],
        [[0, 2], [3, 6]],
    ):  # the last two leave characters unjudged
        assert valid_spans("abcdef", bad) is None, bad
    assert valid_spans("ab cd", [[0, 2], [3, 5]]) == ((0, 2), (3, 5))  # a blank between passages is fine
