"""Loaders for judge training and evaluation data, each in its source's original format.

Two shapes come out:

- :class:`ClaimRecord`: a claim against documents of a corpus (SciFact / MultiVerS format:
  HealthVer train, SciFact, Citation-Integrity; Check-COVID), each with a label and, where
  the source gives them, the rationale sentences (indices into the document's sentences).
  :mod:`.pairs` turns them into sentence pairs and whole-abstract passages.
- :class:`LabelledPair`: a ready (claim, passage, label) pair (HealthVer's CSV, COVID-Fact, FEVER
  NLI, e-SNLI, SICK, WiCE).

Labels map onto SUPPORT / CONTRADICT / IRRELEVANT as ``../shared/data/README.md`` states;
a label outside a source's vocabulary is an error naming file, line and field. Each set's row (path,
use, licence, the loader's fixed arguments) is in the one table of data sources,
:data:`~conflictscore_local.formats.sources.DATA_SOURCES`, declared here (:data:`SOURCES`);
:func:`read_source` reads one by name.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ..backends.registry import REGISTRY
from ..bench.records import Record, iter_records
from ..core.errors import InputError
from ..core.types import CONTRADICT, IRRELEVANT, SUPPORT, Label
from ..formats.sources import DataSource
from ..util.jsonl import read_text


@dataclass(frozen=True)
class LabelledPair:
    """A (claim, passage, label) training or evaluation pair; ``source`` and ``kind`` say where it came from."""

    claim: str
    passage: str
    label: Label
    source: str
    kind: str = "pair"
    group: str | None = field(default=None, compare=False)
    """What must stay on one side of a split (a VitaminC case, an ANLI round); not written out."""

    def as_json(self) -> dict[str, str]:
        return {
            "claim": self.claim,
            "passage": self.passage,
            "label": self.label,
            "source": self.source,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class Evidence:
    """A claim's label against one corpus document, and its rationale sentence indices (may be empty)."""

    doc_id: str
    label: Label
    rationale: tuple[int, ...] = ()


@dataclass(frozen=True)
class ClaimRecord:
    """A claim and the corpus documents it was checked against."""

    claim: str
    evidence: tuple[Evidence, ...]
    source: str


Corpus = dict[str, tuple[str, ...]]  # doc id → sentences of the abstract


def read_source(data_dir: str | Path, name: str, **kwargs: Any) -> Iterable[Any]:
    """What data source ``name`` (a row of the registry's ``data_source`` namespace) holds under
    ``data_dir``: its loader on its path, ``kwargs`` (a corpus) over the row's own."""
    return REGISTRY["data_source"].get(name).read_from(data_dir, **kwargs)


def document_text(sentences: Sequence[str]) -> str:
    """An abstract as one text: its sentences joined by single spaces."""
    return " ".join(s.strip() for s in sentences if s.strip())


def _label(rec: Record, field: str, value: str, mapping: dict[str, Label]) -> Label:
    if value not in mapping:
        raise rec.error(field, f"{value!r}; allowed: {', '.join(mapping)}")
    return mapping[value]


def load_corpus(path: str | Path, id_field: str = "doc_id") -> Corpus:
    """Abstracts ``{doc_id | cord_id, title, abstract: [sentences]}`` (SciFact / MultiVerS / Check-COVID)."""
    out: Corpus = {}
    for rec in iter_records(path):
        doc_id = str(rec.get(id_field, (str, int)))
        sentences = rec.get("abstract", list)
        for k, s in enumerate(sentences):
            if not isinstance(s, str):
                raise rec.error(f"abstract[{k}]", f"expected a string, got {type(s).__name__}")
        out[doc_id] = tuple(sentences)
    return out


_MULTIVERS_LABELS: dict[str, Label] = {"SUPPORT": SUPPORT, "CONTRADICT": CONTRADICT, "REFUTE": CONTRADICT}


