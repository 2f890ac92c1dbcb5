"""The ``embedding`` and ``auto`` pruners inside the engine and ``conflictscore score`` (``auto``: the default)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

from conflictscore_local import Engine, RunConfig, cli
from conflictscore_local.core.types import CONTRADICT, IRRELEVANT, SUPPORT, Document, Item, Judgment, Pair
from conflictscore_local.judge._base import JudgeBase
from conflictscore_local.prune.embedding import EmbeddingPruner


class RuleJudge(JudgeBase):
    """SUPPORT when the passage names Warsaw, CONTRADICT when it names Krakow, else IRRELEVANT."""

    name = "rule"
    role = "judge"

    def __init__(self, config: Any = None):
        super().__init__(config)
        self.seen: list[Pair] = []

    def judge(self, pairs: Sequence[Pair], on_progress: Callable[[int], None] | None = None) -> list[Judgment]:
        self.seen.extend(pairs)
        out = []
        for p in pairs:
            text = p.passage.text
            label = SUPPORT if "Warsaw" in text else CONTRADICT if "Krakow" in text else IRRELEVANT
            out.append(Judgment(p, label))
        return out

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "version": 1}

    def passage_budget(self) -> None:
        return None


CURIE = Item(
    id="curie",
    response="Marie Curie was born in Warsaw in 1867.",
    claims=("Marie Curie was born in Warsaw in 1867.",),
    documents=(
        Document("wiki", "Maria Sklodowska-Curie was born in Warsaw on 7 November 1867."),
        Document("hoax", "Marie Curie was born in Krakow in 1868, a blog claims."),
        Document(
            "bread",
            "Sourdough bread rises slowly because wild yeast ferments the dough. "
            "Bakers feed the starter with flour and water every day. It keeps for years.",
        ),
        Document("ocean", "Coral reefs bleach when the sea water warms."),
    ),
)


def test_engine_reports_pruned_documents(tmp_path: Path) -> None:
    judge = RuleJudge()
    cfg = RunConfig().updated({"chunk": {"max_tokens": 12, "overlap": 0}})
    engine = Engine(cfg, pruner={"name": "embedding", "threshold": 0.3, "k": 1}, judge=judge)
    results, report = engine.score_all([CURIE])
    verdict = results[0].verdicts[0]
    assert (verdict.support, verdict.contradict, verdict.conflicted) == (("wiki",), ("hoax",), True)
    by_doc = {d.doc_id: d for d in verdict.judgments}
    for doc in ("bread", "ocean"):
        d = by_doc[doc]
        assert (d.label, d.source) == (IRRELEVANT, "pruned")
        assert d.similarity is not None and d.similarity < 0.3
        assert d.note.startswith("document cosine ")
    assert by_doc["bread"].n_passages == 3
    assert {p.passage.doc_id for p in judge.seen} == {"wiki", "hoax"}
    assert report.pairs["total"] == 4 and report.pairs["pruned"] == 2 and report.pairs["judged"] == 2
    stats = report.stages["pruner"]
    assert (stats["pairs"], stats["kept"], stats["pruned"]) == (6, 2, 4)
    assert report.config["backends"]["pruner"]["resolved"]["unit"] == "document"


def _curie_file(tmp_path: Path) -> Path:
    src = tmp_path / "items.jsonl"
    src.write_text(
        json.dumps(
            {
                "id": CURIE.id,
                "response": CURIE.response,
                "claims": list(CURIE.claims),
                "documents": [{"id": d.id, "text": d.text} for d in CURIE.documents],
            }
        )
        + "\n"
    )
    return src


def test_the_embedding_pipeline_prunes(tmp_path: Path, register_backend: Any) -> None:
    register_backend("judge", "rule", RuleJudge)
    src = _curie_file(tmp_path)
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    assert (
        cli.main(
            [
                "score",
                str(src),
                "-o",
                str(out),
                "--summary",
                str(summary),
                "--judge",
                "rule",
                "--pruner",
                "embedding",
                "-q",
            ]
        )
        == 0
    )
    report = json.loads(summary.read_text())
    pruner = report["config"]["backends"]["pruner"]
    assert pruner["name"] == "embedding"
    assert pruner["args"] == {
        **pruner["args"],
        "threshold": EmbeddingPruner.Config.threshold,
        "k": EmbeddingPruner.Config.k,
        "guard": True,
    }
    row = json.loads(out.read_text())
    sources = {j["doc_id"]: j["source"] for j in row["claims"][0]["judgments"]}
    assert sources["wiki"] == sources["hoax"] == "judge"
    pairs = report["pairs"]
    assert pairs["total"] == 4 == pairs["judged"] + pairs["pruned"]
    assert pairs["pruned"] == sum(s == "pruned" for s in sources.values())
    assert report["stages"]["pruner"]["pairs"] == 4


def _as_first_run(row: dict) -> dict:
    """An output row with cache hits spelled as the judge's: how a rerun must equal the first run."""
    return json.loads(json.dumps(row).replace('"source": "cache"', '"source": "judge"'))


