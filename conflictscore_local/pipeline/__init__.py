"""The pipeline: the run configuration (``config``), the engine that wires the stages (``engine``), the
scoring runner (``scoring``), splitting a run into shards (``shards``: ``--shard I/N``) and merging their
outputs (``merge``: ``conflictscore merge``).

Shards are for several processes, GPUs or machines working through one input file at once,
each with its own judge; the merge gives the output and summary one run would have given.
Light: nothing here imports torch.
"""

from .merge import Merged, merge_shards
from .shards import Shard, shard_of, shard_record

__all__ = ["Merged", "Shard", "merge_shards", "shard_of", "shard_record"]
