"""The one table of the public data sets the project reads: :data:`DATA_SOURCES`, the registry's
``data_source`` namespace (``REGISTRY["data_source"]``).

A :class:`DataSource` says where a set lies under the data folder, what it is for (``use``: ``bench``,
a ConflictBench source; ``train``, what the shipped judge may train on; ``eval``, evaluation only;
``corpus``, the abstracts claims of other sets cite), its licence, and its loader: a ``"module:function"``
path (imported on first use, as the registry's backends are, so this table imports no feature) or the
function itself (a plugin's). ConflictBench's loaders take ``(path, options)`` (``Options``: the
dataclass ``--source-opt`` fills); the others ``(path, **kwargs)``, ``kwargs`` given here merged with
the caller's (a corpus for the claims of a corpus).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..core.errors import ConfigError

USES: tuple[str, ...] = ("bench", "train", "eval", "corpus")
"""What a data source may be for."""


@dataclass(frozen=True)
class NoOptions:
    """Options of a source that takes none."""


def _resolve(target: Any) -> Any:
    if isinstance(target, str) and ":" in target:
        mod, _, attr = target.partition(":")
        return getattr(importlib.import_module(mod), attr)
    return target


@dataclass(frozen=True)
class DataSource:
    """A public data set: its name, loader, path under the data folder (None: no file in the shared
    data, give one), what it is, what it is for, its options class, licence and a note."""

    name: str
    load: "Callable[..., Iterable[Any]] | str"
    path: str | None
    description: str = ""
    options: "type | str" = NoOptions
    use: str = "bench"
    licence: str = ""
    note: str = ""
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def default_path(self) -> str | None:
        """``path`` (ConflictBench's name for it)."""
        return self.path

    @property
    def Options(self) -> type:  # noqa: N802 (the class ``--source-opt`` fills)
        """The options dataclass (imported now where it is named by path)."""
        return _resolve(self.options)

    def loader(self) -> Callable[..., Iterable[Any]]:
        """The loading function (imported now where it is named by path)."""
        return _resolve(self.load)

    def read(self, path: str | Path, *args: Any, **kwargs: Any) -> Iterable[Any]:
        """What the loader yields for the file or folder ``path`` (``kwargs`` over this row's)."""
        return self.loader()(Path(path), *args, **{**self.kwargs, **kwargs})

    def read_from(self, data_dir: str | Path, *args: Any, **kwargs: Any) -> Iterable[Any]:
        """:meth:`read` of this source's own ``path`` under ``data_dir``."""
        if self.path is None:
            raise ConfigError(f"data source {self.name!r} has no file in the shared data; give one")
        return self.read(Path(data_dir) / self.path, *args, **kwargs)


BenchSource = DataSource
"""The name of a ConflictBench source's row until this release (positional fields unchanged)."""

_BENCH = "conflictscore_local.bench.sources:"
_TRAIN = "conflictscore_local.train.sources:"
_EXTRA = "conflictscore_local.train.nli_extra:"


def _rows(*rows: DataSource) -> dict[str, DataSource]:
    out: dict[str, DataSource] = {}
    for r in rows:
        if r.name in out:
            raise ValueError(f"data source {r.name!r} twice in DATA_SOURCES")
        if r.use not in USES:
            raise ValueError(f"data source {r.name!r}: use {r.use!r}; allowed: {', '.join(USES)}")
        out[r.name] = r
    return out


def _x(name: str, path: str, licence: str, use: str, load: str, note: str = "", **kwargs: Any) -> DataSource:
    return DataSource(name, _EXTRA + load, "nli_extra/" + path, use=use, licence=licence, note=note, kwargs=kwargs)


DATA_SOURCES: dict[str, DataSource] = _rows(
    # ConflictBench (bench build): loaders in bench/sources.py, mapping in benchmarks/conflictbench.md
    DataSource("ramdocs", _BENCH + "load_ramdocs", "ramdocs/RAMDocs_test.jsonl",
               "RAMDocs: ambiguity (other entity) and misinformation, two variants per question"),
    DataSource("contraqa_en555", _BENCH + "load_contraqa_en555", "contraqa_en555/raw_data",
               "ContraQA (EN555): HealthVer / Climate-FEVER claims, conflict / support / neutral files"),
    DataSource("climate_fever", _BENCH + "load_climate_fever", "climate_fever/dataset/climate-fever.jsonl",
               "Climate-FEVER: DISPUTED claims conflicted, single-sided claims controls",
               _BENCH + "ClimateFeverOptions"),
    DataSource("macnoise", _BENCH + "load_macnoise", "macnoise/DATA/GPT",
               "MacNoise: counterfactual passages, one item per perturbation level", _BENCH + "MacNoiseOptions"),
    DataSource("ambigdocs", _BENCH + "load_ambigdocs", None, "AmbigDocs original format: ambiguity"),
    DataSource("conflictingqa", _BENCH + "load_conflictingqa", None, "ConflictingQA: yes/no opinion conflicts"),
    DataSource("contraqa_pan", _BENCH + "load_contraqa_pan", None, "ContraQA (Pan et al.): misinformation passages"),
    # judge training and evaluation (train-judge prepare): loaders in train/sources.py
    DataSource("healthver_train_corpus", _TRAIN + "load_corpus", "healthver_train/corpus.jsonl", use="corpus"),
    DataSource("scifact_corpus", _TRAIN + "load_corpus", "scifact/corpus.jsonl", use="corpus"),
    DataSource("check_covid_corpus", _TRAIN + "load_corpus", "check_covid/corpus.json", use="corpus",
               kwargs={"id_field": "cord_id"}),
    DataSource("citint_corpus", _TRAIN + "load_corpus", "citint/corpus.jsonl", use="corpus"),
    DataSource("healthver_train", _TRAIN + "load_multivers_claims", "healthver_train/claims_train.jsonl",
               use="train", licence="none stated", kwargs={"source": "healthver_train"}),
    DataSource("scifact", _TRAIN + "load_multivers_claims", "scifact/claims_train_cited.jsonl", use="train",
               licence="claims CC BY 4.0, abstracts ODC-By", kwargs={"source": "scifact"}),
    DataSource("check_covid", _TRAIN + "load_check_covid", "check_covid/train/covidCheck_train_composed+extracted.json",
               use="train", licence="MIT"),
    DataSource("citint", _TRAIN + "load_multivers_claims", "citint/claims_train.jsonl", use="train", licence="MIT",
               kwargs={"source": "citint"}),
    DataSource("scifact_dev", _TRAIN + "load_multivers_claims", "scifact/claims_dev_cited.jsonl", use="eval",
               kwargs={"source": "scifact_dev"}),
    DataSource("check_covid_dev", _TRAIN + "load_check_covid", "check_covid/dev/covidCheck_dev_composed+extracted.json",
               use="eval", kwargs={"source": "check_covid_dev"}),
    DataSource("citint_dev", _TRAIN + "load_multivers_claims", "citint/claims_dev.jsonl", use="eval",
               kwargs={"source": "citint_dev"}),
    DataSource("healthver_dev", _TRAIN + "load_healthver_csv", "healthver/data/healthver_dev.csv", use="eval"),
    DataSource("covidfact", _TRAIN + "load_covidfact", "covidfact/COVIDFACT_dataset.jsonl", use="train",
               licence="none stated"),
    DataSource("fever_nli", _TRAIN + "load_fever_nli", "fever_nli", use="train",
               licence="CC BY-SA 3.0 (Wikipedia text)"),
    DataSource("esnli_dev", _TRAIN + "load_esnli", "esnli", use="train", licence="SNLI CC BY-SA 4.0",
               kwargs={"split": "dev"}),
    DataSource("esnli_test", _TRAIN + "load_esnli", "esnli", use="train", licence="SNLI CC BY-SA 4.0",
               kwargs={"split": "test"}),
    DataSource("sick", _TRAIN + "load_sick", "sick/SICK.txt", use="train", licence="none in the mirror"),
    DataSource("wice", _TRAIN + "load_wice", "wice/data/entailment_retrieval/claim/dev.jsonl", use="train",
               licence="annotations ODC-BY"),
    # nli_extra (train-judge prepare's Mix.extra, the anchors, the checklist's mined probes): train/nli_extra.py
    _x("scone_train", "scone", "CC0 1.0", "train", "load_scone", split="train"),
    _x("scone_test", "scone", "CC0 1.0", "eval", "load_scone", "held out: negation dev set", split="test"),
    _x("nan_nli", "nan-nli/data/nan.csv", "none stated", "eval", "load_nan_nli", "hand-built negation test suite"),
    _x("monli", "monli/pmonli.jsonl", "none stated", "train", "load_monli"),
    _x("negnli_hossain", "negnli-hossain", "MIT", "train", "load_hossain",
       "RTE.txt is binary (not_entailment merges C and I)", names=("MNLI", "SNLI")),
    _x("med", "med/MED.tsv", "CC BY-SA 4.0", "train", "load_med",
       "entailment pairs only: its neutral merges neutral and contradiction"),
    _x("vitaminc_real", "vitaminc/vitaminc_real/test.jsonl", "CC BY-SA 3.0", "train", "load_vitaminc",
       "split by case_id: a held-out part is a dev set", source="vitaminc_real"),
    _x("vitaminc_synthetic", "vitaminc/vitaminc_synthetic/test.jsonl", "CC BY-SA 3.0", "train", "load_vitaminc",
       "split by case_id", source="vitaminc_synthetic"),
    _x("fever_symmetric_dev", "fever-symmetric/symmetric_v0.2/fever_symmetric_dev.jsonl", "CC BY-SA 3.0", "train",
       "load_fever_symmetric"),
    _x("fever_symmetric_test", "fever-symmetric/symmetric_v0.2/fever_symmetric_test.jsonl", "CC BY-SA 3.0", "eval",
       "load_fever_symmetric", "held out"),
    _x("fever_adversarial", "fever-adversarial/test.jsonl", "CC BY-SA 3.0", "train", "load_fever_adversarial"),
    _x("cad_snli_train", "cad-snli", "Apache-2.0", "train", "load_cad", split="train"),
    _x("cad_snli_dev", "cad-snli", "Apache-2.0", "eval", "load_cad", "held out: a dev set", split="dev"),
    _x("cad_snli_test", "cad-snli", "Apache-2.0", "eval", "load_cad", "held out (its originals come from SNLI test)",
       split="test"),
    _x("breaking_nli", "breaking-nli/data/dataset.jsonl", "CC BY-SA 4.0", "train", "load_breaking_nli",
       "skewed to CONTRADICT: capped"),
    _x("conjnli_train", "conjnli/data/NLI/adversarial_train_15k.tsv", "MIT", "train", "load_conjnli",
       "automatic perturbations: capped"),
    _x("conjnli_dev", "conjnli/data/NLI/conj_dev.tsv", "MIT", "eval", "load_conjnli", "held out"),
    _x("anli_test", "anli/vitaminc_format_test/test.jsonl", "CC BY-NC 4.0", "eval", "load_anli_test",
       "non-commercial; anchor"),
    _x("anli_dev", "anli", "CC BY-NC 4.0", "eval", "load_anli_dev", "non-commercial"),
    _x("taxinli", "taxinli/taxinli10k.tsv", "C-UDA 1.0", "eval", "load_taxinli", "MNLI dev anchor"),
    _x("control_dev", "control/data/dev.jsonl", "CC BY-NC-SA 4.0", "eval", "load_control", "non-commercial"),
    _x("control_test", "control/data/test.jsonl", "CC BY-NC-SA 4.0", "eval", "load_control", "non-commercial"),
    _x("averitec", "averitec/data/dev.json", "CC BY-NC 4.0", "eval", "load_averitec", "non-commercial"),
)
"""Every data set the project reads, by name: ConflictBench's sources first, then the judge's
training and evaluation sets, then ``nli_extra``'s. A plugin's joins through the registry."""


def by_use(table: Mapping[str, DataSource], *uses: str) -> dict[str, DataSource]:
    """The sources of ``table`` whose ``use`` is one of ``uses``."""
    return {n: s for n, s in table.items() if s.use in uses}


__all__ = ["DATA_SOURCES", "USES", "BenchSource", "DataSource", "NoOptions", "by_use"]
