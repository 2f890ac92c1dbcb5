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

import importlib
from typing import TYPE_CHECKING, Any

from ._moved import install as _install_moved
from ._version import __version__

_install_moved()  # the 0.1 module paths (conflictscore_local.types, ...) answer, with a DeprecationWarning

_EXPORTS: dict[str, str] = {
    "Backend": "backends.backend",
    "available": "backends.registry",
    "build": "backends.registry",
    "register": "backends.registry",
    "ComparisonSettings": "compare",
    "compare_files": "compare",
    "compare_results": "compare",
    "claim_verdict": "core.aggregate",
    "document_judgment": "core.aggregate",
    "Chunker": "core.chunk",
    "split_sentences": "core.chunk",
    "BackendUnavailable": "core.errors",
    "ConfigError": "core.errors",
    "ConflictScoreError": "core.errors",
    "InputError": "core.errors",
    "METRICS": "core.metrics",
    "Metric": "core.metrics",
    "bootstrap_ci": "core.metrics",
    "item_metrics": "core.metrics",
    "macro": "core.metrics",
    "micro": "core.metrics",
    "select_claims": "core.sampling",
    "CONTRADICT": "core.types",
    "Claim": "core.types",
    "ClaimVerdict": "core.types",
    "DocJudgment": "core.types",
    "Document": "core.types",
    "IRRELEVANT": "core.types",
    "Item": "core.types",
    "ItemMetrics": "core.types",
    "ItemResult": "core.types",
    "Judgment": "core.types",
    "LABELS": "core.types",
    "Label": "core.types",
    "Pair": "core.types",
    "Passage": "core.types",
    "SUPPORT": "core.types",
    "Summary": "core.types",
    "Decomposer": "decompose",
    "DecomposerBase": "decompose",
    "JudgmentCache": "formats.cache",
    "parse_item": "formats.inputs",
    "read_items": "formats.inputs",
    "read_results": "formats.results",
    "Generator": "generate",
    "GeneratorBase": "generate",
    "Judge": "judge",
    "JudgeBase": "judge",
    "RuntimeBase": "judge.nli.runtimes.base",
    "RunConfig": "pipeline.config",
    "load_config": "pipeline.config",
    "Engine": "pipeline.engine",
    "score_file": "pipeline.scoring",
    "Pruner": "prune",
    "PrunerBase": "prune",
}
"""Each public name → the module below that defines it, imported on first use (PEP 562): importing the
package loads none of them, so ``conflictscore --help`` costs only the command line's own modules."""

if TYPE_CHECKING:  # the same names, statically, for type checkers and the API docs
    from .backends.backend import Backend
    from .backends.registry import available, build, register
    from .compare import ComparisonSettings, compare_files, compare_results
    from .core.aggregate import claim_verdict, document_judgment
    from .core.chunk import Chunker, split_sentences
    from .core.errors import BackendUnavailable, ConfigError, ConflictScoreError, InputError
    from .core.metrics import METRICS, Metric, bootstrap_ci, item_metrics, macro, micro
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
    from .decompose import Decomposer, DecomposerBase
    from .formats.cache import JudgmentCache
    from .formats.inputs import parse_item, read_items
    from .formats.results import read_results
    from .generate import Generator, GeneratorBase
    from .judge import Judge, JudgeBase
    from .judge.nli.runtimes.base import RuntimeBase
    from .pipeline.config import RunConfig, load_config
    from .pipeline.engine import Engine
    from .pipeline.scoring import score_file
    from .prune import Pruner, PrunerBase

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
"""The public names (the keys of :data:`_EXPORTS` and ``__version__``: ``tests/test_layout.py`` checks they agree,
and with the imports for type checkers above)."""


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value  # once: the next look-up is a plain attribute
        return value
    if name == "Report":  # the old name of Summary, until 0.3.0
        import warnings

        warnings.warn(
            "Report is deprecated and will be removed in 0.3.0: use Summary (the same class)",
            DeprecationWarning,
            stacklevel=2,
        )
        return __getattr__("Summary")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