def load_multivers_claims(path: str | Path, source: str, corpus: Corpus) -> Iterator[ClaimRecord]:
    """Claims in the SciFact / MultiVerS format: ``{id, claim, evidence: {doc_id: [{sentences,
    label}]}, doc_ids | cited_doc_ids}``.

    A cited document with evidence takes its label (SUPPORT, CONTRADICT or REFUTE) and the
    union of its rationale sentences; a cited document without evidence is IRRELEVANT (NEI)
    with no rationale. Every cited document must be in ``corpus``.
    """
    for rec in iter_records(path):
        claim = rec.text("claim").strip()
        cited_field = "cited_doc_ids" if "cited_doc_ids" in rec.obj else "doc_ids"
        cited = [str(d) for d in rec.get(cited_field, list, default=[])]
        evidence = rec.get("evidence", dict)
        out: list[Evidence] = []
        for doc_id in dict.fromkeys([*cited, *evidence]):
            if doc_id not in corpus:
                raise rec.error(
                    cited_field if doc_id in cited else "evidence", f"document {doc_id} is not in the corpus"
                )
            sets = evidence.get(doc_id)
            if not sets:
                out.append(Evidence(doc_id, IRRELEVANT))
                continue
            labels, rationale = set(), set()
            for k, raw in enumerate(sets):
                e = rec.sub(raw, f"evidence.{doc_id}[{k}]")
                labels.add(_label(e, "label", e.get("label", str), _MULTIVERS_LABELS))
                for i in e.get("sentences", list):
                    if not isinstance(i, int) or not 0 <= i < len(corpus[doc_id]):
                        raise e.error(
                            "sentences", f"sentence index {i!r} outside the abstract ({len(corpus[doc_id])} sentences)"
                        )
                    rationale.add(i)
            if len(labels) > 1:
                raise rec.error(f"evidence.{doc_id}", f"contradictory labels {sorted(labels)} for one document")
            out.append(Evidence(doc_id, labels.pop(), tuple(sorted(rationale))))
        if out:
            yield ClaimRecord(claim, tuple(out), source)


_CHECK_COVID_LABELS: dict[str, Label] = {"SUPPORT": SUPPORT, "REFUTE": CONTRADICT, "NOTENOUGHINFO": IRRELEVANT}


def load_check_covid(path: str | Path, corpus: Corpus, source: str = "check_covid") -> Iterator[ClaimRecord]:
    """Check-COVID (JSONL despite ``.json``): ``{claim, cord_id, label SUPPORT/REFUTE/NOTENOUGHINFO,
    evidence_set: [{sent_index}]}``. For NOTENOUGHINFO the listed sentences are on topic but
    do not settle the claim: they stay as the (IRRELEVANT) rationale."""
    for rec in iter_records(path):
        claim = rec.text("claim").strip()
        doc_id = str(rec.get("cord_id", (str, int)))
        if doc_id not in corpus:
            raise rec.error("cord_id", f"document {doc_id} is not in the corpus")
        label = _label(rec, "label", rec.get("label", str), _CHECK_COVID_LABELS)
        idx = set()
        for k, raw in enumerate(rec.get("evidence_set", list, default=[])):
            i = rec.sub(raw, f"evidence_set[{k}]").get("sent_index", int)
            if not 0 <= i < len(corpus[doc_id]):
                raise rec.error(
                    f"evidence_set[{k}].sent_index", f"{i} is outside the abstract ({len(corpus[doc_id])} sentences)"
                )
            idx.add(i)
        yield ClaimRecord(claim, (Evidence(doc_id, label, tuple(sorted(idx))),), source)


_COVIDFACT_LABELS: dict[str, Label] = {"SUPPORTED": SUPPORT, "REFUTED": CONTRADICT}


def load_covidfact(path: str | Path) -> Iterator[LabelledPair]:
    """COVID-Fact: ``{claim, label SUPPORTED/REFUTED, evidence: [sentences]}``, the evidence
    sentences joined as the passage. Refuted claims are automatic word swaps of true ones."""
    for rec in iter_records(path):
        label = _label(rec, "label", rec.get("label", str), _COVIDFACT_LABELS)
        yield LabelledPair(
            rec.text("claim").strip(),
            " ".join(s.strip() for s in rec.str_list("evidence")),
            label,
            "covidfact",
            "evidence",
        )


def _lines(path: Path) -> list[str]:
    return read_text(path).splitlines()


def _parallel(files: tuple[Path, Path, Path]) -> Iterator[tuple[int, str, str, str]]:
    """(line number, premise, hypothesis, label) of three line-aligned files."""
    premises, hypotheses, labels = (_lines(f) for f in files)
    if not len(premises) == len(hypotheses) == len(labels):
        raise InputError(
            f"line-aligned files differ in length: {len(premises)} / {len(hypotheses)} / {len(labels)} lines",
            path=str(files[0].parent),
        )
    for n, (p, h, lab) in enumerate(zip(premises, hypotheses, labels), 1):
        yield n, p, h, lab.strip()


