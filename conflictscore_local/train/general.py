"""Judge v5's first stage: general inference, before documents and conflicts.

``conflictscore train-judge prepare --stage general -o DIR`` writes, from ``../shared/data`` only:

- ``general.jsonl``: short premise / hypothesis pairs from the general NLI sets (LingNLI, MPE, RTE's
  entailments, Fool Me Twice dev, SICK, e-SNLI dev, FEVER's supported pairs) and the general parts of
  ``nli_extra`` (CAD-SNLI, Breaking NLI, ConjNLI, MED, MoNLI, ScoNe, Hossain et al.'s negation sets,
  VitaminC's training pages, FEVER-Symmetric dev, adversarial FEVER), each capped per label
  (:class:`GeneralMix`), deduplicated, then rebalanced so that no surface feature (negation cue, digits)
  predicts a label by itself (:func:`.augment.rebalance`), as the document mix is;
- dev files for model selection, never trained on: ``lingnli_dev.jsonl`` (LingNLI val rows whose
  premise is no evaluation text, whole premises held out), ``mpe_dev.jsonl`` (MPE dev), and the
  held-out ``vitaminc_dev``, ``scone_dev``, ``cad_dev`` of the document mix;
- ``data.json``: the mix (pairs per source, kind and label), the balance before and after, leak
  counts, licences and file hashes.

The evaluation side (every evaluation and anchor text: e-SNLI test, TaxiNLI, ANLI, MPE test, FM2 test,
ConflictBench, the dev sets) is the one :mod:`.prepare` indexes: a training pair whose premise or
hypothesis is one of those texts is dropped before the caps (LingNLI's premises shared with TaxiNLI,
MPE's captions shared with SNLI test), and the build fails if one is left. ANLI, ConTRoL and AVeriTeC
(non-commercial) are never trained on.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..bench.leakage import check_disjoint, find_leaks
from ..core.errors import ConfigError
from ..core.types import LABELS, SUPPORT
from ..jobs import write_json_atomic, write_jsonl_atomic
from ..util.jsonl import file_sha256
from . import nli_extra
from .augment import BALANCED_FEATURES, feature_balance, rebalance
from .pairs import cap
from .prepare import LICENCES, Mix, _dedupe, _evaluation_side, _filter_pairs, _group_split, _pair_items, mix_table
from .sources import LabelledPair, read_source

GENERAL_FILE = "general.jsonl"


@dataclass(frozen=True)
class GeneralMix:
    """How much of each general set goes into stage 1 (caps per label; None keeps every pair).

    LingNLI is the backbone (MNLI-style, balanced); the caption sets (MPE, SICK, e-SNLI dev,
    CAD-SNLI) teach the short literal cases; the negation, monotonicity and contrastive sets are
    capped so that none dominates. FEVER's ``not_entailment`` mixes refutations with unverifiable
    claims, RTE's merges CONTRADICT and IRRELEVANT: only their SUPPORT pairs are used.
    """

    seed: int = 0
    caps: dict[str, int | None] = field(
        default_factory=lambda: {
            "lingnli_train": None,
            "lingnli_val": None,
            "mpe_train": None,
            "rte_train": None,
            "fm2_dev": None,
            "sick": 3000,
            "esnli_dev": None,
            "fever_nli": 2500,
            "cad_snli_train": None,
            "breaking_nli": 1000,
            "conjnli_train": 2000,
            "med": 2000,
            "monli": None,
            "scone_train": 2000,
            "negnli_hossain": None,
            "vitaminc_real": 3000,
            "vitaminc_synthetic": 3000,
            "fever_symmetric_dev": None,
            "fever_adversarial": None,
        }
    )
    lingnli_dev_share: float = 0.15
    dev_pairs: int = 600
    balance_tolerance: float = 1.3

    def __post_init__(self) -> None:
        for name, n in self.caps.items():
            if n is not None and n < 0:
                raise ConfigError(f"GeneralMix.caps[{name!r}] must be >= 0 or None, got {n}")
        if not 0 < self.lingnli_dev_share < 1:
            raise ConfigError(f"GeneralMix.lingnli_dev_share must be in (0, 1), got {self.lingnli_dev_share}")
        if self.balance_tolerance < 1:
            raise ConfigError(f"GeneralMix.balance_tolerance must be >= 1, got {self.balance_tolerance}")


SUPPORT_ONLY = ("fever_nli",)
"""Sets whose other label is not one of ours (their SUPPORT pairs only)."""


def _load(d: Path, name: str, vitaminc_train: Sequence[LabelledPair]) -> list[LabelledPair]:
    if name.startswith("vitaminc"):
        return [p for p in vitaminc_train if p.source == name]
    pairs = list(read_source(d, name))
    return [p for p in pairs if p.label == SUPPORT] if name in SUPPORT_ONLY else pairs


def build_general(data_dir: Path, out_dir: Path, *, mix: GeneralMix = GeneralMix()) -> dict[str, Any]:
    """Write stage 1's training pairs and dev files into ``out_dir``; return the ``data.json`` record."""
    rng = random.Random(mix.seed)
    d = Path(data_dir)
    doc_mix = Mix(seed=mix.seed, dev_pairs=mix.dev_pairs)
    ev = _evaluation_side(d, doc_mix, rng)
    index = ev.index
    nli_extra.skipped.clear()
    removed: dict[str, dict[str, int]] = {}
    leaks_before: dict[str, dict[str, int]] = {}
    pairs: list[LabelledPair] = []
    dev_files: dict[str, list[LabelledPair]] = {}
    for name, per_label in mix.caps.items():
        source = _load(d, name, ev.vitaminc_train)
        leaks_before[name] = find_leaks(index, [p.passage for p in source], [p.claim for p in source]).as_dict()
        counts: Counter[str] = Counter()
        clean = _filter_pairs(source, index, counts)
        removed[name] = dict(counts)
        if name == "lingnli_val":
            clean, held = _group_split(clean, mix.lingnli_dev_share, mix.seed)
            dev_files["lingnli_dev"] = held if len(held) <= mix.dev_pairs else rng.sample(held, mix.dev_pairs)
        pairs += cap(clean, per_label, rng)
    mpe_dev = list(read_source(d, "mpe_dev"))
    dev_files["mpe_dev"] = mpe_dev if len(mpe_dev) <= mix.dev_pairs else rng.sample(mpe_dev, mix.dev_pairs)
    pairs = _dedupe(pairs)
    balance_before = feature_balance(pairs)
    pairs, dropped = rebalance(pairs, rng, tolerance=mix.balance_tolerance)
    rng.shuffle(pairs)
    after = find_leaks(index, [p.passage for p in pairs], [p.claim for p in pairs])
    check_disjoint(after, what="train-judge prepare --stage general", path=str(out_dir))

    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"general": out_dir / GENERAL_FILE}
    write_jsonl_atomic(files["general"], (p.as_json() for p in pairs), verbatim=True)
    evals = {
        **{name: _pair_items(name, ps) for name, ps in dev_files.items()},
        **{name: ev.evals[name] for name in ("vitaminc_dev", "scone_dev", "cad_dev")},
    }
    for name, items in evals.items():
        files[name] = out_dir / f"{name}.jsonl"
        write_jsonl_atomic(files[name], items, verbatim=True)
    record = {
        "stage": "general",
        "data_dir": "$CONFLICTSCORE_DATA (default ../shared/data)",
        "mix": asdict(mix),
        "sources": {name: LICENCES.get(name) or {"path": _path(name), "licence": _licence(name)} for name in mix.caps},
        "pairs_by_source": mix_table(pairs),
        "pairs_by_label": {lab: sum(1 for p in pairs if p.label == lab) for lab in LABELS},
        "label_balance": {
            "rule": f"for {', '.join(BALANCED_FEATURES)}, no label's share in a feature cell above "
            f"{mix.balance_tolerance} x its share in the feature's largest cell (pairs dropped at random)",
            "dropped": dropped,
            "before": balance_before,
            "after": feature_balance(pairs),
        },
        "skipped_labels": {
            "what": "pairs whose label merges CONTRADICT and IRRELEVANT, left out",
            **dict(nli_extra.skipped),
        },
        "evaluation": {name: {"items": len(items)} for name, items in evals.items()},
        "leakage": {
            "rule": "same normalised text, or a shared sentence of >= 6 words, with any evaluation or anchor "
            "document; same normalised claim",
            "before_filtering": leaks_before,
            "removed": removed,
            "after": after.as_dict(),
        },
        "files": {k: {"path": v.name, "sha256": file_sha256(v)} for k, v in files.items()},
    }
    write_json_atomic(out_dir / "data.json", record)
    return record


def _path(name: str) -> str:
    from ..backends.registry import REGISTRY

    return REGISTRY["data_source"].get(name).path or ""


def _licence(name: str) -> str:
    from ..backends.registry import REGISTRY

    return REGISTRY["data_source"].get(name).licence


__all__ = ["GENERAL_FILE", "GeneralMix", "build_general"]
