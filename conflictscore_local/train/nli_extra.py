"""Loaders for ``nli_extra/``: public NLI and fact-verification sets aimed at known judge weaknesses.

Each loader reads one set in its original format (``../shared/data/nli_extra/README.md``
names the repository and commit of every file) and yields :class:`~.sources.LabelledPair` s with
premise / evidence as the passage and hypothesis / claim as the claim. Labels map as that
README states (entailment / SUPPORTS → SUPPORT, contradiction / REFUTES → CONTRADICT,
neutral / NOT ENOUGH INFO → IRRELEVANT); a label a set uses for "not entailed" (merging
CONTRADICT and IRRELEVANT: RTE's ``not_entailment``, MED's ``neutral``) is skipped and
counted, never guessed; any other label is an error naming file, line and field.

:func:`extra_sets` (their rows of the one table of data sources) says, per set, where it lies, its licence, and whether
the shipped judge may train on it: ANLI, ConTRoL and AVeriTeC are non-commercial (evaluation only), TaxiNLI
is the MNLI-dev anchor, NaN-NLI a hand-built negation test suite, FEVER-Symmetric's test
split and the held-out splits of the others are evaluation sets.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, cast, overload

from ..backends.registry import REGISTRY
from ..bench.records import iter_records
from ..core.errors import InputError
from ..core.types import CONTRADICT, IRRELEVANT, SUPPORT, Label
from ..formats.sources import DataSource, by_use
from .sources import LabelledPair, detokenize

SKIP = "skip"
"""Mapped label of a class that merges CONTRADICT and IRRELEVANT: the pair is left out."""

_NLI: dict[str, Label] = {"entailment": SUPPORT, "contradiction": CONTRADICT, "neutral": IRRELEVANT}
_NLI_SHORT: dict[str, Label] = {"e": SUPPORT, "c": CONTRADICT, "n": IRRELEVANT}
_FV: dict[str, Label] = {"SUPPORTS": SUPPORT, "REFUTES": CONTRADICT, "NOT ENOUGH INFO": IRRELEVANT}
_AVERITEC: dict[str, Label | str] = {
    "Supported": SUPPORT,
    "Refuted": CONTRADICT,
    "Not Enough Evidence": IRRELEVANT,
    "Conflicting Evidence/Cherrypicking": SKIP,
}

skipped: Counter[str] = Counter()
"""Pairs left out per source because their label merges two of ours (reset by the caller)."""


@overload
def _map(mapping: Mapping[str, Label], value: object, *, path: Path, line: int, field: str, source: str) -> Label: ...
@overload
def _map(
    mapping: Mapping[str, Label | str], value: object, *, path: Path, line: int, field: str, source: str
) -> Label | None: ...
def _map(
    mapping: Mapping[str, Label | str], value: object, *, path: Path, line: int, field: str, source: str
) -> Label | None:
    """The label ``value`` maps to; None for a SKIP (only a mapping holding SKIP can give None)."""
    if not isinstance(value, str) or value not in mapping:
        raise InputError(f"{value!r}; allowed: {', '.join(mapping)}", path=str(path), line=line, field=field)
    out = mapping[value]
    if out == SKIP:
        skipped[source] += 1
        return None
    return cast(Label, out)  # every value of a mapping but SKIP is a Label


def _open_text(path: Path, encoding: str = "utf-8-sig") -> str:
    try:
        return path.read_bytes().decode(encoding)
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=str(path)) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not {encoding} text (byte {e.start}): {e.reason}", path=str(path)) from None


def _rows(
    path: Path, *, delimiter: str = ",", encoding: str = "utf-8-sig", need: tuple[str, ...] = ()
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) of a CSV/TSV file with a header; missing columns are an error."""
    text = _open_text(path, encoding)
    reader = csv.DictReader(
        io.StringIO(text, newline=""),
        delimiter=delimiter,
        quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL,
    )
    missing = [c for c in need if c not in (reader.fieldnames or ())]
    if missing:
        raise InputError(f"missing column {missing[0]!r} (header: {reader.fieldnames})", path=str(path), line=1)
    for row in reader:
        yield reader.line_num, row


def _pair(
    claim: str,
    passage: str,
    label: Label,
    source: str,
    *,
    path: Path,
    line: int,
    group: str | None = None,
    tokenized: bool = False,
) -> LabelledPair:
    claim, passage = (detokenize(claim), detokenize(passage)) if tokenized else (claim.strip(), passage.strip())
    if not claim or not passage:
        raise InputError("empty premise or hypothesis", path=str(path), line=line)
    return LabelledPair(claim, passage, label, source, group=group)