_FEVER_LABELS: dict[str, Label] = {"entailment": SUPPORT, "not_entailment": CONTRADICT}


def load_fever_nli(directory: str | Path, split: str = "dev") -> Iterator[LabelledPair]:
    """FEVER as NLI pairs (``{split}.raw.input0`` evidence, ``.raw.input1`` claim, ``.label``):
    entailment → SUPPORT, not_entailment → CONTRADICT (the sampled refutations)."""
    d = Path(directory)
    files = (d / f"{split}.raw.input0", d / f"{split}.raw.input1", d / f"{split}.label")
    for n, premise, claim, label in _parallel(files):
        if label not in _FEVER_LABELS:
            raise InputError(f"{label!r}; allowed: {', '.join(_FEVER_LABELS)}", path=str(files[2]), line=n)
        yield LabelledPair(detokenize(claim), detokenize(premise), _FEVER_LABELS[label], "fever_nli")


_NLI_LABELS: dict[str, Label] = {"entailment": SUPPORT, "contradiction": CONTRADICT, "neutral": IRRELEVANT}


def load_esnli(directory: str | Path, split: str) -> Iterator[LabelledPair]:
    """e-SNLI's SNLI pairs (``s1.{split}`` premise, ``s2.{split}`` hypothesis, ``labels.{split}``),
    detokenised; entailment / contradiction / neutral."""
    d = Path(directory)
    files = (d / f"s1.{split}", d / f"s2.{split}", d / f"labels.{split}")
    for n, premise, hypothesis, label in _parallel(files):
        if label not in _NLI_LABELS:
            raise InputError(f"{label!r}; allowed: {', '.join(_NLI_LABELS)}", path=str(files[2]), line=n)
        yield LabelledPair(
            _sentence_case(detokenize(hypothesis)), _sentence_case(detokenize(premise)), _NLI_LABELS[label], "esnli"
        )


_BRACKETS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
_SPACE_BEFORE = re.compile(r" ([.,;:!?%)\]}]|'s\b|n't\b|'re\b|'ve\b|'ll\b|'d\b|'m\b)")
_SPACE_AFTER = re.compile(r"([(\[{$]) ")


def detokenize(text: str) -> str:
    """Undo PTB-style tokenisation: ``-LRB-`` brackets, ``` `` ''`` quotes, spaces before
    punctuation and clitics (``Obama 's`` → ``Obama's``)."""
    t = text.strip()
    for k, v in _BRACKETS.items():
        t = t.replace(k, v)
    t = t.replace("``", '"').replace("''", '"').replace(" -- ", " – ")
    t = _SPACE_BEFORE.sub(r"\1", t)
    t = _SPACE_AFTER.sub(r"\1", t)
    t = re.sub(r'" (.*?) "', r'"\1"', t)
    return re.sub(r"\s+", " ", t)


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


_HV_LABELS: dict[str, Label] = {"Supports": SUPPORT, "Refutes": CONTRADICT, "Neutral": IRRELEVANT}


def load_healthver_csv(path: str | Path) -> Iterator[LabelledPair]:
    """HealthVer's CSV split files: ``evidence, claim, label Supports/Refutes/Neutral, question``."""
    for n, row in enumerate(csv.DictReader(io.StringIO(read_text(path), newline="")), 2):
        for k in ("evidence", "claim", "label"):
            if not (row.get(k) or "").strip():
                raise InputError("missing or empty", path=str(path), line=n, field=k)
        if row["label"] not in _HV_LABELS:
            raise InputError(
                f"{row['label']!r}; allowed: {', '.join(_HV_LABELS)}", path=str(path), line=n, field="label"
            )
        yield LabelledPair(row["claim"].strip(), row["evidence"].strip(), _HV_LABELS[row["label"]], "healthver_dev")


def load_wice(path: str | Path) -> Iterator[LabelledPair]:
    """WiCE ``supported`` claims against their smallest set of supporting sentences.

    Partially supported and not-supported claims are left out: the data says which
    sentences fail to support them, not that any sentence contradicts them.
    """
    for rec in iter_records(path):
        sets = [s for s in rec.get("supporting_sentences", list, default=[]) if s]
        if rec.get("label", str) != "supported" or not sets:
            continue
        evidence = rec.get("evidence", list)
        best = min(sets, key=len)
        if any(not isinstance(i, int) or not 0 <= i < len(evidence) for i in best):
            raise rec.error("supporting_sentences", f"sentence index outside evidence ({len(evidence)} sentences)")
        sentences = [evidence[i] for i in sorted(best)]
        if any(s.startswith("(meta data)") for s in sentences):
            continue
        yield LabelledPair(rec.text("claim").strip(), " ".join(s.strip() for s in sentences), SUPPORT, "wice")


