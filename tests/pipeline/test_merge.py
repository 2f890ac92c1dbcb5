"""``conflictscore merge``: shards of a ``score`` run give one run's output and summary, and
every mismatch is refused by name."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Sequence

import pytest

from conflictscore_local.cli import main
from conflictscore_local.core.errors import ConfigError, InputError
from conflictscore_local.core.types import CONTRADICT, IRRELEVANT, SUPPORT, Judgment, Pair
from conflictscore_local.judge._base import JudgeBase
from conflictscore_local.pipeline import Shard, merge_shards, shard_of
from conflictscore_local.pipeline.config import RunConfig
from conflictscore_local.pipeline.scoring import score_file

from ..support.rows import row_differences

N_ITEMS = 40


class WordJudge(JudgeBase):
    """SUPPORT when the passage holds 'yes', CONTRADICT for 'no', unscored for '???'; probabilities
    from the passage's length, so thresholds and ranks have something to act on."""

    name = "shard-words"
    role = "judge"

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        out = []
        for p in pairs:
            words = p.passage.text.split()
            p_side = round(0.5 + (len(p.passage.text) % 40) / 100, 6)
            probs = {SUPPORT: 0.0, CONTRADICT: 0.0, IRRELEVANT: 0.0}
            if "???" in words:
                out.append(Judgment(p, None, None, "judge", "unreadable"))
                continue
            label = SUPPORT if "yes" in words else CONTRADICT if "no" in words else IRRELEVANT
            probs[label] = p_side
            for other in probs:
                if other != label:
                    probs[other] = round((1 - p_side) / 2, 6)
            out.append(Judgment(p, label, probs))
            self.count("judged")
        return out

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "version": 1}

    def passage_budget(self) -> None:
        return None