# -- negation ---------------------------------------------------------------------------------
SCONE_FILES = (
    "no_negation",
    "one_not_scoped",
    "one_scoped",
    "one_scoped_one_not_scoped",
    "two_not_scoped",
    "two_scoped",
)


def load_scone(directory: str | Path, split: str) -> Iterator[LabelledPair]:
    """ScoNe-NLI ``scone_nli/{split}/*.csv``: the ``*_edited`` columns (``one_scoped.csv``: the
    plain ones); entailment → SUPPORT, neutral → IRRELEVANT (ScoNe has no contradiction)."""
    d = Path(directory) / "scone_nli" / split
    for name in SCONE_FILES:
        path = d / f"{name}.csv"
        cols = (
            ("sentence1", "sentence2", "gold_label")
            if name == "one_scoped"
            else ("sentence1_edited", "sentence2_edited", "gold_label_edited")
        )
        for n, row in _rows(path, need=cols):
            label = _map(_NLI, row[cols[2]], path=path, line=n, field=cols[2], source="scone")
            if label is not None:
                yield _pair(
                    row[cols[1]],
                    row[cols[0]],
                    label,
                    "scone",
                    path=path,
                    line=n,
                    group=f"{name}:{row.get('group_index', n)}",
                )


def load_nan_nli(path: str | Path) -> Iterator[LabelledPair]:
    """NaN-NLI ``data/nan.csv``: premise, hypothesis, label (entailment / contradiction / neutral)."""
    path = Path(path)
    for n, row in _rows(path, need=("premise", "hypothesis", "label")):
        label = _map(_NLI, row["label"], path=path, line=n, field="label", source="nan_nli")
        yield _pair(row["hypothesis"], row["premise"], label, "nan_nli", path=path, line=n)


def load_monli(path: str | Path) -> Iterator[LabelledPair]:
    """MoNLI's positive part ``pmonli.jsonl``: sentence1, sentence2, gold_label entailment / neutral."""
    for rec in iter_records(path):
        label = _map(
            _NLI, rec.get("gold_label", str), path=Path(path), line=rec.line, field="gold_label", source="monli"
        )
        yield _pair(rec.text("sentence2"), rec.text("sentence1"), label, "monli", path=Path(path), line=rec.line)


def load_hossain(directory: str | Path, names: tuple[str, ...] = ("MNLI", "SNLI", "RTE")) -> Iterator[LabelledPair]:
    """Hossain et al.'s negation benchmarks ``data/new_benchmarks/clean_data/{MNLI,SNLI,RTE}.txt``
    (TSV in cp1252 with CRLF: index, Text, Hypothesis, gold_label). RTE's ``not_entailment``
    merges CONTRADICT and IRRELEVANT and is skipped."""
    mapping = {**_NLI, "not_entailment": SKIP}
    for name in names:
        path = Path(directory) / "data/new_benchmarks/clean_data" / f"{name}.txt"
        for n, row in _rows(path, delimiter="\t", encoding="cp1252", need=("Text", "Hypothesis", "gold_label")):
            label = _map(
                mapping, row["gold_label"].strip(), path=path, line=n, field="gold_label", source="negnli_hossain"
            )
            if label is not None:
                yield _pair(
                    row["Hypothesis"],
                    row["Text"],
                    label,
                    "negnli_hossain",
                    path=path,
                    line=n,
                    group=f"{name}:{row['index']}",
                )


def load_med(path: str | Path) -> Iterator[LabelledPair]:
    """MED ``MED.tsv``: entailment → SUPPORT; its ``neutral`` is "not entailed" (neutral or
    contradiction) and is skipped."""
    path = Path(path)
    for n, row in _rows(path, delimiter="\t", need=("sentence1", "sentence2", "gold_label")):
        label = _map(
            {"entailment": SUPPORT, "neutral": SKIP},
            row["gold_label"],
            path=path,
            line=n,
            field="gold_label",
            source="med",
        )
        if label is not None:
            yield _pair(row["sentence2"], row["sentence1"], label, "med", path=path, line=n)


