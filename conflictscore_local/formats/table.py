"""Scored results as tables: one row per item (its metrics) or one per claim × document (its label,
probabilities and deciding passage), as plain records, CSV or a pandas DataFrame.

:class:`Results` is what :meth:`Engine.score_all <conflictscore_local.Engine.score_all>` and
:func:`~conflictscore_local.read_results` return: a list of :class:`ItemResult` with
:meth:`~Results.to_records` (needs nothing) and :meth:`~Results.to_pandas` (pandas, imported when
called). The CSV files of ``--csv`` / ``--csv-pairs`` (and ``-o x.csv``) are these records, and the
"download CSV" buttons of the HTML pages write the same columns from the data they embed.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..core.errors import ConfigError
from ..core.labels import decided
from ..core.metrics import METRICS, shown_keys
from ..core.types import CONTRADICT, IRRELEVANT, SUPPORT, ItemResult
from ..util.extras import requires

KINDS = ("items", "pairs")
PAIR_COLUMNS: tuple[str, ...] = (
    "item_id",
    "claim_index",
    "claim",
    "claim_conflicted",
    "doc_id",
    "label",
    "p_support",
    "p_contradict",
    "p_irrelevant",
    "rule",
    "decided",
    "source",
    "passage",
    "passage_start",
    "passage_end",
    "note",
)
"""The columns of a claim × document row (``label`` empty: unscored, ``note`` says why; ``rule`` the rule that
turned the probabilities into the label, ``decided`` which part of it gave the label: ``C>=0.30``)."""
STDOUT = "-"
"""A CSV path meaning standard output."""


def item_columns(results: Sequence[ItemResult]) -> list[str]:
    """The columns of the item rows: id, claims, each metric the results report (table order),
    conflicted claims, unscored judgments; ``claims_total`` for a run that sampled claims."""
    sampled = any(r.claims_total is not None for r in results)
    return [
        "id",
        "n_claims",
        *(["claims_total"] if sampled else []),
        *shown_keys([r.metrics for r in results]),
        "n_conflicted",
        "n_unscored",
    ]


def item_records(results: Sequence[ItemResult]) -> list[dict[str, Any]]:
    """One record per item: its metrics (None where undefined) and counts, keyed by :func:`item_columns`."""
    columns = item_columns(results)
    out = []
    for r in results:
        row: dict[str, Any] = {"id": r.item_id, "n_claims": r.metrics.n_claims}
        if "claims_total" in columns:
            row["claims_total"] = r.claims_total if r.claims_total is not None else r.metrics.n_claims
        row.update({k: r.metrics.get(k) for k in columns if k in METRICS})
        row["n_conflicted"] = sum(v.conflicted for v in r.verdicts)
        row["n_unscored"] = sum(j.label is None for v in r.verdicts for j in v.judgments)
        out.append(row)
    return out


def pair_records(results: Sequence[ItemResult]) -> list[dict[str, Any]]:
    """One record per claim × document judgment, in output order (:data:`PAIR_COLUMNS`)."""
    out = []
    for r in results:
        for v in r.verdicts:
            for j in v.judgments:
                probs = j.probs or {}
                span = j.passage_span
                out.append(
                    {
                        "item_id": r.item_id,
                        "claim_index": v.claim.index,
                        "claim": v.claim.text,
                        "claim_conflicted": v.conflicted,
                        "doc_id": j.doc_id,
                        "label": j.label,
                        "p_support": probs.get(SUPPORT),
                        "p_contradict": probs.get(CONTRADICT),
                        "p_irrelevant": probs.get(IRRELEVANT),
                        "rule": j.rule,
                        "decided": decided(j.probs, j.rule),
                        "source": j.source,
                        "passage": j.passage,
                        "passage_start": span[0] if span else None,
                        "passage_end": span[1] if span else None,
                        "note": j.note,
                    }
                )
    return out


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A text cell starting with one of these is a formula to Excel, LibreOffice and Google Sheets (or becomes one):
the OWASP rule for CSV injection, :func:`neutral_cell`."""


