"""The default judge's data: training mix, held-out evaluation splits, and the leakage check.

``conflictscore train-judge prepare -o DIR`` writes, from ``../shared/data`` only:

- ``pairs.jsonl``: plain training pairs (claim, passage, label, source, kind) from HealthVer
  train, SciFact train, Check-COVID train and Citation-Integrity train (claims × cited
  abstracts: :mod:`.pairs`), COVID-Fact, FEVER, e-SNLI, SICK, WiCE and pairs generated from
  supported pairs (:mod:`.augment`), each source capped per label (:class:`Mix`);
- ``bench_train.jsonl``: ConflictBench train items (RAMDocs twins thinned);
- evaluation files, never trained on (items in the ``score`` input format plus gold, split
  ``dev``): ``bench_dev.jsonl``, ``bench_test.jsonl`` (the report's held-out test),
  ``scifact_dev.jsonl``, ``check_covid_dev.jsonl``, ``citint_dev.jsonl`` (each claim against
  its cited abstracts), ``healthver_dev.jsonl`` (each claim against its evidence texts);
- ``data.json``: the mix (pairs per source, kind and label), leak counts before and after
  filtering, licences, settings and file hashes.

No text is in both: every document and claim of an evaluation file is indexed
(:class:`~conflictscore_local.bench.leakage.TextIndex`: the same normalised text, or a
shared sentence); training documents and claims found there are dropped before pairs are
built (ConflictBench train items lose them too), and the build fails if any pair still
leaks. One exception, by design: HealthVer's dev evidence is cut from the same abstracts as
its train corpus, so there the evaluation gives way: ``healthver_dev.jsonl`` keeps the rows
whose evidence no training document contains (HealthVer train is the data this judge needs
most).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..bench import build_bench, make_item, normalize_text
from ..bench.leakage import TextIndex, check_disjoint, eval_index, find_leaks, separate_splits
from ..chunk import Chunker
from ..jsonl import file_sha256
from ..writing import write_json_atomic, write_jsonl_atomic
from ..types import CONTRADICT, IRRELEVANT, LABELS, SUPPORT
from .augment import augment, bench_support_pairs, thin_entity_twins
from .pairs import cap, corpus_pairs
from .sources import (
    ClaimRecord,
    Corpus,
    Evidence,
    Pair,
    document_text,
    load_check_covid,
    load_corpus,
    load_covidfact,
    load_esnli,
    load_fever_nli,
    load_healthver_csv,
    load_multivers_claims,
    load_sick,
    load_wice,
)

# path under the data folder, licence as stated by the source (../shared/data/README.md)
SOURCES: dict[str, dict[str, str]] = {
    "conflictbench": {"path": "(bench build: ramdocs, contraqa_en555, climate_fever, macnoise)",
                      "licence": "RAMDocs MIT; ContraQA EN555, Climate-FEVER, MacNoise none stated"},
    "healthver_train": {"path": "healthver_train/claims_train.jsonl + corpus.jsonl", "licence": "none stated"},
    "scifact": {"path": "scifact/claims_train_cited.jsonl + corpus.jsonl",
                "licence": "claims CC BY 4.0, abstracts ODC-By"},
    "check_covid": {"path": "check_covid/train/covidCheck_train_composed+extracted.json + corpus.json",
                    "licence": "MIT"},
    "citint": {"path": "citint/claims_train.jsonl + corpus.jsonl", "licence": "MIT"},
    "covidfact": {"path": "covidfact/COVIDFACT_dataset.jsonl", "licence": "none stated"},
    "fever_nli": {"path": "fever_nli/dev.raw.input0/1 + dev.label", "licence": "CC BY-SA 3.0 (Wikipedia text)"},
    "esnli": {"path": "esnli/s1/s2/labels.{dev,test}", "licence": "SNLI CC BY-SA 4.0"},
    "sick": {"path": "sick/SICK.txt", "licence": "none in the mirror"},
    "wice": {"path": "wice/data/entailment_retrieval/claim/dev.jsonl", "licence": "annotations ODC-BY"},
    "generated": {"path": "(from the training pairs above)", "licence": "as their sources"},
}
EVAL_SOURCES: dict[str, str] = {
    "bench_dev": "ConflictBench dev split", "bench_test": "ConflictBench test split (the report's held-out test)",
    "scifact_dev": "scifact/claims_dev_cited.jsonl", "check_covid_dev": "check_covid/dev/…composed+extracted.json",
    "citint_dev": "citint/claims_dev.jsonl", "healthver_dev": "healthver/data/healthver_dev.csv",
}


@dataclass(frozen=True)
class Mix:
    """How much of each source goes in (caps are per label; None keeps everything).

    CONTRADICT is the class the old judge missed, so every corpus source's CONTRADICT pairs
    are kept whole; noisy or easy sources are capped: COVID-Fact's refutations are
    automatic word swaps, SNLI and SICK are short caption sentences, FEVER's
    ``not_entailment`` mixes refutations with unverifiable claims (only its SUPPORT pairs are
    used). Each abstract corpus (HealthVer, SciFact, Check-COVID, Citation-Integrity) gives
    at most ``corpus_*`` pairs per label, sampled across pair kinds; ConflictBench train keeps
    every item with a gold conflict and ``bench_controls_per_source`` control items per source.
    The defaults size the mix for about an hour of one epoch on a 2-core CPU.
    """

    seed: int = 0
    max_length: int = 192
    easy_negatives: int = 1
    corpus_support: int = 600
    corpus_contradict: int = 1000
    corpus_irrelevant: int = 700
    bench_controls_per_source: int = 250
    covidfact_per_label: int = 150
    fever_support: int = 300
    esnli_per_label: int = 150
    sick_per_label: int = 100
    augment_per_kind: int = 400
    augment_max_words: int = 100

    def corpus_caps(self) -> dict[str, int]:
        return {SUPPORT: self.corpus_support, CONTRADICT: self.corpus_contradict, IRRELEVANT: self.corpus_irrelevant}


def _chunker(base: str, max_length: int) -> Chunker:
    """The ``nli`` judge's passage splitting for the base model's tokenizer and this window."""
    from transformers import AutoTokenizer

    from .loop import make_chunker
    from .model import resolve_base

    return make_chunker(AutoTokenizer.from_pretrained(resolve_base(base)), max_length)


def _corpus_item(source: str, i: int, rec: ClaimRecord, corpus: Corpus) -> dict[str, Any]:
    docs = [{"id": f"d{j}", "text": document_text(corpus[e.doc_id]), "doc_id": e.doc_id}
            for j, e in enumerate(rec.evidence)]
    return _eval_item(source, f"{source}:{i}", rec.claim, docs, [e.label for e in rec.evidence])


def _eval_item(source: str, id: str, claim: str, docs: list[dict[str, Any]], row: list[str]) -> dict[str, Any]:
    item = make_item(source=source, id=id, question=None, claims=[claim], documents=docs, gold_labels=[row],
                     conflict_type="contradiction", split_key=claim)
    return {**item, "split": "dev"}


def _healthver_items(pairs: Iterable[Pair]) -> list[dict[str, Any]]:
    by_claim: dict[str, list[Pair]] = {}
    for p in pairs:
        by_claim.setdefault(p.claim, []).append(p)
    return [_eval_item("healthver_dev", f"healthver_dev:{i}", claim,
                       [{"id": f"d{j}", "text": p.passage} for j, p in enumerate(ps)], [p.label for p in ps])
            for i, (claim, ps) in enumerate(by_claim.items())]


def _filter_records(records: Iterable[ClaimRecord], corpus: Corpus, index: TextIndex,
                    counts: Counter[str]) -> list[ClaimRecord]:
    """Records without the claims and documents ``index`` holds (counted in ``counts``)."""
    out = []
    for rec in records:
        if index.claim_leaks(rec.claim):
            counts["claims"] += 1
            continue
        keep = tuple(e for e in rec.evidence if not _document_leaks(index, corpus[e.doc_id]))
        counts["documents"] += len(rec.evidence) - len(keep)
        if keep:
            out.append(ClaimRecord(rec.claim, keep, rec.source))
    return out


def _document_leaks(index: TextIndex, sentences: Sequence[str]) -> bool:
    """Whether an abstract, or any of its own sentences, is an evaluation text (the source's
    sentence list is checked too: a passage may start where our sentence splitter saw none)."""
    return index.document_leaks(document_text(sentences)) or any(index.document_leaks(s) for s in sentences)


def _filter_pairs(pairs: Iterable[Pair], index: TextIndex, counts: Counter[str]) -> list[Pair]:
    out = []
    for p in pairs:
        if index.claim_leaks(p.claim):
            counts["claims"] += 1
        elif index.document_leaks(p.passage):
            counts["documents"] += 1
        else:
            out.append(p)
    return out


def _cap_controls(items: Sequence[dict[str, Any]], per_source: int,
                  rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """Every item with a gold conflict, and at most ``per_source`` control items (no gold
    conflict) of each source, sampled; returns the items (input order) and how many were dropped."""
    controls: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        if it["conflict_type"] == "none":
            controls.setdefault(it["source"], []).append(i)
    drop = set()
    for idx in controls.values():
        if len(idx) > per_source:
            drop |= set(idx) - set(rng.sample(idx, per_source))
    return [it for i, it in enumerate(items) if i not in drop], len(drop)


def _dedupe(pairs: Iterable[Pair]) -> list[Pair]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in pairs:
        key = (normalize_text(p.claim), normalize_text(p.passage))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def mix_table(pairs: Sequence[Pair]) -> dict[str, dict[str, dict[str, int]]]:
    """Pairs per source, kind and label."""
    out: dict[str, dict[str, Counter[str]]] = {}
    for p in pairs:
        out.setdefault(p.source, {}).setdefault(p.kind, Counter())[p.label] += 1
    return {s: {k: {lab: c[lab] for lab in LABELS if c[lab]} for k, c in sorted(kinds.items())}
            for s, kinds in sorted(out.items())}


def build(data_dir: Path, out_dir: Path, *, base: str = "minilm", mix: Mix = Mix(),
          chunker: Chunker | None = None) -> dict[str, Any]:
    """Write the training and evaluation files into ``out_dir``; return the ``data.json`` record."""
    rng = random.Random(mix.seed)
    chunker = chunker or _chunker(base, mix.max_length)
    d = Path(data_dir)

    # -- evaluation side -------------------------------------------------------------
    bench = build_bench(d)
    by_split: dict[str, list[dict[str, Any]]] = {"train": [], "dev": [], "test": []}
    for it in bench:
        by_split[it["split"]].append(it)
    corpora = {
        "healthver_train": load_corpus(d / "healthver_train/corpus.jsonl"),
        "scifact": load_corpus(d / "scifact/corpus.jsonl"),
        "check_covid": load_corpus(d / "check_covid/corpus.json", id_field="cord_id"),
        "citint": load_corpus(d / "citint/corpus.jsonl"),
    }
    dev_records = {
        "scifact_dev": list(load_multivers_claims(d / "scifact/claims_dev_cited.jsonl", "scifact_dev",
                                                  corpora["scifact"])),
        "check_covid_dev": list(load_check_covid(d / "check_covid/dev/covidCheck_dev_composed+extracted.json",
                                                 corpora["check_covid"], "check_covid_dev")),
        "citint_dev": list(load_multivers_claims(d / "citint/claims_dev.jsonl", "citint_dev", corpora["citint"])),
    }
    evals: dict[str, list[dict[str, Any]]] = {"bench_dev": by_split["dev"], "bench_test": by_split["test"]}
    for name, recs in dev_records.items():
        corpus = corpora[name.removesuffix("_dev")]
        evals[name] = [_corpus_item(name, i, r, corpus) for i, r in enumerate(recs)]
    hv_train_docs = TextIndex()
    for doc in corpora["healthver_train"].values():
        hv_train_docs.add_document(document_text(doc))
    hv_dev = list(load_healthver_csv(d / "healthver/data/healthver_dev.csv"))
    hv_kept = [p for p in hv_dev if not hv_train_docs.document_leaks(p.passage)]
    evals["healthver_dev"] = _healthver_items(hv_kept)
    index = TextIndex()
    for items in evals.values():
        part = eval_index(items, splits=("dev", "test"))
        index.documents |= part.documents
        index.claims |= part.claims

    # -- training side: load, measure what would leak, drop it --------------------------
    train_records = {
        "healthver_train": list(load_multivers_claims(d / "healthver_train/claims_train.jsonl", "healthver_train",
                                                      corpora["healthver_train"])),
        "scifact": list(load_multivers_claims(d / "scifact/claims_train_cited.jsonl", "scifact", corpora["scifact"])),
        "check_covid": list(load_check_covid(d / "check_covid/train/covidCheck_train_composed+extracted.json",
                                             corpora["check_covid"])),
        "citint": list(load_multivers_claims(d / "citint/claims_train.jsonl", "citint", corpora["citint"])),
    }
    leaks_before = {}
    for name, recs in train_records.items():
        docs = [document_text(corpora[name][e.doc_id]) for r in recs for e in r.evidence]
        leaks_before[name] = find_leaks(index, docs, [r.claim for r in recs]).as_dict()
    removed: dict[str, Counter[str]] = {}
    pairs: list[Pair] = []
    for name, recs in train_records.items():
        corpus = corpora[name]
        removed[name] = Counter()
        kept = _filter_records(recs, corpus, index, removed[name])
        pool = sorted(doc_id for doc_id, s in corpus.items() if not _document_leaks(index, s))
        built = corpus_pairs(kept, corpus, chunker, rng, easy_negatives=mix.easy_negatives, pool=pool)
        pairs += cap(built, mix.corpus_caps(), rng)

    plain: dict[str, list[Pair]] = {
        "covidfact": cap(list(load_covidfact(d / "covidfact/COVIDFACT_dataset.jsonl")), mix.covidfact_per_label, rng),
        "fever_nli": cap([p for p in load_fever_nli(d / "fever_nli") if p.label == SUPPORT], mix.fever_support, rng),
        "esnli": cap([*load_esnli(d / "esnli", "dev"), *load_esnli(d / "esnli", "test")], mix.esnli_per_label, rng),
        "sick": cap(list(load_sick(d / "sick/SICK.txt")), mix.sick_per_label, rng),
        "wice": list(load_wice(d / "wice/data/entailment_retrieval/claim/dev.jsonl")),
    }
    for name, ps in plain.items():
        leaks_before[name] = find_leaks(index, [p.passage for p in ps], [p.claim for p in ps]).as_dict()
        removed[name] = Counter()
        pairs += _filter_pairs(ps, index, removed[name])

    leaks_before["conflictbench_train"] = find_leaks(
        index, [doc["text"] for it in by_split["train"] for _ in it["claims"] for doc in it["documents"]],
        [c for it in by_split["train"] for c in it["claims"]]).as_dict()
    bench_train, bench_removed = separate_splits(by_split["train"], index)
    bench_train, twin_pairs_dropped = thin_entity_twins(bench_train)
    bench_train, controls_dropped = _cap_controls(bench_train, mix.bench_controls_per_source, rng)

    support = [p for p in pairs if p.label == SUPPORT and len(p.passage.split()) <= mix.augment_max_words]
    support += bench_support_pairs(bench_train, mix.augment_max_words)
    passages = sorted({p.passage for p in pairs if len(p.passage.split()) <= mix.augment_max_words})
    generated = augment(_dedupe(support), passages, rng, per_kind=mix.augment_per_kind)
    removed["generated"] = Counter()
    pairs = _dedupe(pairs + _filter_pairs(generated, index, removed["generated"]))
    rng.shuffle(pairs)

    after = find_leaks(index, [p.passage for p in pairs] + [doc["text"] for it in bench_train for doc in it["documents"]],
                       [p.claim for p in pairs] + [c for it in bench_train for c in it["claims"]])
    check_disjoint(after, what="train-judge prepare", path=str(out_dir))

    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"pairs": out_dir / "pairs.jsonl", "bench_train": out_dir / "bench_train.jsonl",
             **{name: out_dir / f"{name}.jsonl" for name in evals}}
    write_jsonl_atomic(files["pairs"], (p.as_json() for p in pairs))
    write_jsonl_atomic(files["bench_train"], bench_train)
    for name, items in evals.items():
        write_jsonl_atomic(files[name], items)
    bench_pairs = Counter(lab for it in bench_train for row in it["gold_labels"] for lab in row)
    record = {
        "data_dir": "$CONFLICTSCORE_DATA (default ../shared/data)",
        "mix": asdict(mix),
        "base_tokenizer": base,
        "passage_budget_tokens": chunker.max_tokens,
        "sources": SOURCES,
        "pairs_by_source": mix_table(pairs),
        "pairs_by_label": {lab: sum(1 for p in pairs if p.label == lab) for lab in LABELS},
        "bench_train": {"items": len(bench_train), "claims": sum(len(it["claims"]) for it in bench_train),
                        "pairs_by_label": {lab: bench_pairs[lab] for lab in LABELS},
                        "entity_twin_pairs_dropped": twin_pairs_dropped,
                        "control_items_dropped": controls_dropped},
        "evaluation": {name: {"what": EVAL_SOURCES[name], "items": len(items),
                              "claims": sum(len(it["claims"]) for it in items),
                              "pairs_by_label": dict(Counter(lab for it in items for row in it["gold_labels"]
                                                             for lab in row))}
                       for name, items in evals.items()},
        "healthver_dev_rows": {"all": len(hv_dev), "kept": len(hv_kept),
                               "dropped_evidence_in_healthver_train_corpus": len(hv_dev) - len(hv_kept)},
        "leakage": {
            "rule": "same normalised text, or a shared sentence of >= 6 words, with any evaluation document; "
                    "same normalised claim",
            "before_filtering": leaks_before,
            "removed": {**{k: dict(v) for k, v in removed.items()}, "conflictbench_train": bench_removed},
            "after": after.as_dict(),
        },
        "files": {k: {"path": v.name, "sha256": file_sha256(v)} for k, v in files.items()},
    }
    write_json_atomic(out_dir / "data.json", record)
    return record
