"""No document or claim in both a training and an evaluation split: index, filter, check."""

from __future__ import annotations

from pathlib import Path

import pytest

from conflictscore_local.bench import build_bench
from conflictscore_local.bench.leakage import (
    TextIndex,
    bench_leaks,
    check_disjoint,
    find_leaks,
    separate_splits,
    text_keys,
)
from conflictscore_local.core.errors import InputError

SNIPPET = "Face masks reduced transmission by half in the trial."


def test_text_keys_hold_the_text_and_its_longer_sentences() -> None:
    assert text_keys(f"  {SNIPPET} Too short here. ") == {
        f"{SNIPPET.casefold()} too short here",
        "face masks reduced transmission by half in the trial",
    }


def test_a_document_containing_an_evaluation_snippet_leaks() -> None:
    index = TextIndex()
    index.add_document(SNIPPET)
    index.add_claim("Masks work!")
    assert index.document_leaks(f"Background sentence of the abstract. {SNIPPET.upper()} More results followed.")
    assert not index.document_leaks("Face masks reduced transmission by a third in the trial.")
    assert index.claim_leaks("  masks WORK") and not index.claim_leaks("Masks work well.")
    leaks = find_leaks(index, [SNIPPET, "Other text entirely, with six words."], ["masks work", "x"])
    assert (leaks.documents, leaks.claims, leaks.total) == (1, 1, 2)
    with pytest.raises(
        InputError, match=r"^bench build: 1 training document\(s\) and 1 training claim\(s\) also occur"
    ):
        check_disjoint(leaks, what="bench build")
    check_disjoint(find_leaks(index, ["Unrelated words that are six long."], ["y"]), what="ok")


def _item(id: str, split: str, claims: list[str], docs: list[str], rows: list[list[str]]) -> dict:
    return {
        "id": id,
        "split": split,
        "claims": claims,
        "response": " ".join(claims),
        "source": "s",
        "documents": [{"id": f"d{j}", "text": t} for j, t in enumerate(docs)],
        "gold_labels": rows,
        "gold_conflicted": ["SUPPORT" in r and "CONTRADICT" in r for r in rows],
        "conflict_type": "contradiction",
    }


def test_train_items_give_way_to_dev_and_test() -> None:
    shared = "The river flooded the old town in the spring of 1990."
    items = [
        _item("t1", "test", ["The river flooded in 1990."], [shared], [["SUPPORT"]]),
        _item(
            "a",
            "train",
            ["Claim A is about the flood.", "Claim B is about the flood."],
            ["Unrelated evidence sentence with six words.", shared, "Another document text about the flood."],
            [["SUPPORT", "CONTRADICT", "IRRELEVANT"], ["SUPPORT", "IRRELEVANT", "CONTRADICT"]],
        ),
        _item("b", "train", ["The river flooded in 1990."], ["Some other document about rivers here."], [["SUPPORT"]]),
        _item("c", "train", ["Claim C."], [shared], [["CONTRADICT"]]),
    ]
    assert bench_leaks(items).as_dict() == {"documents": 3, "claims": 1}
    out, removed = separate_splits(items)
    assert [it["id"] for it in out] == ["t1", "a"]
    a = out[1]
    assert [d["id"] for d in a["documents"]] == ["d0", "d2"]
    assert a["gold_labels"] == [["SUPPORT", "IRRELEVANT"], ["SUPPORT", "CONTRADICT"]]
    assert a["gold_conflicted"] == [False, True] and a["conflict_type"] == "contradiction"
    assert removed == {"documents": 2, "claims": 1, "pairs": 4, "items": 2}
    assert bench_leaks(out).total == 0 and out[0] is items[0]


def test_the_built_bench_shares_no_document_or_claim_between_train_and_dev_test(shared_data: Path) -> None:
    before = bench_leaks(build_bench(shared_data, leak_free=False))
    assert before.documents > 1000  # the claim-only split reused Climate-FEVER / EN555 evidence
    items = build_bench(shared_data)
    assert bench_leaks(items).total == 0
    eval_ids = {it["id"] for it in build_bench(shared_data, leak_free=False) if it["split"] != "train"}
    assert eval_ids == {it["id"] for it in items if it["split"] != "train"}  # dev and test keep every item
