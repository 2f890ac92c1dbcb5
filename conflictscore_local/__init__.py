"""conflictscore-local: ConflictScore with open-weights judges, offline.

Measures how a response handles conflicting evidence: each claim is judged against each
document separately, so a claim backed by one document and contradicted by five is
reported as conflicted, not as "supported". Importing this package loads no model and no
heavy library; backends import theirs when first used.

    from conflictscore_local import Engine, read_items
    engine = Engine(judge={"name": "nli", "model": "path/to/checkpoint"}, pruner="none")
    results, summary = engine.score_all(read_items("items.jsonl"))
    print(summary.macro["cs_c"], results[0].verdicts[0].conflicted)
"""

from __future__ import annotations

from ._version import __version__
from .core.aggregate import claim_verdict, document_judgment
from .formats.cache import JudgmentCache
from .core.chunk import Chunker, split_sentences
from .compare import ComparisonSettings, compare_files, compare_results
from .pipeline.config import RunConfig, load_config
from .backends.backend import Backend
from .decompose import Decomposer, DecomposerBase
from .pipeline.engine import Engine
from .core.errors import BackendUnavailable, ConfigError, ConflictScoreError, InputError
from .formats.inputs import parse_item, read_items
from .pipeline.scoring import score_file
from .generate import Generator, GeneratorBase
from .judge import Judge, JudgeBase
from .judge.nli.runtimes.base import RuntimeBase
from .core.metrics import METRICS, Metric, bootstrap_ci, item_metrics, macro, micro
from .prune import Pruner, PrunerBase
from .backends.registry import available, build, register
from .formats.results import read_results
from .core.sampling import select_claims
from .core.types import (
    CONTRADICT,
    IRRELEVANT,
    LABELS,
    SUPPORT,
    Claim,
    ClaimVerdict,
    DocJudgment,
    Document,
    Item,
    ItemMetrics,
    ItemResult,
    Judgment,
    Label,
    Pair,
    Passage,
    Summary,
)

from ._moved import install as _install_moved

_install_moved()  # the 0.1 module paths (conflictscore_local.types, ...) answer, with a DeprecationWarning

__all__ = [
    "Backend",
    "BackendUnavailable",
    "CONTRADICT",
    "Chunker",
    "Claim",
    "ClaimVerdict",
    "ComparisonSettings",
    "ConfigError",
    "ConflictScoreError",
    "Decomposer",
    "DecomposerBase",
    "DocJudgment",
    "Document",
    "Engine",
    "Generator",
    "GeneratorBase",
    "IRRELEVANT",
    "InputError",
    "Item",
    "ItemMetrics",
    "ItemResult",
    "Judge",
    "JudgeBase",
    "Judgment",
    "JudgmentCache",
    "LABELS",
    "Label",
    "METRICS",
    "Metric",
    "Pair",
    "Passage",
    "Pruner",
    "PrunerBase",
    "RunConfig",
    "RuntimeBase",
    "SUPPORT",
    "Summary",
    "__version__",
    "available",
    "bootstrap_ci",
    "build",
    "claim_verdict",
    "compare_files",
    "compare_results",
    "document_judgment",
    "item_metrics",
    "load_config",
    "macro",
    "micro",
    "parse_item",
    "read_items",
    "read_results",
    "register",
    "score_file",
    "select_claims",
    "split_sentences",
]


def __getattr__(name: str) -> object:
    if name == "Report":  # the old name of Summary, until 0.3.0
        import warnings

        warnings.warn("Report is deprecated and will be removed in 0.3.0: use Summary (the same class)",
                      DeprecationWarning, stacklevel=2)
        return Summary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
