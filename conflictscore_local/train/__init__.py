"""``train-judge``: build judge training data from public sources and fine-tune a judge.

- :mod:`.sources`: loaders for each data set in its original format;
- :mod:`.pairs`: claims × corpus documents → rationale, whole-abstract and negative pairs,
  cut by the ``nli`` judge's own passage splitting;
- :mod:`.prepare`: the default judge's data mix, held-out evaluation splits, leakage check
  (``conflictscore train-judge prepare``);
- :mod:`.data`: reading training and eval files (pairs and ConflictBench items);
- :mod:`.evaluate`: metrics and calibration through the judge's rule and the engine's aggregation;
- :mod:`.model`, :mod:`.loop`: the base model and the ``transformers.Trainer`` run
  (``conflictscore train-judge fit``);
- :mod:`..cli.train_judge`: argument parsing.

Nothing heavy is imported here; torch and transformers load inside :func:`.loop.train`.
"""

from __future__ import annotations

from ..formats.sources import DATA_SOURCES
from .data import ID2LABEL, LABEL2ID, BenchRecord, EvalSet, Example, read_eval_set, read_training_data
from .evaluate import Calibration, calibrate, evaluate
from .loop import TrainingDiverged, TrainOptions, train

# the training and evaluation sets' rows, nli_extra's and nli_general's, in the one table of data sets
DATA_SOURCES.declare(f"{__name__}.sources:SOURCES", f"{__name__}.nli_extra:SOURCES", f"{__name__}.nli_general:SOURCES")

__all__ = [
    "ID2LABEL",
    "LABEL2ID",
    "BenchRecord",
    "Calibration",
    "EvalSet",
    "Example",
    "TrainOptions",
    "TrainingDiverged",
    "calibrate",
    "evaluate",
    "read_eval_set",
    "read_training_data",
    "train",
]
