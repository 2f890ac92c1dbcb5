"""Loaders for ``nli_general/`` and ``factcg_cg2c/``: the general NLI sets of judge v5's first stage and
FactCG's document-level pairs of its second.

Each loader reads one set in its original format (``../shared/data/nli_general/README.md`` and
``factcg_cg2c/README.md`` name the repository and commit of every file) and yields
:class:`~.sources.LabelledPair` s, premise / evidence as the passage and hypothesis / claim as the claim:

- LingNLI (MNLI-style; per-round files of the three protocols, never the ``*_combined`` ones, which
  hold the same rows again), entailment / contradiction / neutral;
- MPE (multiple-premise entailment: the four Flickr30k captions of one image joined as the premise);
- RTE (GLUE release): ``entailment`` → SUPPORT; ``not_entailment`` merges CONTRADICT and IRRELEVANT
  and is skipped (counted in :data:`.nli_extra.skipped`), never guessed;
- Fool Me Twice: the claim against its gold evidence sentences joined, SUPPORTS / REFUTES;
- FactCG CG2C: a news document against an LLM-written claim; ``orig_label`` 1 → SUPPORT, 0 (one
  relation the claim needs was removed from the document) → IRRELEVANT: not enough information,
  not a contradiction.

A label outside a set's vocabulary is an error naming file, line and field. The rows of the one
table of data sources (:data:`SOURCES`) say where each set lies, its licence and its use: the
test splits (MPE, FM2) are evaluation only.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Callable, Iterator

from ..bench.records import iter_records
from ..core.errors import InputError
from ..core.types import IRRELEVANT, SUPPORT, Label
from ..formats.sources import DataSource
from .nli_extra import _FV, _NLI, SKIP, _map, _pair, _rows
from .sources import LabelledPair

LINGNLI_PROTOCOLS = ("1_Baseline_protocol", "2_Ling_on_side_protocol", "3_Ling_in_loop_protocol")
LINGNLI_SPLITS = ("train", "val")


def load_lingnli(directory: str | Path, split: str) -> Iterator[LabelledPair]:
    """LingNLI ``NLI_data/<protocol>/{train,val}_round<n>_*.jsonl`` (premise, hypothesis, label);
    group = the MNLI ``promptID`` (one premise: its hypotheses stay on one side of a split)."""
    if split not in LINGNLI_SPLITS:
        raise InputError(f"LingNLI split {split!r}; allowed: {', '.join(LINGNLI_SPLITS)}")
    root = Path(directory) / "NLI_data"
    files = sorted(
        p
        for proto in LINGNLI_PROTOCOLS
        for p in (root / proto).glob(f"{split}_round*.jsonl")
        if "combined" not in p.name
    )
    if not files:
        raise InputError(f"no {split}_round*.jsonl file under {', '.join(LINGNLI_PROTOCOLS)}", path=str(root))
    for path in files:
        for rec in iter_records(path):
            label = _map(_NLI, rec.get("label", str), path=path, line=rec.line, field="label", source="lingnli")
            if label is not None:
                yield _pair(
                    rec.text("hypothesis"),
                    rec.text("premise"),
                    label,
                    "lingnli",
                    path=path,
                    line=rec.line,
                    group=str(rec.get("promptID", (str, int))),
                )


_MPE_LABEL_TAIL = re.compile(r"\s+(entailment|neutral|contradiction)\s*$")


def _caption(cell: str) -> str:
    """``<image>.jpg#<n>/<caption>`` → the caption."""
    return cell.split("/", 1)[1].strip() if "/" in cell else cell.strip()


def load_mpe(path: str | Path) -> Iterator[LabelledPair]:
    """MPE ``mpe_{train,dev,test}.txt`` (TSV, no quoting): the four captions joined as the premise;
    group = the image. One dev row lost the tab before its label (its last judgment count and the
    label share a field): the label is read from that field's end."""
    path = Path(path)
    cols = ("premise1", "premise2", "premise3", "premise4", "hypothesis", "gold_label")
    for n, row in _rows(path, delimiter="\t", need=cols):
        gold = row.get("gold_label")
        if gold is None:
            m = _MPE_LABEL_TAIL.search(row.get("contradiction_judgments") or "")
            gold = m.group(1) if m else None
        label = _map(_NLI, gold, path=path, line=n, field="gold_label", source="mpe")
        captions = [_caption(row[c] or "") for c in cols[:4]]
        premise = " ".join(c if c.endswith((".", "!", "?")) else c + "." for c in captions if c)
        if label is not None:
            yield _pair(
                row["hypothesis"] or "",
                premise,
                label,
                "mpe",
                path=path,
                line=n,
                group=(row["premise1"] or "").split("#", 1)[0],
            )


def load_rte(path: str | Path) -> Iterator[LabelledPair]:
    """GLUE RTE ``{train,dev}.tsv`` (index, sentence1, sentence2, label): entailment → SUPPORT;
    ``not_entailment`` (CONTRADICT or IRRELEVANT) skipped and counted."""
    path = Path(path)
    for n, row in _rows(path, delimiter="\t", need=("sentence1", "sentence2", "label")):
        label = _map(
            {"entailment": SUPPORT, "not_entailment": SKIP},
            row["label"],
            path=path,
            line=n,
            field="label",
            source="rte",
        )
        if label is not None:
            yield _pair(row["sentence2"], row["sentence1"], label, "rte", path=path, line=n)