def neutral_cell(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet evaluates: a text starting with one of :data:`FORMULA_STARTS`
    (``=HYPERLINK(...)`` as an id, ``=1+1`` as a claim, ``@SUM(...)`` as a document id: claims come from
    LLM answers, ids from retrieved data) gets a single quote before it (OWASP's rule; a spreadsheet shows
    the text, the quote hidden); any other text as it is. Only text cells: a number (a metric, a
    probability such as -0.5, an index) is written as a number, which no spreadsheet runs."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return neutral_cell(v)
    return v


def csv_text(records: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Records as CSV (RFC 4180 quoting, ``\\n`` line ends, a header row): empty for None,
    ``true``/``false`` for booleans, numbers as Python writes them (shortest round trip), text
    neutralised against formulas (:func:`neutral_cell`)."""
    buf = _Lines()
    w = csv.writer(buf, lineterminator="\r\n")  # so a CR inside a field is quoted too; lines end in \n
    w.writerow(columns)
    for r in records:
        w.writerow([_cell(r.get(c)) for c in columns])
    return buf.getvalue()


class _Lines(io.StringIO):
    """What :func:`csv_text`'s writer writes, one row a call, with ``\\r\\n`` line ends made ``\\n``."""

    def write(self, s: str) -> int:
        return super().write(s[:-2] + "\n" if s.endswith("\r\n") else s)


def write_csv(
    path: str | os.PathLike[str], records: Sequence[Mapping[str, Any]], columns: Sequence[str], *, what: str
) -> None:
    """Write records as CSV to ``path`` atomically (through the job layer), or to stdout for ``-``."""
    from ..jobs import write_stdout, write_text_atomic

    text = csv_text(records, columns)  # the user's rows: never redacted (jobs/redaction.py)
    if str(path) == STDOUT:
        write_stdout(text)
        return
    write_text_atomic(path, text, what=what, verbatim=True)


def is_csv(path: str | os.PathLike[str] | None) -> bool:
    """Whether an output path names a CSV file (by its extension, as promptfoo reads ``-o``)."""
    return path is not None and str(path).lower().endswith(".csv")


@dataclass(frozen=True)
class TablePaths:
    """Where a scoring command writes its tables: ``items`` (``--csv``, or ``-o x.csv``) and
    ``pairs`` (``--csv-pairs``); ``-`` is stdout; ``items_flag`` names the flag in messages; ``array``:
    the per-item rows as one JSON array (``-o x.json``)."""

    items: str | os.PathLike[str] | None = None
    pairs: str | os.PathLike[str] | None = None
    items_flag: str = "--csv"
    array: str | os.PathLike[str] | None = None

    def outputs(self) -> list[Any]:
        """The files as a job's outputs (stdout is none), checked like every destination."""
        from ..jobs import Output

        return [
            Output(p, flag)
            for p, flag in ((self.items, self.items_flag), (self.pairs, "--csv-pairs"), (self.array, "-o"))
            if p is not None and str(p) != STDOUT
        ]

    def write(self, results: Sequence[ItemResult]) -> None:
        """Both tables of ``results``, each where asked (and the rows as a JSON array)."""
        if self.array is not None:
            from ..jobs import write_json_atomic

            write_json_atomic(self.array, [r.to_json() for r in results], what="-o")
        rows = Results(results)
        if self.items is not None:
            write_csv(self.items, rows.to_records("items"), rows.columns("items"), what=self.items_flag)
        if self.pairs is not None:
            write_csv(self.pairs, rows.to_records("pairs"), rows.columns("pairs"), what="--csv-pairs")

    @property
    def to_stdout(self) -> bool:
        return STDOUT in (str(self.items), str(self.pairs))


class Results(list):
    """Scored items (a ``list`` of :class:`ItemResult`, in input order) that also turn into tables."""

    def to_records(self, kind: str = "items") -> list[dict[str, Any]]:
        """``"items"``: one dict per item (id, n_claims, each metric, n_conflicted, n_unscored);
        ``"pairs"``: one per claim × document (:data:`PAIR_COLUMNS`). Needs nothing installed."""
        if kind not in KINDS:
            raise ConfigError(f"to_records: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        return item_records(self) if kind == "items" else pair_records(self)

    def columns(self, kind: str = "items") -> list[str]:
        """The column names of :meth:`to_records`, in order."""
        if kind not in KINDS:
            raise ConfigError(f"columns: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        return item_columns(self) if kind == "items" else list(PAIR_COLUMNS)

    def to_pandas(self, kind: str = "items") -> Any:
        """:meth:`to_records` as a ``pandas.DataFrame`` (columns in order; pandas is imported here)."""
        records = self.to_records(kind)
        pandas = requires("pandas", "Results.to_pandas()", alternative="use Results.to_records(), which needs nothing")
        return pandas.DataFrame.from_records(records, columns=self.columns(kind))

    def to_csv(self, path: str | os.PathLike[str], kind: str = "items") -> None:
        """Write :meth:`to_records` as CSV to ``path`` (``-``: stdout), atomically."""
        write_csv(path, self.to_records(kind), self.columns(kind), what=f"CSV of the {kind}")


__all__ = [
    "FORMULA_STARTS",
    "PAIR_COLUMNS",
    "Results",
    "TablePaths",
    "csv_text",
    "is_csv",
    "neutral_cell",
    "item_columns",
    "item_records",
    "pair_records",
    "write_csv",
]