def test_a_cached_rerun_looks_up_before_pruning_and_reports_identically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, register_backend: Any
) -> None:
    register_backend("judge", "rule", RuleJudge)
    other = Item(
        "other",
        "Bread rises.",
        (Document("wiki", "Maria was born in Warsaw."), Document("bread", CURIE.documents[2].text)),
        claims=("Bread rises slowly.",),
    )
    src = tmp_path / "items.jsonl"
    src.write_text(
        "".join(
            json.dumps(
                {
                    "id": it.id,
                    "response": it.response,
                    "claims": list(it.claims),
                    "documents": [{"id": d.id, "text": d.text} for d in it.documents],
                }
            )
            + "\n"
            for it in (CURIE, other)
        )
    )
    args = [
        "score",
        str(src),
        "--judge",
        "rule",
        "--pruner",
        "embedding",
        "--pruner-arg",
        "threshold=0.3",
        "--pruner-arg",
        "k=1",
        "--set",
        "chunk.max_tokens=12",
        "-q",
    ]
    calls: list[int] = []
    real = EmbeddingPruner.select
    monkeypatch.setattr(EmbeddingPruner, "select", lambda self, pairs: calls.append(len(pairs)) or real(self, pairs))
    assert cli.main(args + ["-o", str(tmp_path / "cold.jsonl"), "--summary", str(tmp_path / "cold.json")]) == 0
    assert calls == [10]
    assert cli.main(args + ["-o", str(tmp_path / "warm.jsonl"), "--summary", str(tmp_path / "warm.json")]) == 0
    assert calls == [10]  # the rerun did not prune
    cold = [json.loads(x) for x in (tmp_path / "cold.jsonl").read_text().splitlines()]
    warm = [json.loads(x) for x in (tmp_path / "warm.jsonl").read_text().splitlines()]
    assert [_as_first_run(r) for r in warm] == cold
    pruned = [j for r in warm for c in r["claims"] for j in c["judgments"] if j["source"] == "pruned"]
    assert {j["doc_id"] for j in pruned} >= {"bread", "ocean"} and all("similarity" in j for j in pruned)
    s = json.loads((tmp_path / "warm.json").read_text())
    assert s["stages"]["engine"]["claims_selection_cached"] == 2 and s["pairs"]["judged"] == 0
    assert "pruner" not in s["stages"] or s["stages"]["pruner"] == {}  # its model was never loaded
    # another rule is another spec: stored selections do not apply
    assert cli.main(args[:-1] + ["--pruner-arg", "k=2", "-q", "-o", str(tmp_path / "k2.jsonl")]) == 0
    assert calls == [10, 10]