_SICK_LABELS: dict[str, Label] = {"ENTAILMENT": SUPPORT, "CONTRADICTION": CONTRADICT, "NEUTRAL": IRRELEVANT}


def load_sick(path: str | Path) -> Iterator[LabelledPair]:
    """SICK (tab-separated): premise ``sentence_A``, hypothesis (the claim) ``sentence_B``."""
    for n, r in enumerate(csv.DictReader(io.StringIO(read_text(path), newline=""), delimiter="\t"), 2):
        label = r.get("entailment_judgment")
        if label not in _SICK_LABELS:
            raise InputError(
                f"{label!r}; allowed: {', '.join(_SICK_LABELS)}", path=str(path), line=n, field="entailment_judgment"
            )
        yield LabelledPair(r["sentence_B"].strip(), r["sentence_A"].strip(), _SICK_LABELS[label], "sick")


SOURCES: tuple[DataSource, ...] = (
    DataSource("healthver_train_corpus", load_corpus, "healthver_train/corpus.jsonl", use="corpus"),
    DataSource("scifact_corpus", load_corpus, "scifact/corpus.jsonl", use="corpus"),
    DataSource(
        "check_covid_corpus", load_corpus, "check_covid/corpus.json", use="corpus", kwargs={"id_field": "cord_id"}
    ),
    DataSource("citint_corpus", load_corpus, "citint/corpus.jsonl", use="corpus"),
    DataSource(
        "healthver_train",
        load_multivers_claims,
        "healthver_train/claims_train.jsonl",
        use="train",
        licence="none stated",
        kwargs={"source": "healthver_train"},
    ),
    DataSource(
        "scifact",
        load_multivers_claims,
        "scifact/claims_train_cited.jsonl",
        use="train",
        licence="claims CC BY 4.0, abstracts ODC-By",
        kwargs={"source": "scifact"},
    ),
    DataSource(
        "check_covid",
        load_check_covid,
        "check_covid/train/covidCheck_train_composed+extracted.json",
        use="train",
        licence="MIT",
    ),
    DataSource(
        "citint",
        load_multivers_claims,
        "citint/claims_train.jsonl",
        use="train",
        licence="MIT",
        kwargs={"source": "citint"},
    ),
    DataSource(
        "scifact_dev",
        load_multivers_claims,
        "scifact/claims_dev_cited.jsonl",
        use="eval",
        kwargs={"source": "scifact_dev"},
    ),
    DataSource(
        "check_covid_dev",
        load_check_covid,
        "check_covid/dev/covidCheck_dev_composed+extracted.json",
        use="eval",
        kwargs={"source": "check_covid_dev"},
    ),
    DataSource(
        "citint_dev", load_multivers_claims, "citint/claims_dev.jsonl", use="eval", kwargs={"source": "citint_dev"}
    ),
    DataSource("healthver_dev", load_healthver_csv, "healthver/data/healthver_dev.csv", use="eval"),
    DataSource("covidfact", load_covidfact, "covidfact/COVIDFACT_dataset.jsonl", use="train", licence="none stated"),
    DataSource("fever_nli", load_fever_nli, "fever_nli", use="train", licence="CC BY-SA 3.0 (Wikipedia text)"),
    DataSource("esnli_dev", load_esnli, "esnli", use="train", licence="SNLI CC BY-SA 4.0", kwargs={"split": "dev"}),
    DataSource("esnli_test", load_esnli, "esnli", use="eval", licence="SNLI CC BY-SA 4.0", kwargs={"split": "test"}),
    DataSource("sick", load_sick, "sick/SICK.txt", use="train", licence="none in the mirror"),
    DataSource(
        "wice", load_wice, "wice/data/entailment_retrieval/claim/dev.jsonl", use="train", licence="annotations ODC-BY"
    ),
)
"""The judge's training, evaluation and corpus rows of the one table of data sources (read by
:func:`read_source`; ``train-judge prepare`` decides how many of each go into the mix)."""
