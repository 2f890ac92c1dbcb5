"""Each builder on the real shared files: counts, label mapping spot checks, no split leakage."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from conflictscore_local.bench import CONFLICT_TYPES, build_bench, normalize_text, split_for
from conflictscore_local.formats.inputs import parse_item

S, C, IR = "SUPPORT", "CONTRADICT", "IRRELEVANT"


def _by_source(items, source):
    return [it for it in items if it["source"] == source]


def test_counts_per_source(loaded_items):
    bench_items = loaded_items  # as the loaders map them (train documents not yet removed)
    count = Counter(it["source"] for it in bench_items)
    assert count == {"ramdocs": 802, "climate_fever": 1535, "contraqa_en555": 267, "macnoise": 34}
    conflicted = Counter()
    for it in bench_items:
        conflicted[it["source"]] += sum(it["gold_conflicted"])
    # Climate-FEVER: exactly its 154 DISPUTED claims; EN555: exactly its 89 conflict-file claims
    assert conflicted["climate_fever"] == 154
    assert conflicted["contraqa_en555"] == 89
    ram = _by_source(bench_items, "ramdocs")
    assert sum(len(it["claims"]) for it in ram if it["variant"] == "entity") == 161 * 2 + 160 * 3 + 80


def test_items_are_valid_score_input_without_labels(bench_items):
    for n, it in enumerate(bench_items, 1):
        assert "labels" not in it
        item = parse_item(json.loads(json.dumps(it)), path="bench", line=n)
        assert len(item.claims) == len(it["gold_labels"]) == len(it["gold_conflicted"])
        assert it["gold_conflicted"] == [S in row and C in row for row in it["gold_labels"]]
        assert (item.meta["conflict_type"] == "none") == (not any(it["gold_conflicted"]))
        assert item.meta["conflict_type"] in CONFLICT_TYPES
        assert it["split"] == split_for(it["split_key"])


def test_no_split_leakage_across_sources(bench_items):
    splits = defaultdict(set)
    for it in bench_items:
        for text in [*it["claims"], it.get("question") or "", it["split_key"]]:
            if text:
                splits[normalize_text(text)].add(it["split"])
    leaked = {t: s for t, s in splits.items() if len(s) > 1}
    assert leaked == {}


def test_en555_overlap_with_climate_fever_lands_in_one_split(loaded_items):
    bench_items = loaded_items  # as the loaders map them (train documents not yet removed)
    cf = {normalize_text(it["claims"][0]): it["split"] for it in _by_source(bench_items, "climate_fever")}
    overlap = [it for it in _by_source(bench_items, "contraqa_en555") if normalize_text(it["claims"][0]) in cf]
    assert len(overlap) == 178
    assert all(it["split"] == cf[normalize_text(it["claims"][0])] for it in overlap)


def test_ramdocs_single_answer_no_conflict(loaded_by_id):
    by_id = loaded_by_id  # as the loaders map them (train documents not yet removed)
    it = by_id["ramdocs:0:no_entity"]  # What is the population of Broken Bow? correct, correct, noise
    assert it["claims"] == ["The population of Broken Bow is 3,559 people."]
    assert it["gold_labels"] == [[S, S, IR]]
    assert it["gold_conflicted"] == [False] and it["conflict_type"] == "none"
    ent = by_id["ramdocs:0:entity"]
    assert ent["claims"] == ["The population of Broken Bow, Nebraska is 3,559 people."]
    assert ent["split"] == it["split"] == split_for("What is the population of Broken Bow?")


def test_ramdocs_misinformation(by_id):
    it = by_id["ramdocs:2:entity"]  # Lahu Ke Do Rang: 3 correct, 2 misinfo (Raj Kapoor), 2 noise
    assert it["gold_labels"] == [[S, S, S, C, C, IR, IR]]
    assert it["gold_conflicted"] == [True] and it["conflict_type"] == "misinformation"
    assert [d["type"] for d in it["documents"]] == ["correct"] * 3 + ["misinfo"] * 2 + ["noise"] * 2


def test_ramdocs_ambiguity_variants(bench_items, shared_data):
    rows = [json.loads(x) for x in (shared_data / "ramdocs/RAMDocs_test.jsonl").read_text().splitlines()]
    k = next(i for i, r in enumerate(rows) if r["question"].startswith("What is the profession of Jeff Green"))
    by = {it["id"]: it for it in bench_items}
    no_ent, ent = by[f"ramdocs:{k}:no_entity"], by[f"ramdocs:{k}:entity"]
    answers = [d["answer"] for d in no_ent["documents"]]
    gold = rows[k]["gold_answers"]  # ['Basketball player', 'Writer']
    assert no_ent["conflict_type"] == "ambiguity"
    for claim, row, answer in zip(no_ent["claims"], no_ent["gold_labels"], gold):
        assert answer in claim and "(" not in claim
        for lab, doc, a in zip(row, no_ent["documents"], answers):
            if doc["type"] == "correct":
                assert lab == (S if a == answer else C)
    for claim, row, answer, entity in zip(ent["claims"], ent["gold_labels"], gold, rows[k]["disambig_entity"]):
        assert entity in claim
        for lab, doc, a in zip(row, ent["documents"], answers):
            if doc["type"] == "correct":
                assert lab == (S if a == answer else IR)


def test_ramdocs_entity_claims_name_their_entity(bench_items, shared_data):
    rows = [json.loads(x) for x in (shared_data / "ramdocs/RAMDocs_test.jsonl").read_text().splitlines()]
    checked = 0
    for it in bench_items:
        if it["source"] == "ramdocs" and it["variant"] == "entity":
            k = int(it["id"].split(":")[1])
            for claim, entity in zip(it["claims"], rows[k]["disambig_entity"]):
                assert re.search(rf"(?<!\w){re.escape(' '.join(entity.split()))}(?!\w)", claim), (claim, entity)
                checked += 1
    assert checked == 161 * 2 + 160 * 3 + 80
    k = next(i for i, r in enumerate(rows) if r["question"] == "What sport is Reg Parker associated with?")
    ent = next(x for x in bench_items if x["id"] == f"ramdocs:{k}:entity")
    assert ent["claims"][2].startswith("Regarding Reg Park, Reg Parker ")


def test_ramdocs_misinfo_answer_equal_to_claim_answer_supports(bench_items, shared_data):
    rows = [json.loads(x) for x in (shared_data / "ramdocs/RAMDocs_test.jsonl").read_text().splitlines()]
    k = next(i for i, r in enumerate(rows) if r["question"].startswith("What type of transportation does the Karawan"))
    it = next(x for x in bench_items if x["id"] == f"ramdocs:{k}:no_entity")
    rail = next(i for i, c in enumerate(it["claims"]) if "Railway" in c)
    for lab, doc in zip(it["gold_labels"][rail], it["documents"]):
        if doc["type"] == "misinfo":
            assert doc["answer"] == "Railway" and lab == S


def test_climate_fever_mapping(loaded_by_id, shared_data):
    by_id = loaded_by_id  # as the loaders map them (train documents not yet removed)
    it = by_id["climate_fever:0"]  # SUPPORTS claim: NEI, SUPPORTS, NEI, SUPPORTS, NEI
    assert it["claims"] == ["Global warming is driving polar bears toward extinction"]
    assert it["gold_labels"] == [[IR, S, IR, S, IR]] and it["conflict_type"] == "none"
    rows = [json.loads(x) for x in (shared_data / "climate_fever/dataset/climate-fever.jsonl").read_text().splitlines()]
    disputed = [r for r in rows if r["claim_label"] == "DISPUTED"]
    for r in disputed[:20]:
        b = by_id[f"climate_fever:{r['claim_id']}"]
        assert b["gold_conflicted"] == [True] and b["conflict_type"] == "contradiction"
        assert b["gold_labels"][0] == [
            {"SUPPORTS": S, "REFUTES": C, "NOT_ENOUGH_INFO": IR}[e["evidence_label"]] for e in r["evidences"]
        ]


def test_climate_fever_entropy_filter(shared_data):
    items = build_bench(shared_data, only=["climate_fever"], options={"climate_fever": {"max_entropy": "0"}})
    assert all(d["entropy"] == 0 for it in items for d in it["documents"])
    full = build_bench(shared_data, only=["climate_fever"])
    assert sum(len(it["documents"]) for it in items) < sum(len(it["documents"]) for it in full)
    assert sum(sum(it["gold_conflicted"]) for it in items) < 154


def test_en555_mapping(loaded_by_id):
    by_id = loaded_by_id  # as the loaders map them (train documents not yet removed)
    it = by_id["contraqa_en555:conflict:0"]  # claim_id 775, vitamin supplements
    assert it["claim_id"] == 775 and it["variant"] == "conflict"
    assert it["claims"][0].startswith("New findings have confirmed the efficacy of dietary vitamin supplements")
    assert it["gold_labels"] == [[S, C, S, C, IR]]
    assert it["conflict_type"] == "contradiction"
    assert isinstance(it["wh_answers"], list) and it["wh_answers"][0]["evidenceNumbers"] == ["0", "2"]
    sup = by_id["contraqa_en555:support:0"]
    assert sup["gold_labels"] == [[IR, IR, S]] and sup["conflict_type"] == "none"
    neu = by_id["contraqa_en555:neutral:0"]
    assert set(neu["gold_labels"][0]) == {IR} and neu["conflict_type"] == "none"


def test_en555_opinion_rule(bench_items):
    opinions = [it for it in bench_items if it["conflict_type"] == "opinion"]
    assert opinions and all(it["source"] == "contraqa_en555" for it in opinions)
    masks = next(it for it in opinions if it["claims"][0].startswith("N95 masks are better"))
    assert masks["gold_conflicted"] == [True]


def test_macnoise_levels(by_id):
    # which nfl team has the most super bowls; pert_lbls_25 = pert_lbls_50 = [0, 0, 0, 1, 0]
    it = by_id["macnoise:GPT_trainx_longpre_samples:0:pert_lbls_25"]
    assert it["claims"] == ["Pittsburgh Steelers has the most super bowls."]
    assert [d["perturbed"] for d in it["documents"]] == [False, False, False, True, False]
    assert it["gold_labels"] == [[S, IR, S, C, IR]]
    assert it["conflict_type"] == "counterfactual"
    # identical vectors are emitted once (pert_lbls_100 = pert_lbls); pert_lbls_00 is a control
    assert "macnoise:GPT_trainx_longpre_samples:0:pert_lbls_50" not in by_id
    assert "macnoise:GPT_trainx_longpre_samples:0:pert_lbls_100" not in by_id
    assert by_id["macnoise:GPT_trainx_longpre_samples:0:pert_lbls_00"]["conflict_type"] == "none"


def test_macnoise_answer_in_passage_is_a_whole_word(by_id):
    # how many seasons of the mistresses are there — four; pert_lbls_25 = [0, 0, 1, 0, 1]: passage 3
    # speaks of a "fourth season" only (IRRELEVANT); passages 0, 1 say "the four lead characters"
    it = next(
        v
        for k, v in by_id.items()
        if k.startswith("macnoise:GPT_trainx_longpre_samples:")
        and k.endswith(":pert_lbls_25")
        and v["question"] == "how many seasons of the mistresses are there"
    )
    assert it["claims"] == ["There are four seasons of the mistresses."]
    assert it["gold_labels"] == [[S, S, C, IR, C]]


def test_only_and_override(shared_data, tmp_path: Path):
    items = build_bench(shared_data, only=["macnoise"])
    assert {it["source"] for it in items} == {"macnoise"}
    one = shared_data / "macnoise/DATA/GPT/GPT_trainx_longpre_samples.json"
    items = build_bench(tmp_path, only=["macnoise"], sources={"macnoise": one})
    assert len(items) == 17 and all("longpre" in it["id"] for it in items)


@pytest.mark.parametrize("env", [True, False])
def test_default_data_dir_env(monkeypatch, tmp_path, shared_data, env):
    from conflictscore_local.bench import default_data_dir

    if env:
        monkeypatch.setenv("CONFLICTSCORE_DATA", str(tmp_path))
        assert default_data_dir() == tmp_path
    else:
        monkeypatch.delenv("CONFLICTSCORE_DATA", raising=False)
        assert default_data_dir().name == "data" and default_data_dir().parent.name == "shared"