def test_new_claims_against_stored_documents_embed_only_the_claims(tmp_path: Path, register_backend: Any) -> None:
    register_backend("judge", "rule", RuleJudge)

    def write(name: str, claims: tuple[str, ...]) -> Path:
        src = tmp_path / name
        src.write_text(
            json.dumps(
                {
                    "id": "curie",
                    "response": " ".join(claims),
                    "claims": list(claims),
                    "documents": [{"id": d.id, "text": d.text} for d in CURIE.documents],
                }
            )
            + "\n"
        )
        return src

    args = ["--judge", "rule", "--pruner", "embedding", "--cache", str(tmp_path / "c.sqlite"), "-q"]
    first = write("a.jsonl", CURIE.claims)
    second = write("b.jsonl", ("Curie was born in Krakow.", "Bread needs wild yeast."))  # another response, same docs
    assert (
        cli.main(
            ["score", str(first), "-o", str(tmp_path / "a.out.jsonl"), "--summary", str(tmp_path / "a.json"), *args]
        )
        == 0
    )
    assert (
        cli.main(
            ["score", str(second), "-o", str(tmp_path / "b.out.jsonl"), "--summary", str(tmp_path / "b.json"), *args]
        )
        == 0
    )
    a = json.loads((tmp_path / "a.json").read_text())["stages"]["pruner"]
    b = json.loads((tmp_path / "b.json").read_text())["stages"]["pruner"]
    assert (a["texts_embedded"], a.get("texts_stored", 0)) == (1 + 4, 0)  # one claim, four one-window documents
    assert (b["texts_embedded"], b["texts_stored"]) == (2, 4)  # the new claims only
    # the stored rows give what embedding them again gives: a run without the cache prunes alike
    assert cli.main(["score", str(second), "-o", str(tmp_path / "c.out.jsonl"), *args[:-3], "--no-cache", "-q"]) == 0
    stored = [json.loads(x) for x in (tmp_path / "b.out.jsonl").read_text().splitlines()]
    fresh = [json.loads(x) for x in (tmp_path / "c.out.jsonl").read_text().splitlines()]

    def sims(rows: list[Any]) -> list[tuple[Any, ...]]:
        return [
            (j["doc_id"], j["source"], round(j["similarity"], 5))
            for r in rows
            for c in r["claims"]
            for j in c["judgments"]
        ]

    assert sims(stored) == sims(fresh)


def test_the_default_auto_pruner_decides_per_step_and_records_it(tmp_path: Path, register_backend: Any) -> None:
    register_backend("judge", "rule", RuleJudge)
    src = _curie_file(tmp_path)
    base = [
        "score",
        str(src),
        "--judge",
        "rule",
        "--pruner-arg",
        "threshold=0.3",
        "--pruner-arg",
        "k=1",
        "--set",
        "chunk.max_tokens=12",
        "-q",
    ]
    # one claim x 4 documents keeps all 4 (4.85 + 0.127 * 4 > 4): nothing to gain, the embedder never loads
    assert cli.main(base + ["-o", str(tmp_path / "a.jsonl"), "--summary", str(tmp_path / "a.json")]) == 0
    a = json.loads((tmp_path / "a.json").read_text())
    assert a["config"]["backends"]["pruner"]["name"] == "auto"
    (decision,) = a["stages"]["pruner"]["decisions"]
    assert (decision["prune"], decision["claims"], decision["pairs"], decision["docs_per_claim"]) == (False, 1, 6, 4.0)
    assert decision["expected_pruned_share"] == 0.0 and decision["judge_cost_from"].startswith("other_judge_s_per_pair")
    assert a["pairs"]["pruned"] == 0 and a["stages"]["pruner"]["kept_unpruned"] == 6
    assert "resolved" not in a["config"]["backends"]["pruner"]  # no model loaded
    # a rule that expects every document but one pruned and a costly judge: prunes, as embedding would
    hard = [
        "--pruner-arg",
        "kept_docs_base=1",
        "--pruner-arg",
        "kept_docs_share=0",
        "--pruner-arg",
        "other_judge_s_per_pair=1000",
    ]
    assert cli.main(base + hard + ["-o", str(tmp_path / "b.jsonl"), "--summary", str(tmp_path / "b.json")]) == 0
    b = json.loads((tmp_path / "b.json").read_text())
    (decision,) = b["stages"]["pruner"]["decisions"]
    assert decision["prune"] is True and decision["expected_pruned_share"] == 0.75
    assert b["pairs"]["pruned"] == 2  # bread and ocean, as in test_engine_reports_pruned_documents
    assert b["stages"]["engine"].get("claims_selection_cached", 0) == 0  # the first run stored no selection
    assert (
        cli.main(
            [
                "score",
                str(src),
                "--judge",
                "rule",
                "--pruner",
                "embedding",
                "--pruner-arg",
                "threshold=0.3",
                "--pruner-arg",
                "k=1",
                "--set",
                "chunk.max_tokens=12",
                "-q",
                "-o",
                str(tmp_path / "c.jsonl"),
                "--summary",
                str(tmp_path / "c.json"),
            ]
        )
        == 0
    )
    c = json.loads((tmp_path / "c.json").read_text())
    assert c["stages"]["engine"]["claims_selection_cached"] == 1  # auto's selections are embedding's
    assert [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()] == [
        json.loads(x.replace('"source": "judge"', '"source": "cache"'))
        for x in (tmp_path / "b.jsonl").read_text().splitlines()
    ]
