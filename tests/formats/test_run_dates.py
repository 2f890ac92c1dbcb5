"""A run's start and end are in its summary (``started`` / ``finished``, UTC), declared fields of the typed
summary: a merge of shards takes the earliest start and the latest end; a summary without them still reads."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from conflictscore_local.cli import main
from conflictscore_local.core.errors import InputError
from conflictscore_local.core.types import Summary
from conflictscore_local.formats.summary import check_summary

ITEMS = [
    {"id": f"i{n}", "response": "c.", "claims": ["c"], "documents": ["d"], "labels": [["SUPPORT"]]} for n in range(6)
]


def test_score_records_when_it_ran_and_merge_spans_its_shards(tmp_path: Path) -> None:
    items = tmp_path / "in.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in ITEMS), encoding="utf-8")
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    assert (
        main(["score", str(items), "-o", str(tmp_path / "all.jsonl"), "--summary", str(tmp_path / "all.json"), "-q"])
        == 0
    )
    after = datetime.datetime.now(datetime.timezone.utc)
    s = json.loads((tmp_path / "all.json").read_text())
    started, finished = (datetime.datetime.fromisoformat(s[k]) for k in ("started", "finished"))
    assert before <= started <= finished <= after and s["started"].endswith("+00:00")
    assert Summary.reductions()["started"] == "min" and Summary.reductions()["finished"] == "max"

    for i in (1, 2):
        assert (
            main(
                [
                    "score",
                    str(items),
                    "--shard",
                    f"{i}/2",
                    "-o",
                    str(tmp_path / f"p{i}.jsonl"),
                    "--summary",
                    str(tmp_path / f"s{i}.json"),
                    "-q",
                ]
            )
            == 0
        )
    # the shards ran at other times (on other machines): the merged run spans them
    for i, (a, b) in (
        (1, ("2026-03-01T10:00:00+00:00", "2026-03-01T10:05:00+00:00")),
        (2, ("2026-03-01T09:58:00+00:00", "2026-03-01T10:01:00+00:00")),
    ):
        shard = json.loads((tmp_path / f"s{i}.json").read_text())
        shard["started"], shard["finished"] = a, b
        (tmp_path / f"s{i}.json").write_text(json.dumps(shard))
    assert (
        main(
            [
                "merge",
                str(items),
                "--outputs",
                str(tmp_path / "p1.jsonl"),
                str(tmp_path / "p2.jsonl"),
                "--summaries",
                str(tmp_path / "s1.json"),
                str(tmp_path / "s2.json"),
                "-o",
                str(tmp_path / "m.jsonl"),
                "--summary",
                str(tmp_path / "m.json"),
                "-q",
            ]
        )
        == 0
    )
    merged = json.loads((tmp_path / "m.json").read_text())
    assert (merged["started"], merged["finished"]) == ("2026-03-01T09:58:00+00:00", "2026-03-01T10:05:00+00:00")

    older = {k: v for k, v in s.items() if k not in ("started", "finished")}  # an earlier release's summary
    assert "started" not in check_summary(older, "old.json")
    with pytest.raises(InputError, match="old.json: field 'started': expected a date and time"):
        check_summary({**older, "started": 7}, "old.json")
