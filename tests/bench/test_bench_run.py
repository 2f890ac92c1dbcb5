"""``bench build`` / ``bench run`` end to end through the CLI and the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import pytest

from conflictscore_local.bench import build_bench, make_item
from conflictscore_local.cli import main
from conflictscore_local.core.types import CONTRADICT, IRRELEVANT, SUPPORT, Judgment, Pair
from conflictscore_local.formats.inputs import read_items
from conflictscore_local.jobs import write_jsonl_atomic
from conflictscore_local.judge._base import JudgeBase
from conflictscore_local.prune._base import PrunerBase
from conflictscore_local.util.paths import portable

S, C, IR = SUPPORT, CONTRADICT, IRRELEVANT


class RuleJudge(JudgeBase):
    """Labels by keyword: 'yes' → SUPPORT, 'no' → CONTRADICT, '???' → unscored, else IRRELEVANT."""

    name = "bench-rule"
    role = "judge"

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        out = []
        for p in pairs:
            words = p.passage.text.split()
            if "???" in words:
                out.append(Judgment(p, None, None, "judge", note="unreadable"))
            else:
                out.append(Judgment(p, S if "yes" in words else C if "no" in words else IR))
        self.count("judged", len(pairs))
        return out

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "version": 1}

    def passage_budget(self) -> None:
        return None


class KeywordPruner(PrunerBase):
    """Prunes passages containing 'zzz'."""

    name = "bench-zzz"
    role = "pruner"

    def select(self, pairs: Sequence[Pair]) -> tuple[list[Pair], list[Judgment]]:
        kept = [p for p in pairs if "zzz" not in p.passage.text]
        pruned = [Judgment(p, IR, None, "pruned") for p in pairs if "zzz" in p.passage.text]
        return kept, pruned


@pytest.fixture()
def rule_backends(register_backend: Any) -> None:
    register_backend("judge", "bench-rule", RuleJudge)
    register_backend("pruner", "bench-zzz", KeywordPruner)


def _item(i: str, docs: list[str], gold: list[str], kind: str = "contradiction") -> dict[str, Any]:
    return make_item(
        source="synthetic",
        id=i,
        question=None,
        claims=[f"claim {i}"],
        documents=[{"id": f"d{j}", "text": t} for j, t in enumerate(docs)],
        gold_labels=[gold],
        conflict_type=kind,
        split_key=f"claim {i}",
    )


@pytest.fixture()
def small_bench(tmp_path: Path) -> Path:
    items = [
        _item("a", ["yes one", "no two", "maybe"], [S, C, IR]),  # conflicted, found
        _item("b", ["yes", "yes but ??? unknown", "zzz yes"], [S, C, S]),  # conflicted, missed (unscored + pruned)
        _item("c", ["yes", "no"], [S, IR]),  # control, false positive
    ]
    path = tmp_path / "small.jsonl"
    write_jsonl_atomic(path, items)
    return path


def test_given_labels_on_the_real_test_split_gives_f1_one(bench_file: Path, tmp_path: Path, capsys):
    out, pred = tmp_path / "sanity.json", tmp_path / "pred.jsonl"
    assert (
        main(
            [
                "bench",
                "run",
                str(bench_file),
                "--split",
                "test",
                "--given-labels",
                "-o",
                str(pred),
                "--summary",
                str(out),
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())
    assert len(pred.read_text().splitlines()) == res["n_items"]
    det = res["evaluation"]["detection"]
    assert det["overall"]["f1"] == 1.0 and det["overall"]["precision"] == 1.0 and det["overall"]["recall"] == 1.0
    assert det["overall"]["n_gold_conflicted"] > 100
    for group in ("by_conflict_type", "by_source"):
        for name, m in det[group].items():
            assert m["fp"] == 0 and m["fn"] == 0, name
    assert res["evaluation"]["pairs"]["accuracy"] == 1.0 and res["evaluation"]["pairs"]["macro_f1"] == 1.0
    assert res["pairs"]["given"] == res["evaluation"]["pairs"]["n_pairs"] and res["pairs"]["judged"] == 0
    assert res["bench"]["split"] == "test" and res["bench"]["given_labels"] is True
    assert {"run", "backends"} <= set(res["config"]) and "python" in res["versions"]
    assert "overall" in capsys.readouterr().out


def test_judged_run_metrics_pruning_and_cache_resume(small_bench: Path, tmp_path: Path, rule_backends, capsys):
    out, cache = tmp_path / "r.json", tmp_path / "cache.sqlite"
    argv = [
        "bench",
        "run",
        str(small_bench),
        "--judge",
        "bench-rule",
        "--pruner",
        "bench-zzz",
        "--cache",
        str(cache),
        "-o",
        str(tmp_path / "pred.jsonl"),
        "--summary",
        str(out),
    ]
    assert main(argv) == 0
    res = json.loads(out.read_text())
    pm = res["evaluation"]["pairs"]
    assert pm["n_pairs"] == 8 and pm["unscored"] == 1 and pm["accuracy"] == pytest.approx(5 / 7)
    assert pm["confusion"][S] == {S: 3, C: 0, IR: 1} and pm["confusion"][IR] == {S: 0, C: 1, IR: 1}
    assert res["evaluation"]["pruning"] == {
        "pairs_pruned": 1,
        "gold_support_pruned": 1,
        "gold_contradict_pruned": 0,
        "gold_irrelevant_pruned": 0,
    }
    o = res["evaluation"]["detection"]["overall"]
    assert (o["tp"], o["fp"], o["fn"], o["tn"]) == (1, 1, 1, 0) and o["f1"] == 0.5
    assert res["evaluation"]["detection"]["by_conflict_type"]["none"]["false_positive_rate"] == 1.0
    assert res["evaluation"]["unscored"] == {"pairs": 1, "claims_with_unscored_documents": 1}
    assert res["pairs"]["judged"] == 7 and res["config"]["run"]["judge"]["name"] == "bench-rule"
    assert len((tmp_path / "pred.jsonl").read_text().splitlines()) == 3
    # rerun: every scored judgment comes from the cache; only the unscored pair is judged again
    assert main(argv) == 0
    again = json.loads(out.read_text())
    assert again["pairs"]["cached"] == 6 and again["pairs"]["judged"] == 1
    assert again["evaluation"]["detection"] == res["evaluation"]["detection"]


def test_run_filters(small_bench: Path, tmp_path: Path):
    out, pred = tmp_path / "r.json", tmp_path / "p.jsonl"
    assert (
        main(
            [
                "bench",
                "run",
                str(small_bench),
                "--given-labels",
                "--limit",
                "2",
                "-q",
                "-o",
                str(pred),
                "--summary",
                str(out),
            ]
        )
        == 0
    )
    assert json.loads(out.read_text())["n_items"] == 2 and len(pred.read_text().splitlines()) == 2
    assert main(["bench", "run", str(small_bench), "--given-labels", "--source", "nope", "-o", str(pred)]) == 2


def test_run_refuses_items_with_labels_or_inconsistent_gold(small_bench: Path, tmp_path: Path, capsys):
    rows = [json.loads(x) for x in small_bench.read_text().splitlines()]
    rows[1]["labels"] = rows[1]["gold_labels"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = [
        "bench",
        "run",
        str(bad),
        "--given-labels",
        "-o",
        str(tmp_path / "x.jsonl"),
        "--summary",
        str(tmp_path / "x.json"),
    ]
    assert main(argv) == 2
    assert f"{bad}:2: field 'labels'" in capsys.readouterr().err
    rows = [json.loads(x) for x in small_bench.read_text().splitlines()]
    rows[2]["gold_conflicted"] = [True]
    bad.write_text("\n" + "".join(json.dumps(r) + "\n" for r in rows))
    assert main(argv) == 2
    assert f"{bad}:4: field 'gold_conflicted'" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "small.jsonl"]


def test_build_cli_writes_readable_items_and_stats(shared_data: Path, tmp_path: Path, capsys):
    out, stats = tmp_path / "b.jsonl", tmp_path / "stats.json"
    assert (
        main(
            [
                "bench",
                "build",
                "--data-dir",
                str(shared_data),
                "--source",
                "macnoise",
                "contraqa_en555",
                "-o",
                str(out),
                "--summary",
                str(stats),
            ]
        )
        == 0
    )
    items = read_items(out)
    # the loaders' 34 + 267 items, less the train items left without documents by the leak-free split
    assert len(build_bench(shared_data, only=["macnoise", "contraqa_en555"], leak_free=False)) == 34 + 267
    assert len(items) == len(build_bench(shared_data, only=["macnoise", "contraqa_en555"])) < 34 + 267
    assert all(it.labels is None for it in items)
    s = json.loads(stats.read_text())
    assert s["total"]["all"]["items"] == len(items) and s["source"]["macnoise"]["conflicted"] == 14
    assert "source macnoise" in capsys.readouterr().out


def test_build_cli_missing_source_exit_2(tmp_path: Path, capsys):
    assert main(["bench", "build", "--data-dir", str(tmp_path), "-o", str(tmp_path / "b.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "source 'ramdocs'" in err and "RAMDocs_test.jsonl" in err
    assert main(["bench", "build", "--source", "=RAMDocs_test.jsonl", "-o", str(tmp_path / "b.jsonl")]) == 2
    assert "--source expects NAME=PATH" in capsys.readouterr().err
    assert main(["bench", "build", "--source", "nope", "-o", str(tmp_path / "b.jsonl")]) == 2  # NAME selects
    assert "nope" in capsys.readouterr().err
    assert not (tmp_path / "b.jsonl").exists()


def test_help_imports_no_torch():
    import subprocess
    import sys

    code = (
        "import sys; from conflictscore_local.cli import build_parser; import conflictscore_local.bench.run;"
        "build_parser(); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_real_nli_backend_on_a_tiny_checkpoint(small_bench: Path, tmp_path: Path, tiny_nli_dir: Path):
    """The registered ``nli`` judge end to end: every pair judged, labels in the label set, model recorded."""
    out = tmp_path / "nli.json"
    assert (
        main(
            [
                "bench",
                "run",
                str(small_bench),
                "--judge",
                "nli",
                "--judge-arg",
                f"model={tiny_nli_dir}",
                "--pruner",
                "none",
                "--no-cache",
                "-q",
                "-o",
                str(tmp_path / "nli.jsonl"),
                "--summary",
                str(out),
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())
    assert (
        res["pairs"]["judged"] == 8
        and res["evaluation"]["pairs"]["n_scored"] + res["evaluation"]["pairs"]["unscored"] == 8
    )
    assert (
        sum(sum(row.values()) for row in res["evaluation"]["pairs"]["confusion"].values())
        == res["evaluation"]["pairs"]["n_scored"]
    )
    assert res["config"]["backends"]["judge"]["name"] == "nli"
    assert portable(str(tiny_nli_dir)) in json.dumps(res["config"]["backends"]["judge"])  # recorded portably
    assert res["evaluation"]["detection"]["overall"]["n_claims"] == 3


def test_build_cli_source_options(shared_data: Path, tmp_path: Path):
    out = tmp_path / "b.jsonl"
    assert (
        main(
            [
                "bench",
                "build",
                "--data-dir",
                str(shared_data),
                "--source",
                "macnoise",
                "-q",
                "--source-opt",
                "macnoise.levels=pert_lbls_00",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    items = read_items(out)
    assert len(items) == 10 and {it.meta["conflict_type"] for it in items} == {"none"}
    assert (
        main(
            [
                "bench",
                "build",
                "--data-dir",
                str(shared_data),
                "--source",
                "macnoise",
                "-q",
                "--source-opt",
                "macnoise.nope=1",
                "-o",
                str(out),
            ]
        )
        == 2
    )


# -- the flag vocabulary's transition: -o was the results JSON until this release -----------------

NEW_MEANING = (
    "(-o is now the per-item output and --summary the results JSON; given with --predictions, -o is "
    "still read as the results JSON in this release)"
)


def _bench_run(capsys: pytest.CaptureFixture[str], bench: Path, *flags: str) -> tuple[int, str]:
    rc = main(["bench", "run", str(bench), "--given-labels", "-q", *flags])
    return rc, capsys.readouterr().err


def _same_results(a: Path, b: Path) -> None:
    x, y = json.loads(a.read_text()), json.loads(b.read_text())
    for r in (x, y):
        del r["bench"]["created"], r["timing"], r["started"], r["finished"]  # when and how long: the run's own
    assert x == y


def test_bench_run_writes_per_item_rows_to_o_and_the_results_to_summary(small_bench: Path, tmp_path: Path, capsys):
    pred, res = tmp_path / "pred.jsonl", tmp_path / "results.json"
    assert _bench_run(capsys, small_bench, "-o", str(pred), "--summary", str(res)) == (0, "")
    assert [json.loads(x)["id"] for x in pred.read_text().splitlines()] == ["a", "b", "c"]
    assert json.loads(res.read_text())["evaluation"]["detection"]["overall"]["f1"] == 1.0
    # -o alone: the rows only (no warning: a .jsonl -o is the new meaning); --json prints the results
    only = tmp_path / "only.jsonl"
    assert main(["bench", "run", str(small_bench), "--given-labels", "--json", "-o", str(only)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["evaluation"]["detection"]["overall"]["f1"] == 1.0
    assert only.read_text() == pred.read_text()
    # a .json -o given with --summary is the per-item output too: --summary says what -o means
    rows = tmp_path / "rows.json"
    assert _bench_run(capsys, small_bench, "-o", str(rows), "--summary", str(tmp_path / "s.json")) == (0, "")
    assert rows.read_text() == pred.read_text()
    _same_results(tmp_path / "s.json", res)


def test_old_predictions_keeps_o_as_the_results_json_with_a_warning(small_bench: Path, tmp_path: Path, capsys):
    assert (
        _bench_run(capsys, small_bench, "-o", str(tmp_path / "new.jsonl"), "--summary", str(tmp_path / "new.json"))[0]
        == 0
    )
    r, p = tmp_path / "r.json", tmp_path / "p.jsonl"
    rc, err = _bench_run(capsys, small_bench, "-o", str(r), "--predictions", str(p))
    assert rc == 0
    assert err == (
        f"warning: --predictions is deprecated and will be removed in the next release: use -o {p} "
        f"--summary {r} {NEW_MEANING}\n"
    )
    assert p.read_text() == (tmp_path / "new.jsonl").read_text()  # --predictions: the per-item rows
    _same_results(r, tmp_path / "new.json")  # -o: the results JSON, as before


def test_a_json_o_alone_is_still_the_results_json_with_a_warning(small_bench: Path, tmp_path: Path, capsys):
    r = tmp_path / "r.json"
    rc, err = _bench_run(capsys, small_bench, "-o", str(r))
    assert rc == 0
    assert err == (
        f"warning: -o {r} (a .json file) is read as the results JSON, as before this release, and no "
        "per-item output is written: -o is now the per-item output (JSONL) and --summary the results "
        f"JSON; write -o {tmp_path / 'r.jsonl'} --summary {r}\n"
    )
    assert json.loads(r.read_text())["evaluation"]["detection"]["overall"]["f1"] == 1.0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "judgments.sqlite") == ["r.json", "small.jsonl"]
    # the same for an upper-case suffix; a .jsonl -o is never read the old way
    rc, err = _bench_run(capsys, small_bench, "-o", str(tmp_path / "R.JSON"))
    assert rc == 0 and err.startswith(f"warning: -o {tmp_path / 'R.JSON'} (a .json file) is read as the results JSON")
    assert "detection" in json.loads((tmp_path / "R.JSON").read_text())["evaluation"]


def test_old_predictions_with_summary_is_refused(small_bench: Path, tmp_path: Path, capsys):
    before = sorted(tmp_path.iterdir())
    rc, err = _bench_run(
        capsys,
        small_bench,
        "-o",
        str(tmp_path / "r.json"),
        "--predictions",
        str(tmp_path / "p.jsonl"),
        "--summary",
        str(tmp_path / "s.json"),
    )
    assert rc == 2
    assert err == (
        "conflictscore bench: error: --predictions (deprecated) with --summary: -o would be the per-item "
        f"output and the results JSON at once; write -o {tmp_path / 'p.jsonl'} --summary "
        f"{tmp_path / 's.json'} without --predictions\n"
    )
    assert sorted(tmp_path.iterdir()) == before


def test_messages_name_the_flag_the_command_line_used(small_bench: Path, tmp_path: Path, capsys):
    """In the transitional spelling, a clash names --predictions and -o, not the new flags."""
    rc, err = _bench_run(capsys, small_bench, "-o", str(tmp_path / "r.json"), "--predictions", str(small_bench))
    assert rc == 2 and err.splitlines()[-1] == (
        f"conflictscore bench: error: output (--predictions) {small_bench} "
        "is the input file: writing it would replace that file; choose "
        "another path"
    )
    rc, err = _bench_run(capsys, small_bench, "-o", str(small_bench), "--predictions", str(tmp_path / "p.jsonl"))
    assert rc == 2 and err.splitlines()[-1] == (
        f"conflictscore bench: error: -o {small_bench} is the input file: "
        "writing it would replace that file; choose another path"
    )
    rc, err = _bench_run(capsys, small_bench, "-o", str(tmp_path / "p.jsonl"), "--summary", str(small_bench))
    assert rc == 2 and err == (
        f"conflictscore bench: error: --summary {small_bench} is the input file: writing it "
        "would replace that file; choose another path\n"
    )
    assert not (tmp_path / "p.jsonl").exists() and not (tmp_path / "r.json").exists()
