"""ConflictBench: conflict detection measured on public data sets with gold labels.

``build_bench()`` turns the public sources (RAMDocs, ContraQA EN555, Climate-FEVER,
MacNoise, and loaders for AmbigDocs, ConflictingQA and Pan et al.'s ContraQA) into items
in the ``score`` input format plus gold fields; ``bench run`` scores items through the
normal engine and reports pair and detection metrics. No heavy imports here.

``split_for(text)`` is the one split function. Every item has
``item["split"] == split_for(item["split_key"])``, where the key is the claim text for
claim-based sources (Climate-FEVER, ContraQA EN555) and the question for
question-answering sources (RAMDocs, AmbigDocs, MacNoise, ConflictingQA, Pan's ContraQA:
both RAMDocs variants of a question share it). Data built elsewhere from the same texts
(e.g. HealthVer or Climate-FEVER pairs for judge training) stays out of dev/test with
``split_for(claim) != "train"``.
"""

from __future__ import annotations

from ..formats.sources import DATA_SOURCES
from ..util.locations import default_data_dir
from .build import bench_stats, build_bench
from .items import CONFLICT_TYPES, make_item
from .sources import BENCH_SOURCES, DEFAULT_SOURCES
from .split import SPLITS, normalize_text, split_for

DATA_SOURCES.declare(f"{__name__}.sources:SOURCES")  # ConflictBench's rows in the one table of data sets

__all__ = [
    "BENCH_SOURCES",
    "CONFLICT_TYPES",
    "DEFAULT_SOURCES",
    "SPLITS",
    "bench_stats",
    "build_bench",
    "default_data_dir",
    "make_item",
    "normalize_text",
    "split_for",
]