# -- contrastive fact verification ------------------------------------------------------------
def _fv_jsonl(path: str | Path, source: str, label_field: str, group_field: str | None) -> Iterator[LabelledPair]:
    for rec in iter_records(path):
        label = _map(_FV, rec.get(label_field, str), path=Path(path), line=rec.line, field=label_field, source=source)
        group = str(rec.get(group_field, (str, int))) if group_field else None
        if not rec.get("evidence", str).strip():  # a few rows of adversarial FEVER have no evidence sentence
            skipped[f"{source} (empty evidence)"] += 1
            continue
        if label is not None:
            yield _pair(
                rec.text("claim"),
                rec.text("evidence"),
                label,
                source,
                path=Path(path),
                line=rec.line,
                group=group,
                tokenized=True,
            )


def load_vitaminc(path: str | Path, source: str = "vitaminc") -> Iterator[LabelledPair]:
    """VitaminC ``test.jsonl`` (real or synthetic): claim, evidence, label SUPPORTS / REFUTES /
    NOT ENOUGH INFO; the Wikipedia ``page`` is the group (its revisions give near-identical
    claims and evidence, so a held-out split must hold out whole pages)."""
    return _fv_jsonl(path, source, "label", "page")


def load_fever_symmetric(path: str | Path) -> Iterator[LabelledPair]:
    """Symmetric FEVER v0.2 ``fever_symmetric_{dev,test}.jsonl``: claim, evidence, gold_label."""
    return _fv_jsonl(path, "fever_symmetric", "gold_label", "id")


def load_fever_adversarial(path: str | Path) -> Iterator[LabelledPair]:
    """FEVER 2.0 fixers dev (adversarial FEVER) ``test.jsonl``: one row per evidence sentence."""
    return _fv_jsonl(path, "fever_adversarial", "label", "id")


# -- general and adversarial NLI --------------------------------------------------------------
def load_anli_test(path: str | Path) -> Iterator[LabelledPair]:
    """ANLI R1–R3 test in fact-verification format (``vitaminc_format_test/test.jsonl``); the
    round (``tag`` r1_test / r2_test / r3_test) is the group. Non-commercial: evaluation only."""
    for rec in iter_records(path):
        label = _map(_FV, rec.get("label", str), path=Path(path), line=rec.line, field="label", source="anli")
        yield _pair(
            rec.text("claim"),
            rec.text("evidence"),
            label,
            "anli",
            path=Path(path),
            line=rec.line,
            group=rec.get("tag", str),
        )


def load_anli_dev(directory: str | Path, rounds: tuple[int, ...] = (1, 2, 3)) -> Iterator[LabelledPair]:
    """ANLI dev with annotations ``anli_annot_v0.2/ANLI_analysis_r{n}_dev.csv`` (context,
    statement, gold_label e / n / c, tags); group = ``r{n}:{tags}``. Evaluation only."""
    for r in rounds:
        path = Path(directory) / f"anlizinganli/anli_annot_v0.2/ANLI_analysis_r{r}_dev.csv"
        for n, row in _rows(path, need=("context", "statement", "gold_label", "tags")):
            label = _map(_NLI_SHORT, row["gold_label"], path=path, line=n, field="gold_label", source="anli")
            yield _pair(row["statement"], row["context"], label, "anli", path=path, line=n, group=f"r{r}:{row['tags']}")


def load_taxinli(path: str | Path) -> Iterator[LabelledPair]:
    """TaxiNLI ``taxinli10k.tsv`` (≈ MNLI dev): prem, hyp, label (the MNLI gold label);
    group = ``genre``. The MNLI-dev anchor: evaluation only."""
    path = Path(path)
    for n, row in _rows(path, delimiter="\t", need=("prem", "hyp", "label")):
        label = _map(_NLI, row["label"], path=path, line=n, field="label", source="taxinli")
        yield _pair(row["hyp"], row["prem"], label, "taxinli", path=path, line=n, group=row.get("genre") or None)


CAD_PARTS = ("original", "revised_premise", "revised_hypothesis")


def load_cad(directory: str | Path, split: str) -> Iterator[LabelledPair]:
    """Counterfactually-augmented SNLI ``NLI/{original,revised_premise,revised_hypothesis}/{split}.tsv``
    (sentence1, sentence2, gold_label); group = the part."""
    for part in CAD_PARTS:
        path = Path(directory) / "NLI" / part / f"{split}.tsv"
        for n, row in _rows(path, delimiter="\t", need=("sentence1", "sentence2", "gold_label")):
            label = _map(_NLI, row["gold_label"], path=path, line=n, field="gold_label", source="cad_snli")
            yield _pair(row["sentence2"], row["sentence1"], label, "cad_snli", path=path, line=n, group=part)


