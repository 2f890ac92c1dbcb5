"""ConflictScore inside the evaluation harnesses people already run.

Each module is an optional extra and imports its framework only when imported itself:

- ``conflictscore_local.integrations.inspect``: an inspect_ai ``@scorer`` (``pip install
  'conflictscore-local[inspect]'``)
- ``conflictscore_local.integrations.ragas``: a RAGAS metric (``[ragas]``)
- ``conflictscore_local.integrations.deepeval``: a DeepEval metric (``[deepeval]``)

All three score through the public :class:`~conflictscore_local.Engine` (one per process and
configuration, models loaded once) and batch the samples the framework scores concurrently
into one engine step. Importing this package imports none of the frameworks.
"""

from __future__ import annotations

from ._common import explain, item_from, metric_values, score_items, shared_engine

__all__ = ["explain", "item_from", "metric_values", "score_items", "shared_engine"]
