"""``nli``: a local sequence-classification checkpoint as the judge, in a wing of its own.

:mod:`.judge` (:class:`NLIJudge` and its config), :mod:`.encoding` (how a checkpoint reads a pair:
shared with training), :mod:`.calibrate` (``runtime=auto`` by measurement) and :mod:`.runtimes` (where
the forward pass runs: the one table of runtime names, :data:`RUNTIMES`, and a module per runtime).
"""

from .encoding import Truncation, encode_pairs, passage_budget
from .judge import (
    CALIBRATION_FILE,
    CALIBRATION_FORMAT,
    DEFAULT_CLAIM_ROOM,
    DEFAULT_JUDGE_ENV,
    DEFAULT_JUDGE_MANIFEST,
    NLIConfig,
    NLIJudge,
    default_judge_path,
)
from .runtimes import RUNTIMES, RuntimeFactory, local_runtime

__all__ = [
    "CALIBRATION_FILE",
    "CALIBRATION_FORMAT",
    "DEFAULT_CLAIM_ROOM",
    "DEFAULT_JUDGE_ENV",
    "DEFAULT_JUDGE_MANIFEST",
    "NLIConfig",
    "NLIJudge",
    "RUNTIMES",
    "RuntimeFactory",
    "Truncation",
    "default_judge_path",
    "encode_pairs",
    "local_runtime",
    "passage_budget",
]
