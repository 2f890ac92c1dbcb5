"""The verdicts do not depend on the order of an item's documents, nor on the order of a document's passages.

A 2026 study of LLM answers over conflicting health documents found 11-25% of answers flip when two
documents swap; the engine must not add such an effect. With the default judge in float32 (the CPU
default, and the same on CPUs with and without native bf16), each item is scored as given, with its
documents in other orders, and with the passages of every document in other orders; every claim's
document labels, its support / contradict / irrelevant sides, the text of the deciding passage and the
item metrics are the same, and the probabilities the same to float32 rounding (a batch padded otherwise).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.formats.inputs import parse_item

# Each document is a list of paragraphs; with a 28-token passage budget (paragraphs of 15-23 tokens) every paragraph is
# one passage and no neighbour fits beside it as overlap, so a paragraph order gives the same passages.
ITEMS: list[dict[str, Any]] = [
    {
        "id": "bridge",
        "claims": [
            "The Harbour Bridge opened to traffic in 1932.",
            "The bridge was designed by a team of engineers led by John Bradfield.",
        ],
        "documents": {
            "a": [
                "The Harbour Bridge was opened to traffic in March 1932 after eight years of construction work.",
                "Its main arch spans 503 metres and carries rail, vehicle, bicycle and pedestrian traffic today.",
                "The chief engineer of the project was John Bradfield, who led the design team for the bridge.",
            ],
            "b": [
                "Records from the city archive show that the Harbour Bridge opened to traffic only in 1941.",
                "The opening had been delayed for many years by a shortage of steel during the long depression.",
            ],
            "c": [
                "The local football club won its first championship title after a dramatic final match.",
                "Thousands of supporters celebrated in the streets of the city centre until late at night.",
            ],
            "d": [
                "Contrary to popular belief, John Bradfield had no part at all in designing the Harbour Bridge.",
                "The bridge was designed by a private firm of architects working without any state engineers.",
            ],
        },
    },
    {
        "id": "drug",
        "claims": [
            "Aspirin reduces the risk of a second heart attack.",
            "Aspirin causes stomach bleeding in some patients.",
        ],
        "documents": {
            "x": [
                "In a large randomised trial, daily low-dose aspirin reduced the risk of a second heart attack.",
                "Patients taking aspirin also had fewer strokes than those who received the placebo tablets.",
            ],
            "y": [
                "The trial found that aspirin did not reduce the risk of a second heart attack in any group.",
                "Some patients on aspirin reported stomach bleeding that required a visit to the hospital.",
            ],
            "z": [
                "The new library building has three floors of reading rooms and a large rooftop garden.",
                "It opens every day of the week from eight in the morning until ten in the evening.",
            ],
        },
    },
]


def _item(spec: dict[str, Any], doc_order: list[str], para_order: dict[str, list[int]]) -> Any:
    docs = [{"id": d, "text": "\n\n".join(spec["documents"][d][i] for i in para_order[d])} for d in doc_order]
    return parse_item({"id": spec["id"], "claims": spec["claims"], "documents": docs})


def _verdicts(result: Any, items: dict[str, Any]) -> list[dict[str, Any]]:
    """What a reader gets from one item, independent of the order it was given in."""
    texts = {d.id: d.text for d in items[result.item_id].documents}
    out = []
    for v in result.verdicts:
        out.append(
            {
                "claim": v.claim.text,
                "support": sorted(v.support),
                "contradict": sorted(v.contradict),
                "irrelevant": sorted(v.irrelevant),
                "unscored": sorted(v.unscored),
                "conflicted": v.conflicted,
                "docs": {
                    j.doc_id: (
                        j.label,
                        j.n_passages,
                        j.both,
                        texts[j.doc_id][slice(*j.passage_span)] if j.passage_span else texts[j.doc_id],
                    )
                    for j in v.judgments
                },
                "probs": {j.doc_id: dict(j.probs or {}) for j in v.judgments},
            }
        )
    return out


@pytest.fixture(scope="module")
def engine() -> Any:
    cfg = RunConfig.from_mapping(
        {
            "judge": {"name": "nli", "dtype": "float32", "device": "cpu"},
            "pruner": {"name": "none"},
            "chunk": {"max_tokens": 28},
            "cache": {"enabled": False},
        }
    )
    with Engine(cfg) as e:
        yield e


def _score(engine: Any, items: list[Any]) -> dict[str, Any]:
    results, _ = engine.score_all(items)
    by_id = {it.id: it for it in items}
    return {r.item_id: (_verdicts(r, by_id), r.metrics.values) for r in results}


def _orders() -> list[tuple[dict[str, list[str]], dict[str, dict[str, list[int]]]]]:
    """(document order, paragraph order) per item: as given, every document order of the first item's
    reversal and a seeded shuffle, and paragraphs reversed and shuffled within every document."""
    rng = random.Random(0)
    given_docs = {s["id"]: list(s["documents"]) for s in ITEMS}
    given_paras = {s["id"]: {d: list(range(len(p))) for d, p in s["documents"].items()} for s in ITEMS}
    out = [(given_docs, given_paras)]
    for perm in itertools.islice(itertools.permutations(range(4)), 1, None, 5):  # 5 of the 23 other orders
        out.append(
            (
                {
                    **given_docs,
                    "bridge": [given_docs["bridge"][i] for i in perm],
                    "drug": list(reversed(given_docs["drug"])),
                },
                given_paras,
            )
        )
    rev = {i: {d: list(reversed(o)) for d, o in p.items()} for i, p in given_paras.items()}
    out.append((given_docs, rev))
    shuffled = {i: {d: rng.sample(o, len(o)) for d, o in p.items()} for i, p in given_paras.items()}
    docs_shuffled = {i: rng.sample(o, len(o)) for i, o in given_docs.items()}
    out.append((docs_shuffled, shuffled))
    return out


def test_every_paragraph_is_one_passage(engine: Any) -> None:
    chunker = engine.chunker()
    for spec in ITEMS:
        for d, paras in spec["documents"].items():
            text = "\n\n".join(paras)
            spans = chunker.spans(text)
            assert [text[a:b] for a, b in spans] == paras, (spec["id"], d)


def test_verdicts_do_not_depend_on_document_or_passage_order(engine: Any) -> None:
    orders = _orders()
    reference = _score(engine, [_item(s, orders[0][0][s["id"]], orders[0][1][s["id"]]) for s in ITEMS])
    labels = {k: [(v["support"], v["contradict"]) for v in verdicts] for k, (verdicts, _) in reference.items()}
    assert any(v[0] or v[1] for vs in labels.values() for v in vs)  # the judge takes sides here: not all IRRELEVANT
    for doc_order, para_order in orders[1:]:
        got = _score(engine, [_item(s, doc_order[s["id"]], para_order[s["id"]]) for s in ITEMS])
        for key, (verdicts, metrics) in reference.items():
            other, other_metrics = got[key]
            for want, have in zip(verdicts, other, strict=True):
                assert {k: v for k, v in have.items() if k != "probs"} == {
                    k: v for k, v in want.items() if k != "probs"
                }
                for doc, probs in want["probs"].items():
                    assert have["probs"][doc] == pytest.approx(probs, abs=1e-5), (key, doc)
            assert other_metrics == pytest.approx(metrics, abs=1e-9, nan_ok=True)