def make_items(path: Path, n: int = N_ITEMS, seed: int = 7) -> Path:
    """Items whose claims meet documents saying yes / no / nothing / '???', some repeated."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        n_claims = rng.randint(0, 3)
        claims = [f"claim {rng.randint(0, 9)} of item {i % 5}" for _ in range(n_claims)]
        docs = [
            {
                "id": f"d{j}",
                "text": rng.choice(
                    ["yes it is", "no it is not", "cats purr", "???", "", "yes indeed, it surely is so"]
                ),
            }
            for j in range(rng.randint(0, 4))
        ]
        lines.append(json.dumps({"id": f"item-{i:03d}", "claims": claims, "documents": docs}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def judge(register_backend) -> None:
    register_backend("judge", "shard-words", WordJudge)


def config(**sets: Any) -> RunConfig:
    data: dict[str, Any] = {"judge": {"name": "shard-words"}, "pruner": {"name": "none"}, "cache": {"enabled": False}}
    for k, v in sets.items():
        section, key = k.split("__")
        data.setdefault(section, {})[key] = v
    return RunConfig.from_mapping(data)


def run_shards(items: Path, out: Path, n: int, cfg: RunConfig | None = None) -> tuple[list[Path], list[Path]]:
    outputs, summaries = [], []
    for i in range(1, n + 1):
        o, s = out / f"out.{i}.jsonl", out / f"out.{i}.json"
        score_file(items, o, config=cfg or config(), summary_path=s, shard=Shard(i, n))
        outputs.append(o)
        summaries.append(s)
    return outputs, summaries


SAME = ("n_items", "n_claims", "macro", "micro", "ci95", "pairs", "config")


def test_merged_shards_equal_one_run(judge, tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl")
    one = score_file(items, tmp_path / "one.jsonl", config=config(), summary_path=tmp_path / "one.json").to_json()
    assert one["ci95"]["cs_c"] is not None and one["pairs"]["unscored"] > 0 and one["macro"]["cs_c"] > 0
    outputs, summaries = run_shards(items, tmp_path, 3)
    # each shard scored its own items, in input order, and recorded it
    for i, (o, s) in enumerate(zip(outputs, summaries), 1):
        ids = [json.loads(line)["id"] for line in o.read_text().splitlines()]
        assert ids == sorted(ids) and all(shard_of(x, 3) == i for x in ids)
        rec = json.loads(s.read_text())["stages"]["shard"]
        assert rec["index"] == i and rec["count"] == 3 and rec["input_items"] == N_ITEMS and rec["items"] == len(ids)
    merged = merge_shards(
        items, outputs[::-1], summaries[::-1], tmp_path / "merged.jsonl", summary_path=tmp_path / "merged.json"
    )
    assert (tmp_path / "merged.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    written = json.loads((tmp_path / "merged.json").read_text())
    for key in SAME:
        assert written[key] == one[key], key
    assert written["stages"]["labels"] == one["stages"]["labels"]
    # pair counters summed over the shards; judge calls (checkpoints) are per process
    calls = ("checkpoints",)
    assert {k: v for k, v in written["stages"]["engine"].items() if k not in calls} == {
        k: v for k, v in one["stages"]["engine"].items() if k not in calls
    }
    assert written["stages"]["engine"]["checkpoints"] == sum(
        json.loads(s.read_text())["stages"]["engine"].get("checkpoints", 0) for s in summaries
    )
    assert written["stages"]["input"] == one["stages"]["input"]  # the whole file, read by every shard
    assert written["stages"]["judge"] == one["stages"]["judge"]
    assert written["stages"]["shard"] == {
        "count": 3,
        "merged": True,
        "input_sha256": written["stages"]["shard"]["input_sha256"],
        "input_items": N_ITEMS,
        "items": N_ITEMS,
        "shard_items": [json.loads(s.read_text())["stages"]["shard"]["items"] for s in summaries],
    }
    assert merged.kind == "score" and [r.item_id for r in merged.results] == [f"item-{i:03d}" for i in range(N_ITEMS)]


def test_merge_cli_and_bootstrap_seed(judge, tmp_path: Path, capsys) -> None:
    items = make_items(tmp_path / "items.jsonl", seed=3)
    base = [
        "--judge",
        "shard-words",
        "--pruner",
        "none",
        "--no-cache",
        "--set",
        "engine.seed=11",
        "-q",
        "--set",
        "engine.max_unscored_share=1",
    ]  # the items hold unreadable documents on purpose
    assert (
        main(["score", str(items), "-o", str(tmp_path / "one.jsonl"), "--summary", str(tmp_path / "one.json"), *base])
        == 0
    )
    for i in (1, 2):
        assert (
            main(
                [
                    "score",
                    str(items),
                    "-o",
                    str(tmp_path / f"s{i}.jsonl"),
                    "--summary",
                    str(tmp_path / f"s{i}.json"),
                    "--shard",
                    f"{i}/2",
                    *base,
                ]
            )
            == 0
        )
    capsys.readouterr()
    assert (
        main(
            [
                "merge",
                str(items),
                "--outputs",
                str(tmp_path / "s2.jsonl"),
                str(tmp_path / "s1.jsonl"),
                "--summaries",
                str(tmp_path / "s1.json"),
                str(tmp_path / "s2.json"),
                "-o",
                str(tmp_path / "m.jsonl"),
                "--summary",
                str(tmp_path / "m.json"),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    one, m = (json.loads((tmp_path / f).read_text()) for f in ("one.json", "m.json"))
    assert m["ci95"] == one["ci95"] and m["macro"] == one["macro"]
    assert f"items {N_ITEMS}" in text and "cs_c" in text
    # another seed gives other intervals: the merge used the shards' seed, not a default
    other = score_file(items, tmp_path / "x.jsonl", config=config(engine__seed=12), summary_path=tmp_path / "x.json")
    assert other.to_json()["ci95"] != m["ci95"]


def test_merge_o_dash_streams_the_rows_of_one_run_to_stdout(judge, tmp_path: Path, capsys) -> None:
    items = make_items(tmp_path / "items.jsonl", seed=5)
    score_file(items, tmp_path / "one.jsonl", config=config(), summary_path=tmp_path / "one.json")
    outputs, summaries = run_shards(items, tmp_path, 2)
    argv = ["merge", str(items), "--outputs", *map(str, outputs), "--summaries", *map(str, summaries), "-o", "-"]
    capsys.readouterr()
    assert main([*argv, "--summary", str(tmp_path / "m.json")]) == 0
    assert capsys.readouterr().out == (tmp_path / "one.jsonl").read_text()  # the rows only: nothing else on stdout
    one, m = (json.loads((tmp_path / f).read_text()) for f in ("one.json", "m.json"))
    assert m["macro"] == one["macro"] and m["ci95"] == one["ci95"]
    assert not (tmp_path / "-").exists()
    assert main([*argv, "--json"]) == 2
    assert capsys.readouterr().err.endswith(
        "conflictscore merge: error: -o - and --json both print on stdout; write "
        "the rows to a file (-o OUT.jsonl) or the summary to --summary "
        "SUMMARY.json\n"
    )
    assert main([*argv, "--report", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err.endswith(
        "conflictscore merge: error: --report reads the merged OUTPUT, which -o - sends to stdout; write -o OUT.jsonl\n"
    )
    assert not (tmp_path / "r.html").exists()


def test_refusals_name_what_is_wrong(judge, tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl")
    outputs, summaries = run_shards(items, tmp_path, 3)
    merged = tmp_path / "m.jsonl"

    def refused(outs: list[Path], sums: list[Path], err: type = ConfigError, src: Path = items) -> str:
        with pytest.raises(err) as e:
            merge_shards(src, outs, sums, merged)
        assert not merged.exists()
        return str(e.value)

    assert "shard(s) 3/3 missing: 2 of 3 summaries given" in refused(outputs[:2], summaries[:2])
    msg = refused(outputs, [summaries[0], summaries[1], summaries[1]])
    assert f"shard 2/3 given twice: {summaries[1]} and {summaries[1]}" in msg
    assert "2 outputs for 3 summaries" in refused(outputs[:2], summaries)
    # another input file
    other = tmp_path / "other.jsonl"
    other.write_text(items.read_text() + '{"id": "extra", "claims": [], "documents": []}\n')
    assert f"was run on another input than {other}" in refused(outputs, summaries, src=other)
    # another configuration for one shard
    alt = tmp_path / "alt"
    alt.mkdir()
    score_file(
        items, alt / "o.jsonl", config=config(aggregate__threshold=0.7), summary_path=alt / "s.json", shard=Shard(2, 3)
    )
    msg = refused([outputs[0], alt / "o.jsonl", outputs[2]], [summaries[0], alt / "s.json", summaries[2]])
    assert f"shard 2/3 ({alt / 's.json'}) was run with another configuration than shard 1/3" in msg
    assert "run.aggregate.threshold: 0.0 vs 0.7" in msg
    # another split
    score_file(items, alt / "o2.jsonl", config=config(), summary_path=alt / "s2.json", shard=Shard(2, 2))
    msg = refused(outputs, [summaries[0], alt / "s2.json", summaries[2]])
    assert "the summaries come from different splits" in msg and f"{alt / 's2.json'} is shard 2/2" in msg
    # an unsharded summary
    score_file(items, alt / "one.jsonl", config=config(), summary_path=alt / "one.json")
    msg = refused(outputs, [summaries[0], summaries[1], alt / "one.json"], InputError)
    assert "not the summary of a sharded run (no stages.shard)" in msg
    # an output holding several shards' items
    msg = refused([alt / "one.jsonl", outputs[1], outputs[2]], summaries, InputError)
    assert "holds items of several shards: 1/3 (" in msg and "not the output of one --shard run of 3" in msg
    # an output missing rows
    short = tmp_path / "short.jsonl"
    lines = outputs[1].read_text().splitlines(keepends=True)
    short.write_text("".join(lines[:-1]))
    msg = refused([outputs[0], short, outputs[2]], summaries, InputError)
    assert f"has {len(lines) - 1} rows but shard 2/3 ({summaries[1]}) says it scored {len(lines)} items" in msg
    # the same output twice
    msg = refused([outputs[0], outputs[0], outputs[2]], summaries)
    assert f"{outputs[0]} and {outputs[0]} both hold the items of shard 1/3" in msg
    # a merged summary is not a shard's
    merge_shards(items, outputs, summaries, tmp_path / "ok.jsonl", summary_path=tmp_path / "ok.json")
    msg = refused(outputs, [summaries[0], summaries[1], tmp_path / "ok.json"], InputError)
    assert "already the merge of 3 shards" in msg


def test_missing_items_of_an_interrupted_shard(judge, tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl")
    outputs, summaries = run_shards(items, tmp_path, 2)
    # shard 2 written, then an item added to the input is scored by nobody: the input changed
    data = json.loads(summaries[1].read_text())
    rows = outputs[1].read_text().splitlines(keepends=True)
    outputs[1].write_text("".join(rows[1:]))
    data["stages"]["shard"]["items"] -= 1
    summaries[1].write_text(json.dumps(data))
    first = json.loads(rows[0])["id"]
    with pytest.raises(InputError) as e:
        merge_shards(items, outputs, summaries, tmp_path / "m.jsonl")
    assert f"1 item(s) of the input are in no shard output: {first!r} (of shard(s) 2/2)" in str(e.value)


def test_merge_cli_refusal_exit_2(judge, tmp_path: Path, capsys) -> None:
    items = make_items(tmp_path / "items.jsonl")
    outputs, summaries = run_shards(items, tmp_path, 2)
    code = main(
        [
            "merge",
            str(items),
            "--outputs",
            str(outputs[0]),
            "--summaries",
            str(summaries[0]),
            "-o",
            str(tmp_path / "m.jsonl"),
        ]
    )
    assert code == 2
    assert "conflictscore merge: error: merge: shard(s) 2/2 missing: 1 of 2 summaries given" in capsys.readouterr().err


def test_sharded_nli_judge_rows_equal_one_run(tmp_path: Path, tiny_nli_dir: Path) -> None:
    """The real nli judge (tiny checkpoint): shards batch other pairs together; labels, verdicts
    and metrics are the same, probabilities up to the float noise of another batching."""
    items = make_items(tmp_path / "items.jsonl", n=24, seed=5)
    cfg = RunConfig.from_mapping(
        {"judge": {"name": "nli", "model": str(tiny_nli_dir)}, "pruner": {"name": "none"}, "cache": {"enabled": False}}
    )
    score_file(items, tmp_path / "one.jsonl", config=cfg, summary_path=tmp_path / "one.json")
    outputs, summaries = run_shards(items, tmp_path, 2, cfg)
    merge_shards(items, outputs, summaries, tmp_path / "m.jsonl", summary_path=tmp_path / "m.json")
    rows = [[json.loads(x) for x in (tmp_path / f).read_text().splitlines()] for f in ("one.jsonl", "m.jsonl")]
    assert row_differences(rows[0], rows[1], prob_tol=1e-5) == []
    one, m = (json.loads((tmp_path / f).read_text()) for f in ("one.json", "m.json"))
    for key in SAME:
        assert m[key] == one[key], key


def test_identity_holds_the_model_fingerprints_of_wrapped_judges() -> None:
    """Two shards naming the same model path on two machines, with other weights there, differ."""
    from conflictscore_local.pipeline.merge import ShardRun, differences, run_identity

    def shard_run(sha: str) -> ShardRun:
        judge = {
            "name": "ray",
            "args": {"workers": 2},
            "judge": {
                "name": "nli",
                "args": {"model": "/models/judge"},
                "resolved": {"model_fingerprint": {"sha256": sha}},
            },
        }
        data = {
            "config": {
                "run": {"judge": {"name": "ray"}, "cache": {"path": f"/cache/{sha}"}},
                "backends": {"judge": judge},
            }
        }
        return ShardRun("s.json", data, "score", Shard(1, 2), {})

    assert differences(run_identity(shard_run("aa")), run_identity(shard_run("aa"))) == []
    assert differences(run_identity(shard_run("aa")), run_identity(shard_run("bb"))) == [
        'models.judge: [{"sha256": "aa"}] vs [{"sha256": "bb"}]'
    ]