def load_breaking_nli(path: str | Path) -> Iterator[LabelledPair]:
    """Breaking NLI ``data/dataset.jsonl``: single-word substitutions; group = ``category``."""
    for rec in iter_records(path):
        label = _map(
            _NLI, rec.get("gold_label", str), path=Path(path), line=rec.line, field="gold_label", source="breaking_nli"
        )
        yield _pair(
            rec.text("sentence2"),
            rec.text("sentence1"),
            label,
            "breaking_nli",
            path=Path(path),
            line=rec.line,
            group=rec.get("category", str, default=None),
        )


def load_conjnli(path: str | Path) -> Iterator[LabelledPair]:
    """ConjNLI TSV (``conj_dev.tsv`` or ``adversarial_train_15k.tsv``, UTF-8 with BOM): Premise,
    Hypothesis, Label."""
    path = Path(path)
    for n, row in _rows(path, delimiter="\t", need=("Premise", "Hypothesis", "Label")):
        label = _map(_NLI, row["Label"], path=path, line=n, field="Label", source="conjnli")
        yield _pair(row["Hypothesis"], row["Premise"], label, "conjnli", path=path, line=n)


def load_control(path: str | Path) -> Iterator[LabelledPair]:
    """ConTRoL ``data/{dev,test}.jsonl``: premise (long passage), hypothesis, label e / c / n.
    Non-commercial: evaluation only."""
    for rec in iter_records(path):
        label = _map(_NLI_SHORT, rec.get("label", str), path=Path(path), line=rec.line, field="label", source="control")
        yield _pair(rec.text("hypothesis"), rec.text("premise"), label, "control", path=Path(path), line=rec.line)


def load_averitec(path: str | Path) -> Iterator[LabelledPair]:
    """AVeriTeC ``data/dev.json`` (one JSON array): the claim against its annotated evidence,
    the question–answer pairs written out as sentences ("Q? A."). Conflicting /
    cherry-picking verdicts are skipped. Non-commercial: evaluation only."""
    path = Path(path)
    try:
        data = json.loads(_open_text(path))
    except json.JSONDecodeError as e:
        raise InputError(f"not JSON: {e.msg}", path=str(path), line=e.lineno) from None
    if not isinstance(data, list):
        raise InputError("expected a JSON array of claims", path=str(path))
    for k, rec in enumerate(data):
        where = f"[{k}]"
        if not isinstance(rec, dict) or not isinstance(rec.get("claim"), str):
            raise InputError("expected an object with a string claim", path=str(path), field=where)
        label = _map(_AVERITEC, rec.get("label"), path=path, line=0, field=f"{where}.label", source="averitec")
        if label is None:
            continue
        parts = []
        for q in rec.get("questions") or ():
            answers = [a.get("answer", "").strip() for a in q.get("answers") or () if isinstance(a, dict)]
            answers = [a for a in answers if a and a.lower() not in ("no answer could be found.", "no answer")]
            if answers:
                question = q.get("question", "").strip().rstrip("?")
                parts.append(f"{question}? " + " ".join(a if a.endswith(".") else a + "." for a in answers))
        if parts:
            yield LabelledPair(rec["claim"].strip(), " ".join(parts), label, "averitec", group=str(k))


# -- the sets, their licences and uses ----------------------------------------------------------
def extra_sets() -> dict[str, DataSource]:
    """Every ``nli_extra`` set the project reads, by name: the rows of the one table of data sources
    (:data:`~conflictscore_local.formats.sources.DATA_SOURCES`) whose path is under ``nli_extra/``, with
    where each lies, its licence, and ``use``: ``train`` (the shipped judge may train on it; held-out
    parts are sets of their own) or ``eval`` (evaluation only: non-commercial licence, an anchor, or a
    hand-built test suite)."""
    return {
        n: s
        for n, s in by_use(REGISTRY["data_source"].table(), "train", "eval").items()
        if (s.path or "").startswith("nli_extra/")
    }


def load_extra(data_dir: str | Path, name: str) -> list[LabelledPair]:
    """All pairs of one set of :func:`extra_sets` under ``data_dir``."""
    sets = extra_sets()
    if name not in sets:
        raise InputError(f"unknown nli_extra set {name!r}; allowed: {', '.join(sets)}")
    return list(sets[name].read_from(data_dir))


