"""Loaders that turn public conflict data sets into ConflictBench items.

Each loader reads one source's own file format and yields items made by
:func:`~conflictscore_local.bench.items.make_item`; its row (name, path, description, options) is in
the one table of data sources, :data:`~conflictscore_local.formats.sources.DATA_SOURCES`. The mapping of every source's
labels onto SUPPORT / CONTRADICT / IRRELEVANT is documented in ``benchmarks/results/judge/conflictbench.md``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..backends.arguments import ranged
from ..backends.registry import REGISTRY
from ..core.errors import InputError
from ..core.types import CONTRADICT, IRRELEVANT, SUPPORT
from ..formats.sources import BenchSource, DataSource, NoOptions, by_use  # noqa: F401 (BenchSource: the old name)
from .claims import declarative, name_entity
from .items import make_item
from .records import Record, iter_records
from .split import normalize_text

Loader = Callable[[Path, Any], Iterator[dict[str, Any]]]
"""A ConflictBench loader: ``(path, options)`` → items; its row is in :data:`SOURCES`."""


@dataclass(frozen=True)
class ClimateFeverOptions:
    """``max_entropy``: drop evidence whose annotator-vote entropy is above it (None keeps all)."""

    max_entropy: float | None = ranged(None, 0.0, 10.0)


@dataclass(frozen=True)
class MacNoiseOptions:
    """``levels``: the ``pert_lbls*`` keys to turn into items (None: every one)."""

    levels: list[str] | None = None


# -- answer-based sources (RAMDocs, AmbigDocs) -----------------------------------------------


@dataclass(frozen=True)
class _AnswerDoc:
    text: str
    kind: str  # correct | misinfo | noise
    answer: str
    entity: str | None
    meta: Mapping[str, Any]


def _answer_items(
    source: str,
    base_id: str,
    question: str,
    targets: Sequence[tuple[str, str | None]],
    docs: Sequence[_AnswerDoc],
) -> Iterator[dict[str, Any]]:
    """Both variants of a question with several valid answers (one per entity).

    ``no_entity``: one claim per distinct answer, not naming its entity; a correct document
    with another answer is about another entity under the same name and CONTRADICTs the
    unqualified claim (the RAMDocs framing). ``entity``: one claim per (answer, entity),
    naming its entity; documents about another entity are IRRELEVANT. In both, misinfo
    documents CONTRADICT (SUPPORT when their fake answer happens to be this claim's
    answer) and noise is IRRELEVANT. A document's entity is its ``entity`` when the source
    gives one (AmbigDocs titles), else its answer stands for it (RAMDocs).
    """
    by_answer: dict[str, tuple[str, str | None]] = {}
    for answer, entity in targets:
        by_answer.setdefault(normalize_text(answer), (answer, None))
    variants: list[tuple[str, list[tuple[str, str | None]]]] = [("no_entity", list(by_answer.values()))]
    if all(e for _, e in targets):
        variants.append(("entity", list(targets)))
    documents = [{"id": f"d{j}", "text": d.text, **d.meta} for j, d in enumerate(docs)]
    for variant, tgts in variants:
        claims, rows = [], []
        for answer, entity in tgts:
            claim = declarative(question, answer)
            if variant == "entity":
                claim = name_entity(claim, entity or "")
            claims.append(claim)
            rows.append([_answer_label(d, answer, entity, variant) for d in docs])
        ambiguous = variant == "no_entity" and len(by_answer) >= 2
        yield make_item(
            source=source,
            id=f"{base_id}:{variant}",
            question=question,
            claims=claims,
            documents=documents,
            gold_labels=rows,
            conflict_type="ambiguity" if ambiguous else "misinformation",
            split_key=question,
            variant=variant,
        )


def _answer_label(d: _AnswerDoc, answer: str, entity: str | None, variant: str) -> str:
    same_answer = normalize_text(d.answer) == normalize_text(answer)
    if d.kind == "noise":
        return IRRELEVANT
    if d.kind == "misinfo":
        return SUPPORT if same_answer else CONTRADICT
    if variant == "no_entity":
        return SUPPORT if same_answer else CONTRADICT
    same_entity = d.entity == entity if d.entity is not None else same_answer
    if not same_entity:
        return IRRELEVANT
    return SUPPORT if same_answer else CONTRADICT


_RAMDOCS_KINDS = ("correct", "misinfo", "noise")


def load_ramdocs(path: Path, options: NoOptions) -> Iterator[dict[str, Any]]:
    """RAMDocs (``RAMDocs_test.jsonl``): one item per question and variant.

    ``disambig_entity[k]`` is the entity of ``gold_answers[k]``; when the two lists do not
    align only the ``no_entity`` variant is emitted.
    """
    for i, rec in enumerate(iter_records(path)):
        question = rec.text("question")
        gold = rec.str_list("gold_answers")
        ents = rec.get("disambig_entity", list, default=[])
        entities = [str(e) for e in ents] if len(ents) == len(gold) else [None] * len(gold)
        docs = []
        for j, raw in enumerate(rec.get("documents", list, nonempty=True)):
            d = rec.sub(raw, f"documents[{j}]")
            kind = d.get("type", str)
            if kind not in _RAMDOCS_KINDS:
                raise d.error("type", f"{kind!r} is not a document type; allowed: {', '.join(_RAMDOCS_KINDS)}")
            answer = d.get("answer", str, default="")
            if kind == "correct" and normalize_text(answer) not in {normalize_text(g) for g in gold}:
                raise d.error("answer", f"{answer!r} of a correct document is not among gold_answers {gold}")
            docs.append(_AnswerDoc(d.text("text"), kind, answer, None, {"type": kind, "answer": answer}))
        yield from _answer_items("ramdocs", f"ramdocs:{i}", question, list(zip(gold, entities)), docs)


def load_ambigdocs(path: Path, options: NoOptions) -> Iterator[dict[str, Any]]:
    """AmbigDocs (``{qid, ambiguous_entity, question, documents: [{title, text, pid, answer}]}``).

    Every document is a correct document about the entity in its ``title``; one claim per
    distinct answer (``no_entity``) and per entity (``entity``).
    """
    for i, rec in enumerate(iter_records(path)):
        question = rec.text("question")
        qid = str(rec.get("qid", (str, int), default=i))
        docs, targets, seen = [], [], set()
        for j, raw in enumerate(rec.get("documents", list, nonempty=True)):
            d = rec.sub(raw, f"documents[{j}]")
            title, answer = d.text("title"), d.text("answer")
            meta = {"title": title, "answer": answer, "pid": str(d.get("pid", (str, int), default=""))}
            docs.append(_AnswerDoc(d.text("text"), "correct", answer, title, meta))
            if title not in seen:
                seen.add(title)
                targets.append((answer, title))
        for item in _answer_items("ambigdocs", f"ambigdocs:{qid}", question, targets, docs):
            item["ambiguous_entity"] = rec.get("ambiguous_entity", str, default="")
            yield item


# -- claim + evidence sources (ContraQA EN555, Climate-FEVER) -------------------------------

_EN555_LABELS = {"supports": SUPPORT, "refutes": CONTRADICT, "neutral": IRRELEVANT}
_EN555_KINDS = (("conflict", ("conflict", "conflcit")), ("support", ("support",)), ("neutral", ("neutral",)))
# ContraQA (EN555) has no field that marks opinions; a conflict whose annotated question or
# claim asks for a judgement, recommendation or comparison is counted as an opinion conflict.
_OPINION_CUES = re.compile(
    r"\b(should|better|best|worse|worst|recommend\w*|advis\w*|perceived?|believe\w*|opinion|reasonable|safe to)\b",
    re.I,
)


def _en555_files(path: Path) -> list[tuple[str, Path]]:
    files = [path] if path.is_file() else sorted(path.glob("*.json"))
    out = []
    for f in files:
        name = f.name.lower()
        kind = next((k for k, cues in _EN555_KINDS if any(c in name for c in cues)), None)
        if kind is not None:
            out.append((kind, f))
    if not out:
        raise InputError(
            "no ContraQA (EN555) file here: expected names containing 'conflcits'/'conflicts', 'support' or 'neutral'",
            path=str(path),
        )
    return out


def load_contraqa_en555(path: Path, options: NoOptions) -> Iterator[dict[str, Any]]:
    """ContraQA (EN555) ``raw_data``: each claim against its evidence sentences.

    The conflict file gives conflicted claims (``opinion`` when the annotated wh-question
    or the claim asks for a judgement — see ``_OPINION_CUES`` — else ``contradiction``);
    the support and neutral files give non-conflicted controls.
    """
    for kind, f in _en555_files(path):
        for i, rec in enumerate(iter_records(f)):
            claim = rec.text("claim").strip()
            evid = rec.get("evidences", list, nonempty=True)
            labels = rec.get("labels", list)
            if len(labels) != len(evid):
                raise rec.error("labels", f"has {len(labels)} labels for {len(evid)} evidences")
            pids = rec.get("paragraph_id", list, default=[None] * len(evid))
            docs, row = [], []
            for j, (text, lab) in enumerate(zip(evid, labels)):
                if not isinstance(text, str) or not text.strip():
                    raise rec.error(f"evidences[{j}]", "expected a non-empty string")
                mapped = _EN555_LABELS.get(str(lab).lower())
                if mapped is None:
                    raise rec.error(f"labels[{j}]", f"{lab!r}; allowed: Supports, Refutes, Neutral")
                docs.append(
                    {
                        "id": f"d{j}",
                        "text": text.strip(),
                        "stance": lab,
                        "paragraph_id": pids[j] if j < len(pids) else None,
                    }
                )
                row.append(mapped)
            wh_question = rec.get("wh_question", str, default="")
            cue_text = f"{wh_question} {claim}"
            yield make_item(
                source="contraqa_en555",
                id=f"contraqa_en555:{kind}:{i}",
                question=wh_question or None,
                claims=[claim],
                documents=docs,
                gold_labels=[row],
                conflict_type="opinion" if _OPINION_CUES.search(cue_text) else "contradiction",
                split_key=claim,
                variant=kind,
                claim_id=rec.get("claim_id", (int, str), default=None),
                dataset_name=rec.get("dataset_name", str, default=""),
                wh_answers=rec.literal_list("wh_answers"),
                yes_no_questions=rec.literal_list("yes_no_questions"),
            )


_CF_LABELS = {"SUPPORTS": SUPPORT, "REFUTES": CONTRADICT, "NOT_ENOUGH_INFO": IRRELEVANT}


def load_climate_fever(path: Path, options: ClimateFeverOptions) -> Iterator[dict[str, Any]]:
    """Climate-FEVER: each claim against its five evidence sentences.

    DISPUTED claims (SUPPORTS and REFUTES evidence) are conflicted; the others are
    controls. Option ``max_entropy``: drop evidence whose annotator-vote entropy is above
    it (low agreement); a claim left without evidence is skipped.
    """
    max_entropy = options.max_entropy
    for rec in iter_records(path):
        claim = rec.text("claim").strip()
        docs, row = [], []
        for j, raw in enumerate(rec.get("evidences", list, nonempty=True)):
            e = rec.sub(raw, f"evidences[{j}]")
            lab = e.get("evidence_label", str)
            if lab not in _CF_LABELS:
                raise e.error("evidence_label", f"{lab!r}; allowed: {', '.join(_CF_LABELS)}")
            entropy = e.get("entropy", (int, float), default=None)
            if max_entropy is not None and entropy is not None and entropy > max_entropy:
                continue
            docs.append(
                {
                    "id": f"d{j}",
                    "text": e.text("evidence").strip(),
                    "evidence_id": e.get("evidence_id", str, default=""),
                    "article": e.get("article", str, default=""),
                    "evidence_label": lab,
                    "entropy": entropy,
                }
            )
            row.append(_CF_LABELS[lab])
        if not docs:
            continue
        yield make_item(
            source="climate_fever",
            id=f"climate_fever:{rec.get('claim_id', (str, int))}",
            question=None,
            claims=[claim],
            documents=docs,
            gold_labels=[row],
            conflict_type="contradiction",
            split_key=claim,
            claim_label=rec.get("claim_label", str, default=""),
        )


# -- counterfactual passages (MacNoise), misinformation (ContraQA by Pan et al.) -------------

_PERT_KEY = re.compile(r"^pert_lbls(_\w+)?$")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_NON_WORD = re.compile(r"[\W_]+")


def _words(text: str) -> str:
    """NFKC, case-folded words joined by single spaces, with a space at both ends;
    punctuation separates words and thousands separators go (``1,000`` → ``1000``)."""
    t = _THOUSANDS.sub("", unicodedata.normalize("NFKC", text).casefold())
    return f" {_NON_WORD.sub(' ', t).strip()} "


def _contains_answer(text: str, answers: Sequence[str]) -> bool:
    """Whether some answer occurs in ``text`` as whole words (``four`` is not in ``fourth``)."""
    t = _words(text)
    return any(a.strip() and _words(a) in t for a in answers)


def load_macnoise(path: Path, options: MacNoiseOptions) -> Iterator[dict[str, Any]]:
    """MacNoise / Discern-and-Answer (``{question, answers, ctxs: [{id, title, text, text_pert}], pert_lbls*}``).

    One item per question and perturbation level (each ``pert_lbls*`` vector, identical
    vectors once): a perturbed passage (``text_pert``) CONTRADICTs the gold answer; an
    unperturbed one (``text``) SUPPORTs it when it contains an answer as whole words, else is
    IRRELEVANT.
    ``path`` is a file or a directory of ``*.json`` / ``*.jsonl`` files. Option
    ``levels``: the ``pert_lbls*`` keys to use (default all).
    """
    levels = options.levels
    files = [path] if path.is_file() else sorted([*path.glob("*.json"), *path.glob("*.jsonl")])
    if not files:
        raise InputError("no *.json or *.jsonl file in this directory", path=str(path))
    for f in files:
        for i, rec in enumerate(iter_records(f)):
            question = rec.text("question")
            answers = rec.str_list("answers")
            ctxs = [rec.sub(c, f"ctxs[{j}]") for j, c in enumerate(rec.get("ctxs", list, nonempty=True))]
            keys = sorted(k for k in rec.obj if _PERT_KEY.match(k) and (levels is None or k in levels))
            if not keys:
                raise rec.error("pert_lbls", "missing (a 0/1 list per passage: 1 = perturbed)")
            seen: set[tuple[int, ...]] = set()
            for key in keys:
                vec = rec.get(key, list)
                if len(vec) != len(ctxs) or any(v not in (0, 1) for v in vec):
                    raise rec.error(key, f"expected {len(ctxs)} values of 0/1 (one per ctxs entry), got {vec!r}")
                if tuple(vec) in seen:
                    continue
                seen.add(tuple(vec))
                docs, row = [], []
                for j, (c, pert) in enumerate(zip(ctxs, vec)):
                    text = c.text("text_pert" if pert else "text")
                    docs.append(
                        {
                            "id": f"d{j}",
                            "text": text,
                            "title": c.get("title", str, default=""),
                            "ctx_id": str(c.get("id", (str, int), default="")),
                            "perturbed": bool(pert),
                        }
                    )
                    row.append(CONTRADICT if pert else SUPPORT if _contains_answer(text, answers) else IRRELEVANT)
                yield make_item(
                    source="macnoise",
                    id=f"macnoise:{f.stem}:{i}:{key}",
                    question=question,
                    claims=[declarative(question, answers[0])],
                    documents=docs,
                    gold_labels=[row],
                    conflict_type="counterfactual",
                    split_key=question,
                    variant=f"{f.stem}:{key}",
                    answers=answers,
                )


_FAKE_ID = re.compile(r"-FAKE$")


def load_contraqa_pan(path: Path, options: NoOptions) -> Iterator[dict[str, Any]]:
    """ContraQA by Pan et al.: a question, its real passages and misinformation passages.

    Accepted shapes: ``{question, answers|answer, real_passages: [...], fake_passages: [...]}``
    or ``{question, answers|answer, passages: [{id, contents|text}]}`` where an id ending
    in ``-FAKE`` marks misinformation (the convention of their polluted corpus). A passage
    is a string or an object with ``text`` or ``contents``. Real passages SUPPORT the
    claim built from the first answer, fake ones CONTRADICT it.
    """
    for i, rec in enumerate(iter_records(path)):
        question = rec.text("question")
        if "answers" in rec.obj:
            answers = [rec.text("answers")] if isinstance(rec.obj["answers"], str) else rec.str_list("answers")
        else:
            answers = [rec.text("answer")]
        passages: list[tuple[str, bool, str]] = []
        if "passages" in rec.obj:
            for j, raw in enumerate(rec.get("passages", list, nonempty=True)):
                pid, text = _passage(rec, "passages", j, raw)
                passages.append((text, bool(_FAKE_ID.search(pid)), pid))
        else:
            for name, fake in (("real_passages", False), ("fake_passages", True)):
                for j, raw in enumerate(rec.get(name, list, nonempty=True)):
                    pid, text = _passage(rec, name, j, raw)
                    passages.append((text, fake, pid))
        docs = [
            {"id": f"d{j}", "text": t, "misinformation": fake, "passage_id": pid}
            for j, (t, fake, pid) in enumerate(passages)
        ]
        row = [CONTRADICT if fake else SUPPORT for _, fake, _ in passages]
        yield make_item(
            source="contraqa_pan",
            id=f"contraqa_pan:{rec.get('id', (str, int), default=i)}",
            question=question,
            claims=[declarative(question, answers[0])],
            documents=docs,
            gold_labels=[row],
            conflict_type="misinformation",
            split_key=question,
            answers=answers,
        )


def _passage(rec: Record, field: str, j: int, raw: Any) -> tuple[str, str]:
    if isinstance(raw, str):
        if not raw.strip():
            raise rec.error(f"{field}[{j}]", "must not be empty")
        return "", raw
    p = rec.sub(raw, f"{field}[{j}]")
    text = p.text("text") if "text" in p.obj else p.text("contents")
    return str(p.get("id", (str, int), default="")), text


# -- opinions (ConflictingQA) --------------------------------------------------------------

_STANCES = {"yes": SUPPORT, "no": CONTRADICT}
_SEARCH_TYPES = {"yes_statement": "yes", "no_statement": "no"}


def load_conflictingqa(path: Path, options: NoOptions) -> Iterator[dict[str, Any]]:
    """ConflictingQA (Wan et al. 2024), one row per (query, web page), as JSON records.

    Rows are grouped by ``search_query`` into one item whose claim is the yes answer;
    documents whose ``stance`` (else ``search_type``) is yes SUPPORT it and no CONTRADICT
    it: opinion conflicts. Export the released pandas pickle with
    ``df.to_json(path, orient="records", lines=True)``; pickles are not read.
    """
    groups: dict[str, list[tuple[Record, dict[str, Any], str]]] = {}
    for rec in iter_records(path):
        query = rec.text("search_query").strip()
        stance = rec.get("stance", str, default="").strip().lower()
        if not stance:
            st = rec.get("search_type", str)
            if st not in _SEARCH_TYPES:
                raise rec.error("search_type", f"{st!r}; allowed: {', '.join(_SEARCH_TYPES)} (or give 'stance')")
            stance = _SEARCH_TYPES[st]
        if stance not in _STANCES:
            raise rec.error("stance", f"{stance!r}; allowed: yes, no")
        text = rec.text("text_window") if rec.obj.get("text_window") else rec.text("text_raw")
        doc = {
            "text": text,
            "stance": stance,
            "url": rec.get("url", str, default=""),
            "title": rec.get("title", str, default=""),
            "category": rec.get("category", str, default=""),
        }
        groups.setdefault(query, []).append((rec, doc, stance))
    for k, (query, rows) in enumerate(groups.items()):
        docs = [{"id": f"d{j}", **doc} for j, (_, doc, _) in enumerate(rows)]
        yield make_item(
            source="conflictingqa",
            id=f"conflictingqa:{k}",
            question=query,
            claims=[declarative(query, "yes")],
            documents=docs,
            gold_labels=[[_STANCES[s] for _, _, s in rows]],
            conflict_type="opinion",
            split_key=query,
        )


SOURCES: tuple[DataSource, ...] = (
    DataSource(
        "ramdocs",
        load_ramdocs,
        "ramdocs/RAMDocs_test.jsonl",
        "RAMDocs: ambiguity (other entity) and misinformation, two variants per question",
    ),
    DataSource(
        "contraqa_en555",
        load_contraqa_en555,
        "contraqa_en555/raw_data",
        "ContraQA (EN555): HealthVer / Climate-FEVER claims, conflict / support / neutral files",
    ),
    DataSource(
        "climate_fever",
        load_climate_fever,
        "climate_fever/dataset/climate-fever.jsonl",
        "Climate-FEVER: DISPUTED claims conflicted, single-sided claims controls",
        ClimateFeverOptions,
    ),
    DataSource(
        "macnoise",
        load_macnoise,
        "macnoise/DATA/GPT",
        "MacNoise: counterfactual passages, one item per perturbation level",
        MacNoiseOptions,
    ),
    DataSource("ambigdocs", load_ambigdocs, None, "AmbigDocs original format: ambiguity"),
    DataSource("conflictingqa", load_conflictingqa, None, "ConflictingQA: yes/no opinion conflicts"),
    DataSource("contraqa_pan", load_contraqa_pan, None, "ContraQA (Pan et al.): misinformation passages"),
)
"""ConflictBench's rows of the one table of data sources (``use="bench"``)."""


def bench_sources() -> dict[str, DataSource]:
    """ConflictBench's sources: the ``bench`` rows of the registry's ``data_source`` namespace (a
    plugin's too), in registration order."""
    return by_use(REGISTRY["data_source"].table(), "bench")


class _BenchSources(Mapping[str, DataSource]):
    """:func:`bench_sources` as a read-only mapping, read again at every use."""

    def __getitem__(self, name: str) -> DataSource:
        return bench_sources()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(bench_sources())

    def __len__(self) -> int:
        return len(bench_sources())


BENCH_SOURCES: Mapping[str, DataSource] = _BenchSources()
"""ConflictBench's sources by name (a live view of :func:`bench_sources`)."""
DEFAULT_SOURCES: tuple[str, ...] = tuple(s.name for s in SOURCES if s.path is not None)
"""The built-in sources with a file in the shared data: what ``bench build`` builds by default."""