def load_fm2(path: str | Path) -> Iterator[LabelledPair]:
    """Fool Me Twice ``dataset/{dev,test}.jsonl``: the claim (``text``) against its ``gold_evidence``
    sentences joined; SUPPORTS / REFUTES; group = the Wikipedia page."""
    path = Path(path)
    for rec in iter_records(path):
        label = _map(_FV, rec.get("label", str), path=path, line=rec.line, field="label", source="fm2")
        evidence = rec.get("gold_evidence", list)
        texts = [e.get("text", "").strip() for e in evidence if isinstance(e, dict)]
        if not any(texts):
            raise rec.error("gold_evidence", "no evidence sentence")
        if label is not None:
            yield _pair(
                rec.text("text"),
                " ".join(t for t in texts if t),
                label,
                "fm2",
                path=path,
                line=rec.line,
                group=rec.get("wikipedia_page", str, default=None),
            )


_CG2C: dict[int, Label] = {1: SUPPORT, 0: IRRELEVANT}


def load_cg2c(path: str | Path) -> Iterator[LabelledPair]:
    """FactCG ``CG2C_doc.jsonl``: ``text_a`` the document, ``text_b`` a one-element list with the claim,
    ``orig_label`` 1 → SUPPORT, 0 → IRRELEVANT (a relation the claim needs was removed: not
    enough information); group = the claim's source document (its first sentence), so that a
    claim's supported and unsupported twins stay on one side of a split."""
    path = Path(path)
    for rec in iter_records(path):
        value = rec.get("orig_label", int)
        if value not in _CG2C:
            raise rec.error("orig_label", f"{value!r}; allowed: 1, 0")
        claims = rec.get("text_b", list)
        if len(claims) != 1 or not isinstance(claims[0], str) or not claims[0].strip():
            raise rec.error("text_b", "expected a list holding one claim")
        doc = rec.text("text_a")
        group = hashlib.sha256(claims[0].strip().encode()).hexdigest()[:16]
        yield _pair(claims[0], doc, _CG2C[value], "factcg_cg2c", path=path, line=rec.line, group=group)


def _set(
    name: str,
    path: str,
    licence: str,
    use: str,
    load: Callable[..., Iterator[LabelledPair]],
    note: str = "",
    **kwargs: object,
) -> DataSource:
    return DataSource(name, load, path, use=use, licence=licence, note=note, kwargs=kwargs)


SOURCES: tuple[DataSource, ...] = (
    _set(
        "lingnli_train",
        "nli_general/lingnli",
        "none stated (MNLI premises: OANC)",
        "train",
        load_lingnli,
        "MNLI-style; 855 premises shared with TaxiNLI (dropped by the leak check)",
        split="train",
    ),
    _set(
        "lingnli_val",
        "nli_general/lingnli",
        "none stated (MNLI premises: OANC)",
        "train",
        load_lingnli,
        "3,948 rows share a premise with TaxiNLI (dropped by the leak check); a part is held out as a dev set",
        split="val",
    ),
    _set(
        "mpe_train",
        "nli_general/mpe/data/MPE/mpe_train.txt",
        "none stated (Flickr30k captions)",
        "train",
        load_mpe,
        "captions shared with SNLI test dropped by the leak check",
    ),
    _set(
        "mpe_dev",
        "nli_general/mpe/data/MPE/mpe_dev.txt",
        "none stated (Flickr30k captions)",
        "train",
        load_mpe,
        "held out as a dev set",
    ),
    _set(
        "mpe_test",
        "nli_general/mpe/data/MPE/mpe_test.txt",
        "none stated (Flickr30k captions)",
        "eval",
        load_mpe,
        "evaluation only",
    ),
    _set(
        "rte_train",
        "nli_general/rte/data/RTE/train.tsv",
        "none stated (PASCAL RTE via GLUE)",
        "train",
        load_rte,
        "entailment pairs only: not_entailment merges CONTRADICT and IRRELEVANT",
    ),
    _set(
        "fm2_dev", "nli_general/fm2/dataset/dev.jsonl", "Apache-2.0 (evidence: Wikipedia, CC BY-SA)", "train", load_fm2
    ),
    _set(
        "fm2_test",
        "nli_general/fm2/dataset/test.jsonl",
        "Apache-2.0 (evidence: Wikipedia, CC BY-SA)",
        "eval",
        load_fm2,
        "evaluation only",
    ),
    _set(
        "factcg_cg2c",
        "factcg_cg2c/CG2C_doc.jsonl",
        "MIT",
        "train",
        load_cg2c,
        "document-level; a part is held out as a dev set",
    ),
)
"""The ``nli_general`` and ``factcg_cg2c`` rows of the one table of data sources."""

__all__ = ["SOURCES", "load_cg2c", "load_fm2", "load_lingnli", "load_mpe", "load_rte"]
