"""``bench build`` / ``bench run`` end to end through the CLI and the engine."""

from __future__ import annotations

from conflictscore_local.bench import build_bench

import json
from pathlib import Path
from typing import Any, Sequence

import pytest

from conflictscore_local.backend import Backend
from conflictscore_local.bench import make_item
from conflictscore_local.cli import main
from conflictscore_local.inputs import read_items
from conflictscore_local.paths import portable
from conflictscore_local.types import CONTRADICT, IRRELEVANT, SUPPORT, Judgment, Pair
from conflictscore_local.jobs import write_jsonl_atomic

S, C, IR = SUPPORT, CONTRADICT, IRRELEVANT


class RuleJudge(Backend):
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


class KeywordPruner(Backend):
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
    return make_item(source="synthetic", id=i, question=None, claims=[f"claim {i}"],
                     documents=[{"id": f"d{j}", "text": t} for j, t in enumerate(docs)],
                     gold_labels=[gold], conflict_type=kind, split_key=f"claim {i}")


@pytest.fixture()
def small_bench(tmp_path: Path) -> Path:
    items = [
        _item("a", ["yes one", "no two", "maybe"], [S, C, IR]),            # conflicted, found
        _item("b", ["yes", "yes but ??? unknown", "zzz yes"], [S, C, S]),  # conflicted, missed (unscored + pruned)
        _item("c", ["yes", "no"], [S, IR]),                                 # control, false positive
    ]
    path = tmp_path / "small.jsonl"
    write_jsonl_atomic(path, items)
    return path


def test_given_labels_on_the_real_test_split_gives_f1_one(bench_file: Path, tmp_path: Path, capsys):
    out = tmp_path / "sanity.json"
    assert main(["bench", "run", str(bench_file), "--split", "test", "--given-labels", "-o", str(out)]) == 0
    res = json.loads(out.read_text())
    det = res["detection"]
    assert det["overall"]["f1"] == 1.0 and det["overall"]["precision"] == 1.0 and det["overall"]["recall"] == 1.0
    assert det["overall"]["n_gold_conflicted"] > 100
    for group in ("by_conflict_type", "by_source"):
        for name, m in det[group].items():
            assert m["fp"] == 0 and m["fn"] == 0, name
    assert res["pairs"]["accuracy"] == 1.0 and res["pairs"]["macro_f1"] == 1.0
    assert res["engine_pairs"]["given"] == res["pairs"]["n_pairs"] and res["engine_pairs"]["judged"] == 0
    assert res["bench"]["split"] == "test" and res["bench"]["given_labels"] is True
    assert {"run", "backends"} <= set(res["config"]) and "python" in res["versions"]
    assert "overall" in capsys.readouterr().out


def test_judged_run_metrics_pruning_and_cache_resume(small_bench: Path, tmp_path: Path, rule_backends, capsys):
    out, cache = tmp_path / "r.json", tmp_path / "cache.sqlite"
    argv = ["bench", "run", str(small_bench), "--judge", "bench-rule", "--pruner", "bench-zzz",
            "--cache", str(cache), "-o", str(out), "--predictions", str(tmp_path / "pred.jsonl")]
    assert main(argv) == 0
    res = json.loads(out.read_text())
    pm = res["pairs"]
    assert pm["n_pairs"] == 8 and pm["unscored"] == 1 and pm["accuracy"] == pytest.approx(5 / 7)
    assert pm["confusion"][S] == {S: 3, C: 0, IR: 1} and pm["confusion"][IR] == {S: 0, C: 1, IR: 1}
    assert res["pruning"] == {"pairs_pruned": 1, "gold_support_pruned": 1, "gold_contradict_pruned": 0,
                              "gold_irrelevant_pruned": 0}
    o = res["detection"]["overall"]
    assert (o["tp"], o["fp"], o["fn"], o["tn"]) == (1, 1, 1, 0) and o["f1"] == 0.5
    assert res["detection"]["by_conflict_type"]["none"]["false_positive_rate"] == 1.0
    assert res["unscored"] == {"pairs": 1, "claims_with_unscored_documents": 1}
    assert res["engine_pairs"]["judged"] == 7 and res["config"]["run"]["judge"]["name"] == "bench-rule"
    assert len((tmp_path / "pred.jsonl").read_text().splitlines()) == 3
    # rerun: every scored judgment comes from the cache; only the unscored pair is judged again
    assert main(argv) == 0
    again = json.loads(out.read_text())
    assert again["engine_pairs"]["cached"] == 6 and again["engine_pairs"]["judged"] == 1
    assert again["detection"] == res["detection"]