def _set(
    name: str,
    path: str,
    licence: str,
    use: str,
    load: Callable[..., Iterator[LabelledPair]],
    note: str = "",
    **kwargs: Any,
) -> DataSource:
    return DataSource(name, load, "nli_extra/" + path, use=use, licence=licence, note=note, kwargs=kwargs)


SOURCES: tuple[DataSource, ...] = (
    _set("scone_train", "scone", "CC0 1.0", "train", load_scone, split="train"),
    _set("scone_test", "scone", "CC0 1.0", "eval", load_scone, "held out: negation dev set", split="test"),
    _set("nan_nli", "nan-nli/data/nan.csv", "none stated", "eval", load_nan_nli, "hand-built negation test suite"),
    _set("monli", "monli/pmonli.jsonl", "none stated", "train", load_monli),
    _set(
        "negnli_hossain",
        "negnli-hossain",
        "MIT",
        "train",
        load_hossain,
        "RTE.txt is binary (not_entailment merges C and I)",
        names=("MNLI", "SNLI"),
    ),
    _set(
        "med",
        "med/MED.tsv",
        "CC BY-SA 4.0",
        "train",
        load_med,
        "entailment pairs only: its neutral merges neutral and contradiction",
    ),
    _set(
        "vitaminc_real",
        "vitaminc/vitaminc_real/test.jsonl",
        "CC BY-SA 3.0",
        "train",
        load_vitaminc,
        "split by case_id: a held-out part is a dev set",
        source="vitaminc_real",
    ),
    _set(
        "vitaminc_synthetic",
        "vitaminc/vitaminc_synthetic/test.jsonl",
        "CC BY-SA 3.0",
        "train",
        load_vitaminc,
        "split by case_id",
        source="vitaminc_synthetic",
    ),
    _set(
        "fever_symmetric_dev",
        "fever-symmetric/symmetric_v0.2/fever_symmetric_dev.jsonl",
        "CC BY-SA 3.0",
        "train",
        load_fever_symmetric,
    ),
    _set(
        "fever_symmetric_test",
        "fever-symmetric/symmetric_v0.2/fever_symmetric_test.jsonl",
        "CC BY-SA 3.0",
        "eval",
        load_fever_symmetric,
        "held out",
    ),
    _set("fever_adversarial", "fever-adversarial/test.jsonl", "CC BY-SA 3.0", "train", load_fever_adversarial),
    _set("cad_snli_train", "cad-snli", "Apache-2.0", "train", load_cad, split="train"),
    _set("cad_snli_dev", "cad-snli", "Apache-2.0", "eval", load_cad, "held out: a dev set", split="dev"),
    _set(
        "cad_snli_test",
        "cad-snli",
        "Apache-2.0",
        "eval",
        load_cad,
        "held out (its originals come from SNLI test)",
        split="test",
    ),
    _set(
        "breaking_nli",
        "breaking-nli/data/dataset.jsonl",
        "CC BY-SA 4.0",
        "train",
        load_breaking_nli,
        "skewed to CONTRADICT: capped",
    ),
    _set(
        "conjnli_train",
        "conjnli/data/NLI/adversarial_train_15k.tsv",
        "MIT",
        "train",
        load_conjnli,
        "automatic perturbations: capped",
    ),
    _set("conjnli_dev", "conjnli/data/NLI/conj_dev.tsv", "MIT", "eval", load_conjnli, "held out"),
    _set(
        "anli_test",
        "anli/vitaminc_format_test/test.jsonl",
        "CC BY-NC 4.0",
        "eval",
        load_anli_test,
        "non-commercial; anchor",
    ),
    _set("anli_dev", "anli", "CC BY-NC 4.0", "eval", load_anli_dev, "non-commercial"),
    _set("taxinli", "taxinli/taxinli10k.tsv", "C-UDA 1.0", "eval", load_taxinli, "MNLI dev anchor"),
    _set("control_dev", "control/data/dev.jsonl", "CC BY-NC-SA 4.0", "eval", load_control, "non-commercial"),
    _set("control_test", "control/data/test.jsonl", "CC BY-NC-SA 4.0", "eval", load_control, "non-commercial"),
    _set("averitec", "averitec/data/dev.json", "CC BY-NC 4.0", "eval", load_averitec, "non-commercial"),
)
"""The ``nli_extra`` rows of the one table of data sources: where each set lies, its licence, and
whether the shipped judge may train on it (see :func:`extra_sets`)."""