def test_run_filters(small_bench: Path, tmp_path: Path):
    out = tmp_path / "r.json"
    assert main(["bench", "run", str(small_bench), "--given-labels", "--limit", "2", "-q", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["bench"]["n_items"] == 2
    assert main(["bench", "run", str(small_bench), "--given-labels", "--source", "nope", "-o", str(out)]) == 2


def test_run_refuses_items_with_labels_or_inconsistent_gold(small_bench: Path, tmp_path: Path, capsys):
    rows = [json.loads(x) for x in small_bench.read_text().splitlines()]
    rows[1]["labels"] = rows[1]["gold_labels"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["bench", "run", str(bad), "--given-labels", "-o", str(tmp_path / "x.json")]) == 2
    assert f"{bad}:2: field 'labels'" in capsys.readouterr().err
    rows = [json.loads(x) for x in small_bench.read_text().splitlines()]
    rows[2]["gold_conflicted"] = [True]
    bad.write_text("\n" + "".join(json.dumps(r) + "\n" for r in rows))
    assert main(["bench", "run", str(bad), "--given-labels", "-o", str(tmp_path / "x.json")]) == 2
    assert f"{bad}:4: field 'gold_conflicted'" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_build_cli_writes_readable_items_and_stats(shared_data: Path, tmp_path: Path, capsys):
    out, stats = tmp_path / "b.jsonl", tmp_path / "stats.json"
    assert main(["bench", "build", "--data-dir", str(shared_data), "--source", "macnoise", "contraqa_en555",
                 "-o", str(out), "--stats", str(stats)]) == 0
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

    code = ("import sys; from conflictscore_local.cli import build_parser; import conflictscore_local.bench.run;"
            "build_parser(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_real_nli_backend_on_a_tiny_checkpoint(small_bench: Path, tmp_path: Path, tiny_nli_dir: Path):
    """The registered ``nli`` judge end to end: every pair judged, labels in the label set, model recorded."""
    out = tmp_path / "nli.json"
    assert main(["bench", "run", str(small_bench), "--judge", "nli", "--judge-arg", f"model={tiny_nli_dir}",
                 "--pruner", "none", "--no-cache", "-q", "-o", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["engine_pairs"]["judged"] == 8 and res["pairs"]["n_scored"] + res["pairs"]["unscored"] == 8
    assert sum(sum(row.values()) for row in res["pairs"]["confusion"].values()) == res["pairs"]["n_scored"]
    assert res["config"]["backends"]["judge"]["name"] == "nli"
    assert portable(str(tiny_nli_dir)) in json.dumps(res["config"]["backends"]["judge"])  # recorded portably
    assert res["detection"]["overall"]["n_claims"] == 3


def test_build_cli_source_options(shared_data: Path, tmp_path: Path):
    out = tmp_path / "b.jsonl"
    assert main(["bench", "build", "--data-dir", str(shared_data), "--source", "macnoise", "-q",
                 "--source-opt", "macnoise.levels=pert_lbls_00", "-o", str(out)]) == 0
    items = read_items(out)
    assert len(items) == 10 and {it.meta["conflict_type"] for it in items} == {"none"}
    assert main(["bench", "build", "--data-dir", str(shared_data), "--source", "macnoise", "-q",
                 "--source-opt", "macnoise.nope=1", "-o", str(out)]) == 2
